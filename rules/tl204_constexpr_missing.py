from __future__ import annotations

from typing import Iterator

import libcst as cst

from tritonlint.bindings import BindingKind, Function
from tritonlint.model import ModuleModel
from tritonlint.syntax import iter_subtree
from tritonlint.examples import KERNEL, submission
from tritonlint.rule import HAZARD, SAFE, Context, Diagnostic, Fix, Rule

# triton.language calls whose (shape) arguments must be compile-time constants
_SHAPED = frozenset("triton.language." + n for n in "arange zeros full reshape view broadcast_to static_range".split())


def constexpr_annotation(m: ModuleModel) -> cst.Annotation | None:
    """`tl.constexpr` spelled with this module's own import of triton.language."""
    for name, bindings in m.module_scope.bindings.items():
        if any(b.kind is BindingKind.IMPORT and b.qualname == "triton.language" for b in bindings):
            return cst.Annotation(cst.parse_expression(f"{name}.constexpr"))
    for name, bindings in m.module_scope.bindings.items():
        if any(b.kind is BindingKind.IMPORT and b.qualname == "triton" for b in bindings):
            return cst.Annotation(cst.parse_expression(f"{name}.language.constexpr"))
    return None


class ConstexprMissing(Rule):
    """
    ## What it does
    Flags kernel parameters used as block sizes or shapes (`tl.arange(0,
    BLOCK)`, `tl.zeros((BM, BN), ...)`, `tl.reshape`, `tl.static_range`)
    that are not annotated `tl.constexpr`.

    ## Why is this bad?
    Triton needs those values at compile time: the kernel fails to compile
    ("arange's arguments must be of type tl.constexpr") on the first launch,
    which the linter can tell you before a device is involved.

    ## Example
    ```python
    @triton.jit
    def k(x_ptr, n, BLOCK):
        offs = tl.arange(0, BLOCK)
    ```

    ## Use instead
    ```python
    def k(x_ptr, n, BLOCK: tl.constexpr):
    ```

    ## Fix safety
    Safe: the annotation only makes the value a compile-time constant, which
    the kernel already requires.
    """

    code = "TL204"
    name = "constexpr-missing"
    category = HAZARD
    message = "kernel parameter used as a block size is not tl.constexpr"

    BAD = [submission(kernel=KERNEL.replace("BLOCK: tl.constexpr):", "BLOCK):  # expect: TL204"))]
    GOOD = [submission(), submission(kernel=KERNEL.replace("BLOCK: tl.constexpr", 'BLOCK: "tl.constexpr"'))]

    FIXES = [
        (
            """
            import triton
            from triton import language as language


            @triton.jit
            def k(x_ptr, n, BM, BN=64):  # tile sizes
                acc = language.zeros((BM, BN), dtype=language.float32)
            """,
            """
            import triton
            from triton import language as language


            @triton.jit
            def k(x_ptr, n, BM: language.constexpr, BN: language.constexpr = 64):  # tile sizes
                acc = language.zeros((BM, BN), dtype=language.float32)
            """,
        )
    ]

    def run(self, ctx: Context) -> Iterator[Diagnostic]:
        m = ctx.model
        annotation = None
        for k in m.kernels:
            for p in self._missing(m, k):
                annotation = annotation or constexpr_annotation(m)
                fix = None
                if annotation is not None:
                    equal = cst.AssignEqual() if p.default is not None else cst.MaybeSentinel.DEFAULT
                    fix = Fix(SAFE, f"annotate {p.name.value}: tl.constexpr", [(p, p.with_changes(annotation=annotation, equal=equal))])
                yield self.report(p, f"`{p.name.value}` of kernel `{k.name}` sets a block size or shape but is not tl.constexpr", fix=fix)

    def _missing(self, m: ModuleModel, k: Function) -> list[cst.Param]:
        params = {p.name.value: p for p in k.params}
        used: list[str] = []
        for site in m.calls([k]):
            if not _SHAPED & set(site.names):
                continue
            for a in site.node.args:
                if a.keyword is not None and a.keyword.value in ("dtype", "other"):
                    continue
                for n in iter_subtree(a.value):
                    if isinstance(n, cst.Name) and n.value in params and n.value not in used:
                        used.append(n.value)
        return [params[name] for name in used if not _is_constexpr(m, params[name], k)]


def _is_constexpr(m: ModuleModel, p: cst.Param, k: Function) -> bool:
    ann = p.annotation
    if ann is None:
        return False
    if isinstance(ann.annotation, cst.SimpleString):  # `BLOCK: "tl.constexpr"`, which Triton accepts
        value = ann.annotation.evaluated_value
        return isinstance(value, str) and value.rsplit(".", 1)[-1] == "constexpr"
    return "triton.language.constexpr" in m.externals(ann.annotation, k.scope.parent)
