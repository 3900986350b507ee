"""What PyTorch computes: the shared answer for every rule that asks.

`compute_sites(model, function)` yields each call or operator in one function
that runs math in PyTorch (not glue: allocation, views, metadata): the node,
the source text of the call, seed 002's `reason`, and `says`, what the call
does in words that do not repeat its text (for messages: "`{call}` {says}").
"""

from __future__ import annotations

from typing import Iterator, NamedTuple

import libcst as cst

from tritonlint import torch_api
from tritonlint.bindings import Container, External, Function, Instance, Scope
from tritonlint.model import ModuleModel


class ComputeSite(NamedTuple):
    node: cst.CSTNode  # the call or operation
    call: str  # the source text of the callee or operator
    reason: str  # seed 002's wording, for `checks.no_forbidden_torch_ops.violations`
    says: str  # completes "`{call}` ...", e.g. "runs in PyTorch"
    anchor: cst.CSTNode  # where to report it: its own token, so `a * b * c` gives two positions, not one twice


def anchor(node: cst.CSTNode) -> cst.CSTNode:
    """The token that names what runs: the operator of an operation, the method of `x.f(...)`."""
    if isinstance(node, (cst.BinaryOperation, cst.AugAssign)):
        return node.operator  # (a unary operation starts at its operator already)
    if isinstance(node, cst.Comparison):
        return node.comparisons[0].operator
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        return node.func.attr
    return node


class _Why(NamedTuple):
    reason: str
    says: str


_RUNS = "runs in PyTorch"


def compute_sites(m: ModuleModel, f: Function, extra: frozenset[str] = frozenset()) -> Iterator[ComputeSite]:
    code = m.module.code_for_node
    for call, scope in f.nodes(cst.Call):
        why = _call_why(m, call, scope, extra)
        if why:
            yield ComputeSite(call, code(call.func).strip(), why.reason, why.says, anchor(call))
    for op, scope in f.nodes(cst.BinaryOperation):
        if m.is_tensor(op.left, scope) or m.is_tensor(op.right, scope):
            sym = code(op.operator).strip()
            yield ComputeSite(op, sym, f"tensor operator `{sym}` runs a PyTorch kernel", f"on tensors {_RUNS}", anchor(op))
    for op, scope in f.nodes(cst.UnaryOperation):
        if not isinstance(op.operator, cst.Not) and m.is_tensor(op.expression, scope):
            sym = code(op.operator).strip()
            yield ComputeSite(op, sym, f"tensor operator `{sym}` runs a PyTorch kernel", f"on a tensor {_RUNS}", anchor(op))
    for op, scope in f.nodes(cst.Comparison):
        if m.is_tensor(op, scope):
            sym = code(op.comparisons[0].operator).strip()
            yield ComputeSite(op, sym, f"tensor comparison `{sym}` runs a PyTorch kernel", f"comparing tensors {_RUNS}", anchor(op))
    for op, scope in f.nodes(cst.AugAssign):
        if m.is_tensor(op.target, scope) or m.is_tensor(op.value, scope):
            sym = code(op.operator).strip()
            yield ComputeSite(op, sym, f"in-place tensor operator `{sym}` runs a PyTorch kernel", f"on a tensor {_RUNS}", anchor(op))
    for sub, scope, value in f.subscript_stores:
        if m.is_tensor(sub.value, scope) and not _scalar_into_element(m, sub, value, scope):
            yield ComputeSite(sub, code(sub).strip() + " = ...", "indexed write into a tensor runs a PyTorch kernel",
                              f"(an indexed write into a tensor) {_RUNS}", anchor(sub))
    for sub, scope in f.nodes(cst.Subscript):
        if m.is_tensor(sub.value, scope) and any(
            isinstance(el.slice, cst.Index) and m.is_tensor(el.slice.value, scope) for el in sub.slice
        ):
            yield ComputeSite(sub, code(sub).strip(), "indexing with a tensor gathers in PyTorch", f"(a gather by a tensor index) {_RUNS}", anchor(sub))


def _scalar_into_element(m: ModuleModel, sub: cst.Subscript, value, scope: Scope) -> bool:
    """`out[0] = 0.0` on a buffer this code allocated: setting up an allocation, not computing.
    (A slice or a tensor index, a tensor value, or a buffer that holds a result is a PyTorch kernel.)"""
    if value is None or m.is_tensor(value, scope) or not _is_allocation(m, sub.value, scope):
        return False
    return all(isinstance(el.slice, cst.Index) and not m.is_tensor(el.slice.value, scope) for el in sub.slice)


def _is_allocation(m: ModuleModel, expr, scope: Scope) -> bool:
    if not isinstance(expr, cst.Name):
        return False
    bindings = m.lookup(expr.value, scope)
    for b in bindings:
        value = b.value if b.index is None else None
        if not isinstance(value, cst.Call):
            return False
        names = m.externals(value.func, scope)
        if not names or not all(q in torch_api.ALLOCATIONS for q in names):
            return False
    return bool(bindings)


def call_reason(m: ModuleModel, call: cst.Call, scope: Scope, extra: frozenset[str] = frozenset()) -> str | None:
    """Why this call computes in PyTorch (seed 002's wording), or None when it is glue or not torch."""
    why = _call_why(m, call, scope, extra)
    return why.reason if why else None


def _call_why(m: ModuleModel, call: cst.Call, scope: Scope, extra: frozenset[str]) -> _Why | None:
    targets = m.resolve(call.func, scope)
    text = m.module.code_for_node(call.func).strip()
    for t in targets:
        if isinstance(t, External):
            why = _external_why(m, t.qualname, text, call, scope, extra)
            if why:
                return why
        elif isinstance(t, Instance) and isinstance(t.of, External):
            why = _layer_why(t.of.qualname, extra)
            if why:
                return why
        elif isinstance(t, Container):  # calling nn.Sequential calls each member
            for member in m.members(t):
                if isinstance(member, Instance) and isinstance(member.of, External):
                    why = _layer_why(member.of.qualname, extra)
                    if why:
                        return _Why(why.reason, f"runs its {member.of.qualname} member in PyTorch")
    func = call.func
    if not targets and isinstance(func, cst.Attribute) and m.is_tensor(func.value, scope):
        return _method_why(m, func.attr.value, call, scope, extra)
    return None


def _layer_why(q: str, extra) -> _Why | None:
    if torch_api.is_torch_name(q) and q not in torch_api.GLUE_LAYERS and q not in extra:
        return _Why(f"calling the {q} layer computes in PyTorch", f"runs the {q} layer in PyTorch")
    return None


def _external_why(m, q: str, text: str, call, scope, extra) -> _Why | None:
    if "()." in q:  # a method on the result of an external call: `torch.empty(...).fill_(0)`
        head, method = q.rsplit(".", 1)
        if torch_api.is_torch_name(head) and "." not in method:
            return _method_why(m, method, call, scope, extra)
        return None
    if torch_api.is_torch_name(q):
        if torch_api.is_glue_function(q, extra):
            return None
        return _Why(f"{q} computes in PyTorch", _RUNS if text == q else f"({q}) {_RUNS}")
    if q in torch_api.COMPUTING_BUILTINS and any(m.holds_tensors(a.value, scope) for a in call.args):
        return _Why(f"builtin {q[9:]}() on a tensor computes in PyTorch", f"on a tensor {_RUNS}")
    return None


def _method_why(m, name: str, call: cst.Call, scope, extra) -> _Why | None:
    if f"Tensor.{name}" in extra:
        return None
    if name == "to":
        if is_conversion(m, call, scope):
            return _Why("Tensor.to(dtype) converts data in PyTorch; cast inside the kernel", "converts data in PyTorch (cast inside the kernel)")
        return None
    if name in torch_api.GLUE_METHODS:
        return None
    if name in torch_api.CONVERSION_METHODS:
        return _Why(f"Tensor.{name}() converts data in PyTorch; cast inside the kernel", "converts data in PyTorch (cast inside the kernel)")
    return _Why(f"Tensor.{name}() computes in PyTorch", f"(Tensor.{name}) {_RUNS}")


def is_conversion(m: ModuleModel, call: cst.Call, scope: Scope) -> bool:
    """`.to(...)` that changes dtype (not only device)."""
    for a in call.args:
        if a.keyword is not None:
            if a.keyword.value == "dtype":
                return True
            continue
        v = a.value
        if isinstance(v, cst.Attribute) and v.attr.value == "dtype":
            return True
        if any(torch_api.is_dtype_name(q) for q in m.externals(v, scope)):
            return True
        if m.is_tensor(v, scope):
            return True  # `.to(other)` takes other's dtype
    return False
