"""The module model: names, kernels and the call graph of one submission, and the query API rules use.

libcst's ScopeProvider/QualifiedNameProvider cost about ten parses on a
typical submission (see benchmarks/lint_speed.py), so the model resolves
names itself (`tritonlint.names`) over the tables of one iterative walk
(`tritonlint.walk`). Everything after construction is lazy and memoised by
its owner: the call graph here, tensor-ness in `tritonlint.tensors`, other
analyses through `analysis()`.
"""

from __future__ import annotations

from functools import cached_property
from typing import Iterable, Iterator, TypeVar

import libcst as cst

from tritonlint import torch_api
from tritonlint.bindings import BindingKind, CallSite, ClassInfo, Container, External, Function, Instance, LaunchSite, Launcher, Scope, ScopeKind
from tritonlint.entry import EntryFacts
from tritonlint.names import Names
from tritonlint.tensors import Tensors
from tritonlint.walk import Tables, walk

REFERENCE_CLASSES = frozenset({"Model"})
REFERENCE_FUNCTIONS = frozenset({"get_inputs", "get_init_inputs", "get_small_inputs"})

A = TypeVar("A")
# Methods that run when a class is instantiated or an instance is used on the path
# (called, or used as a context manager: `with Ctx(x) as y:` runs __enter__/__exit__).
_INSTANCE_ENTRIES = ("__call__", "forward", "__enter__", "__exit__")
_CLASS_ENTRIES = ("__init__", *_INSTANCE_ENTRIES)


def _discover_kernels(t: Tables) -> None:
    """Mark every `@triton.jit` function (any spelling) and `k = triton.jit(fn)` target as a kernel."""
    names = Names(t, follow_params=False)  # cannot yet know which functions are kernels: thrown away after
    for f in t.functions:
        for d in f.decorators:
            expr = d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator
            for target in names.resolve(expr, f.scope.parent):
                if isinstance(target, External) and target.qualname in torch_api.KERNEL_WRAPPERS:
                    f.is_kernel = True
    for f in [t.module_function, *t.functions]:
        for call, scope in f.nodes(cst.Call):
            func = call.func.func if isinstance(call.func, cst.Call) else call.func
            wraps = any(isinstance(w, External) and w.qualname in torch_api.KERNEL_WRAPPERS for w in names.resolve(func, scope))
            if wraps and call.args:
                for target in names.resolve(call.args[0].value, scope):
                    if isinstance(target, Function) and not target.is_lambda:
                        target.is_kernel = True


class ModuleModel(Names):
    """Everything rules need to know about one submission."""

    def __init__(self, module: cst.Module, entry_class: str = "ModelNew", entry_method: str = "forward") -> None:
        tables = walk(module)
        _discover_kernels(tables)
        super().__init__(tables)  # from here on the tables are complete
        self.module = module
        self.entry_class_name = entry_class
        self.entry_method_name = entry_method
        self.module_function = tables.module_function
        self.functions = tables.functions
        self.classes = tables.classes
        self.imports = tables.imports
        self.launch_call = tables.launch_call
        self.statement_of = tables.statement_of
        self._analyses: dict[type, object] = {}

    # -- analyses built on the model, each once, on first use
    def analysis(self, kind: type[A]) -> A:
        """The one `kind(model)` of this model (kernel facts, ...), built on first use."""
        a = self._analyses.get(kind)
        if a is None:
            a = self._analyses[kind] = kind(self)
        return a  # type: ignore[return-value]

    @cached_property
    def tensors(self) -> Tensors:
        return self.analysis(Tensors)

    def is_tensor(self, expr: cst.BaseExpression, scope: Scope) -> bool:
        return self.tensors.is_tensor(expr, scope)

    def holds_tensors(self, expr: cst.BaseExpression, scope: Scope) -> bool:
        return self.tensors.holds_tensors(expr, scope)

    # -- discovery
    @property
    def uses_triton(self) -> bool:
        return any(i == "triton" or i.startswith("triton.") for i in self.imports)

    @cached_property
    def entry_class(self) -> ClassInfo | None:
        for b in self.module_scope.bindings.get(self.entry_class_name, ()):
            if b.kind is BindingKind.CLASS:
                return b.cls
        return None

    @cached_property
    def entry(self) -> Function | None:
        c = self.entry_class
        if c is None:
            return None
        for t in self.class_member(c, self.entry_method_name):
            if isinstance(t, Function):
                return t
        return None

    @cached_property
    def kernels(self) -> list[Function]:
        return [f for f in self.functions if f.is_kernel]

    def is_module_class(self, c: ClassInfo) -> bool:
        """A subclass of torch.nn.Module, directly or through classes of this module."""
        return any(isinstance(b, External) and b.qualname.startswith("torch.nn.") for k in self.mro(c) for b in self.bases(k))

    # -- the query API rules use
    def calls(self, functions: Iterable[Function]) -> Iterator[CallSite]:
        """Every call in `functions`, with the external names its callee may stand for."""
        for f in functions:
            for call, scope in f.nodes(cst.Call):
                yield CallSite(call, scope, f, tuple(self.externals(call.func, scope)))

    def nodes(self, kind: type, functions: Iterable[Function]) -> Iterator[tuple[cst.CSTNode, Scope, Function]]:
        """Every node of a recorded kind in `functions` (`bindings.NotRecorded` for others)."""
        for f in functions:
            for node, scope in f.nodes(kind):
                yield node, scope, f

    # -- call graph
    def callees(self, f: Function) -> list[Function]:
        out: dict[int, Function] = {id(x): x for x in f.lambdas}
        for node_type in (cst.Name, cst.Attribute):
            for node, scope in f.nodes(node_type):
                for t in self.resolve(node, scope):
                    for g in self._functions_behind(t):
                        out[id(g)] = g
        return [g for g in out.values() if g is not f]

    def functions_behind(self, t) -> list[Function]:
        """The functions that run when `t` (a function, class, instance or container) is called."""
        return list(self._functions_behind(t))

    def _functions_behind(self, t, depth: int = 0) -> Iterator[Function]:
        if isinstance(t, Function):
            yield t
        elif isinstance(t, Container) and depth < 4:  # a container of modules or functions: each member
            for member in self.members(t):
                yield from self._functions_behind(member, depth + 1)
        elif isinstance(t, ClassInfo) or (isinstance(t, Instance) and isinstance(t.of, ClassInfo)):
            c = t if isinstance(t, ClassInfo) else t.of
            names = _CLASS_ENTRIES if isinstance(t, ClassInfo) else _INSTANCE_ENTRIES
            for n in names:
                for m in self.class_member(c, n):
                    if isinstance(m, Function):
                        yield m

    def reachable_from(self, *starts: Function | None) -> list[Function]:
        """Functions (defs and lambdas) reachable from `starts`, BFS order;
        kernels are included but not entered."""
        todo = list({id(s): s for s in starts if s is not None}.values())
        order: list[Function] = []
        seen = {id(s) for s in todo}
        while todo:
            f = todo.pop(0)
            order.append(f)
            if f.is_kernel:
                continue
            for g in self.callees(f):
                if id(g) not in seen:
                    seen.add(id(g))
                    todo.append(g)
        return order

    @cached_property
    def _reachable(self) -> list[Function]:
        if self.entry is None:
            return []
        return self.reachable_from(self.entry, *self.analysis(EntryFacts).roots)

    def reachable(self) -> list[Function]:
        """Functions reachable from the entry point (`ModelNew.forward`), and from whatever may
        run in its place (`entry.EntryFacts`: `__call__`, hooks, a rebound class, ...)."""
        return self._reachable

    def host_reachable(self) -> list[Function]:
        return [f for f in self.reachable() if not f.is_kernel]

    def construction_path(self) -> list[Function]:
        """Host functions that run when the entry class is instantiated."""
        c = self.entry_class
        init = next((t for t in (self.class_member(c, "__init__") if c else ()) if isinstance(t, Function)), None)
        return [f for f in self.reachable_from(init) if not f.is_kernel]

    def is_reference(self, f: Function) -> bool:
        """Code of the reference task that may sit in the same file: class
        `Model` and `get_inputs`/`get_init_inputs`, which are allowed PyTorch."""
        if f is self.module_function:
            return False
        c = self.enclosing_class(f)
        if c is not None:
            return c.name in REFERENCE_CLASSES and c is not self.entry_class
        top = f
        while top.scope.parent is not None and top.scope.parent.kind is not ScopeKind.MODULE:
            top = top.scope.parent.function
        return top.name in REFERENCE_FUNCTIONS

    def submission_functions(self) -> list[Function]:
        """Host code of the submission: the module body and every non-kernel
        function that is not the reference's."""
        return [self.module_function] + [f for f in self.functions if not f.is_kernel and not self.is_reference(f)]

    @cached_property
    def _entry_launches(self) -> list[LaunchSite]:
        return self.launch_sites(self.host_reachable())

    def launch_sites(self, functions: Iterable[Function] | None = None) -> list[LaunchSite]:
        """Kernel launches in `functions` (default: on the path from the entry, computed once)."""
        if functions is None:
            return self._entry_launches
        out = []
        for f in functions:
            for node, scope in f.nodes(cst.Subscript):
                for t in self.resolve(node, scope):
                    if isinstance(t, Launcher):
                        out.append(LaunchSite(t.kernel, node, f))
        return out
