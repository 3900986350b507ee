from __future__ import annotations

from tritonlint.kernels import real_kernels
from tritonlint.rule import DEGRADATION, Context, Diagnostic, Rule


class KernelNotLaunched(Rule):
    """
    ## What it does
    Flags a submission whose Triton kernels are never launched
    (`kernel[grid](...)`) on any path from `ModelNew.forward`. The path
    follows module functions over any number of levels, methods on `self`,
    static and class methods of helper classes, nested functions,
    `functools.partial`, lambdas and names bound to a kernel or wrapper.

    ## Why is this bad?
    Degradation type 2 of the seed-002 verifier: the kernel is decoration.
    It may be launched once in `__init__` or in a helper nobody calls, while
    `forward` returns PyTorch's result.

    ## Example
    ```python
    @triton.jit
    def add_kernel(...): ...

    class ModelNew(nn.Module):
        def forward(self, x, y):
            return torch.add(x, y)
    ```

    ## Use instead
    Launch the kernel from `forward`, or from a helper that `forward` calls.

    ## Fix safety
    No fix.
    """

    code = "TL002"
    name = "kernel-not-launched"
    category = DEGRADATION
    message = "no Triton kernel is launched on any path from ModelNew.forward"
    regression_type = 2
    checks_libraries = True  # a module class with a forward but no entry class: a misnamed ModelNew
    check_key = "kernel_called_from_forward"
    suggestion = (
        "Type 2: Triton kernels are defined but ModelNew.forward never launches one. "
        "Call kernel[grid](...) from forward (directly or through a helper it calls) "
        "and return the kernel's output."
    )

    BAD = [
        """
        import torch
        import torch.nn as nn
        import triton
        import triton.language as tl


        @triton.jit
        def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


        def unused_wrapper(x):
            out = torch.empty_like(x)
            copy_kernel[(1,)](x, out, x.numel(), BLOCK=1024)
            return out


        class ModelNew(nn.Module):
            def forward(self, x):  # expect: TL002
                return torch.relu(x)  # expect: TL003
        """,
        """
        import torch.nn as nn
        import triton
        import triton.language as tl


        @triton.jit
        def k(x_ptr):
            tl.store(x_ptr, tl.load(x_ptr) + 1)


        class ModelNew(nn.Module):  # expect: TL002
            def __init__(self):
                super().__init__()
        """,
    ]
    GOOD = [
        """
        import functools
        import torch
        import torch.nn as nn
        import triton
        import triton.language as tl


        @triton.jit
        def scale_kernel(x_ptr, out_ptr, n, s, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            mask = offs < n
            tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * s, mask=mask)


        class Launcher:
            @staticmethod
            def go(x, s, block):
                out = torch.empty_like(x)
                n = x.numel()
                scale_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, out, n, s, BLOCK=block)
                return out


        run = functools.partial(Launcher.go, block=1024)


        class ModelNew(nn.Module):
            def forward(self, x):
                return run(x, 2.0)
        """,
    ]

    def run(self, ctx: Context) -> list[Diagnostic]:
        m = ctx.model
        cls = m.entry_class
        if cls is None:
            return self._misnamed_entry(m) if m.kernels else []
        if not real_kernels(m):
            return []  # no kernel at all: TL001's finding
        entry = m.entry
        if entry is None:
            return [self.report(cls.node.name, f"{m.entry_class_name} has no {m.entry_method_name} method, so no kernel is launched")]
        if m.launch_sites():
            return []
        names = ", ".join(f"`{k.name}`" for k in m.kernels)
        return [self.report(entry.node.name, f"kernel(s) {names} never launched on any path from {m.entry_class_name}.{m.entry_method_name}")]

    def _misnamed_entry(self, m) -> list[Diagnostic]:
        """Kernels and an nn.Module with a forward, but no entry class: the gate would load nothing.
        (A module of kernels and wrappers without any module class is a library: not reported.)"""
        return [
            self.report(c.node.name, f"no class {m.entry_class_name}, so no kernel is launched from "
                        f"{m.entry_class_name}.{m.entry_method_name}: `{c.name}` has a {m.entry_method_name}; "
                        f"name it {m.entry_class_name} (or set entry-class)")
            for c in m.classes
            if m.entry_method_name in c.methods and not m.is_reference(c.methods[m.entry_method_name]) and m.is_module_class(c)
        ]

    def check_details(self, ctx: Context, found: list[Diagnostic]) -> dict:
        m = ctx.model
        called: list[str] = []
        for site in m.launch_sites() if m.entry is not None else []:
            if site.kernel.name not in called:
                called.append(site.kernel.name)
        out: dict = {"called": called}
        if m.entry_class is not None and not called:
            out["passed"] = False  # no kernel at all: nothing is called either
        return out
