"""Tensor-ness: which values of the submission are (probably) torch tensors.

Built once per model, on first use (`ModuleModel.tensors`). Seeds: the entry
method's parameters (those that may be tensors) and parameters annotated
`Tensor`; then a helper called with a tensor argument has a tensor parameter,
repeated until nothing changes. Inside a function, a name is a tensor when a
value bound to it is (results of torch calls, tensor arithmetic, ...).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from tritonlint import torch_api
from tritonlint.bindings import BindingKind, ClassInfo, External, Function, Instance, Scope, ScopeKind
from tritonlint.names import MAX_DEPTH
from tritonlint.syntax import dotted

if TYPE_CHECKING:
    from tritonlint.model import ModuleModel

_IDENTITY_TESTS = (cst.Is, cst.IsNot, cst.In, cst.NotIn)
_FEED_ROUNDS = 6  # helper-parameter propagation; real call chains settle in two or three
_NAME_ROUNDS = 4  # name propagation inside one function


class Tensors:
    def __init__(self, model: "ModuleModel") -> None:
        self.m = model
        self._params: dict[Function, set[str]] = {}
        self._names: dict[Function, set[str]] = {}
        self._seed()

    def params(self, f: Function) -> set[str]:
        """Parameters of `f` that receive tensors."""
        return self._params.get(f, set())

    def _seed(self) -> None:
        m = self.m
        entry = m.entry
        if entry is None:
            return
        for p in entry.params[1:]:
            if _param_may_be_tensor(p):
                self._params.setdefault(entry, set()).add(p.name.value)
        for f in m.functions:
            for p in f.params:
                if p.annotation is not None and (dotted(p.annotation.annotation) or "").endswith("Tensor"):
                    self._params.setdefault(f, set()).add(p.name.value)
        for _ in range(_FEED_ROUNDS):
            changed = False
            for f in m.host_reachable():
                for call, scope in f.nodes(cst.Call):
                    for g in m.resolve(call.func, scope):
                        if isinstance(g, Function) and not g.is_kernel and g is not f:
                            changed |= self._feed(call, scope, g)
            if not changed:
                break

    def _feed(self, call: cst.Call, scope: Scope, g: Function) -> bool:
        m = self.m
        names = g.param_names()
        if g.cls is not None and names and isinstance(call.func, cst.Attribute) and not m.is_staticmethod(g):
            via_class = any(isinstance(t, ClassInfo) for t in m.resolve(call.func.value, scope))
            if not via_class or m.decorated_with(g, "builtins.classmethod"):
                names = names[1:]  # bound method: self/cls is implicit
        changed = False
        pos = 0
        for a in call.args:
            if a.star:
                break
            if a.keyword is not None:
                name = a.keyword.value
            elif pos < len(names):
                name = names[pos]
                pos += 1
            else:
                break
            if name not in self.params(g) and self.is_tensor(a.value, scope):
                self._params.setdefault(g, set()).add(name)
                self._names.pop(g, None)  # its names grow from the new parameter
                changed = True
        return changed

    def names(self, f: Function) -> set[str]:
        """Names in `f` bound to tensors (parameters included)."""
        if f in self._names:
            return self._names[f]
        names = set(self.params(f))
        self._names[f] = names  # visible while it grows: a recursive question gets what is known so far
        bindings = [
            b
            for s in _scopes_of(f)
            for bs in s.bindings.values()
            for b in bs
            if b.kind in (BindingKind.ASSIGN, BindingKind.WALRUS) and b.value is not None
        ]
        for _ in range(_NAME_ROUNDS):
            grew = False
            for b in bindings:
                if b.name in names:
                    continue
                value = b.value
                if b.index is not None and b.index >= 0 and isinstance(value, (cst.Tuple, cst.List)):
                    els = value.elements
                    value = els[b.index].value if b.index < len(els) else None
                if value is not None and self.is_tensor(value, b.scope):
                    names.add(b.name)
                    grew = True
            if not grew:
                break
        return names

    def is_tensor(self, expr: cst.BaseExpression, scope: Scope, depth: int = 0) -> bool:
        """Whether an expression (probably) evaluates to a torch tensor."""
        if depth > MAX_DEPTH:
            return False
        m = self.m
        d = depth + 1
        if isinstance(expr, cst.Name):
            bs = m.lookup(expr.value, scope)
            if not bs:
                return False
            owner = bs[0].scope.function
            return owner is not None and expr.value in self.names(owner)
        if isinstance(expr, cst.Attribute):
            attr = expr.attr.value
            owner = m.self_class(expr.value, scope)
            if owner is not None:
                return self._class_attr_is_tensor(owner, attr, d)
            if attr in torch_api.TENSOR_ATTRIBUTES and self.is_tensor(expr.value, scope, d):
                return True
            if _is_parameter_name(attr):  # `self.lstm.bias_ih_l0`, `conv.weight`, `bn.running_mean`
                return any(isinstance(t, Instance) and isinstance(t.of, External) for t in m.resolve(expr.value, scope))
            return False
        if isinstance(expr, cst.Call):
            return self._call_is_tensor(expr, scope, d)
        if isinstance(expr, cst.Subscript):
            return self.is_tensor(expr.value, scope, d)
        if isinstance(expr, cst.BinaryOperation):
            return self.is_tensor(expr.left, scope, d) or self.is_tensor(expr.right, scope, d)
        if isinstance(expr, cst.UnaryOperation):
            return not isinstance(expr.operator, cst.Not) and self.is_tensor(expr.expression, scope, d)
        if isinstance(expr, cst.IfExp):
            return self.is_tensor(expr.body, scope, d) or self.is_tensor(expr.orelse, scope, d)
        if isinstance(expr, cst.Comparison):
            if all(isinstance(c.operator, _IDENTITY_TESTS) for c in expr.comparisons):
                return False  # `x is None`, `k in d`: a Python bool, no device work
            return self.is_tensor(expr.left, scope, d) or any(self.is_tensor(c.comparator, scope, d) for c in expr.comparisons)
        return False

    def holds_tensors(self, expr: cst.BaseExpression, scope: Scope) -> bool:
        """A tensor, or a list/tuple literal (or a name bound to one) holding tensors."""
        if self.is_tensor(expr, scope):
            return True
        if isinstance(expr, cst.Name):
            return any(
                b.kind is BindingKind.ASSIGN and b.index is None and isinstance(b.value, (cst.List, cst.Tuple))
                and self.holds_tensors(b.value, b.scope)
                for b in self.m.lookup(expr.value, scope)
            )
        if isinstance(expr, (cst.List, cst.Tuple)):
            return any(self.is_tensor(e.value, scope) for e in expr.elements)
        return False

    def _class_attr_is_tensor(self, c: ClassInfo, attr: str, depth: int) -> bool:
        for k in self.m.mro(c):
            if attr in k.buffers:
                return True
            for value, scope, _ in k.instance_attrs.get(attr, ()):
                if self.is_tensor(value, scope, depth):
                    return True
            for b in k.scope.bindings.get(attr, ()):
                if b.kind is BindingKind.ASSIGN and b.value is not None and self.is_tensor(b.value, b.scope, depth):
                    return True
        return False

    def _call_is_tensor(self, call: cst.Call, scope: Scope, depth: int) -> bool:
        targets = self.m.resolve(call.func, scope)
        for t in targets:
            if isinstance(t, External):
                q = t.qualname
                if torch_api.is_torch_name(q):
                    if q in torch_api.NON_TENSOR_FUNCTIONS or (q.startswith(torch_api.GLUE_PREFIXES) and not q.startswith(torch_api.TENSOR_GLUE_PREFIXES)):
                        continue
                    return True
                if q in torch_api.COMPUTING_BUILTINS and any(self.holds_tensors(a.value, scope) for a in call.args):
                    return True
                if q.startswith("numpy.") and any(self.holds_tensors(a.value, scope) for a in call.args):
                    return True  # an array made from a tensor: host maths on it computes outside Triton
            elif isinstance(t, Instance) and isinstance(t.of, External) and torch_api.is_torch_name(t.of.qualname):
                return True
            elif isinstance(t, Function) and not t.is_kernel:
                if any(self.is_tensor(r, s, depth) for r, s in t.returns):
                    return True
        func = call.func
        if isinstance(func, cst.Attribute) and not targets:
            if func.attr.value in torch_api.NON_TENSOR_METHODS:
                return False
            return self.is_tensor(func.value, scope, depth)
        return False


def _scopes_of(f: Function) -> list[Scope]:
    """The function's own scope plus the comprehension scopes inside it."""
    out = [f.scope]
    for _, s in f.nodes(cst.Name):
        if s.kind is ScopeKind.COMPREHENSION and s not in out:
            out.append(s)
    return out


def _is_parameter_name(attr: str) -> bool:
    """How torch.nn layers name their parameters and buffers."""
    return "weight" in attr or "bias" in attr or attr.startswith("running_")


def _param_may_be_tensor(p: cst.Param) -> bool:
    if p.annotation is not None:
        ann = dotted(p.annotation.annotation) or ""
        if ann in ("int", "float", "bool", "str", "tuple", "list", "dict"):
            return False
    if p.default is not None and isinstance(
        p.default, (cst.Integer, cst.Float, cst.SimpleString, cst.Tuple, cst.List, cst.Dict)
    ):
        return False
    if isinstance(p.default, cst.Name) and p.default.value in ("True", "False"):
        return False
    return True
