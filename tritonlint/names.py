"""Name resolution: what an expression may stand for, by Python's scoping rules.

A `Names` answers for the tables it was given, memoising every answer; the
walk and kernel discovery each use their own, because the tables are still
growing under them, and the module model starts a fresh one once they are complete.
"""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Iterable

import libcst as cst

from tritonlint import torch_api
from tritonlint.bindings import BindingKind, Binding, ClassInfo, Container, External, Function, Instance, Launcher, Scope, ScopeKind

if TYPE_CHECKING:
    from tritonlint.walk import Tables

_BUILTINS = frozenset(dir(builtins))
MAX_DEPTH = 24  # resolution and inference give up (answer "unknown") past this depth


class Names:
    def __init__(self, tables: "Tables", follow_params: bool = True) -> None:
        # A parameter stands for what its callers pass; finding the callers needs a resolver
        # that does not ask that (`_calls_to`), and so do the walk and kernel discovery,
        # whose tables are still incomplete.
        self.follow_params = follow_params
        self.module_scope = tables.module_scope
        self.function_of_node = tables.function_of_node
        self.class_of_scope = tables.class_of_scope
        self._tables = tables
        self._resolved: dict[tuple, frozenset] = {}
        self._members: dict[Container, tuple] = {}
        self._adds: list[tuple[cst.BaseExpression, Scope, cst.Call]] | None = None
        self._callers: dict[Function, list[tuple[cst.Call, Scope]]] | None = None

    def lookup(self, name: str, scope: Scope) -> list[Binding]:
        """The bindings a name refers to in `scope` (LEGB; class bodies are invisible to their methods)."""
        s = scope
        start = scope
        while s is not None:
            if s.kind is ScopeKind.CLASS and s is not start:
                s = s.parent
                continue
            if name in s.globals:
                s = self.module_scope
            found = s.bindings.get(name)
            if found:
                return found
            s = s.parent
        return []

    def resolve(self, expr: cst.CSTNode | None, scope: Scope, depth: int = 0) -> frozenset:
        """What an expression may stand for: Functions, ClassInfos, External
        names, Instances, Launchers. Empty when unknown (locals, parameters)."""
        if expr is None or depth > MAX_DEPTH:
            return frozenset()
        key = (expr, scope)  # the key keeps the node alive, so identities stay unique
        hit = self._resolved.get(key)
        if hit is not None:
            return hit
        self._resolved[key] = frozenset()  # cycle guard
        out = frozenset(self._resolve(expr, scope, depth + 1))
        self._resolved[key] = out
        return out

    def qualname(self, expr: cst.BaseExpression, scope: Scope) -> str | None:
        """The one external qualified name an expression stands for, if any."""
        names = [t.qualname for t in self.resolve(expr, scope) if isinstance(t, External)]
        return names[0] if len(names) == 1 else (sorted(names)[0] if names else None)

    def externals(self, expr: cst.BaseExpression, scope: Scope) -> list[str]:
        return sorted(t.qualname for t in self.resolve(expr, scope) if isinstance(t, External))

    def _resolve(self, expr, scope: Scope, depth: int) -> Iterable:
        if isinstance(expr, cst.Name):
            return self._resolve_name(expr.value, scope, depth)
        if isinstance(expr, cst.Attribute):
            return self._resolve_attribute(expr, scope, depth)
        if isinstance(expr, cst.Call):
            return self._resolve_call(expr, scope, depth)
        if isinstance(expr, cst.Subscript):  # `kernel[grid]`, or a member of a container
            out = set()
            for t in self.resolve(expr.value, scope, depth):
                if isinstance(t, Function) and t.is_kernel:
                    out.add(Launcher(t))
                elif isinstance(t, Container):
                    out.update(self.members(t, depth))
            return out
        if isinstance(expr, (cst.List, cst.Tuple, cst.Set, cst.Dict, cst.ListComp, cst.DictComp, cst.GeneratorExp)):
            return {Container(expr, scope)}
        if isinstance(expr, cst.Lambda):
            f = self.function_of_node.get(expr)
            return {f} if f else ()
        if isinstance(expr, cst.IfExp):
            return self.resolve(expr.body, scope, depth) | self.resolve(expr.orelse, scope, depth)
        if isinstance(expr, cst.BooleanOperation):
            return self.resolve(expr.left, scope, depth) | self.resolve(expr.right, scope, depth)
        return ()

    def _resolve_name(self, name: str, scope: Scope, depth: int) -> Iterable:
        bindings = self.lookup(name, scope)
        if not bindings:
            return {External("builtins." + name)} if name in _BUILTINS else ()
        out = set()
        for b in bindings:
            if b.kind is BindingKind.IMPORT:
                out.add(External(b.qualname))
            elif b.kind is BindingKind.DEF:
                out.add(b.function)
            elif b.kind is BindingKind.CLASS:
                out.add(b.cls)
            elif b.kind in (BindingKind.ASSIGN, BindingKind.WALRUS) and b.index is None:
                out |= self.resolve(b.value, b.scope, depth)
            elif b.kind is BindingKind.PARAM and self.follow_params:
                out |= self._param_targets(b, depth)
            elif b.kind is BindingKind.LOOP and b.value is not None:  # `for layer in self.layers`: each member
                for t in self.resolve(b.value, b.scope, depth):
                    if isinstance(t, Container):
                        out.update(self.members(t, depth))
        return out

    def _resolve_attribute(self, expr: cst.Attribute, scope: Scope, depth: int) -> Iterable:
        attr = expr.attr.value
        owner = self.self_class(expr.value, scope)
        if owner is not None:
            return self.class_member(owner, attr, depth) or self._inherited(owner, attr)
        base = expr.value
        if isinstance(base, cst.Call) and isinstance(base.func, cst.Name) and base.func.value == "super":
            fn = scope.function
            while fn is not None and fn.cls is None and fn.scope.parent is not None:
                fn = fn.scope.parent.function
            if fn is not None and fn.cls is not None:
                out = set()
                for bc in self.bases(fn.cls):
                    out |= self.class_member(bc, attr, depth) if isinstance(bc, ClassInfo) else {External(f"{bc.qualname}.{attr}")}
                return out
        out = set()
        for t in self.resolve(base, scope, depth):
            if isinstance(t, External):
                out.add(External(f"{t.qualname}.{attr}"))
            elif isinstance(t, ClassInfo):
                out |= self.class_member(t, attr, depth) or self._inherited(t, attr)
            elif isinstance(t, Instance):
                if isinstance(t.of, ClassInfo):
                    out |= self.class_member(t.of, attr, depth) or self._inherited(t.of, attr)
                else:
                    out.add(External(f"{t.of.qualname}().{attr}"))
        return out

    def _resolve_call(self, call: cst.Call, scope: Scope, depth: int) -> Iterable:
        out = set()
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in torch_api.CONTAINER_READS | torch_api.CONTAINER_VIEWS:
            for t in self.resolve(func.value, scope, depth):  # `ops.get(name)`, `self.blocks.values()`
                if isinstance(t, Container):
                    out.update(self.members(t, depth) if func.attr.value in torch_api.CONTAINER_READS else (t,))
        for t in self.resolve(call.func, scope, depth):
            if isinstance(t, ClassInfo):
                out.add(Instance(t))
            elif isinstance(t, External):
                q = t.qualname
                if q in torch_api.CONTAINER_CLASSES:
                    out.add(Container(call, scope))
                elif q in torch_api.PASS_THROUGH_CALLS or q in torch_api.KERNEL_WRAPPERS:
                    if call.args:
                        out |= self.resolve(call.args[0].value, scope, depth)
                    if q in torch_api.KERNEL_WRAPPERS:
                        out.add(External(q + "()"))
                elif q.endswith("()") and q[:-2] in torch_api.KERNEL_WRAPPERS:
                    if call.args:
                        out |= self.resolve(call.args[0].value, scope, depth)
                elif q.rsplit(".", 1)[-1][:1].isupper():
                    out.add(Instance(t))
                else:
                    out.add(External(q + "()"))
            elif isinstance(t, Function) and not t.is_kernel:
                for ret, rscope in t.returns:
                    out |= self.resolve(ret, rscope, depth)
        return out

    # -- parameters: what the callers pass, and the default
    def _param_targets(self, b: Binding, depth: int) -> set:
        fn = b.scope.function
        if fn is None or fn.scope is not b.scope:
            return set()
        names = fn.param_names()
        pos = names.index(b.name)
        out: set = set()
        p = fn.params[pos]
        if p.default is not None:
            out |= self.resolve(p.default, fn.scope.parent, depth)
        if p.star:  # *args / **kwargs: which argument lands there is not tracked
            return out
        bound = fn.cls is not None and not fn.is_lambda and not self.is_staticmethod(fn)
        if bound and pos == 0:
            return out  # self / cls: `self_class` answers for it
        for call, scope in self._calls_to().get(fn, ()):
            arg = self._argument(call, b.name, pos - (1 if bound and isinstance(call.func, cst.Attribute) else 0))
            if arg is not None:
                out |= self.resolve(arg, scope, depth)
        return out

    @staticmethod
    def _argument(call: cst.Call, name: str, pos: int) -> cst.BaseExpression | None:
        i = 0
        for a in call.args:
            if a.keyword is not None:
                if a.keyword.value == name:
                    return a.value
            elif a.star:
                return None
            else:
                if i == pos:
                    return a.value
                i += 1
        return None

    def _calls_to(self) -> dict[Function, list[tuple[cst.Call, Scope]]]:
        """Every call in the module, by the function of this module it may call."""
        if self._callers is None:
            callers: dict[Function, list[tuple[cst.Call, Scope]]] = {}
            t = self._tables
            direct = Names(t, follow_params=False)
            for f in [t.module_function, *t.functions]:
                for call, scope in f.nodes(cst.Call):
                    for target in direct.resolve(call.func, scope):
                        if isinstance(target, Function):
                            callers.setdefault(target, []).append((call, scope))
            self._callers = callers
        return self._callers

    # -- containers
    def members(self, c: Container, depth: int = 0) -> tuple:
        """What a container may hold, in source order: what it was built with, and what
        `append`/`extend`/... gave it."""
        hit = self._members.get(c)
        if hit is not None:
            return hit
        self._members[c] = ()  # cycle guard
        out: dict = {}  # ordered set: messages name the first member, so the order must not vary
        for expr, scope in self._elements(c):
            out.update(dict.fromkeys(self._member_targets(expr, scope, depth)))
        for receiver, scope, call in self._container_adds():
            if c in self.resolve(receiver, scope, depth) and call.args:
                arg = call.args[-1].value  # append(x), insert(i, x), add_module(name, x), extend(xs), update(d)
                out.update(dict.fromkeys(self._member_targets(arg, scope, depth, spread=call.func.attr.value in ("extend", "update"))))
        result = self._members[c] = tuple(out)
        return result

    def _elements(self, c: Container) -> list[tuple[cst.BaseExpression, Scope]]:
        node, scope = c.node, c.scope
        if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
            return [(e.value, scope) for e in node.elements]
        if isinstance(node, cst.Dict):
            return [(e.value, scope) for e in node.elements]
        if isinstance(node, (cst.ListComp, cst.GeneratorExp)):
            return [(node.elt, scope)]
        if isinstance(node, cst.DictComp):
            return [(node.value, scope)]
        if isinstance(node, cst.Call):  # Sequential(a, b); ModuleList([a, b]); ModuleDict({"k": a})
            return [(a.value, scope) for a in node.args if a.keyword is None]
        return []

    def _member_targets(self, expr, scope: Scope, depth: int, spread: bool = False) -> list:
        out: list = []
        for t in sorted(self.resolve(expr, scope, depth), key=repr):
            if isinstance(t, Container) and (spread or isinstance(t.node, (cst.List, cst.Tuple, cst.Dict, cst.ListComp, cst.DictComp, cst.GeneratorExp))):
                out += self.members(t, depth)  # a list handed to ModuleList/extend: its elements
            else:
                out.append(t)
        return out

    def _container_adds(self) -> list[tuple[cst.BaseExpression, Scope, cst.Call]]:
        if self._adds is None:
            t = self._tables
            self._adds = [
                (call.func.value, scope, call)
                for f in [t.module_function, *t.functions]
                for call, scope in f.nodes(cst.Call)
                if isinstance(call.func, cst.Attribute) and call.func.attr.value in torch_api.CONTAINER_ADDS
            ]
        return self._adds

    # -- functions and classes
    def decorated_with(self, f: Function, qualname: str) -> bool:
        return any(
            isinstance(t, External) and t.qualname == qualname
            for d in f.decorators
            for t in self.resolve(d.decorator, f.scope.parent)
        )

    def is_staticmethod(self, f: Function) -> bool:
        return self.decorated_with(f, "builtins.staticmethod")

    def self_class(self, expr, scope: Scope) -> ClassInfo | None:
        """The class when `expr` names the self/cls parameter of its method."""
        if not isinstance(expr, cst.Name):
            return None
        bs = self.lookup(expr.value, scope)
        if len(bs) != 1 or bs[0].kind is not BindingKind.PARAM:
            return None
        fn = bs[0].scope.function
        if fn is None or fn.cls is None or not fn.params or fn.params[0] is not bs[0].node:
            return None
        if self.is_staticmethod(fn):
            return None
        return fn.cls

    def bases(self, c: ClassInfo) -> list:
        out = []
        for a in c.node.bases:
            for t in self.resolve(a.value, c.scope.parent):
                if isinstance(t, (ClassInfo, External)):
                    out.append(t)
        return out

    def mro(self, c: ClassInfo) -> list[ClassInfo]:
        seen, order, todo = set(), [], [c]
        while todo:
            k = todo.pop(0)
            if id(k) in seen:
                continue
            seen.add(id(k))
            order.append(k)
            todo += [b for b in self.bases(k) if isinstance(b, ClassInfo)]
        return order

    def class_member(self, c: ClassInfo, attr: str, depth: int = 0) -> set:
        out: set = set()
        for k in self.mro(c):
            if attr in k.methods:
                out.add(k.methods[attr])
                return out
            for b in k.scope.bindings.get(attr, ()):
                if b.kind is BindingKind.ASSIGN and b.index is None:
                    out |= self.resolve(b.value, b.scope, depth)
            for value, scope, _ in k.instance_attrs.get(attr, ()):
                out |= self.resolve(value, scope, depth)
            if out:
                return out
        return out

    def _inherited(self, c: ClassInfo, attr: str) -> set:
        """`Fn.apply`, `self.register_buffer`: a method torch's base class defines. Only names torch
        really defines there: any other attribute stays unknown (it may have been set with setattr)."""
        for k in self.mro(c):
            for b in self.bases(k):
                if isinstance(b, External) and attr in torch_api.INHERITED_METHODS.get(b.qualname, ()):
                    return {External(f"{b.qualname}.{attr}")}
        return set()

    def enclosing_class(self, f: Function) -> ClassInfo | None:
        s = f.scope.parent
        while s is not None:
            if s.kind is ScopeKind.CLASS:
                return self.class_of_scope[s]
            s = s.parent
        return None
