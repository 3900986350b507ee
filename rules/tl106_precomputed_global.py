from __future__ import annotations

from typing import Iterator

from tritonlint.compute import compute_sites
from tritonlint.rule import INTEGRITY, Context, Diagnostic, Rule


class PrecomputedGlobal(Rule):
    """
    ## What it does
    Flags PyTorch math at module level, run once when the submission is
    imported (`TABLE = torch.linspace(0, 1, 4096).exp()`).

    ## Why is this bad?
    Work done at import time is never timed, and a table computed by PyTorch
    can carry the operator's result (or most of it) into a kernel that only
    copies it.

    ## Example
    ```python
    COS = torch.cos(torch.arange(4096) * 0.01)
    ```

    ## Use instead
    Compute inside the kernel, on every call.

    ## Fix safety
    No fix.
    """

    code = "TL106"
    name = "precomputed-global"
    category = INTEGRITY
    message = "PyTorch computes at import time"

    BAD = [
        """
        import torch
        import torch.nn as nn
        import triton
        import triton.language as tl

        ANGLES = torch.arange(1024) * 0.5  # expect: TL106 TL106
        SCALE = 1.0 / 1024 ** 0.5


        @triton.jit
        def k(x_ptr, a_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            m = offs < n
            tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * tl.load(a_ptr + offs, mask=m), mask=m)


        class ModelNew(nn.Module):
            def forward(self, x):
                out = torch.empty_like(x)
                k[(triton.cdiv(x.numel(), 256),)](x, ANGLES, out, x.numel(), BLOCK=256)
                return out
        """,
    ]
    GOOD = [
        """
        import torch
        import torch.nn as nn
        import triton
        import triton.language as tl

        BLOCK = 256
        DTYPES = (torch.float16, torch.float32)


        @triton.jit
        def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 0.5, mask=offs < n)


        class ModelNew(nn.Module):
            def forward(self, x):
                out = torch.empty_like(x)
                k[(triton.cdiv(x.numel(), BLOCK),)](x, out, x.numel(), BLOCK=BLOCK)
                return out
        """,
    ]

    def run(self, ctx: Context) -> Iterator[Diagnostic]:
        m = ctx.model
        for site in compute_sites(m, m.module_function, ctx.config.allow_glue):
            yield self.report(site.anchor, f"`{site.call}` {site.says} at import time")
