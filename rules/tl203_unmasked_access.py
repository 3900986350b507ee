from __future__ import annotations

from typing import Iterator

import libcst as cst

from tritonlint.kernels import depends, derived_names, pointer_accesses, pointer_arg
from tritonlint.bindings import Function
from tritonlint.model import ModuleModel
from tritonlint.syntax import iter_subtree
from tritonlint.rule import HAZARD, UNSAFE, WARNING, Context, Diagnostic, Fix, Rule

_BLOCK_PTRS = ("triton.language.make_block_ptr", "triton.language.advance", "triton.language.make_tensor_descriptor")
_NO_SPACE = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))


def _calls_to(m: ModuleModel, names: tuple[str, ...]):
    return lambda call, scope: any(q in names for q in m.externals(call.func, scope))


class UnmaskedAccess(Rule):
    """
    ## What it does
    Flags `tl.load`/`tl.store` whose pointer is built from `tl.arange`
    offsets and that has neither `mask=` nor `boundary_check=`.

    ## Why is this bad?
    The last block of a grid reads and writes past the end of the tensor
    whenever the size is not a multiple of the block: wrong values, or a
    memory fault, on exactly the shapes the gate did not try.

    ## Example
    ```python
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    ```

    ## Use instead
    ```python
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    ```

    ## Fix safety
    Unsafe: when the kernel already computes a mask from the same offsets,
    the fix passes it (`mask=mask`). Whether that mask is the right bound for
    this access is for the author to confirm.
    """

    code = "TL203"
    name = "unmasked-access"
    category = HAZARD
    severity = WARNING
    message = "tl.load/tl.store on tl.arange offsets without a mask"

    BAD = [
        """
        import torch
        import torch.nn as nn
        import triton
        import triton.language as tl


        @triton.jit
        def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            mask = offs < n
            x = tl.load(x_ptr + offs)  # expect: TL203
            tl.store(out_ptr + offs, x * 2)  # expect: TL203


        class ModelNew(nn.Module):
            def forward(self, x):
                out = torch.empty_like(x)
                k[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), BLOCK=256)
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
        def k(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
            blk = tl.make_block_ptr(x_ptr, (M, N), (N, 1), (tl.program_id(0) * BM, 0), (BM, BN), (1, 0))
            x = tl.load(blk, boundary_check=(0, 1))
            row = tl.program_id(0) * BM + tl.arange(0, BM)
            tl.store(out_ptr + row, tl.sum(x, axis=1), mask=row < M)


        class ModelNew(nn.Module):
            def forward(self, x):
                M, N = x.shape
                out = torch.empty(M, device=x.device, dtype=x.dtype)
                k[(triton.cdiv(M, 16),)](x, out, M, N, BM=16, BN=triton.next_power_of_2(N))
                return out
        """,
    ]
    FIXES = [
        (
            """
            import triton
            import triton.language as tl


            @triton.jit
            def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
                offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                mask = offs < n  # bounds
                x = tl.load(x_ptr + offs)
                tl.store(out_ptr + offs, x * 2)
            """,
            """
            import triton
            import triton.language as tl


            @triton.jit
            def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
                offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                mask = offs < n  # bounds
                x = tl.load(x_ptr + offs, mask=mask)
                tl.store(out_ptr + offs, x * 2, mask=mask)
            """,
        )
    ]

    def run(self, ctx: Context) -> Iterator[Diagnostic]:
        m = ctx.model
        arange = _calls_to(m, ("triton.language.arange",))
        block_ptr = _calls_to(m, _BLOCK_PTRS)
        for k in m.kernels:
            offsets = derived_names(m, k, set(), arange)
            tiles = derived_names(m, k, set(), block_ptr)
            for kind, call, scope in pointer_accesses(m, k):
                if kind == "atomic" or _has_mask(call, kind):
                    continue
                ptr = pointer_arg(call)
                if ptr is None or not depends(ptr, scope, offsets, arange) or depends(ptr, scope, tiles, block_ptr):
                    continue
                yield self.report(call, f"tl.{kind} on tl.arange offsets without mask= or boundary_check=", fix=_mask_fix(m, k, call, ptr, offsets))


def _has_mask(call: cst.Call, kind: str) -> bool:
    positional = [a for a in call.args if a.keyword is None]
    if any(a.keyword is not None and a.keyword.value in ("mask", "boundary_check") for a in call.args):
        return True
    return len(positional) >= (2 if kind == "load" else 3)


def _mask_fix(m: ModuleModel, k: Function, call: cst.Call, ptr, offsets: set[str]) -> Fix | None:
    used = {n.value for n in iter_subtree(ptr) if isinstance(n, cst.Name)} & offsets
    candidates = []
    for name, bindings in k.scope.bindings.items():
        for b in bindings:
            if isinstance(b.value, cst.Comparison) and {n.value for n in iter_subtree(b.value) if isinstance(n, cst.Name)} & used:
                candidates.append(name)
    if not candidates:
        return None
    name = "mask" if "mask" in candidates else candidates[0]
    arg = cst.Arg(value=cst.Name(name), keyword=cst.Name("mask"), equal=_NO_SPACE)
    return Fix(UNSAFE, f"pass mask={name}", [(call, call.with_changes(args=[*call.args, arg]))])
