from __future__ import annotations

from typing import Iterator

import libcst as cst

from tritonlint.bindings import BindingKind

from tritonlint.kernels import launch_arguments, param_roles
from tritonlint.examples import KERNEL, LAUNCH, submission
from tritonlint.rule import PERFORMANCE, UNSAFE, WARNING, Context, Diagnostic, Fix, Rule

_TO_EMPTY = {"torch.zeros": "empty", "torch.zeros_like": "empty_like", "torch.ones": "empty", "torch.ones_like": "empty_like"}


class ZerosOverwritten(Rule):
    """
    ## What it does
    Flags an output buffer allocated with `torch.zeros`/`ones` (or `_like`)
    on the forward path and handed to a kernel that only stores through it
    (no load, no atomic).

    ## Why is this bad?
    The fill is a separate device kernel writing the whole buffer once more,
    only for the Triton kernel to overwrite it: extra memory traffic on
    every call, often a visible share of a memory-bound operator's time.

    ## Example
    ```python
    out = torch.zeros_like(x)
    copy_scaled_kernel[grid](x, out, n)
    ```

    ## Use instead
    `torch.empty_like(x)`.

    ## Fix safety
    Unsafe: correct only when the kernel writes every element; a grid or
    mask that skips some leaves them uninitialised.
    """

    code = "TL301"
    name = "zeros-overwritten"
    category = PERFORMANCE
    severity = WARNING
    message = "zero-filled buffer that the kernel overwrites"

    BAD = [submission(LAUNCH.replace("torch.empty_like(x)", "torch.zeros_like(x)  # expect: TL301"))]
    GOOD = [
        submission(
            """
            out = torch.zeros(1, device=x.device, dtype=x.dtype)  # accumulated into: zeros needed
            k[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), BLOCK=256)
            return out
            """,
            kernel=KERNEL.replace("tl.store(out_ptr + offs,", "tl.atomic_add(out_ptr,").replace("mask=offs < n) + 1, mask=offs < n)", "mask=offs < n, other=0.0).sum())"),
        ),
    ]
    FIXES = [
        (
            submission(LAUNCH.replace("torch.empty_like(x)", "torch.zeros(x.shape, dtype=x.dtype, device=x.device)  # output")),
            submission(LAUNCH.replace("torch.empty_like(x)", "torch.empty(x.shape, dtype=x.dtype, device=x.device)  # output")),
        )
    ]

    def run(self, ctx: Context) -> Iterator[Diagnostic]:
        m = ctx.model
        reported: set[int] = set()
        for site in m.launch_sites():
            roles = param_roles(m, site.kernel)
            for param, (arg, scope) in launch_arguments(m, site).items():
                if roles.get(param) != {"store"} or not isinstance(arg, cst.Name):
                    continue
                for b in m.lookup(arg.value, scope):
                    call = b.value
                    if b.kind is not BindingKind.ASSIGN or not isinstance(call, cst.Call) or id(call) in reported:
                        continue
                    fills = [q for q in m.externals(call.func, b.scope) if q in _TO_EMPTY]
                    if fills:
                        reported.add(id(call))
                        yield self.report(call, f"`{fills[0]}` fills `{arg.value}`, which kernel `{site.kernel.name}` only stores to: "
                                          f"use torch.{_TO_EMPTY[fills[0]]}", fix=_fix(call, _TO_EMPTY[fills[0]]))


def _fix(call: cst.Call, empty: str) -> Fix | None:
    if not isinstance(call.func, cst.Attribute):
        return None  # `zeros(...)` imported by name: `empty` may not be imported
    return Fix(UNSAFE, f"allocate with {empty}", [(call.func, call.func.with_changes(attr=cst.Name(empty)))])
