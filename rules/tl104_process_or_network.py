from __future__ import annotations

from typing import Iterator

import libcst as cst

from tritonlint.examples import submission
from tritonlint.rule import INTEGRITY, Context, Diagnostic, Rule

_PREFIXES = ("subprocess.", "socket.", "urllib.", "http.", "requests.", "ctypes.", "multiprocessing.", "shutil.rmtree")
_EXACT = frozenset({
    "os.system", "os.popen", "os.fork", "os.kill", "os.putenv", "os.unsetenv", "os.execv", "os.execvp",
    "os.execve", "os.spawnv", "os.spawnl", "os.remove", "os.unlink", "os.environ.update", "os.environ.setdefault",
    "os.environ.pop", "os.environ.clear", "builtins.exec", "builtins.eval", "builtins.compile", "builtins.breakpoint",
})


class ProcessOrNetwork(Rule):
    """
    ## What it does
    Flags subprocesses, `os.system`/`popen`/`exec*`/`fork`, writes to
    `os.environ`, `exec`/`eval`/`compile`, sockets, HTTP clients and
    `ctypes`, anywhere in the submission.

    ## Why is this bad?
    A kernel submission has no reason to leave the process. These calls can
    fetch precomputed answers, change the environment the gate relies on
    (`TRITON_INTERPRET`, cache dirs, visible devices), or run code the
    linter never saw.

    ## Example
    ```python
    os.environ["CUDA_LAUNCH_BLOCKING"] = "0"
    answer = eval(open("expected.txt").read())
    ```

    ## Use instead
    Keep the submission to tensors and kernels.

    ## Fix safety
    No fix.
    """

    code = "TL104"
    name = "process-or-network"
    category = INTEGRITY
    message = "the submission escapes the process"

    BAD = [
        submission(
            """
            out = eval("torch.empty_like(x)")  # expect: TL104
            k[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), BLOCK=256)
            return out
            """,
            imports="import os\nimport subprocess\n",
            prelude="""
            os.environ["TRITON_CACHE_DIR"] = "/tmp/mine"  # expect: TL104
            subprocess.run(["nvidia-smi"])  # expect: TL104
            """,
        ),
    ]
    GOOD = [submission(imports="import os\n", prelude="SEP = os.sep  # the os module itself is fine")]  # reading the environment is TL111's

    def run(self, ctx: Context) -> Iterator[Diagnostic]:
        m = ctx.model
        functions = [m.module_function, *m.functions]
        for site in m.calls(functions):
            q = next((q for q in site.names if q in _EXACT or q.startswith(_PREFIXES)), None)
            if q is not None:
                yield self.report(site.node, f"calls `{q}`: a submission must not leave the process or change its environment")
        for f in functions:
            for sub, scope, _ in f.subscript_stores:
                if m.qualname(sub.value, scope) == "os.environ":
                    yield self.report(sub, "writes os.environ: the gate's environment is not the submission's to change")
