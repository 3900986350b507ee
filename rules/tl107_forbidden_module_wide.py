from __future__ import annotations

from typing import Iterator

import libcst as cst

from tritonlint.rule import DEGRADATION, Context, Diagnostic, Rule

_ALLOWED_NN = frozenset(
    "torch.nn." + n for n in "Module Parameter Buffer ModuleList ModuleDict ParameterList ParameterDict Identity".split()
)


def forbidden(q: str) -> bool:
    if q.startswith("torch.nn.functional."):
        return True
    if not q.startswith("torch.nn.") or q.startswith(("torch.nn.init.", "torch.nn.parameter.", "torch.nn.utils.")):
        return False
    head = q[len("torch.nn."):].split(".", 1)[0]
    return head[:1].isupper() and "torch.nn." + head not in _ALLOWED_NN


class ForbiddenModuleWide(Rule):
    """
    ## What it does
    Flags `torch.nn` layers (`nn.Linear`, `nn.LayerNorm`, ...) and
    `torch.nn.functional` anywhere in the submission outside the path of
    forward (which TL003 covers): in `__init__`, helpers, class bodies and
    module level. The reference `Model` in the same file is exempt.

    ## Why is this bad?
    The newest seed-002 verifier checks this module-wide: a submission that
    builds `nn.Linear` in `__init__` copies the baseline's weights and
    initialisation, and a functional op parked in a helper is one call away
    from forward.

    ## Example
    ```python
    def __init__(self, d):
        super().__init__()
        self.proj = nn.Linear(d, d)
    ```

    ## Use instead
    Hold parameters as `nn.Parameter` tensors and use them in kernels.

    ## Fix safety
    No fix.
    """

    code = "TL107"
    name = "forbidden-module-wide"
    category = DEGRADATION
    regression_type = 3
    message = "torch.nn layers or functional ops in the submission"
    check_key = "no_forbidden_module_wide_ops"

    BAD = [
        """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        import triton
        import triton.language as tl


        @triton.jit
        def k(x_ptr, w_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            m = offs < n
            tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * tl.load(w_ptr + offs, mask=m), mask=m)


        def reference_path(x):
            return F.gelu(x)  # expect: TL107


        class ModelNew(nn.Module):
            def __init__(self, d=256):
                super().__init__()
                self.lin = nn.Linear(d, d)  # expect: TL107

            def forward(self, x):
                out = torch.empty_like(x)
                k[(triton.cdiv(x.numel(), 256),)](x, self.lin.weight, out, x.numel(), BLOCK=256)
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
        def k(x_ptr, w_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            m = offs < n
            tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * tl.load(w_ptr + offs, mask=m), mask=m)


        class Model(nn.Module):
            def __init__(self, d=256):
                super().__init__()
                self.lin = nn.Linear(d, d)

            def forward(self, x):
                return self.lin(x)


        class ModelNew(nn.Module):
            def __init__(self, d=256):
                super().__init__()
                self.weight = nn.Parameter(torch.empty(d))
                nn.init.ones_(self.weight)

            def forward(self, x):
                out = torch.empty_like(x)
                k[(triton.cdiv(x.numel(), 256),)](x, self.weight, out, x.numel(), BLOCK=256)
                return out
        """,
    ]

    def run(self, ctx: Context) -> Iterator[Diagnostic]:
        m = ctx.model
        if m.entry_class is None:
            return
        on_path = {id(f) for f in m.host_reachable()}
        for f in m.submission_functions():
            if id(f) in on_path:
                continue
            inner = set()
            for node, scope in f.nodes(cst.Attribute):
                inner.add(id(node.value))
            for node_type in (cst.Attribute, cst.Name):
                for node, scope in f.nodes(node_type):
                    if id(node) in inner:
                        continue  # report `nn.functional.relu` once, not also `nn.functional`
                    hits = [q for q in m.externals(node, scope) if forbidden(q)]
                    if hits:
                        yield self.report(node, f"`{hits[0]}` in the submission: seed-002 forbids torch.nn layers and functional ops module-wide")

    def check_details(self, ctx: Context, found: list[Diagnostic]) -> dict:
        return {"violations": [{"line": d.line, "call": d.message.split("`")[1], "reason": "torch.nn layer or functional op"} for d in found]}


