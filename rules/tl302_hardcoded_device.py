from __future__ import annotations

import re
from typing import Iterator

import libcst as cst

from tritonlint.bindings import Function
from tritonlint.model import ModuleModel
from tritonlint.examples import LAUNCH, submission
from tritonlint.rule import PERFORMANCE, SAFE, WARNING, Context, Diagnostic, Fix, Rule

_DEVICE = re.compile(r"^(cuda|npu)(:\d+)?$")


def _device_string(node) -> str | None:
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        if isinstance(value, str) and _DEVICE.match(value):
            return value
    return None


class HardcodedDevice(Rule):
    """
    ## What it does
    Flags device strings written into the submission: `device="cuda"`,
    `.to("npu")`, `torch.device("cuda:0")`, and `.cuda()`/`.npu()` calls.

    ## Why is this bad?
    The same submission must run on NPU (triton-ascend) and CUDA, and on
    whichever device the gate put the inputs on. A literal device breaks on
    the other backend, or silently copies data across devices.

    ## Example
    ```python
    out = torch.empty(n, device="cuda")
    ```

    ## Use instead
    ```python
    out = torch.empty(n, device=x.device)
    ```

    ## Fix safety
    Safe inside a function that has a tensor parameter: `device="..."`
    becomes `device=<that tensor>.device`. Elsewhere no fix.
    """

    code = "TL302"
    name = "hardcoded-device"
    category = PERFORMANCE
    severity = WARNING
    message = "hard-coded device"

    BAD = [
        submission(
            """
            out = torch.empty(x.shape, device="cuda", dtype=x.dtype)  # expect: TL302
            k[(triton.cdiv(x.numel(), 256),)](x.cuda(), out, x.numel(), BLOCK=256)  # expect: TL302
            return out
            """
        ),
    ]
    GOOD = [submission(LAUNCH.replace("torch.empty_like(x)", "torch.empty(x.shape, device=x.device, dtype=x.dtype)"))]

    FIXES = [
        (
            """
            import torch
            import torch.nn as nn


            class ModelNew(nn.Module):
                def forward(self, x, y):
                    out = torch.empty(x.numel(), device="cuda")  # buffer
                    return out
            """,
            """
            import torch
            import torch.nn as nn


            class ModelNew(nn.Module):
                def forward(self, x, y):
                    out = torch.empty(x.numel(), device=x.device)  # buffer
                    return out
            """,
        )
    ]

    def run(self, ctx: Context) -> Iterator[Diagnostic]:
        m = ctx.model
        for site in m.calls(m.submission_functions()):
            call = site.node
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value in ("cuda", "npu") and not call.args and m.is_tensor(func.value, site.scope):
                yield self.report(call, f"`.{func.attr.value}()` pins the tensor to one backend; use the input's device")
                continue
            for a in call.args:
                dev = _device_string(a.value)
                if dev is None:
                    continue
                kw = a.keyword.value if a.keyword is not None else None
                positional_device = kw is None and (
                    (isinstance(func, cst.Attribute) and func.attr.value == "to") or "torch.device" in site.names
                )
                if kw == "device" or positional_device:
                    yield self.report(a.value, f'device "{dev}" is hard-coded; take it from an input tensor', fix=self._fix(m, site.function, a, kw))

    def _fix(self, m: ModuleModel, f: Function, arg: cst.Arg, kw: str | None) -> Fix | None:
        if kw != "device":
            return None
        params = [p for p in f.param_names() if p in m.tensors.params(f)]
        if not params:
            return None
        return Fix(SAFE, f"device={params[0]}.device", [(arg.value, cst.parse_expression(f"{params[0]}.device"))])
