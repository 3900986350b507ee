"""tritonlint: static checks and an accelerator gate for Triton kernel submissions."""

__version__ = "0.1.0"


def __getattr__(name: str):
    """`tritonlint.check`, `tritonlint.gate`, `tritonlint.Report`, loaded on first use, so that
    `import tritonlint` (the CLI's first import) stays as cheap as it was."""
    if name in ("check", "gate", "Report"):
        from tritonlint import api

        return getattr(api, name)
    raise AttributeError(f"module 'tritonlint' has no attribute {name!r}")
