from __future__ import annotations

from typing import Iterator

import libcst as cst

from tritonlint.examples import submission
from tritonlint.rule import PERFORMANCE, WARNING, Context, Diagnostic, Rule

# reported by TL103 (streams, events, graphs) and TL205 (synchronize)
_ELSEWHERE = ("Stream", "stream", "Event", "set_stream", "ExternalStream", "graph", "CUDAGraph", "synchronize")


class CudaOnlyApi(Rule):
    """
    ## What it does
    Flags `torch.cuda.*` calls in the submission (streams, events and
    `synchronize` are reported by TL103 and TL205).

    ## Why is this bad?
    Solutions must run on NPU through torch_npu and triton-ascend as well as
    on CUDA. `torch.cuda.current_device()`, `get_device_properties()` and
    friends do not exist there, so the submission fails on the other
    backend before a kernel runs.

    ## Example
    ```python
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    ```

    ## Use instead
    Device-agnostic APIs: `x.device`, `torch.accelerator.*`,
    `triton.runtime.driver.active.utils.get_device_properties(...)`.

    ## Fix safety
    No fix.
    """

    code = "TL305"
    name = "cuda-only-api"
    category = PERFORMANCE
    severity = WARNING
    message = "CUDA-only torch API"

    BAD = [
        submission(
            """
            sms = torch.cuda.get_device_properties(x.device).multi_processor_count  # expect: TL305
            out = torch.empty_like(x)
            k[(min(sms, triton.cdiv(x.numel(), 256)),)](x, out, x.numel(), BLOCK=256)
            return out
            """
        ),
    ]
    GOOD = [submission()]

    def run(self, ctx: Context) -> Iterator[Diagnostic]:
        m = ctx.model
        for site in m.calls(m.submission_functions()):
            hits = [q for q in site.names if q.startswith("torch.cuda.") and "()" not in q]
            if hits and hits[0].rsplit(".", 1)[-1] not in _ELSEWHERE:
                yield self.report(site.node, f"`{hits[0]}` exists only on CUDA; use a device-agnostic API")
