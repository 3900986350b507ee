from __future__ import annotations

from typing import Iterator

import libcst as cst

from tritonlint.syntax import iter_subtree
from tritonlint.rule import PERFORMANCE, WARNING, Context, Diagnostic, Rule


class LaunchInLoop(Rule):
    """
    ## What it does
    Flags a kernel launched inside a Python `for`/`while` loop on the
    forward path.

    ## Why is this bad?
    Every iteration pays a launch (several microseconds on the host, more
    with autotuning lookups), and the device idles between tiny kernels.
    Rows, heads or batches belong in the grid.

    ## Example
    ```python
    for b in range(x.shape[0]):
        row_kernel[(1,)](x[b], out[b], n)
    ```

    ## Use instead
    ```python
    row_kernel[(x.shape[0],)](x, out, n, x.stride(0))
    ```

    ## Fix safety
    No fix.
    """

    code = "TL303"
    name = "launch-in-loop"
    category = PERFORMANCE
    severity = WARNING
    message = "kernel launched once per Python loop iteration"

    BAD = [
        """
        import torch
        import torch.nn as nn
        import triton
        import triton.language as tl


        @triton.jit
        def row(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


        class ModelNew(nn.Module):
            def forward(self, x):
                out = torch.empty_like(x)
                for b in range(x.shape[0]):
                    row[(1,)](x[b], out[b], x.shape[1], BLOCK=1024)  # expect: TL303
                return out
        """,
    ]
    GOOD = [
        """
        import torch
        import torch.nn as nn
        import triton
        import triton.language as tl


        @triton.jit
        def row(x_ptr, out_ptr, n, stride, BLOCK: tl.constexpr):
            r = tl.program_id(0)
            offs = tl.arange(0, BLOCK)
            v = tl.load(x_ptr + r * stride + offs, mask=offs < n)
            tl.store(out_ptr + r * stride + offs, v * 2, mask=offs < n)


        class ModelNew(nn.Module):
            def forward(self, x):
                out = torch.empty_like(x)
                row[(x.shape[0],)](x, out, x.shape[1], x.stride(0), BLOCK=1024)
                return out
        """,
    ]

    def run(self, ctx: Context) -> Iterator[Diagnostic]:
        m = ctx.model
        in_loop: dict[int, set[int]] = {}
        for site in m.launch_sites():
            f = site.function
            if id(f) not in in_loop:
                loops = [n for n, _ in f.nodes(cst.For)] + [n for n, _ in f.nodes(cst.While)]
                in_loop[id(f)] = {id(x) for loop in loops for x in iter_subtree(loop.body)}
            if id(site.node) in in_loop[id(f)]:
                yield self.report(m.launch_call.get(site.node, site.node), f"`{site.kernel.name}` is launched in a Python loop: move the loop into the grid")
