from __future__ import annotations

from typing import Iterator

from tritonlint.entry import EntryFacts
from tritonlint.examples import LAUNCH, submission
from tritonlint.rule import INTEGRITY, Context, Diagnostic, Rule


class ForwardReplaced(Rule):
    """
    ## What it does
    Flags constructs that may run something other than the `forward` the
    `class ModelNew` statement shows: `__call__` or `__new__` defined on the
    entry class (or a base), forward hooks, a decorator on forward or on the
    class that is not a known mode switch (`torch.no_grad()`,
    `torch.inference_mode()`), a metaclass, `ModelNew` bound again or deleted
    after its class statement, `ModelNew.forward = ...` or
    `setattr(ModelNew, ...)`, `self.forward = ...`, a module-level
    `__getattr__`, and forward defined more than once (both arms of a
    class-level `if`).

    ## Why is this bad?
    Every check, static or at run time, judges a forward; if another one runs,
    the verdict is about code that is not measured. What may run in its place
    is also put on the forward path, so what it computes is reported too.

    ## Example
    ```python
    class ModelNew(nn.Module):
        def forward(self, x):
            return triton_path(x)

        def __call__(self, x):
            return torch.relu(x)
    ```

    ## Use instead
    One `forward` method, reached by `nn.Module`'s own `__call__`.

    ## Fix safety
    No fix.
    """

    code = "TL110"
    name = "forward-replaced"
    category = INTEGRITY
    message = "the forward that runs may not be the one the class statement shows"

    BAD = [
        submission(after="""
            def _fast(self, x):
                return x


            ModelNew.forward = _fast  # expect: TL110
            """),
        submission(init="self.register_forward_hook(lambda mod, args, out: out)  # expect: TL110"),
        submission(LAUNCH, after="""
            class Other(nn.Module):
                def forward(self, x):
                    return x


            ModelNew = Other  # expect: TL110
            """),
    ]
    GOOD = [
        submission(LAUNCH).replace("    def forward(self, x):", "    @torch.no_grad()\n    def forward(self, x):"),
    ]

    def run(self, ctx: Context) -> Iterator[Diagnostic]:
        for r in ctx.model.analysis(EntryFacts).replacements:
            yield self.report(r.node, f"{r.what}: the forward that runs may not be the one analysed")
