from __future__ import annotations

from typing import Iterator

import libcst as cst

from tritonlint.examples import submission
from tritonlint.rule import INTEGRITY, Context, Diagnostic, Rule

_NAMES = ("Stream", "stream", "Event", "set_stream", "ExternalStream", "StreamContext", "graph", "CUDAGraph", "NPUGraph")
_ROOTS = ("torch.cuda.", "torch.npu.", "torch_npu.npu.", "torch.accelerator.", "torch.")


def _is_stream_api(q: str) -> bool:
    return any(q == root + n for root in _ROOTS for n in _NAMES)


class StreamOrEventInForward(Rule):
    """
    ## What it does
    Flags streams, events, stream contexts and graphs created or entered on
    the path from `ModelNew.forward` (`torch.cuda.Stream()`,
    `with torch.cuda.stream(s):`, `torch.Event()`, the `torch.npu` and
    `torch.accelerator` equivalents).

    ## Why is this bad?
    The gate times forward with events on the current stream. Work pushed to
    a side stream is invisible to those events, so the measured time shrinks
    while the work still runs.

    ## Example
    ```python
    def forward(self, x):
        with torch.cuda.stream(self.side):
            return launch(x)
    ```

    ## Use instead
    Launch on the current stream.

    ## Fix safety
    No fix.
    """

    code = "TL103"
    name = "stream-or-event-in-forward"
    category = INTEGRITY
    message = "forward uses its own stream, event or graph"

    BAD = [
        submission(
            """
            side = torch.cuda.Stream()  # expect: TL103
            done = torch.Event()  # expect: TL103
            out = torch.empty_like(x)
            with torch.cuda.stream(side):  # expect: TL103
                k[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), BLOCK=256)
            return out
            """
        ),
    ]
    GOOD = [submission()]

    def run(self, ctx: Context) -> Iterator[Diagnostic]:
        m = ctx.model
        for site in m.calls(m.host_reachable()):
            hits = [q for q in site.names if _is_stream_api(q)]
            if hits:
                yield self.report(site.node, f"`{hits[0]}` in forward: work on another stream or graph escapes the gate's timing events")
