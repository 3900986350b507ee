"""The runtime gate: verify a lint-clean submission against its reference task on
an accelerator, then benchmark it. Imports torch; the lint path never imports this."""
