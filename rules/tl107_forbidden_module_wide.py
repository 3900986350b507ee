from __future__ import annotations

from typing import Iterator

import libcst as cst

from tritonlint.bindings import External, Instance
from tritonlint.rule import DEGRADATION, Context, Diagnostic, Rule

_ALLOWED_NN = frozenset(
    "torch.nn." + n for n in "Module Parameter Buffer ModuleList ModuleDict ParameterList ParameterDict Identity".split()
)


def forbidden(q: str) -> bool:
    """A torch.nn functional op, or a torch.nn layer class that computes when called."""
    return q.startswith("torch.nn.functional.") or is_layer(q)


def is_layer(q: str) -> bool:
    if not q.startswith("torch.nn.") or q.startswith(("torch.nn.init.", "torch.nn.parameter.", "torch.nn.utils.")):
        return False
    head = q[len("torch.nn."):].split(".", 1)[0]
    return head[:1].isupper() and "torch.nn." + head not in _ALLOWED_NN


class ForbiddenModuleWide(Rule):
    """
    ## What it does
    Flags `torch.nn.functional` ops anywhere in the submission outside the
    path of forward (which TL003 covers): in `__init__`, helpers, class
    bodies and module level; and `torch.nn` layers (`nn.Linear`,
    `nn.LayerNorm`, ...) *called* there. Building a layer only to hold or
    initialise parameters (`self.proj = nn.Linear(d, d)`, then passing
    `self.proj.weight` to a kernel) is allowed: it computes nothing on the
    inputs, and it is how a submission gets the reference's initial weights.
    The reference `Model` in the same file is exempt.

    ## Why is this bad?
    A functional op parked in a helper or a table is one call away from
    forward, and a layer called in `__init__` precomputes with PyTorch. (The
    newest seed-002 verifier forbids any module-wide `nn` use; tritonlint
    allows parameter holders, which real honest submissions need.)

    ## Example
    ```python
    def __init__(self, d):
        super().__init__()
        self.table = F.softmax(torch.randn(d), dim=0)
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
                self.lin = nn.Linear(d, d)  # holds the weight: allowed
                self.bias = nn.Parameter(self.lin(torch.ones(d)).detach())  # expect: TL107

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
            constructed = set()  # `nn.Linear(...)`: the class named to build a parameter holder
            for call, scope in f.nodes(cst.Call):
                layers = [t.of.qualname for t in m.resolve(call.func, scope) if isinstance(t, Instance) and isinstance(t.of, External) and is_layer(t.of.qualname)]
                if layers:
                    yield self.report(call, f"calls the `{layers[0]}` layer outside forward: it computes in PyTorch", call=layers[0])
                elif any(is_layer(q) for q in m.externals(call.func, scope)):
                    constructed.add(id(call.func))
            for node_type in (cst.Attribute, cst.Name):
                for node, scope in f.nodes(node_type):
                    if id(node) in inner or id(node) in constructed:
                        continue  # report `nn.functional.relu` once, not also `nn.functional`
                    hits = [q for q in m.externals(node, scope) if q.startswith("torch.nn.functional.") or q == "torch.nn.functional"]
                    if hits:
                        yield self.report(node, f"`{hits[0]}` in the submission outside forward: a functional op one call away from it", call=hits[0])

    def check_details(self, ctx: Context, found: list[Diagnostic]) -> dict:
        return {"violations": [{"line": d.line, "call": d.data["call"], "reason": "torch.nn layer or functional op"} for d in found]}
