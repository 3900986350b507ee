from __future__ import annotations

from typing import Iterator

from tritonlint.compute import anchor, compute_sites
from tritonlint.unverified import torch_values, unverified_calls
from tritonlint.rule import DEGRADATION, Context, Diagnostic, Rule


class TorchComputeInForward(Rule):
    """
    ## What it does
    Flags every place where PyTorch does math on a path from
    `ModelNew.forward`: `torch.*`, `torch.nn.functional.*` under any alias,
    `torch.ops.*`, `torch_npu.*` calls; tensor methods (`x.sum()`,
    `x.exp_()`, `x.float()`, `x.to(torch.float16)`); tensor operators
    (`x * y`, `a @ b`, `x += 1`, `-x`, `x > 0`); indexed writes and gathers;
    `nn` layers called in forward (`self.proj(x)`); and builtins that compute
    on tensors (`abs(x)`, `sum(xs)`). Helpers that forward reaches are
    checked too. Glue that moves no math is allowed: allocation
    (`torch.empty*`, `zeros`, `new_empty`), views and layout (`view`,
    `reshape`, `permute`, `contiguous`, slicing), metadata (`shape`,
    `size()`, `stride()`, `numel()`, `dtype`, `device`), `triton.cdiv`,
    `triton.next_power_of_2`, and integer arithmetic on shapes.

    ## Why is this bad?
    Degradation type 3 of the seed-002 verifier: part of the operator runs as
    PyTorch kernels, so the submission's speed and correctness are partly
    PyTorch's. One diagnostic per call or operator, at its line.

    ## Example
    ```python
    def forward(self, x):
        y = my_kernel_launch(x)
        return F.softmax(y, dim=-1)
    ```

    ## Use instead
    Fuse the remaining math into the Triton kernel.

    ## Fix safety
    No fix. Extra glue ops can be allowed in `[tool.tritonlint] allow-glue`.
    """

    code = "TL003"
    name = "torch-compute-in-forward"
    category = DEGRADATION
    message = "PyTorch computes on the forward path"
    regression_type = 3
    check_key = "no_forbidden_torch_ops"
    suggestion = (
        "Type 3: PyTorch still computes part of the operator in forward (see violations). "
        "Move each listed operation into the Triton kernel; only allocation (torch.empty*), "
        "views/reshapes and shape metadata may stay in PyTorch."
    )

    BAD = [
        """
        import torch
        import torch.nn as nn
        import torch.nn.functional as fn
        from torch import matmul
        import triton
        import triton.language as tl


        @triton.jit
        def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            mask = offs < n
            x = tl.load(x_ptr + offs, mask=mask)
            tl.store(out_ptr + offs, x + tl.load(y_ptr + offs, mask=mask), mask=mask)


        def add(x, y):
            out = torch.empty_like(x)
            n = out.numel()
            add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
            return out


        def finish(z):
            return z.sum(dim=-1)  # expect: TL003


        class ModelNew(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.proj = nn.Linear(dim, dim)
                self.scale = dim ** -0.5

            def forward(self, x, y):
                z = add(x, y) * self.scale  # expect: TL003
                z = fn.softmax(z, dim=-1)  # expect: TL003
                z = matmul(z, y)  # expect: TL003
                z += 1  # expect: TL003
                z = self.proj(z).float()  # expect: TL003 TL003
                return finish(z)
        """,
    ]
    GOOD = [
        """
        import torch
        import torch.nn as nn
        import triton
        import triton.language as tl


        @triton.jit
        def rowsum_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
            row = tl.program_id(0)
            cols = tl.arange(0, BLOCK)
            x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
            tl.store(out_ptr + row, tl.sum(x, axis=0))


        class ModelNew(nn.Module):
            def forward(self, x):
                shape = x.shape
                x2 = x.reshape(-1, shape[-1]).contiguous()
                rows, cols = x2.shape
                out = torch.empty(rows, device=x.device, dtype=x.dtype)
                block = triton.next_power_of_2(cols)
                rowsum_kernel[(rows,)](x2, out, cols, x2.stride(0), BLOCK=block)
                return out.view(*shape[:-1], 1)
        """,
    ]

    def run(self, ctx: Context) -> Iterator[Diagnostic]:
        m = ctx.model
        if m.entry is None:
            return
        extra = ctx.config.allow_glue
        reported: set[int] = set()  # nodes with a finding, and the arguments of reported calls
        for f in m.host_reachable():
            where = "" if f is m.entry else f" (in `{f.qualname}`, reached from {m.entry.qualname})"
            for site in compute_sites(m, f, extra):
                reported.add(id(site.node))
                yield self.report(site.anchor, f"`{site.call}` {site.says} on the forward path{where}", call=site.call, reason=site.reason)
            for call, text in unverified_calls(m, f, reported):
                reported.add(id(call))
                reported.update(id(a.value) for a in call.args)
                yield self.report(anchor(call), f"`{text}` cannot be verified as Triton: the analysis cannot tell what it runs on these tensors{where}",
                                  call=text, reason="call the analysis cannot resolve, made on tensors")
        seen = {id(f) for f in m.host_reachable()}
        setup = [m.module_function] + [f for f in m.construction_path() if id(f) not in seen]
        for node, q in torch_values(m, [*m.host_reachable(), *setup], reported):
            yield self.report(node, f"`{q}` is used as a value: wherever it is called, it runs in PyTorch out of the analysis' sight",
                              call=q, reason=f"{q} used as a value computes in PyTorch where it is called")

    def check_details(self, ctx: Context, found: list[Diagnostic]) -> dict:
        return {"violations": [{"line": d.line, "call": d.data["call"], "reason": d.data["reason"]} for d in found]}
