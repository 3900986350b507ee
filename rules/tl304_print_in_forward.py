from __future__ import annotations

from typing import Iterator

import libcst as cst

from tritonlint.rule import SAFE, WARNING, Context, Diagnostic, Fix, Rule


class PrintInForward(Rule):
    """
    ## What it does
    Flags `print(...)` on the forward path.

    ## Why is this bad?
    Printing costs host time on every call, and printing a tensor copies it
    to the host and synchronises. Benchmarks time it all.

    ## Example
    ```python
    print("out", out.shape)
    ```

    ## Use instead
    Log outside forward, or under a debug flag off the timed path.

    ## Fix safety
    Safe when the call is a statement of its own: it is removed.
    """

    code = "TL304"
    name = "print-in-forward"
    severity = WARNING
    message = "print on the forward path"

    BAD = [
        """
        import torch
        import torch.nn as nn
        import triton
        import triton.language as tl


        @triton.jit
        def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)


        class ModelNew(nn.Module):
            def forward(self, x):
                out = torch.empty_like(x)
                print("launching", x.shape)  # expect: TL304
                k[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), BLOCK=256)
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
        def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)


        def debug_dump(x):
            print(x.shape)  # not reached from forward


        class ModelNew(nn.Module):
            def forward(self, x):
                out = torch.empty_like(x)
                k[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), BLOCK=256)
                return out
        """,
    ]
    FIXES = [
        (
            """
            import torch.nn as nn


            class ModelNew(nn.Module):
                def forward(self, x):
                    y = launch(x)
                    print(y)
                    # the result
                    return y
            """,
            """
            import torch.nn as nn


            class ModelNew(nn.Module):
                def forward(self, x):
                    y = launch(x)
                    # the result
                    return y
            """,
        )
    ]

    def run(self, ctx: Context) -> Iterator[Diagnostic]:
        m = ctx.model
        for f in m.host_reachable():
            for call, scope in f.facts[cst.Call]:
                if "builtins.print" in m.externals(call.func, scope):
                    stmt = m.statement_of.get(call)
                    yield self.report(call, fix=Fix(SAFE, "remove the print", [(stmt, None)]) if stmt is not None else None)
