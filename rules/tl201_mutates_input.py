from __future__ import annotations

from typing import Iterator

import libcst as cst

from tritonlint.kernels import launch_arguments, param_roles
from tritonlint.bindings import BindingKind, Scope
from tritonlint.model import ModuleModel
from tritonlint.examples import LAUNCH, submission
from tritonlint.rule import HAZARD, Context, Diagnostic, Rule

_VIEWS = frozenset("view view_as reshape flatten unsqueeze squeeze permute transpose t expand narrow select".split())
_NOT_MUTATING = frozenset({"requires_grad_", "share_memory_"})


def input_root(m: ModuleModel, expr: cst.BaseExpression, scope: Scope, depth: int = 0) -> str | None:
    """The forward parameter this expression aliases (through views, slices
    and local names bound to them), if any."""
    while True:
        if isinstance(expr, cst.Subscript):
            expr = expr.value
        elif isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _VIEWS:
            expr = expr.func.value
        else:
            break
    entry = m.entry
    if not isinstance(expr, cst.Name) or entry is None:
        return None
    for b in m.lookup(expr.value, scope):
        if b.kind is BindingKind.PARAM and b.scope is entry.scope and b.name in m.tensors.params(entry):
            return b.name
        if b.kind is BindingKind.ASSIGN and b.index is None and depth < 8 and (root := input_root(m, b.value, b.scope, depth + 1)):
            return root
    return None


class MutatesInput(Rule):
    """
    ## What it does
    Flags forward writing into its inputs: in-place tensor methods
    (`x.add_()`, `x.copy_(y)`), augmented assignment (`x += 1`), indexed
    writes (`x[0] = 0`) on a parameter of forward or a view of it, and
    kernels launched with an input where the kernel stores or atomically
    updates through that pointer.

    ## Why is this bad?
    The gate reuses inputs across calls and compares them with a copy
    afterwards: a kernel that overwrites its input fails the gate, or worse,
    passes it by making the next comparison trivial. Operators that update
    state on purpose (a cache, Mamba's conv state) should say so with
    `# tritonlint: ignore[TL201]` on that line.

    ## Example
    ```python
    def forward(self, x):
        add_one_kernel[grid](x, x, n)   # stores through x
        return x
    ```

    ## Use instead
    Write into a fresh output buffer.

    ## Fix safety
    No fix.
    """

    code = "TL201"
    name = "mutates-input"
    category = HAZARD
    message = "forward writes into its input"

    BAD = [
        submission(
            """
            flat = x.view(-1)
            k[(triton.cdiv(flat.numel(), 256),)](flat, flat, flat.numel(), BLOCK=256)  # expect: TL201
            state.zero_()  # expect: TL201
            return x
            """,
            signature="self, x, state",
        ),
    ]
    GOOD = [
        submission(
            LAUNCH.replace("return out", "k[(triton.cdiv(state.numel(), 256),)](state, state, state.numel(), BLOCK=256)"
                           "  # tritonlint: ignore[TL201]\nreturn out"),
            signature="self, x, state",
        ),
    ]

    def run(self, ctx: Context) -> Iterator[Diagnostic]:
        m = ctx.model
        if m.entry is None:
            return
        for f in m.host_reachable():
            for call, scope in f.nodes(cst.Call):
                func = call.func
                if isinstance(func, cst.Attribute) and func.attr.value.endswith("_") and not func.attr.value.endswith("__"):
                    if func.attr.value not in _NOT_MUTATING and (name := input_root(m, func.value, scope)):
                        yield self.report(call, f"`{name}.{func.attr.value}()` modifies the input `{name}` in place")
            for op, scope in f.nodes(cst.AugAssign):
                if (name := input_root(m, op.target, scope)) and m.is_tensor(op.target, scope):
                    yield self.report(op, f"`{m.module.code_for_node(op).strip()}` modifies the input `{name}` in place")
            for sub, scope, _ in f.subscript_stores:
                if name := input_root(m, sub, scope):
                    yield self.report(sub, f"indexed write modifies the input `{name}`")
        for site in m.launch_sites():
            roles = param_roles(m, site.kernel)
            for param, (arg, scope) in launch_arguments(m, site).items():
                if roles.get(param, set()) & {"store", "atomic"} and (name := input_root(m, arg, scope)):
                    yield self.report(arg, f"kernel `{site.kernel.name}` writes through `{param}`, which is the input `{name}`")
