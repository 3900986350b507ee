from __future__ import annotations

from typing import Iterator

import libcst as cst

from tritonlint.examples import submission
from tritonlint.rule import DEGRADATION, Context, Diagnostic, Rule

_ROOTS = ("torch", "torch_npu", "triton", "numpy")
_DYNAMIC_IMPORTS = frozenset({"builtins.__import__", "importlib.import_module", "importlib.__import__", "pkgutil.resolve_name"})
# Tables of every loaded module or builtin: whatever is read out of them is invisible to name resolution.
_MODULE_TABLES = frozenset({"sys.modules"})
_NAMESPACE_DICTS = frozenset({"builtins.vars", "builtins.globals", "builtins.locals"})


class DynamicAttrEvasion(Rule):
    """
    ## What it does
    Flags ways of reaching torch that static name resolution cannot follow:
    `getattr(torch, "nn")`, `getattr(F, name)`, `__import__("torch")`,
    `importlib.import_module(...)`, `torch.__dict__[...]`, `vars(torch)`,
    `globals()[...]`.

    ## Why is this bad?
    The newest seed-002 verifier checks this (`no_dynamic_attr_evasion`):
    these spellings exist to hide a PyTorch call from checks like TL003.

    ## Example
    ```python
    softmax = getattr(getattr(torch, "nn").functional, "softmax")
    ```

    ## Use instead
    Name what you call; better, call a kernel.

    ## Fix safety
    No fix.
    """

    code = "TL108"
    name = "dynamic-attr-evasion"
    category = DEGRADATION
    regression_type = 3
    message = "torch reached through dynamic attribute access"
    check_key = "no_dynamic_attr_evasion"

    BAD = [
        submission(
            """
            f = getattr(torch, "exp")  # expect: TL108
            g = importlib.import_module("torch.nn.functional")  # expect: TL108
            h = torch.__dict__["tanh"]  # expect: TL108
            out = torch.empty_like(x)
            k[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), BLOCK=256)
            return out
            """,
            imports="import importlib\n",
        ),
    ]
    GOOD = [
        submission(
            """
            block = getattr(self, "block", 128)
            out = torch.empty_like(x)
            k[(triton.cdiv(x.numel(), block),)](x, out, x.numel(), BLOCK=block)
            return out
            """,
            init="self.block = 256",
        )
    ]

    def run(self, ctx: Context) -> Iterator[Diagnostic]:
        m = ctx.model
        functions = m.submission_functions()
        for site in m.calls(functions):
            call, names = site.node, site.names
            if "builtins.getattr" in names and call.args and self._torchish(m, call.args[0].value, site.scope):
                yield self.report(call, f"`{m.module.code_for_node(call).strip()}` hides which torch function runs")
            elif any(q in _DYNAMIC_IMPORTS or q in _NAMESPACE_DICTS for q in names):
                yield self.report(call, f"`{names[0]}` makes the called function invisible to static checks")
        for node, scope, _ in m.nodes(cst.Attribute, functions):
            if node.attr.value == "__dict__" and self._torchish(m, node.value, scope, _ROOTS + ("builtins",)):
                yield self.report(node, f"reads the `{m.module.code_for_node(node.value)}` namespace through __dict__")
            elif any(q in _MODULE_TABLES for q in m.externals(node, scope)):
                yield self.report(node, f"reads `{m.module.code_for_node(node)}`: any module, torch included, can be taken out of it")
        for node, scope, _ in m.nodes(cst.Name, functions):
            if node.value == "__builtins__" and not m.lookup(node.value, scope):
                yield self.report(node, "reads `__builtins__`: `__import__` and friends taken from it are invisible to static checks")

    def _torchish(self, m, expr, scope, roots=_ROOTS) -> bool:
        return any(q.split(".", 1)[0] in roots for q in m.externals(expr, scope))
