from __future__ import annotations

from typing import Iterator

import libcst as cst

from tritonlint.examples import LAUNCH, submission
from tritonlint.rule import PERFORMANCE, WARNING, Context, Diagnostic, Rule, remove_statement


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
    category = PERFORMANCE
    severity = WARNING
    message = "print on the forward path"

    BAD = [submission('print("launching", x.shape)  # expect: TL304\n' + LAUNCH)]
    GOOD = [submission(prelude="def debug_dump(x):\n    print(x.shape)  # not reached from forward")]

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
        for site in m.calls(m.host_reachable()):
            if "builtins.print" in site.names:
                yield self.report(site.node, fix=remove_statement(m, site.node, "remove the print"))
