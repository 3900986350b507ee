from __future__ import annotations

from typing import Iterator

import libcst as cst

from tritonlint.bindings import BindingKind, External
from tritonlint.rule import INTEGRITY, Context, Diagnostic, Rule

_CACHES = frozenset({"functools.cache", "functools.lru_cache", "functools.cached_property", "functools.lru_cache()"})


class ResultCache(Rule):
    """
    ## What it does
    Flags state that survives a `forward` call on its path: `functools.cache`
    or `lru_cache` on a function forward reaches, tensors stored on `self`,
    items stored into module-level or `self.` containers (`CACHE[key] = out`),
    and `global` names written from forward.

    ## Why is this bad?
    A gate that calls forward twice with the same inputs, or with inputs of
    the same fingerprint, can be answered from the cache: the "kernel" is
    timed doing nothing and verified on results computed elsewhere.

    ## Example
    ```python
    def forward(self, x):
        key = (x.shape, x.data_ptr())
        if key not in self.cache:
            self.cache[key] = launch(x)
        return self.cache[key]
    ```

    ## Use instead
    Compute the result on every call. Cache only things that do not depend on
    input values (compiled kernels, launch configurations).

    ## Fix safety
    No fix.
    """

    code = "TL101"
    name = "result-cache"
    category = INTEGRITY
    message = "state kept across forward calls can replay results"

    BAD = [
        """
        import functools
        import torch
        import torch.nn as nn
        import triton
        import triton.language as tl

        CACHE = {}


        @triton.jit
        def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


        @functools.lru_cache(maxsize=None)  # expect: TL101
        def launch(x):
            out = torch.empty_like(x)
            k[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), BLOCK=256)
            return out


        class ModelNew(nn.Module):
            def forward(self, x):
                key = x.shape
                if key not in CACHE:
                    CACHE[key] = launch(x)  # expect: TL101
                self.last = CACHE[key]  # expect: TL101
                return self.last
        """,
    ]
    GOOD = [
        """
        import torch
        import torch.nn as nn
        import triton
        import triton.language as tl


        @triton.jit
        def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


        class ModelNew(nn.Module):
            def __init__(self):
                super().__init__()
                self.block = 256

            def forward(self, x):
                seen = {}
                out = torch.empty_like(x)
                seen["n"] = x.numel()
                k[(triton.cdiv(seen["n"], self.block),)](x, out, seen["n"], BLOCK=self.block)
                return out
        """,
    ]

    def run(self, ctx: Context) -> Iterator[Diagnostic]:
        m = ctx.model
        reachable = m.host_reachable()
        ids = {id(f) for f in reachable}
        for f in reachable:
            for d in f.decorators:
                expr = d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator
                if any(isinstance(t, External) and t.qualname in _CACHES for t in m.resolve(expr, f.scope.parent)):
                    yield self.report(d.decorator, f"`{f.name}` is memoised ({m.module.code_for_node(expr)}): repeated inputs replay an old result")
            for sub, scope, _ in f.subscript_stores:
                if m.is_tensor(sub.value, scope):
                    continue  # writing into a tensor is TL003's business
                if m.self_class(sub.value.value if isinstance(sub.value, cst.Attribute) else None, scope) or _is_global(m, sub.value, scope):
                    yield self.report(sub, "stores a result into a container that outlives the forward call")
            for node, _ in f.nodes(cst.Global):
                yield self.report(node, "forward writes module-level state")
        entry_cls = m.entry_class
        for c in [entry_cls] if entry_cls else []:
            for k in m.mro(c):
                for attr, assigned in k.instance_attrs.items():
                    for value, scope, fn in assigned:
                        if id(fn) in ids and _may_hold_result(m, value, scope):
                            yield self.report(value, f"forward stores a result on `self.{attr}`: it survives to the next call")


def _may_hold_result(m, value, scope) -> bool:
    """A tensor, or an item read from a container (a cache lookup)."""
    return m.is_tensor(value, scope) or isinstance(value, cst.Subscript)


def _is_global(m, expr, scope) -> bool:
    if not isinstance(expr, cst.Name):
        return False
    bindings = m.lookup(expr.value, scope)
    return bool(bindings) and bindings[0].scope is m.module_scope and bindings[0].kind is BindingKind.ASSIGN
