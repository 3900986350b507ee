"""The single walk: one iterative pass over the libcst tree that binds names.

It builds the scopes, bindings, functions and classes of `tritonlint.bindings`
and records, per function, the nodes rules ask for (`bindings.RECORDED`).
It resolves nothing itself, except `self.attr = ...` targets, which need to
know whether `self` is a method's first parameter (`Names.self_class`).
"""

from __future__ import annotations

import dataclasses

import libcst as cst

from tritonlint.bindings import RECORDED, Binding, BindingKind, ClassInfo, Function, Scope, ScopeKind
from tritonlint.names import Names
from tritonlint.syntax import children, constant_truth, dotted, iter_subtree

_RECORDED = frozenset(RECORDED)


@dataclasses.dataclass
class Tables:
    """Everything the walk found in one module."""

    module: cst.Module
    module_scope: Scope
    module_function: Function  # the module body, as a function named `<module>`
    functions: list[Function] = dataclasses.field(default_factory=list)  # defs and lambdas, in source order
    classes: list[ClassInfo] = dataclasses.field(default_factory=list)
    imports: set[str] = dataclasses.field(default_factory=set)  # every module and name imported, qualified
    function_of_node: dict[cst.CSTNode, Function] = dataclasses.field(default_factory=dict)
    class_of_scope: dict[Scope, ClassInfo] = dataclasses.field(default_factory=dict)
    launch_call: dict[cst.Subscript, cst.Call] = dataclasses.field(default_factory=dict)  # kernel[grid] -> kernel[grid](...)
    statement_of: dict[cst.BaseExpression, cst.SimpleStatementLine] = dataclasses.field(default_factory=dict)  # lone expression statements


def walk(module: cst.Module) -> Tables:
    scope = Scope(ScopeKind.MODULE, None, None)
    body = Function("<module>", "<module>", module, scope)
    scope.function = body
    tables = Tables(module, scope, body)
    _Builder(tables, Names(tables, follow_params=False)).run(module)
    _collect_buffers(tables)
    return tables


def _collect_buffers(t: Tables) -> None:
    for c in t.classes:
        for m in c.methods.values():
            for call, _ in m.nodes(cst.Call):
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


class _Builder:
    # `names` answers `self_class` for `self.attr = ...` targets while the
    # tables are still growing; its answers are thrown away with the walk.
    def __init__(self, tables: Tables, names) -> None:
        self.t = tables
        self.names = names
        self.stack: list[tuple[cst.CSTNode, Function, Scope]] = []

    def push(self, node, fn, scope) -> None:
        if node is not None:
            self.stack.append((node, fn, scope))

    def run(self, module: cst.Module) -> None:
        t = self.t
        for stmt in reversed(module.body):
            self.push(stmt, t.module_function, t.module_scope)
        handlers = _HANDLERS
        stack = self.stack
        while stack:
            node, fn, scope = stack.pop()
            k = type(node)
            if k in _RECORDED:
                fn._nodes[k].append((node, scope))  # Function.record, inlined: this loop is the hot path
            h = handlers.get(k)
            if h is not None and not h(self, node, fn, scope):
                continue
            for c in children(node):
                stack.append((c, fn, scope))

    # -- helpers
    def qual(self, scope: Scope, name: str) -> str:
        parts = [name]
        s = scope
        while s is not None and s.kind is not ScopeKind.MODULE:
            if s.kind is ScopeKind.CLASS:
                parts.append(self.t.class_of_scope[s].name)
            elif s.kind is ScopeKind.FUNCTION:
                parts.append("<locals>")
                parts.append(s.function.name)
            s = s.parent
        return ".".join(reversed(parts))

    def bind_target(self, target, value, fn, scope, index=None) -> None:
        if isinstance(target, cst.Name):
            scope.bind(Binding(BindingKind.ASSIGN, target.value, scope, target, value, index=index))
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
            fn.record(target, scope)
            owner = self.names.self_class(target.value, scope)  # the same answer reads get
            if owner is not None and index is None:
                owner.instance_attrs.setdefault(target.attr.value, []).append((value, scope, fn))
        elif isinstance(target, cst.Subscript):
            fn.subscript_stores.append((target, scope, value))
            self.push(target.value, fn, scope)
            for el in target.slice:
                self.push(el, fn, scope)
        else:
            self.push(target, fn, scope)

    def bind_loop_target(self, target, value, fn, scope) -> None:
        """Names bound by `for`/`with`/comprehension targets (element types unknown)."""
        for n in iter_subtree(target):
            if isinstance(n, cst.Name):
                scope.bind(Binding(BindingKind.LOOP, n.value, scope, n, value, index=-1))
            elif isinstance(n, (cst.Attribute, cst.Subscript)):
                self.push(n, fn, scope)
                break

    def new_function(self, node, name, fn, scope, cls=None) -> Function:
        own = Scope(ScopeKind.LAMBDA if isinstance(node, cst.Lambda) else ScopeKind.FUNCTION, scope, None)
        f = Function(self.qual(scope, name), name, node, own, cls)
        own.function = f
        self.t.functions.append(f)
        self.t.function_of_node[node] = f
        params = node.params
        all_params = [*params.posonly_params, *params.params]
        if isinstance(params.star_arg, cst.Param):
            all_params.append(params.star_arg)
        all_params += params.kwonly_params
        if params.star_kwarg is not None:
            all_params.append(params.star_kwarg)
        f.params = all_params
        for p in all_params:
            own.bind(Binding(BindingKind.PARAM, p.name.value, own, p))
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
    cls = b.t.class_of_scope.get(scope) if scope.kind is ScopeKind.CLASS else None
    f = b.new_function(node, node.name.value, fn, scope, cls)
    f.decorators = list(node.decorators)
    bind = Binding(BindingKind.DEF, node.name.value, scope, node)
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
    own = Scope(ScopeKind.CLASS, scope, fn)
    c = ClassInfo(b.qual(scope, node.name.value), node.name.value, node, own)
    b.t.class_of_scope[own] = c
    b.t.classes.append(c)
    bind = Binding(BindingKind.CLASS, node.name.value, scope, node)
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
        scope.bind(Binding(BindingKind.IMPORT, local, scope, node, qualname=qual))
        b.t.imports.add(dotted(alias.name) or "")
    return False


def _h_import_from(b: _Builder, node: cst.ImportFrom, fn, scope) -> bool:
    base = "." * len(node.relative) + (dotted(node.module) or "") if node.module is not None else "." * len(node.relative)
    b.t.imports.add(base)
    if isinstance(node.names, cst.ImportStar):
        return False
    for alias in node.names:
        name = dotted(alias.name) or ""
        local = name
        if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
            local = alias.asname.name.value
        qual = f"{base}.{name}" if not base.endswith(".") else base + name
        scope.bind(Binding(BindingKind.IMPORT, local, scope, node, qualname=qual))
        b.t.imports.add(qual)
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
        fn.record(t, scope)
        if not b.names.lookup(t.value, scope) or t.value in scope.globals:
            scope.bind(Binding(BindingKind.OTHER, t.value, scope, t))
    else:
        b.push(t, fn, scope)
    b.push(node.value, fn, scope)
    return False


def _h_for(b: _Builder, node: cst.For, fn, scope) -> bool:
    b.bind_loop_target(node.target, node.iter, fn, scope)
    for c in (node.iter, node.body, node.orelse):
        b.push(c, fn, scope)
    return False


def _h_if(b: _Builder, node: cst.If, fn, scope) -> bool:
    """A branch that can never run is not walked: what it holds never happens (a launch under
    `if False:` launches nothing)."""
    truth = constant_truth(node.test)
    b.push(node.test, fn, scope)
    if truth is not False:
        b.push(node.body, fn, scope)
    if truth is not True:
        b.push(node.orelse, fn, scope)
    return False


def _h_while(b: _Builder, node: cst.While, fn, scope) -> bool:
    truth = constant_truth(node.test)
    b.push(node.test, fn, scope)
    if truth is not False:
        b.push(node.body, fn, scope)
    b.push(node.orelse, fn, scope)
    return False


def _h_with_item(b: _Builder, node: cst.WithItem, fn, scope) -> bool:
    b.push(node.item, fn, scope)
    if node.asname is not None:
        b.bind_loop_target(node.asname.name, node.item, fn, scope)
    return False


def _h_except(b: _Builder, node: cst.ExceptHandler, fn, scope) -> bool:
    if node.name is not None and isinstance(node.name.name, cst.Name):
        scope.bind(Binding(BindingKind.OTHER, node.name.name.value, scope, node))
    b.push(node.type, fn, scope)
    b.push(node.body, fn, scope)
    return False


def _h_named_expr(b: _Builder, node: cst.NamedExpr, fn, scope) -> bool:
    if isinstance(node.target, cst.Name):
        scope.bind(Binding(BindingKind.WALRUS, node.target.value, scope, node.target, node.value))
    b.push(node.value, fn, scope)
    return False


def _h_comprehension(b: _Builder, node, fn, scope) -> bool:
    comp = Scope(ScopeKind.COMPREHENSION, scope, fn)
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
        b.t.launch_call[node.func] = node
    return True


def _h_simple_line(b: _Builder, node: cst.SimpleStatementLine, fn, scope) -> bool:
    if len(node.body) == 1 and isinstance(node.body[0], cst.Expr):
        b.t.statement_of[node.body[0].value] = node
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
    cst.If: _h_if,
    cst.While: _h_while,
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
