"""The module model: one walk over the libcst tree, then facts that rules query.

libcst's ScopeProvider/QualifiedNameProvider cost about ten parses on a
typical submission (see benchmarks/lint_speed.py), so the model resolves
names itself, following Python's scoping rules (LEGB, class bodies invisible
to their methods, comprehension scopes, global/nonlocal), in one iterative
walk over the tree. Everything after the walk is lazy and memoised: name
resolution, the call graph from the entry point, launch sites, tensor-ness.
"""

from __future__ import annotations

import builtins
import dataclasses
from collections import defaultdict
from typing import Iterable, Iterator

import libcst as cst

from tritonlint import torch_api

_BUILTINS = frozenset(dir(builtins))
_IDENTITY_TESTS = (cst.Is, cst.IsNot, cst.In, cst.NotIn)
REFERENCE_CLASSES = frozenset({"Model"})
REFERENCE_FUNCTIONS = frozenset({"get_inputs", "get_init_inputs", "get_small_inputs"})
_MAX_DEPTH = 24


# ---------------------------------------------------------------- targets
class External:
    """A name that lives outside this module, fully qualified (`torch.sum`)."""

    __slots__ = ("qualname",)

    def __init__(self, qualname: str) -> None:
        self.qualname = qualname

    def __eq__(self, other: object) -> bool:
        return isinstance(other, External) and other.qualname == self.qualname

    def __hash__(self) -> int:
        return hash(("ext", self.qualname))

    def __repr__(self) -> str:
        return f"External({self.qualname!r})"


class Instance:
    """An object made by calling a class (`nn.Linear(...)`, `Helper()`)."""

    __slots__ = ("of",)

    def __init__(self, of: "ClassInfo | External") -> None:
        self.of = of

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Instance) and other.of == self.of

    def __hash__(self) -> int:
        return hash(("inst", self.of))

    def __repr__(self) -> str:
        return f"Instance({self.of!r})"


class Launcher:
    """`kernel[grid]`: calling it launches `kernel`."""

    __slots__ = ("kernel",)

    def __init__(self, kernel: "Function") -> None:
        self.kernel = kernel

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Launcher) and other.kernel is self.kernel

    def __hash__(self) -> int:
        return hash(("launch", id(self.kernel)))


# ---------------------------------------------------------------- scopes
class Binding:
    __slots__ = ("kind", "name", "node", "value", "scope", "qualname", "index", "function", "cls")

    def __init__(self, kind, name, scope, node=None, value=None, qualname=None, index=None):
        self.kind = kind  # import | def | class | assign | param | loop | other
        self.name = name
        self.scope = scope
        self.node = node
        self.value = value  # assigned expression, when there is one
        self.qualname = qualname  # imports: what the name stands for
        self.index = index  # tuple unpacking: position in the target, or -1 if unknown
        self.function = None
        self.cls = None


class Scope:
    __slots__ = ("kind", "parent", "function", "bindings", "globals", "nonlocals")

    def __init__(self, kind: str, parent: "Scope | None", function: "Function") -> None:
        self.kind = kind  # module | class | function | lambda | comprehension
        self.parent = parent
        self.function = function  # the function whose code runs in this scope
        self.bindings: dict[str, list[Binding]] = {}
        self.globals: set[str] = set()
        self.nonlocals: set[str] = set()

    def module(self) -> "Scope":
        s = self
        while s.parent is not None:
            s = s.parent
        return s

    def bind(self, b: Binding) -> None:
        target = self
        if b.name in self.globals:
            target = self.module()
        elif b.name in self.nonlocals:
            s = self.parent
            while s is not None and not (s.kind == "function" and b.name in s.bindings):
                s = s.parent
            target = s or self
        elif self.kind == "comprehension" and b.kind == "walrus":
            target = self.parent
            while target.kind == "comprehension":
                target = target.parent
        b.scope = target
        target.bindings.setdefault(b.name, []).append(b)


class Function:
    """A def, a lambda, or the module body (`<module>`)."""

    def __init__(self, qualname, name, node, scope, cls=None):
        self.qualname: str = qualname
        self.name: str = name
        self.node: cst.CSTNode = node
        self.scope: Scope = scope
        self.cls: ClassInfo | None = cls  # set for methods defined in a class body
        self.params: list[cst.Param] = []
        self.decorators: list[cst.Decorator] = []
        self.is_kernel = False
        self.is_lambda = isinstance(node, cst.Lambda)
        # facts recorded during the walk: node type -> [(node, scope)]
        self.facts: dict[type, list[tuple[cst.CSTNode, Scope]]] = defaultdict(list)
        self.returns: list[tuple[cst.BaseExpression, Scope]] = []
        self.lambdas: list[Function] = []
        self.subscript_stores: list[tuple[cst.Subscript, Scope]] = []
        self.tensor_params: set[str] = set()
        self._tensor_names: set[str] | None = None

    def param_names(self) -> list[str]:
        return [p.name.value for p in self.params]

    def decorated_with(self, model: "ModuleModel", qualname: str) -> bool:
        return any(
            isinstance(t, External) and t.qualname == qualname
            for d in self.decorators
            for t in model.resolve(d.decorator, self.scope.parent)
        )

    def is_staticmethod(self, model: "ModuleModel") -> bool:
        return self.decorated_with(model, "builtins.staticmethod")

    def __repr__(self) -> str:
        return f"Function({self.qualname})"


class ClassInfo:
    def __init__(self, qualname, name, node, scope):
        self.qualname: str = qualname
        self.name: str = name
        self.node: cst.ClassDef = node
        self.scope: Scope = scope  # the class body's scope
        self.methods: dict[str, Function] = {}
        self.instance_attrs: dict[str, list[tuple[cst.BaseExpression, Scope, Function]]] = defaultdict(list)
        self.buffers: set[str] = set()

    def __repr__(self) -> str:
        return f"ClassInfo({self.qualname})"


@dataclasses.dataclass(frozen=True)
class LaunchSite:
    kernel: Function
    node: cst.Subscript
    function: Function


# ---------------------------------------------------------------- the walk
_SKIP_FIELDS = frozenset(
    "lpar rpar leading_lines lines_after_decorators header footer comma "
    "semicolon colon equal star operator dot lbracket rbracket lbrace rbrace "
    "newline asynchronous arrow walrus body_whitespace".split()
)
_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields(t: type) -> tuple[str, ...]:
    f = _FIELDS.get(t)
    if f is None:
        f = tuple(
            x.name
            for x in dataclasses.fields(t)
            if not x.name.startswith("whitespace") and x.name not in _SKIP_FIELDS
        )
        _FIELDS[t] = f
    return f


def children(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Child nodes that can hold code (whitespace and punctuation skipped)."""
    for name in _fields(type(node)):
        v = getattr(node, name)
        if isinstance(v, cst.CSTNode):
            yield v
        elif type(v) in (list, tuple):
            for i in v:
                if isinstance(i, cst.CSTNode):
                    yield i


def iter_subtree(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Pre-order walk of one expression's subtree (iterative: deep nesting is fine)."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(children(n))


# node types whose occurrences rules may ask for per function
RECORDED = (
    cst.Call,
    cst.Name,
    cst.Attribute,
    cst.Subscript,
    cst.BinaryOperation,
    cst.UnaryOperation,
    cst.Comparison,
    cst.AugAssign,
    cst.Assign,
    cst.AnnAssign,
    cst.Try,
    cst.Global,
    cst.Import,
    cst.ImportFrom,
    cst.Del,
    cst.With,
    cst.For,
    cst.While,
)
_RECORDED = frozenset(RECORDED)


def dotted(node: cst.BaseExpression) -> str | None:
    """`a.b.c` for a Name/Attribute chain, else None."""
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        parts.append(node.value)
        return ".".join(reversed(parts))
    return None


class _Builder:
    def __init__(self, model: "ModuleModel") -> None:
        self.m = model
        self.stack: list[tuple[cst.CSTNode, Function, Scope]] = []

    def push(self, node, fn, scope) -> None:
        if node is not None:
            self.stack.append((node, fn, scope))

    def run(self, module: cst.Module) -> None:
        m = self.m
        for stmt in reversed(module.body):
            self.push(stmt, m.module_function, m.module_scope)
        handlers = _HANDLERS
        stack = self.stack
        while stack:
            node, fn, scope = stack.pop()
            t = type(node)
            if t in _RECORDED:
                fn.facts[t].append((node, scope))
            h = handlers.get(t)
            if h is not None and not h(self, node, fn, scope):
                continue
            for c in children(node):
                stack.append((c, fn, scope))

    # -- helpers
    def qual(self, scope: Scope, name: str) -> str:
        parts = [name]
        s = scope
        while s is not None and s.kind != "module":
            owner = s.function if s.kind != "class" else None
            if s.kind == "class":
                parts.append(self.m._class_of_scope[s].name)
            elif s.kind == "function":
                parts.append("<locals>")
                parts.append(owner.name)
            s = s.parent
        return ".".join(reversed(parts))

    def bind_target(self, target, value, fn, scope, index=None) -> None:
        if isinstance(target, cst.Name):
            scope.bind(Binding("assign", target.value, scope, target, value, index=index))
        elif isinstance(target, (cst.Tuple, cst.List)):
            for i, el in enumerate(target.elements):
                inner = el.value
                if isinstance(el, cst.StarredElement):
                    self.bind_target(inner, value, fn, scope, -1)
                else:
                    self.bind_target(inner, value, fn, scope, i if index is None else -1)
        elif isinstance(target, cst.StarredElement):
            self.bind_target(target.value, value, fn, scope, -1)
        elif isinstance(target, cst.Attribute):
            self.push(target.value, fn, scope)
            fn.facts[cst.Attribute].append((target, scope))
            owner = self.m.self_class(target.value, scope)  # the same answer reads get
            if owner is not None and index is None:
                owner.instance_attrs[target.attr.value].append((value, scope, fn))
        elif isinstance(target, cst.Subscript):
            fn.subscript_stores.append((target, scope))
            self.push(target.value, fn, scope)
            for el in target.slice:
                self.push(el, fn, scope)
        else:
            self.push(target, fn, scope)

    def bind_loop_target(self, target, value, fn, scope) -> None:
        """Names bound by `for`/`with`/comprehension targets (element types unknown)."""
        for n in iter_subtree(target):
            if isinstance(n, cst.Name):
                scope.bind(Binding("loop", n.value, scope, n, value, index=-1))
            elif isinstance(n, (cst.Attribute, cst.Subscript)):
                self.push(n, fn, scope)
                break

    def new_function(self, node, name, fn, scope, cls=None) -> Function:
        own = Scope("lambda" if isinstance(node, cst.Lambda) else "function", scope, None)
        f = Function(self.qual(scope, name), name, node, own, cls)
        own.function = f
        self.m.functions.append(f)
        self.m.function_of_node[node] = f
        params = node.params
        all_params = [*params.posonly_params, *params.params]
        if isinstance(params.star_arg, cst.Param):
            all_params.append(params.star_arg)
        all_params += params.kwonly_params
        if params.star_kwarg is not None:
            all_params.append(params.star_kwarg)
        f.params = all_params
        for p in all_params:
            own.bind(Binding("param", p.name.value, own, p))
            self.push(p.default, fn, scope)
            if p.annotation is not None:
                self.push(p.annotation.annotation, fn, scope)
        return f


def _h_name(b: _Builder, node, fn, scope) -> bool:
    return False


def _h_attribute(b: _Builder, node: cst.Attribute, fn, scope) -> bool:
    b.push(node.value, fn, scope)
    return False


def _h_arg(b: _Builder, node: cst.Arg, fn, scope) -> bool:
    b.push(node.value, fn, scope)
    return False


def _h_function_def(b: _Builder, node: cst.FunctionDef, fn, scope) -> bool:
    cls = b.m._class_of_scope.get(scope) if scope.kind == "class" else None
    f = b.new_function(node, node.name.value, fn, scope, cls)
    f.decorators = list(node.decorators)
    bind = Binding("def", node.name.value, scope, node)
    bind.function = f
    scope.bind(bind)
    if cls is not None:
        cls.methods[node.name.value] = f
    for d in node.decorators:
        b.push(d.decorator, fn, scope)
    if node.returns is not None:
        b.push(node.returns.annotation, fn, scope)
    b.push(node.body, f, f.scope)
    return False


def _h_lambda(b: _Builder, node: cst.Lambda, fn, scope) -> bool:
    f = b.new_function(node, "<lambda>", fn, scope)
    fn.lambdas.append(f)
    f.returns.append((node.body, f.scope))
    b.push(node.body, f, f.scope)
    return False


def _h_class_def(b: _Builder, node: cst.ClassDef, fn, scope) -> bool:
    own = Scope("class", scope, fn)
    c = ClassInfo(b.qual(scope, node.name.value), node.name.value, node, own)
    b.m._class_of_scope[own] = c
    b.m.classes.append(c)
    bind = Binding("class", node.name.value, scope, node)
    bind.cls = c
    scope.bind(bind)
    for d in node.decorators:
        b.push(d.decorator, fn, scope)
    for a in (*node.bases, *node.keywords):
        b.push(a.value, fn, scope)
    b.push(node.body, fn, own)
    return False


def _alias_name(alias: cst.ImportAlias) -> tuple[str, str]:
    full = dotted(alias.name) or ""
    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
        return alias.asname.name.value, full
    return full.split(".", 1)[0], full.split(".", 1)[0]


def _h_import(b: _Builder, node: cst.Import, fn, scope) -> bool:
    for alias in node.names:
        local, qual = _alias_name(alias)
        scope.bind(Binding("import", local, scope, node, qualname=qual))
        b.m.imports.add(dotted(alias.name) or "")
    return False


def _h_import_from(b: _Builder, node: cst.ImportFrom, fn, scope) -> bool:
    base = "." * len(node.relative) + (dotted(node.module) or "") if node.module is not None else "." * len(node.relative)
    b.m.imports.add(base)
    if isinstance(node.names, cst.ImportStar):
        return False
    for alias in node.names:
        name = dotted(alias.name) or ""
        local = name
        if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
            local = alias.asname.name.value
        qual = f"{base}.{name}" if not base.endswith(".") else base + name
        scope.bind(Binding("import", local, scope, node, qualname=qual))
        b.m.imports.add(qual)
    return False


def _h_assign(b: _Builder, node: cst.Assign, fn, scope) -> bool:
    for t in node.targets:
        b.bind_target(t.target, node.value, fn, scope)
    b.push(node.value, fn, scope)
    return False


def _h_ann_assign(b: _Builder, node: cst.AnnAssign, fn, scope) -> bool:
    if node.value is not None:
        b.bind_target(node.target, node.value, fn, scope)
        b.push(node.value, fn, scope)
    elif not isinstance(node.target, cst.Name):
        b.push(node.target, fn, scope)
    b.push(node.annotation.annotation, fn, scope)
    return False


def _h_aug_assign(b: _Builder, node: cst.AugAssign, fn, scope) -> bool:
    t = node.target
    if isinstance(t, cst.Name):
        fn.facts[cst.Name].append((t, scope))
        if not b.m.lookup(t.value, scope) or t.value in scope.globals:
            scope.bind(Binding("other", t.value, scope, t))
    else:
        b.push(t, fn, scope)
    b.push(node.value, fn, scope)
    return False


def _h_for(b: _Builder, node: cst.For, fn, scope) -> bool:
    b.bind_loop_target(node.target, node.iter, fn, scope)
    for c in (node.iter, node.body, node.orelse):
        b.push(c, fn, scope)
    return False




def _h_with_item(b: _Builder, node: cst.WithItem, fn, scope) -> bool:
    b.push(node.item, fn, scope)
    if node.asname is not None:
        b.bind_loop_target(node.asname.name, node.item, fn, scope)
    return False


def _h_except(b: _Builder, node: cst.ExceptHandler, fn, scope) -> bool:
    if node.name is not None and isinstance(node.name.name, cst.Name):
        scope.bind(Binding("other", node.name.name.value, scope, node))
    b.push(node.type, fn, scope)
    b.push(node.body, fn, scope)
    return False


def _h_named_expr(b: _Builder, node: cst.NamedExpr, fn, scope) -> bool:
    if isinstance(node.target, cst.Name):
        scope.bind(Binding("walrus", node.target.value, scope, node.target, node.value))
    b.push(node.value, fn, scope)
    return False


def _h_comprehension(b: _Builder, node, fn, scope) -> bool:
    comp = Scope("comprehension", scope, fn)
    for_in = node.for_in
    b.push(for_in.iter, fn, scope)  # the first iterable runs in the enclosing scope
    first = True
    while for_in is not None:
        b.bind_loop_target(for_in.target, for_in.iter, fn, comp)
        if not first:
            b.push(for_in.iter, fn, comp)
        for cond in for_in.ifs:
            b.push(cond.test, fn, comp)
        first = False
        for_in = for_in.inner_for_in
    if isinstance(node, cst.DictComp):
        b.push(node.key, fn, comp)
        b.push(node.value, fn, comp)
    else:
        b.push(node.elt, fn, comp)
    return False


def _h_global(b: _Builder, node, fn, scope) -> bool:
    names = {n.name.value for n in node.names}
    (scope.globals if isinstance(node, cst.Global) else scope.nonlocals).update(names)
    return False


def _h_return(b: _Builder, node: cst.Return, fn, scope) -> bool:
    if node.value is not None:
        fn.returns.append((node.value, scope))
        b.push(node.value, fn, scope)
    return False


def _h_subscript(b: _Builder, node: cst.Subscript, fn, scope) -> bool:
    b.push(node.value, fn, scope)
    for el in node.slice:
        b.push(el.slice, fn, scope)
    return False


def _h_call(b: _Builder, node: cst.Call, fn, scope) -> bool:
    if isinstance(node.func, cst.Subscript):
        b.m.launch_call[node.func] = node
    return True


def _h_simple_line(b: _Builder, node: cst.SimpleStatementLine, fn, scope) -> bool:
    if len(node.body) == 1 and isinstance(node.body[0], cst.Expr):
        b.m.statement_of[node.body[0].value] = node
    return True


_HANDLERS = {
    cst.Call: _h_call,
    cst.SimpleStatementLine: _h_simple_line,
    cst.Name: _h_name,
    cst.Attribute: _h_attribute,
    cst.Arg: _h_arg,
    cst.FunctionDef: _h_function_def,
    cst.Lambda: _h_lambda,
    cst.ClassDef: _h_class_def,
    cst.Import: _h_import,
    cst.ImportFrom: _h_import_from,
    cst.Assign: _h_assign,
    cst.AnnAssign: _h_ann_assign,
    cst.AugAssign: _h_aug_assign,
    cst.For: _h_for,
    cst.WithItem: _h_with_item,
    cst.ExceptHandler: _h_except,
    cst.ExceptStarHandler: _h_except,
    cst.NamedExpr: _h_named_expr,
    cst.ListComp: _h_comprehension,
    cst.SetComp: _h_comprehension,
    cst.GeneratorExp: _h_comprehension,
    cst.DictComp: _h_comprehension,
    cst.Global: _h_global,
    cst.Nonlocal: _h_global,
    cst.Return: _h_return,
    cst.Subscript: _h_subscript,
}


# ---------------------------------------------------------------- the model
class ModuleModel:
    """Everything rules need to know about one submission."""

    def __init__(self, module: cst.Module, entry_class: str = "ModelNew", entry_method: str = "forward") -> None:
        self.module = module
        self.entry_class_name = entry_class
        self.entry_method_name = entry_method
        self.module_scope = Scope("module", None, None)  # type: ignore[arg-type]
        self.module_function = Function("<module>", "<module>", module, self.module_scope)
        self.module_scope.function = self.module_function
        self.functions: list[Function] = []
        self.classes: list[ClassInfo] = []
        self.imports: set[str] = set()
        self.function_of_node: dict[cst.CSTNode, Function] = {}
        self._class_of_scope: dict[Scope, ClassInfo] = {}
        self.launch_call: dict[cst.Subscript, cst.Call] = {}  # kernel[grid] -> kernel[grid](...)
        self.statement_of: dict[cst.BaseExpression, cst.SimpleStatementLine] = {}  # lone expression statements
        self._resolved: dict[tuple, frozenset] = {}
        self._reachable: list[Function] | None = None
        self._tensor_ready = False
        self.memo: dict = {}  # derived facts that helpers compute once per model
        _Builder(self).run(module)
        self._find_kernels()
        self._resolved.clear()  # answers given before kernels were known may be stale
        self._collect_buffers()

    # -- discovery
    @property
    def uses_triton(self) -> bool:
        return any(i == "triton" or i.startswith("triton.") for i in self.imports)

    @property
    def entry_class(self) -> ClassInfo | None:
        for b in self.module_scope.bindings.get(self.entry_class_name, ()):
            if b.kind == "class":
                return b.cls
        return None

    @property
    def entry(self) -> Function | None:
        c = self.entry_class
        if c is None:
            return None
        for t in self.class_member(c, self.entry_method_name):
            if isinstance(t, Function):
                return t
        return None

    @property
    def kernels(self) -> list[Function]:
        return [f for f in self.functions if f.is_kernel]

    def _find_kernels(self) -> None:
        for f in self.functions:
            for d in f.decorators:
                expr = d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator
                for t in self.resolve(expr, f.scope.parent):
                    if isinstance(t, External) and t.qualname in torch_api.KERNEL_WRAPPERS:
                        f.is_kernel = True
        # `kernel = triton.jit(fn)` at any level
        for f in [self.module_function, *self.functions]:
            for call, scope in f.facts[cst.Call]:
                if self._is_kernel_wrapper_call(call, scope) and call.args:
                    for t in self.resolve(call.args[0].value, scope):
                        if isinstance(t, Function) and not t.is_lambda:
                            t.is_kernel = True

    def _is_kernel_wrapper_call(self, call: cst.Call, scope: Scope) -> bool:
        func = call.func.func if isinstance(call.func, cst.Call) else call.func
        return any(
            isinstance(t, External) and t.qualname in torch_api.KERNEL_WRAPPERS
            for t in self.resolve(func, scope)
        )

    def _collect_buffers(self) -> None:
        for c in self.classes:
            for m in c.methods.values():
                for call, scope in m.facts[cst.Call]:
                    f = call.func
                    if (
                        isinstance(f, cst.Attribute)
                        and f.attr.value == "register_buffer"
                        and call.args
                        and isinstance(call.args[0].value, cst.SimpleString)
                    ):
                        name = call.args[0].value.evaluated_value
                        if isinstance(name, str):
                            c.buffers.add(name)

    # -- names
    def lookup(self, name: str, scope: Scope) -> list[Binding]:
        s = scope
        start = scope
        while s is not None:
            if s.kind == "class" and s is not start:
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
        if expr is None or depth > _MAX_DEPTH:
            return frozenset()
        key = (expr, scope)  # the key keeps the node alive, so identities stay unique
        hit = self._resolved.get(key)
        if hit is not None:
            return hit
        self._resolved[key] = frozenset()  # cycle guard
        out = frozenset(self._resolve(expr, scope, depth + 1))
        self._resolved[key] = out
        return out

    def _resolve(self, expr, scope: Scope, depth: int) -> Iterable:
        if isinstance(expr, cst.Name):
            return self._resolve_name(expr.value, scope, depth)
        if isinstance(expr, cst.Attribute):
            return self._resolve_attribute(expr, scope, depth)
        if isinstance(expr, cst.Call):
            return self._resolve_call(expr, scope, depth)
        if isinstance(expr, cst.Subscript):
            return {Launcher(t) for t in self.resolve(expr.value, scope, depth) if isinstance(t, Function) and t.is_kernel}
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
            if b.kind == "import":
                out.add(External(b.qualname))
            elif b.kind == "def":
                out.add(b.function)
            elif b.kind == "class":
                out.add(b.cls)
            elif b.kind in ("assign", "walrus") and b.index is None:
                out |= self.resolve(b.value, b.scope, depth)
        return out

    def _resolve_attribute(self, expr: cst.Attribute, scope: Scope, depth: int) -> Iterable:
        attr = expr.attr.value
        owner = self.self_class(expr.value, scope)
        if owner is not None:
            return self.class_member(owner, attr, depth)
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
                out |= self.class_member(t, attr, depth)
            elif isinstance(t, Instance):
                if isinstance(t.of, ClassInfo):
                    out |= self.class_member(t.of, attr, depth)
                else:
                    out.add(External(f"{t.of.qualname}().{attr}"))
        return out

    def _resolve_call(self, call: cst.Call, scope: Scope, depth: int) -> Iterable:
        out = set()
        for t in self.resolve(call.func, scope, depth):
            if isinstance(t, ClassInfo):
                out.add(Instance(t))
            elif isinstance(t, External):
                q = t.qualname
                if q in torch_api.PASS_THROUGH_CALLS or q in torch_api.KERNEL_WRAPPERS:
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

    def self_class(self, expr, scope: Scope) -> ClassInfo | None:
        """The class when `expr` names the self/cls parameter of its method."""
        if not isinstance(expr, cst.Name):
            return None
        bs = self.lookup(expr.value, scope)
        if len(bs) != 1 or bs[0].kind != "param":
            return None
        fn = bs[0].scope.function
        if fn is None or fn.cls is None or not fn.params or fn.params[0] is not bs[0].node:
            return None
        if fn.is_staticmethod(self):
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
                if b.kind in ("assign",) and b.index is None:
                    out |= self.resolve(b.value, b.scope, depth)
            for value, scope, _ in k.instance_attrs.get(attr, ()):
                out |= self.resolve(value, scope, depth)
            if out:
                return out
        return out

    def qualname(self, expr: cst.BaseExpression, scope: Scope) -> str | None:
        """The one external qualified name an expression stands for, if any."""
        names = [t.qualname for t in self.resolve(expr, scope) if isinstance(t, External)]
        return names[0] if len(names) == 1 else (sorted(names)[0] if names else None)

    def externals(self, expr: cst.BaseExpression, scope: Scope) -> list[str]:
        return sorted(t.qualname for t in self.resolve(expr, scope) if isinstance(t, External))

    # -- call graph
    def callees(self, f: Function) -> list[Function]:
        out: dict[int, Function] = {id(x): x for x in f.lambdas}
        for node_type in (cst.Name, cst.Attribute):
            for node, scope in f.facts[node_type]:
                for t in self.resolve(node, scope):
                    for g in self._functions_behind(t):
                        out[id(g)] = g
        return [g for g in out.values() if g is not f]

    def _functions_behind(self, t) -> Iterator[Function]:
        if isinstance(t, Function):
            yield t
        elif isinstance(t, ClassInfo) or (isinstance(t, Instance) and isinstance(t.of, ClassInfo)):
            c = t if isinstance(t, ClassInfo) else t.of
            names = ("__init__", "__call__", "forward") if isinstance(t, ClassInfo) else ("__call__", "forward")
            for n in names:
                for m in self.class_member(c, n):
                    if isinstance(m, Function):
                        yield m

    def reachable_from(self, start: Function | None) -> list[Function]:
        """Functions (defs and lambdas) reachable from `start`, BFS order;
        kernels are included but not entered."""
        if start is None:
            return []
        order: list[Function] = []
        seen = {id(start)}
        todo = [start]
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

    def reachable(self) -> list[Function]:
        """Functions reachable from the entry point (`ModelNew.forward`)."""
        if self._reachable is None:
            self._reachable = self.reachable_from(self.entry)
        return self._reachable

    def construction_path(self) -> list[Function]:
        """Host functions that run when the entry class is instantiated."""
        c = self.entry_class
        init = next((t for t in (self.class_member(c, "__init__") if c else ()) if isinstance(t, Function)), None)
        return [f for f in self.reachable_from(init) if not f.is_kernel]

    def enclosing_class(self, f: Function) -> ClassInfo | None:
        s = f.scope.parent
        while s is not None:
            if s.kind == "class":
                return self._class_of_scope[s]
            s = s.parent
        return None

    def is_reference(self, f: Function) -> bool:
        """Code of the reference task that may sit in the same file: class
        `Model` and `get_inputs`/`get_init_inputs`, which are allowed PyTorch."""
        if f is self.module_function:
            return False
        c = self.enclosing_class(f)
        if c is not None:
            return c.name in REFERENCE_CLASSES and c is not self.entry_class
        top = f
        while top.scope.parent is not None and top.scope.parent.kind != "module":
            top = top.scope.parent.function
        return top.name in REFERENCE_FUNCTIONS

    def submission_functions(self) -> list[Function]:
        """Host code of the submission: the module body and every non-kernel
        function that is not the reference's."""
        return [self.module_function] + [f for f in self.functions if not f.is_kernel and not self.is_reference(f)]

    def host_reachable(self) -> list[Function]:
        return [f for f in self.reachable() if not f.is_kernel]

    def launch_sites(self, functions: Iterable[Function] | None = None) -> list[LaunchSite]:
        """Kernel launches in `functions` (default: on the path from the entry, memoised)."""
        if functions is None:
            if "launch_sites" not in self.memo:
                self.memo["launch_sites"] = self.launch_sites(self.host_reachable())
            return self.memo["launch_sites"]
        out = []
        for f in functions:
            for node, scope in f.facts[cst.Subscript]:
                for t in self.resolve(node, scope):
                    if isinstance(t, Launcher):
                        out.append(LaunchSite(t.kernel, node, f))
        return out

    # -- tensor-ness
    def _prepare_tensors(self) -> None:
        if self._tensor_ready:
            return
        self._tensor_ready = True
        entry = self.entry
        if entry is None:
            return
        for p in entry.params[1:]:
            if _param_may_be_tensor(p):
                entry.tensor_params.add(p.name.value)
        for f in self.functions:
            for p in f.params:
                if p.annotation is not None and (dotted(p.annotation.annotation) or "").endswith("Tensor"):
                    f.tensor_params.add(p.name.value)
        for _ in range(6):
            changed = False
            for f in self.host_reachable():
                for call, scope in f.facts[cst.Call]:
                    for g in self.resolve(call.func, scope):
                        if isinstance(g, Function) and not g.is_kernel and g is not f:
                            changed |= self._feed(call, scope, f, g)
            if not changed:
                break

    def _feed(self, call: cst.Call, scope: Scope, caller: Function, g: Function) -> bool:
        names = g.param_names()
        if g.cls is not None and names and isinstance(call.func, cst.Attribute) and not g.is_staticmethod(self):
            via_class = any(isinstance(t, ClassInfo) for t in self.resolve(call.func.value, scope))
            if not via_class or g.decorated_with(self, "builtins.classmethod"):
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
            if name not in g.tensor_params and self.is_tensor(a.value, scope):
                g.tensor_params.add(name)
                g._tensor_names = None
                changed = True
        return changed

    def tensor_names(self, f: Function) -> set[str]:
        self._prepare_tensors()
        if f._tensor_names is not None:
            return f._tensor_names
        names = set(f.tensor_params)
        f._tensor_names = names
        bindings = [
            b
            for s in _scopes_of(f)
            for bs in s.bindings.values()
            for b in bs
            if b.kind in ("assign", "walrus") and b.value is not None
        ]
        for _ in range(4):
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
        if depth > _MAX_DEPTH:
            return False
        d = depth + 1
        if isinstance(expr, cst.Name):
            bs = self.lookup(expr.value, scope)
            if not bs:
                return False
            owner = bs[0].scope.function
            return owner is not None and expr.value in self.tensor_names(owner)
        if isinstance(expr, cst.Attribute):
            attr = expr.attr.value
            owner = self.self_class(expr.value, scope)
            if owner is not None:
                return self._class_attr_is_tensor(owner, attr, d)
            if attr in torch_api.TENSOR_ATTRIBUTES and self.is_tensor(expr.value, scope, d):
                return True
            if attr in ("weight", "bias"):
                return any(isinstance(t, Instance) and isinstance(t.of, External) for t in self.resolve(expr.value, scope))
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
                b.kind == "assign" and b.index is None and isinstance(b.value, (cst.List, cst.Tuple))
                and self.holds_tensors(b.value, b.scope)
                for b in self.lookup(expr.value, scope)
            )
        if isinstance(expr, (cst.List, cst.Tuple)):
            return any(self.is_tensor(e.value, scope) for e in expr.elements)
        return False

    def _class_attr_is_tensor(self, c: ClassInfo, attr: str, depth: int) -> bool:
        for k in self.mro(c):
            if attr in k.buffers:
                return True
            for value, scope, _ in k.instance_attrs.get(attr, ()):
                if self.is_tensor(value, scope, depth):
                    return True
            for b in k.scope.bindings.get(attr, ()):
                if b.kind == "assign" and b.value is not None and self.is_tensor(b.value, b.scope, depth):
                    return True
        return False

    def _call_is_tensor(self, call: cst.Call, scope: Scope, depth: int) -> bool:
        targets = self.resolve(call.func, scope)
        for t in targets:
            if isinstance(t, External):
                q = t.qualname
                if torch_api.is_torch_name(q):
                    if q in torch_api.NON_TENSOR_FUNCTIONS or q.startswith(torch_api.GLUE_PREFIXES):
                        continue
                    return True
                if q in torch_api.COMPUTING_BUILTINS and any(self.holds_tensors(a.value, scope) for a in call.args):
                    return True
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
    for _, s in f.facts[cst.Name]:
        if s.kind == "comprehension" and s not in out:
            out.append(s)
    return out


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
