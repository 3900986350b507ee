"""tritonlint: static checks and an accelerator gate for Triton kernel submissions."""

__version__ = "0.1.0"
