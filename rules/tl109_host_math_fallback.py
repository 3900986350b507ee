from __future__ import annotations

from typing import Iterator

import libcst as cst

from tritonlint.rule import DEGRADATION, Context, Diagnostic, Rule

TRANSCENDENTAL = frozenset(
    "exp exp2 expm1 log log2 log10 log1p sin cos tan tanh sinh cosh asin acos atan atan2 sigmoid erf "
    "erfc erfinv sqrt rsqrt pow power reciprocal softmax log_softmax gelu silu softplus logsumexp".split()
)


def _transcendental(q: str) -> bool:
    root, _, rest = q.partition(".")
    last = q.rsplit(".", 1)[-1]
    if q.startswith("torch.nn.functional."):
        return False  # TL107 reports functional ops module-wide
    return root in ("torch", "numpy", "torch_npu") and last in TRANSCENDENTAL and "()" not in rest


class HostMathFallback(Rule):
    """
    ## What it does
    Flags transcendental maths computed on the host to feed kernels: torch
    (`torch.cos`, `t.exp()`) in `ModelNew.__init__` and what it calls, and
    numpy (`np.exp`, `np.sin`) anywhere in the submission.
    Module-level torch maths is TL106's; the forward path's torch maths is
    TL003's. `math.*` on Python scalars is fine.

    ## Why is this bad?
    The newest seed-002 verifier checks this (`no_host_math_fallback`): cos
    and sin tables, exp lookup tables and precomputed activations move the
    expensive part of the operator out of the kernel and out of the timing.

    ## Example
    ```python
    def __init__(self):
        super().__init__()
        self.register_buffer("cos", torch.cos(torch.arange(4096) * 0.01))
    ```

    ## Use instead
    Compute the transcendental inside the kernel (`tl.cos`, `tl.exp`).

    ## Fix safety
    No fix.
    """

    code = "TL109"
    name = "host-math-fallback"
    category = DEGRADATION
    regression_type = 3
    message = "transcendental maths on the host feeds the kernel"
    check_key = "no_host_math_fallback"

    BAD = [
        """
        import numpy as np
        import torch
        import torch.nn as nn
        import triton
        import triton.language as tl


        @triton.jit
        def k(x_ptr, t_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            m = offs < n
            tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * tl.load(t_ptr + offs, mask=m), mask=m)


        class ModelNew(nn.Module):
            def __init__(self, n=1024):
                super().__init__()
                pos = torch.arange(n)
                self.register_buffer("table", torch.cos(pos * 0.01))  # expect: TL109
                self.np_table = np.exp(np.arange(n))  # expect: TL109

            def forward(self, x):
                out = torch.empty_like(x)
                k[(triton.cdiv(x.numel(), 256),)](x, self.table, out, x.numel(), BLOCK=256)
                return out
        """,
    ]
    GOOD = [
        """
        import math
        import torch
        import torch.nn as nn
        import triton
        import triton.language as tl


        @triton.jit
        def k(x_ptr, out_ptr, n, scale, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            m = offs < n
            tl.store(out_ptr + offs, tl.cos(tl.load(x_ptr + offs, mask=m) * scale), mask=m)


        class ModelNew(nn.Module):
            def __init__(self, d=64):
                super().__init__()
                self.scale = 1.0 / math.sqrt(d)

            def forward(self, x):
                out = torch.empty_like(x)
                k[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), self.scale, BLOCK=256)
                return out
        """,
    ]

    def run(self, ctx: Context) -> Iterator[Diagnostic]:
        m = ctx.model
        on_path = {id(f) for f in m.host_reachable()}
        at_construction = {id(f) for f in m.construction_path()}
        for f in m.submission_functions():
            torch_too = id(f) in at_construction and id(f) not in on_path
            for site in m.calls([f]):
                call = site.node
                names = [q for q in site.names if _transcendental(q) and (torch_too or q.startswith("numpy."))]
                method = call.func.attr.value if isinstance(call.func, cst.Attribute) else None
                if names:
                    yield self.report(call, f"`{names[0]}` computed on the host; compute it in the kernel")
                elif torch_too and method in TRANSCENDENTAL and not site.names and m.is_tensor(call.func.value, site.scope):
                    yield self.report(call, f"Tensor.{method}() computed on the host; compute it in the kernel")
