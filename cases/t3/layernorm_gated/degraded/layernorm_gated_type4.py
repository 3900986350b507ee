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
    def __init__(self, eps, norm_before_gate, is_rms_norm):
        super().__init__()
        self.eps = eps
        self.norm_before_gate = norm_before_gate
        self.is_rms_norm = is_rms_norm

    def forward(self, x, weight, z):
        rstd = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)  # expect: TL003 TL003 TL003 TL003
        return _copy(x * rstd * weight * torch.sigmoid(z))  # expect: TL003 TL003 TL003 TL003
