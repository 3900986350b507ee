from tritonlint.cli import entry

entry()
