from __future__ import annotations

from typing import Iterator

import libcst as cst

from tritonlint.bindings import ClassInfo, External, Function
from tritonlint.model import REFERENCE_CLASSES, REFERENCE_FUNCTIONS
from tritonlint.syntax import dotted
from tritonlint.rule import DEGRADATION, Context, Diagnostic, Rule

_REFERENCE_NAMES = REFERENCE_CLASSES | REFERENCE_FUNCTIONS


def _reference_module(name: str) -> bool:
    last = name.rsplit(".", 1)[-1]
    return last.endswith("_torch") or last in ("reference", "ref", "golden")


class ReferenceUse(Rule):
    """
    ## What it does
    Flags imports of the reference task (`from gelu_torch import Model`, any
    import of `Model`, `get_inputs` or `get_init_inputs`, modules named
    `*_torch`, the seed-002 naming of reference files) and any use of a
    reference `Model` class from the path of `ModelNew.forward`.

    ## Why is this bad?
    The reference is the golden answer. A submission that runs it, or reads
    its inputs generator, returns the expected output instead of computing
    it.

    ## Example
    ```python
    from softmax_torch import Model

    def forward(self, x):
        return Model().forward(x)
    ```

    ## Use instead
    Implement the operator; the reference stays the gate's business.

    ## Fix safety
    No fix.
    """

    code = "TL105"
    name = "reference-use"
    category = DEGRADATION
    regression_type = 3
    message = "the submission uses the reference implementation"

    BAD = [
        """
        import torch
        import torch.nn as nn
        from gelu_torch import Model, get_inputs  # expect: TL105
        import softmax_torch  # expect: TL105


        class ModelNew(nn.Module):  # expect: TL001
            def forward(self, x):
                return Model()(x)  # expect: TL105
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


        class Model(nn.Module):
            def forward(self, x):
                return x + 1


        class ModelNew(nn.Module):
            def forward(self, x):
                out = torch.empty_like(x)
                k[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), BLOCK=256)
                return out


        def get_inputs():
            return [torch.randn(1024)]
        """,
    ]

    def run(self, ctx: Context) -> Iterator[Diagnostic]:
        m = ctx.model
        for f in [m.module_function, *m.functions]:
            for node, _ in f.nodes(cst.ImportFrom):
                mod = dotted(node.module) if node.module is not None else ""
                names = [] if isinstance(node.names, cst.ImportStar) else [dotted(a.name) for a in node.names]
                if (mod and _reference_module(mod)) or any(n in _REFERENCE_NAMES for n in names):
                    yield self.report(node, f"imports the reference task ({m.module.code_for_node(node).strip()})")
            for node, _ in f.nodes(cst.Import):
                if any(_reference_module(dotted(a.name) or "") for a in node.names):
                    yield self.report(node, f"imports the reference task ({m.module.code_for_node(node).strip()})")
        for f in m.host_reachable():
            for node, scope in f.nodes(cst.Name):
                if any(self._is_reference(m, t) for t in m.resolve(node, scope)):
                    yield self.report(node, f"forward uses the reference `{node.value}`")

    def _is_reference(self, m, t) -> bool:
        if isinstance(t, External):
            return t.qualname.rsplit(".", 1)[-1] in _REFERENCE_NAMES
        if isinstance(t, ClassInfo):
            return t.name in REFERENCE_CLASSES and t is not m.entry_class
        if isinstance(t, Function):
            return m.is_reference(t) and t.name in REFERENCE_FUNCTIONS
        return False
