from __future__ import annotations

from tritonlint.kernels import real_kernels
from tritonlint.rule import DEGRADATION, Context, Diagnostic, Rule


class NoTritonKernel(Rule):
    """
    ## What it does
    Flags a submission (a module with a `ModelNew` class) that defines no
    function decorated with `triton.jit`, in any spelling: `@triton.jit`,
    `@triton.jit(...)`, `@jit` after `from triton import jit`, an alias such
    as `import triton as tr`, a stack under `@triton.autotune`, or
    `kernel = triton.jit(fn)`; and one whose kernels use no
    `triton.language` operation at all (a decorated Python function is not a
    kernel, as the newest seed-002 verifier says).

    ## Why is this bad?
    Degradation type 1 of the seed-002 verifier: the "Triton" solution is
    plain PyTorch, so any speed-up it reports is PyTorch's, not a kernel's.

    ## Example
    ```python
    class ModelNew(nn.Module):
        def forward(self, x):
            return torch.nn.functional.gelu(x)
    ```

    ## Use instead
    Write the computation as a `@triton.jit` kernel and launch it from
    `forward` with `kernel[grid](...)`.

    ## Fix safety
    No fix: writing the kernel is the work.
    """

    code = "TL001"
    name = "no-triton-kernel"
    category = DEGRADATION
    message = "no @triton.jit kernel in this submission: ModelNew does its math without Triton"
    regression_type = 1
    check_key = "triton_kernel_exists"
    suggestion = (
        "Type 1: no Triton kernel found. Implement the computation in a @triton.jit "
        "kernel and launch it from ModelNew.forward with kernel[grid](...)."
    )

    BAD = [
        """
        import torch
        import torch.nn as nn


        class ModelNew(nn.Module):  # expect: TL001
            def forward(self, x):
                return torch.nn.functional.gelu(x)  # expect: TL003
        """,
        """
        import triton
        import torch.nn as nn


        def helper(x):  # looks like a kernel, is not jitted
            return x


        class ModelNew(nn.Module):  # expect: TL001
            def forward(self, x):
                return helper(x)
        """,
        """
        import torch
        import torch.nn as nn
        import triton


        @triton.jit
        def scale(x, s):  # expect: TL001
            return x * s


        class ModelNew(nn.Module):
            def forward(self, x):
                return scale(x, 2.0)
        """,
    ]
    GOOD = [
        """
        import torch
        import torch.nn as nn
        import triton as tr
        import triton.language as tl


        @tr.jit
        def neg_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            mask = offs < n
            tl.store(out_ptr + offs, -tl.load(x_ptr + offs, mask=mask), mask=mask)


        class ModelNew(nn.Module):
            def forward(self, x):
                out = torch.empty_like(x)
                n = x.numel()
                neg_kernel[(tr.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
                return out
        """,
    ]

    def run(self, ctx: Context) -> list[Diagnostic]:
        m = ctx.model
        cls = m.entry_class
        if cls is None:
            return []
        if not m.kernels:
            return [self.report(cls.node.name)]
        if real_kernels(m):
            return []
        return [self.report(k.node.name, f"`{k.name}` is decorated as a Triton kernel but uses no triton.language "
                                         "operation: it is not a kernel") for k in m.kernels]

    def check_details(self, ctx: Context, found: list[Diagnostic]) -> dict:
        return {"kernels": [k.name for k in ctx.model.kernels]}
