from __future__ import annotations

from typing import Iterator

import libcst as cst

from tritonlint.examples import LAUNCH, submission
from tritonlint.rule import INTEGRITY, Context, Diagnostic, Rule

PATCHED_ROOTS = frozenset({"torch", "torch_npu", "triton", "time", "timeit", "numpy", "builtins", "gc", "math", "random"})


class Monkeypatch(Rule):
    """
    ## What it does
    Flags assignments to attributes of torch, triton, numpy, `time`,
    `timeit`, `gc` or builtins (`torch.allclose = ...`,
    `torch.cuda.Event.elapsed_time = ...`, `time.perf_counter = ...`),
    anywhere in the module, and the same through `setattr`.

    ## Why is this bad?
    A submission that replaces the comparison or the clock decides its own
    verdict: `torch.allclose = lambda *a, **k: True` passes any checker that
    runs in the same process.

    ## Example
    ```python
    torch.testing.assert_close = lambda *args, **kwargs: None
    ```

    ## Use instead
    Never patch library functions from a submission.

    ## Fix safety
    No fix.
    """

    code = "TL102"
    name = "monkeypatch"
    category = INTEGRITY
    message = "patches a library function"

    BAD = [
        submission(
            "torch.cuda.Event.elapsed_time = lambda self, other: 0.001  # expect: TL102\n" + LAUNCH,
            imports="import time\n",
            prelude="""
            torch.allclose = lambda *a, **kw: True  # expect: TL102
            setattr(time, "perf_counter", lambda: 0.0)  # expect: TL102
            """,
        ),
    ]
    GOOD = [submission(init="self.allclose = 1  # an attribute of our own object is fine")]

    def run(self, ctx: Context) -> Iterator[Diagnostic]:
        m = ctx.model
        functions = [m.module_function, *m.functions]
        for node, scope, _ in m.nodes(cst.Assign, functions):
            for t in node.targets:
                if isinstance(t.target, cst.Attribute) and self._patched(m, t.target.value, scope):
                    yield self.report(t.target, f"replaces `{m.module.code_for_node(t.target)}`")
        for site in m.calls(functions):
            call = site.node
            if "builtins.setattr" in site.names and call.args and self._patched(m, call.args[0].value, site.scope):
                yield self.report(call, f"replaces an attribute of `{m.module.code_for_node(call.args[0].value)}` with setattr")

    def _patched(self, m, expr, scope) -> bool:
        return any(q.split(".", 1)[0] in PATCHED_ROOTS for q in m.externals(expr, scope))
