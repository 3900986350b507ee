"""The runtime gate: verify a lint-clean submission against its reference task on
an accelerator, then benchmark it. The gate imports torch; this package's __init__ and
options.py do not, so the lint path can read the gate's options without it."""
