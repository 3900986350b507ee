"""Is the forward the class statement shows the one that runs?

Many constructs let another function run in its place: `__call__` or `__new__` on the entry
class, forward hooks, a decorator or metaclass, the entry name rebound or deleted, an attribute
written onto the class or an instance, a module-level `__getattr__`, the entry method defined
twice. `EntryFacts` finds each one (for TL110) and the functions that may run instead, which
the model adds to the forward path so that what they compute is checked too.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import libcst as cst

from tritonlint.bindings import BindingKind, ClassInfo, External, Function, Instance
from tritonlint.syntax import iter_subtree

if TYPE_CHECKING:
    from tritonlint.model import ModuleModel

# Decorators that keep the method they wrap (they only switch autograd or autocast modes).
SAFE_DECORATORS = frozenset(
    "torch." + n
    for n in "no_grad inference_mode enable_grad set_grad_enabled compiler.disable amp.custom_fwd cuda.amp.custom_fwd".split()
)
# torch's own wrappers run the same code (compiled); what that code computes is judged as written.
_TORCH_WRAPPERS = frozenset(("torch.compile", "torch.jit.script", "torch.jit.trace"))
HOOKS = frozenset("register_forward_hook register_forward_pre_hook register_module_forward_hook register_module_forward_pre_hook".split())


@dataclasses.dataclass(frozen=True)
class Replacement:
    node: cst.CSTNode  # where it is written
    what: str  # how forward is replaced, for the message
    runs: tuple[Function, ...]  # what may run in forward's place


class EntryFacts:
    def __init__(self, m: "ModuleModel") -> None:
        self.m = m
        self.replacements: list[Replacement] = []
        c = m.entry_class
        if c is not None:
            self._find(c)

    @property
    def roots(self) -> list[Function]:
        return [f for r in self.replacements for f in r.runs]

    def _add(self, node, what: str, targets=()) -> None:
        runs: list[Function] = []
        for t in targets:
            runs += self.m.functions_behind(t)
        self.replacements.append(Replacement(node, what, tuple(runs)))

    def _find(self, c: ClassInfo) -> None:
        m = self.m
        name, method = m.entry_class_name, m.entry_method_name
        lineage = m.mro(c)
        ids = {id(k) for k in lineage}
        for k in lineage:
            for dunder in ("__call__", "__new__"):
                if dunder in k.methods:
                    f = k.methods[dunder]
                    self._add(f.node.name, f"`{k.name}.{dunder}` runs instead of {name}.{method}", [f])
            for kw in k.node.keywords:
                if kw.keyword is not None and kw.keyword.value == "metaclass":
                    self._add(kw, f"a metaclass builds `{k.name}`", self._methods_of(m.resolve(kw.value, k.scope.parent)))
            for d in k.node.decorators:
                self._add(d, f"a class decorator may replace `{k.name}`", m.resolve(d.decorator, k.scope.parent))
            defs = [b for b in k.scope.bindings.get(method, ()) if b.kind is BindingKind.DEF]
            if len(defs) > 1:
                self._add(self._branch_of(k, method) or defs[-1].node.name,
                          f"`{k.name}.{method}` is defined {len(defs)} times: which one runs is decided at run time",
                          [b.function for b in defs])
            f = k.methods.get(method)
            if f is not None:
                for d in f.decorators:
                    expr = d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator
                    found = m.resolve(expr, f.scope.parent)
                    if not any(isinstance(t, External) and (t.qualname in SAFE_DECORATORS or t.qualname in _TORCH_WRAPPERS) for t in found):
                        self._add(d, f"a decorator may replace `{k.name}.{method}`", found)
        self._module_level(c, ids)

    def _module_level(self, c: ClassInfo, ids: set[int]) -> None:
        m = self.m
        name = m.entry_class_name
        first = True
        for b in m.module_scope.bindings.get(name, ()):
            if b.kind is BindingKind.CLASS and first:
                first = False
                continue
            node = b.node.name if b.kind is BindingKind.CLASS else b.node
            targets = [b.cls] if b.kind is BindingKind.CLASS else m.resolve(b.value, b.scope) if b.value is not None else []
            self._add(node, f"`{name}` is bound again after its class statement", targets)
        for f in [m.module_function, *m.functions]:
            for node, scope in f.nodes(cst.Del):
                if any(isinstance(t, cst.Name) and t.value == name for t in _del_targets(node)):
                    self._add(node, f"`{name}` is deleted after its class statement")
            for node, scope in f.nodes(cst.Assign):
                for t in node.targets:
                    target = t.target
                    if isinstance(target, cst.Attribute) and target.attr.value in self._dispatch and self._is_entry(target.value, scope, ids):
                        self._add(target, f"`{m.module.code_for_node(target)}` is written after the class statement", m.resolve(node.value, scope))
            for site in m.calls([f]):
                call = site.node
                if "builtins.setattr" in site.names and len(call.args) >= 3 and self._is_entry(call.args[0].value, site.scope, ids):
                    attr = call.args[1].value
                    fixed = attr.evaluated_value if isinstance(attr, cst.SimpleString) else None
                    if fixed is None or fixed in self._dispatch:  # a computed name may be any of them
                        self._add(call, "setattr may replace how the entry class runs", m.resolve(call.args[2].value, site.scope))
                elif isinstance(call.func, cst.Attribute) and call.func.attr.value in HOOKS:
                    self._add(call, f"`{call.func.attr.value}` runs a hook around forward", m.resolve(call.args[0].value, site.scope) if call.args else ())
        getattr_binding = next((b for b in m.module_scope.bindings.get("__getattr__", ()) if b.kind is BindingKind.DEF), None)
        if getattr_binding is not None:
            self._add(getattr_binding.node.name, "a module-level `__getattr__` may hand out another class", [getattr_binding.function])

    @property
    def _dispatch(self) -> frozenset[str]:
        """Attributes that decide what runs when the model is called."""
        return frozenset((self.m.entry_method_name, "__call__", "__new__", "__getattribute__", "__getattr__", "__class__"))

    def _is_entry(self, expr, scope, ids: set[int]) -> bool:
        """The entry class (or a base), an instance of it, or `self` in one of its methods."""
        owner = self.m.self_class(expr, scope)
        if owner is not None:
            return id(owner) in ids
        return any(
            (isinstance(t, ClassInfo) and id(t) in ids) or (isinstance(t, Instance) and isinstance(t.of, ClassInfo) and id(t.of) in ids)
            for t in self.m.resolve(expr, scope)
        )

    def _methods_of(self, targets) -> list:
        out: list = []
        for t in targets:
            out += list(t.methods.values()) if isinstance(t, ClassInfo) else [t]
        return out

    @staticmethod
    def _branch_of(k: ClassInfo, method: str) -> cst.CSTNode | None:
        """The class-level `if`/`try` statement that holds a definition of `method`."""
        for stmt in k.node.body.body:
            if isinstance(stmt, (cst.If, cst.Try)) and any(
                isinstance(n, cst.FunctionDef) and n.name.value == method for n in _walk_statements(stmt)
            ):
                return stmt
        return None


def _del_targets(node: cst.Del) -> list:
    t = node.target
    return [e.value for e in t.elements] if isinstance(t, (cst.Tuple, cst.List)) else [t]


def _walk_statements(stmt) -> list:
    return [n for n in iter_subtree(stmt) if isinstance(n, cst.FunctionDef)]
