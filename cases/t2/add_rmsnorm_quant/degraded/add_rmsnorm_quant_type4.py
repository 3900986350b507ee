import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):  # expect: TL004
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


def _copy(t):
    out = torch.empty_like(t)
    copy_kernel[(triton.cdiv(t.numel(), 1024),)](t, out, t.numel(), BLOCK=1024)
    return out


class ModelNew(nn.Module):
    def __init__(self, eps):
        super().__init__()
        self.eps = eps

    def forward(self, x, residual, gamma, scale, zero_point):
        h = x + residual  # expect: TL003
        var = torch.mean(h * h, dim=-1, keepdim=True)  # expect: TL003 TL003
        y = h * torch.rsqrt(var + self.eps) * gamma  # expect: TL003 TL003 TL003 TL003
        return _copy(torch.round(y / scale + zero_point).clamp(-128, 127).to(torch.int8))  # expect: TL003 TL003 TL003 TL003 TL003
