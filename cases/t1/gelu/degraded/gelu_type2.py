"""Exact GELU, one pass: 0.5 * x * (1 + erf(x / sqrt(2)))."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gelu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    xd = x.to(tl.float64)  # 1 + erf(x) in float32 loses the tail below x = -4 to cancellation
    tl.store(out_ptr + offs, (0.5 * xd * (1.0 + tl.erf(xd * 0.7071067811865476))).to(x.dtype), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):  # expect: TL002
        return torch.nn.functional.gelu(x)  # expect: TL003
