from __future__ import annotations

from typing import Iterator

import libcst as cst

from tritonlint.compute import compute_sites
from tritonlint.syntax import iter_subtree
from tritonlint.examples import submission
from tritonlint.rule import DEGRADATION, Context, Diagnostic, Rule


class TorchFallbackTry(Rule):
    """
    ## What it does
    Flags `try`/`except` on the forward path whose `except` branch computes
    with PyTorch.

    ## Why is this bad?
    The kernel fails (does not compile on the device, hits an unsupported
    shape) and the submission quietly returns PyTorch's answer: it verifies,
    and its "Triton" timing is PyTorch's. Failures must surface.

    ## Example
    ```python
    try:
        return launch(x)
    except Exception:
        return torch.softmax(x, -1)
    ```

    ## Use instead
    Let the kernel's error propagate.

    ## Fix safety
    No fix.
    """

    code = "TL202"
    name = "torch-fallback-try"
    category = DEGRADATION
    regression_type = 3
    message = "except branch falls back to PyTorch"

    BAD = [
        submission(
            """
            out = torch.empty_like(x)
            try:
                k[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), BLOCK=256)
            except Exception:  # expect: TL202
                out = torch.exp(x)  # expect: TL003
            return out
            """
        ),
    ]
    GOOD = [
        submission(
            """
            out = torch.empty_like(x)
            try:
                k[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), BLOCK=256)
            except RuntimeError as e:
                raise RuntimeError(f"kernel failed for shape {tuple(x.shape)}") from e
            return out
            """
        ),
    ]

    def run(self, ctx: Context) -> Iterator[Diagnostic]:
        m = ctx.model
        for f in m.host_reachable():
            if not f.nodes(cst.Try):
                continue
            sites = list(compute_sites(m, f, ctx.config.allow_glue))
            for node, _ in f.nodes(cst.Try):
                for handler in node.handlers:
                    inside = {id(n) for n in iter_subtree(handler.body)}
                    hits = [site.call for site in sites if id(site.node) in inside]
                    if hits:
                        yield self.report(handler, f"except branch computes with PyTorch (`{hits[0]}`): kernel failures must surface, not fall back")
