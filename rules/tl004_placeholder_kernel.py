from __future__ import annotations

import libcst as cst

from tritonlint import torch_api
from tritonlint.bindings import Function
from tritonlint.model import ModuleModel
from tritonlint.syntax import iter_subtree
from tritonlint.rule import DEGRADATION, Context, Diagnostic, Rule

_LOADS = ("triton.language.load", "triton.language.load_tensor_descriptor")
# methods on a loaded block that only move or reinterpret data
_DATA_METHODS = frozenset("to reshape broadcast_to expand_dims view trans permute".split())


class PlaceholderKernel(Rule):
    """
    ## What it does
    Flags the kernels `ModelNew.forward` launches when every one of them only
    moves data: it loads, stores, computes indices and masks, maybe casts,
    but applies no arithmetic, comparison, reduction or math function to
    the loaded values (its `@triton.jit` helpers count as part of it).

    ## Why is this bad?
    Degradation type 4 of the newest seed-002 verifier: a copy kernel is
    launched so the checks for types 1-3 pass, while the real math happens
    elsewhere (PyTorch in `__init__`, a host table, a precomputed global).

    ## Example
    ```python
    @triton.jit
    def copy_kernel(src, dst, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(dst + offs, tl.load(src + offs, mask=offs < n), mask=offs < n)
    ```

    ## Use instead
    Compute the operator inside the kernel. For operators that really only
    move data (transpose, gather), ignore TL004 for those files in config.

    ## Fix safety
    No fix.
    """

    code = "TL004"
    name = "placeholder-kernel"
    category = DEGRADATION
    message = "kernel only moves data; the math happens elsewhere"
    regression_type = 4
    check_key = "kernel_not_placeholder"
    suggestion = (
        "Type 4: every kernel forward launches only copies data (tl.load/tl.store and "
        "index maths). Do the operator's arithmetic inside the kernel."
    )

    BAD = [
        """
        import torch
        import torch.nn as nn
        import triton
        import triton.language as tl


        @triton.jit
        def copy_kernel(src, dst, n, BLOCK: tl.constexpr):  # expect: TL004
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            mask = offs < n
            v = tl.load(src + offs, mask=mask)
            tl.store(dst + offs, v.to(tl.float32), mask=mask)


        class ModelNew(nn.Module):
            def __init__(self):
                super().__init__()
                self.table = torch.randn(1024).exp()

            def forward(self, x):
                out = torch.empty_like(self.table)
                n = out.numel()
                copy_kernel[(triton.cdiv(n, 256),)](self.table, out, n, BLOCK=256)
                return out
        """,
    ]
    GOOD = [
        """
        import torch
        import torch.nn as nn
        import triton
        import triton.language as tl


        @triton.jit
        def _relu(v):
            return tl.maximum(v, 0.0)


        @triton.jit
        def relu_kernel(src, dst, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            mask = offs < n
            tl.store(dst + offs, _relu(tl.load(src + offs, mask=mask)), mask=mask)


        class ModelNew(nn.Module):
            def forward(self, x):
                out = torch.empty_like(x)
                n = out.numel()
                relu_kernel[(triton.cdiv(n, 256),)](x, out, n, BLOCK=256)
                return out
        """,
    ]

    def run(self, ctx: Context) -> list[Diagnostic]:
        launched = _launched(ctx.model)
        if not launched or any(_computes(ctx.model, k) for k in launched):
            return []
        return [
            self.report(k.node.name, f"kernel `{k.name}` only moves data (tl.load/tl.store and index maths) "
                        "and every kernel forward launches does the same: the math happens elsewhere", kernel=k.name)
            for k in launched
        ]

    def check_details(self, ctx: Context, found: list[Diagnostic]) -> dict:
        return {"placeholders": [d.data["kernel"] for d in found]}  # it fires only when every launched kernel is one


def _launched(m: ModuleModel) -> list[Function]:
    if m.entry is None:
        return []
    out: list[Function] = []
    for site in m.launch_sites():
        if site.kernel not in out:
            out.append(site.kernel)
    return out


def _computes(m: ModuleModel, kernel: Function) -> bool:
    return _jit_function_computes(m, kernel, frozenset(), set())


def _jit_function_computes(m: ModuleModel, k: Function, data_params: frozenset, seen: set) -> bool:
    """Whether `k` does math on loaded data. `data_params` are the parameters
    its caller fed with loaded data (none for the launched kernel itself)."""
    if (id(k), data_params) in seen:
        return False
    seen.add((id(k), data_params))
    data = set(data_params)

    def is_load(call: cst.Call, scope) -> bool:
        return any(q in _LOADS for q in m.externals(call.func, scope))

    def carries(expr, scope) -> bool:
        for n in iter_subtree(expr):
            if isinstance(n, cst.Name) and n.value in data:
                return True
            if isinstance(n, cst.Call) and is_load(n, scope):
                return True
        return False

    bindings = [b for bs in k.scope.bindings.values() for b in bs if b.value is not None]
    for _ in range(4):
        before = len(data)
        for b in bindings:
            if b.name not in data and carries(b.value, b.scope):
                data.add(b.name)
        if len(data) == before:
            break

    for op, scope in k.nodes(cst.BinaryOperation):
        if carries(op.left, scope) or carries(op.right, scope):
            return True
    for op, scope in k.nodes(cst.UnaryOperation):
        if not isinstance(op.operator, cst.Not) and carries(op.expression, scope):
            return True
    for op, scope in k.nodes(cst.Comparison):
        if carries(op, scope):
            return True
    for op, scope in k.nodes(cst.AugAssign):
        if carries(op.target, scope) or carries(op.value, scope):
            return True
    for call, scope in k.nodes(cst.Call):
        for helper in m.resolve(call.func, scope):
            if isinstance(helper, Function) and helper.is_kernel:
                fed = frozenset(_fed_params(helper, call, lambda e: carries(e, scope)))
                if _jit_function_computes(m, helper, fed, seen):
                    return True
        if not any(carries(a.value, scope) for a in call.args):
            if not (isinstance(call.func, cst.Attribute) and carries(call.func.value, scope)):
                continue
        names = m.externals(call.func, scope)
        functions = [q for q in names if "()." not in q]  # "f().m" is method m on f's result
        if any(q.startswith(torch_api.KERNEL_MATH_PREFIXES) and q not in torch_api.TL_DATA_MOVEMENT for q in functions):
            return True
        func = call.func
        is_method = isinstance(func, cst.Attribute) and (len(functions) < len(names) or not names)
        if is_method and carries(func.value, scope) and func.attr.value not in _DATA_METHODS:
            return True
    return False


def _fed_params(helper: Function, call: cst.Call, carries) -> list[str]:
    names = helper.param_names()
    out = []
    for i, a in enumerate(call.args):
        name = a.keyword.value if a.keyword is not None else (names[i] if i < len(names) else None)
        if name is not None and carries(a.value):
            out.append(name)
    return out
