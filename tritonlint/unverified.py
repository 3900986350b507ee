"""A closed world on the forward path: what the analysis cannot resolve is not assumed innocent.

`unverified_calls` yields calls on a host function whose callee resolves to nothing the
analysis can vouch for (a kernel, a function or class of this module, a safe builtin,
torch/triton glue), made with tensor arguments or on a tensor: `sys.modules["torch"].tanh(x)`,
`operator.mul(x, y)`, `np.clip(a, 0, 6)`, `type(x).relu(x)`, a name that `exec` defined.
`torch_values` yields torch compute functions used as values (stored, passed, defaulted)
rather than called, since the call that runs them is out of sight.
Honest single-file submissions need neither, so neither costs precision.
"""

from __future__ import annotations

from typing import Iterable, Iterator

import libcst as cst

from tritonlint import torch_api
from tritonlint.bindings import BindingKind, ClassInfo, Container, External, Function, Instance, Launcher, Scope, ScopeKind
from tritonlint.model import REFERENCE_CLASSES, REFERENCE_FUNCTIONS, ModuleModel
from tritonlint.syntax import dotted

# Builtins that only inspect, convert Python values or build containers.
SAFE_BUILTINS = frozenset(
    "builtins." + n
    for n in (
        "len range int float bool str bytes tuple list dict set frozenset isinstance issubclass "
        "hasattr getattr callable print repr format enumerate zip reversed sorted iter next any all "
        "id hash super type slice object property staticmethod classmethod divmod round min max abs sum pow "
        "ValueError TypeError RuntimeError AssertionError NotImplementedError KeyError IndexError"
    ).split()
)
# Methods of Python's own containers and strings, safe on anything that is not a tensor.
PYTHON_METHODS = frozenset(
    "append extend insert pop get items keys values update setdefault copy index count "
    "join split format startswith endswith lower upper strip replace add remove discard".split()
)


def unverified_calls(m: ModuleModel, f: Function, skip: set[int]) -> Iterator[tuple[cst.Call, str]]:
    """(call, its text) for each call in `f` the analysis cannot vouch for; `skip`: ids already reported."""
    for call, scope in f.nodes(cst.Call):
        if id(call) in skip or _verified(m, call, scope):
            continue
        if any(id(a.value) in skip for a in call.args):
            continue  # `obj.copy_(torch.tanh(x))`: the construct is already reported at its argument
        if _touches_tensors(m, call, scope):
            yield call, m.module.code_for_node(call.func).strip()


def _verified(m: ModuleModel, call: cst.Call, scope: Scope) -> bool:
    targets = m.resolve(call.func, scope)
    func = call.func
    if not targets:
        # a method on a tensor is TL003's (compute) or glue; Python's own methods on the rest
        return isinstance(func, cst.Attribute) and (m.is_tensor(func.value, scope) or func.attr.value in PYTHON_METHODS)
    return all(_vouched(t) for t in targets)


def _vouched(t) -> bool:
    if isinstance(t, (Function, ClassInfo, Launcher, Container)):
        return True  # followed by the call graph (a container: each member)
    if isinstance(t, Instance):
        return isinstance(t.of, ClassInfo) or torch_api.is_torch_name(t.of.qualname) or _is_reference_name(t.of.qualname)
    if isinstance(t, External):
        q = t.qualname
        if _is_reference_name(q.split("()", 1)[0]):
            return True  # the reference task's Model/get_inputs: TL105 reports it
        return (torch_api.is_torch_name(q.split("()", 1)[0]) or q.startswith("triton.") or q in SAFE_BUILTINS
                or q.startswith("math.") or q in torch_api.NUMPY_CONVERSIONS)
    return False


def _is_reference_name(q: str) -> bool:
    return q.rsplit(".", 1)[-1] in REFERENCE_CLASSES | REFERENCE_FUNCTIONS


def _touches_tensors(m: ModuleModel, call: cst.Call, scope: Scope) -> bool:
    """Made with tensor arguments, on a tensor, or through a callee derived from one (`getattr(x, name)()`)."""
    func = call.func
    if isinstance(func, cst.Attribute) and m.is_tensor(func.value, scope):
        return True
    if isinstance(func, cst.Call) and _touches_tensors(m, func, scope):
        return True
    return any(m.holds_tensors(a.value, scope) for a in call.args)


def torch_values(m: ModuleModel, functions: Iterable[Function], skip: set[int]) -> Iterator[tuple[cst.CSTNode, str]]:
    """(node, qualified name) for each torch compute function referenced but not called.
    Decorators are not values handed around (`@torch.compile` wraps what it decorates)."""
    decorators = {id(d.decorator) for g in m.functions for d in g.decorators}
    decorators |= {id(d.decorator) for c in m.classes for d in c.node.decorators}
    skip = skip | decorators
    for f in functions:
        called = {id(c.func) for c, _ in f.nodes(cst.Call)}
        passed = set()  # the function handed to functools.partial is followed by resolution
        heads = set()  # `torch.nn.functional` inside `torch.nn.functional.relu`
        for c, scope in f.nodes(cst.Call):
            if c.args and any(q in torch_api.PASS_THROUGH_CALLS for q in m.externals(c.func, scope)):
                passed.add(id(c.args[0].value))
        for node, _ in f.nodes(cst.Attribute):
            heads.add(id(node.value))
        for node, _ in f.nodes(cst.Assign):  # `torch.allclose = ...` writes the name (TL102's), it does not use it
            heads.update(id(t.target) for t in node.targets)
        for kind in (cst.Attribute, cst.Name):
            for node, scope in f.nodes(kind):
                if id(node) in called or id(node) in heads or id(node) in passed or id(node) in skip:
                    continue
                if _in_reference(m, scope) or not _spells_import(m, node, scope):
                    continue  # a local alias (`fn = ops["tanh"]`) is reported where it is called
                for q in m.externals(node, scope):
                    if _is_compute_function(q):
                        yield node, q
                        break


def _spells_import(m: ModuleModel, node: cst.CSTNode, scope: Scope) -> bool:
    """`torch.tanh`, `F.gelu`, `tanh` after `from torch import tanh`: a name rooted at an import."""
    name = dotted(node)
    if name is None:
        return False
    bindings = m.lookup(name.split(".", 1)[0], scope)
    return bool(bindings) and all(b.kind is BindingKind.IMPORT for b in bindings)


def _is_compute_function(q: str) -> bool:
    if not torch_api.is_torch_name(q) or "()" in q or torch_api.is_glue_function(q) or torch_api.is_dtype_name(q):
        return False
    last = q.rsplit(".", 1)[-1]
    return q.count(".") >= 1 and last[:1].islower() and last not in _NOT_FUNCTIONS


# torch attributes that are modules, constants or flags, not functions that compute
_NOT_FUNCTIONS = frozenset("nn functional linalg special fft ops aten cuda npu pi e inf nan newaxis testing backends".split())


def _in_reference(m: ModuleModel, scope: Scope) -> bool:
    s = scope
    while s is not None:
        if s.kind is ScopeKind.CLASS:
            c = m.class_of_scope[s]
            if c is not m.entry_class and c.name in REFERENCE_CLASSES:
                return True
        if s.function is not None and s.kind is not ScopeKind.MODULE and m.is_reference(s.function):
            return True
        s = s.parent
    return False
