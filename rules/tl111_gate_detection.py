from __future__ import annotations

from typing import Iterator

import libcst as cst

from tritonlint.examples import LAUNCH, submission
from tritonlint.rule import INTEGRITY, Context, Diagnostic, Rule

# What a submission reads to learn that it is being checked or timed: its command line,
# its environment, or who is calling it.
GATE_SIGNALS = frozenset(
    (
        "sys.argv", "sys.orig_argv", "os.environ", "os.environb", "os.getenv", "os.getenvb",
        "inspect.stack", "inspect.currentframe", "inspect.getouterframes", "inspect.trace",
        "sys._getframe", "sys._current_frames", "traceback.extract_stack", "traceback.format_stack",
        "traceback.print_stack", "traceback.walk_stack",
    )
)


class GateDetection(Rule):
    """
    ## What it does
    Flags reads of the command line (`sys.argv`), the environment
    (`os.environ`, `os.getenv`) and the call stack (`inspect.stack()`,
    `sys._getframe()`, `traceback.extract_stack()`) anywhere in the
    submission.

    ## Why is this bad?
    A kernel computes the same answer wherever it runs. Code that looks at
    who runs it can behave one way under the verifier or the timer and another
    way elsewhere, and a submission has no other use for these.

    ## Example
    ```python
    if "benchmark" in " ".join(sys.argv):
        return fast_but_wrong(x)
    ```

    ## Use instead
    Take every choice from the inputs (shapes, dtypes, device).

    ## Fix safety
    No fix.
    """

    code = "TL111"
    name = "gate-detection"
    category = INTEGRITY
    message = "reads the command line, environment or call stack"

    BAD = [
        submission(LAUNCH.replace("return out", 'if os.environ.get("BENCH"):  # expect: TL111\n    return x\nreturn out'), imports="import os\n"),
        submission(LAUNCH.replace("return out", "if len(sys.argv) > 2:  # expect: TL111\n    return x\nreturn out"), imports="import sys\n"),
        submission(LAUNCH.replace("return out", 'if "timing" in inspect.stack()[1].function:  # expect: TL111\n    return x\nreturn out'), imports="import inspect\n"),
    ]
    GOOD = [submission(LAUNCH, imports="import os\n")]

    def run(self, ctx: Context) -> Iterator[Diagnostic]:
        m = ctx.model
        functions = m.submission_functions()
        written = {id(sub.value) for f in functions for sub, _, _ in f.subscript_stores}  # `os.environ[k] = v`: TL104's
        for kind in (cst.Attribute, cst.Name):
            for node, scope, _ in m.nodes(kind, functions):
                if id(node) in written:
                    continue
                hit = next((q for q in m.externals(node, scope) if q in GATE_SIGNALS), None)
                if hit is not None:
                    yield self.report(node, f"reads `{hit}`: a submission must not depend on how or by whom it is run")
