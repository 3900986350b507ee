"""Facts about kernels and their launches that several rules ask for."""

from __future__ import annotations

from functools import cached_property
from typing import Callable

import libcst as cst

from tritonlint import torch_api
from tritonlint.bindings import Function, LaunchSite, Scope
from tritonlint.model import ModuleModel
from tritonlint.syntax import iter_subtree

_POINTER_OPS = {
    "triton.language.load": "load",
    "triton.language.store": "store",
}


def launch_arguments(m: ModuleModel, site: LaunchSite) -> dict[str, tuple[cst.BaseExpression, Scope]]:
    """Kernel parameter name -> the expression passed for it at this launch."""
    call = m.launch_call.get(site.node)
    if call is None:
        return {}
    scope = next((s for n, s in site.function.nodes(cst.Subscript) if n is site.node), site.function.scope)
    names = site.kernel.param_names()
    out = {}
    for i, a in enumerate(call.args):
        if a.star:
            break
        name = a.keyword.value if a.keyword is not None else (names[i] if i < len(names) else None)
        if name is not None:
            out[name] = (a.value, scope)
    return out


def derived_names(m: ModuleModel, k: Function, seeds: set[str], source: Callable[[cst.Call, Scope], bool]) -> set[str]:
    """Names in kernel `k` whose value depends on `seeds` or on a call `source` accepts."""
    refs = m.analysis(KernelFacts).binding_refs(k)
    names = set(seeds)
    for name, _, calls, scope in refs:
        if name not in names and any(source(c, scope) for c in calls):
            names.add(name)
    grew = True
    while grew:
        grew = False
        for name, reads, _, _ in refs:
            if name not in names and reads & names:
                names.add(name)
                grew = True
    return names


def depends(expr: cst.CSTNode, scope: Scope, names: set[str], source: Callable[[cst.Call, Scope], bool]) -> bool:
    for n in iter_subtree(expr):
        if isinstance(n, cst.Name) and n.value in names:
            return True
        if isinstance(n, cst.Call) and source(n, scope):
            return True
    return False


def pointer_accesses(m: ModuleModel, k: Function) -> list[tuple[str, cst.Call, Scope]]:
    """(load|store|atomic, call, scope) for every memory access in a kernel."""
    out = []
    for site in m.calls([k]):
        for q in site.names:
            kind = _POINTER_OPS.get(q) or ("atomic" if q.startswith("triton.language.atomic_") else None)
            if kind:
                out.append((kind, site.node, site.scope))
                break
    return out


def pointer_arg(call: cst.Call) -> cst.BaseExpression | None:
    for a in call.args:
        if a.keyword is None or a.keyword.value == "pointer":
            return a.value
    return None


def real_kernels(m: ModuleModel) -> list[Function]:
    """The kernels that do something Triton does: some name in them resolves into triton (`tl.load`,
    `tl.arange`, ...). A `@triton.jit` function that does not is no kernel. Computed once per model."""
    return m.analysis(KernelFacts).real_kernels


def param_roles(m: ModuleModel, k: Function) -> dict[str, set[str]]:
    """Kernel pointer parameter -> the kinds of access made through it (load, store, atomic)."""
    return m.analysis(KernelFacts).param_roles(k)


class KernelFacts:
    """Per-kernel facts that several rules ask for, each computed once per model."""

    def __init__(self, model: ModuleModel) -> None:
        self.m = model
        self._refs: dict[Function, list[tuple[str, set[str], list[cst.Call], Scope]]] = {}
        self._roles: dict[Function, dict[str, set[str]]] = {}

    @cached_property
    def real_kernels(self) -> list[Function]:
        return [k for k in self.m.kernels if self._uses_triton(k)]

    def _uses_triton(self, k: Function) -> bool:
        return any(
            q.startswith(torch_api.KERNEL_MATH_PREFIXES)
            for kind in (cst.Attribute, cst.Name)
            for node, scope in k.nodes(kind)
            for q in self.m.externals(node, scope)
        )

    def binding_refs(self, k: Function) -> list[tuple[str, set[str], list[cst.Call], Scope]]:
        """For each assignment in kernel `k`: (name, names its value reads, calls in it, scope)."""
        if k not in self._refs:
            refs = []
            for bindings in k.scope.bindings.values():
                for b in bindings:
                    if b.value is None:
                        continue
                    names, calls = set(), []
                    for n in iter_subtree(b.value):
                        if isinstance(n, cst.Name):
                            names.add(n.value)
                        elif isinstance(n, cst.Call):
                            calls.append(n)
                    refs.append((b.name, names, calls, b.scope))
            self._refs[k] = refs
        return self._refs[k]

    def param_roles(self, k: Function) -> dict[str, set[str]]:
        if k not in self._roles:
            self._roles[k] = self._compute_roles(k)
        return self._roles[k]

    def _compute_roles(self, k: Function) -> dict[str, set[str]]:
        origin: dict[str, set[str]] = {p: {p} for p in k.param_names()}  # name -> parameters it derives from
        refs = self.binding_refs(k)
        grew = True
        while grew:
            grew = False
            for name, reads, _, _ in refs:
                acc = origin.setdefault(name, set())
                before = len(acc)
                for r in reads:
                    if r != name and r in origin:
                        acc |= origin[r]
                grew |= len(acc) != before
        roles: dict[str, set[str]] = {}
        for kind, call, _ in pointer_accesses(self.m, k):
            ptr = pointer_arg(call)
            if ptr is None:
                continue
            for n in iter_subtree(ptr):
                if isinstance(n, cst.Name):
                    for p in origin.get(n.value, ()):
                        roles.setdefault(p, set()).add(kind)
        return roles
