"""Add + RMSNorm + int8 quantisation in one pass, rounding half to even like torch.round."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _rms_row(x_ptr, r_ptr, g_ptr, row, N, eps, BLOCK: tl.constexpr):
    """h = x + residual; h * rsqrt(mean(h^2) + eps) * gamma, in the reference's order."""
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    h = tl.load(x_ptr + row * N + cols, mask=mask, other=0.0) + tl.load(r_ptr + row * N + cols, mask=mask, other=0.0)
    rstd = tl.rsqrt(tl.fdiv(tl.sum(h * h, axis=0), N * 1.0, ieee_rounding=True) + eps)  # torch's mean divides exactly
    return h * rstd * tl.load(g_ptr + cols, mask=mask, other=0.0), cols, mask


@triton.jit
def _round_half_even(v):
    f = tl.floor(v)
    d = v - f
    f_is_even = (f - 2.0 * tl.floor(f * 0.5)) == 0.0
    return tl.where(d > 0.5, f + 1.0, tl.where(d < 0.5, f, tl.where(f_is_even, f, f + 1.0)))


@triton.jit
def add_rmsnorm_quant_kernel(x_ptr, r_ptr, g_ptr, scale_ptr, zp_ptr, out_ptr, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    y, cols, mask = _rms_row(x_ptr, r_ptr, g_ptr, row, N, eps, BLOCK)
    q = _round_half_even(tl.fdiv(y, tl.load(scale_ptr), ieee_rounding=True) + tl.load(zp_ptr))
    q = tl.minimum(tl.maximum(q, -128.0), 127.0)
    tl.store(out_ptr + row * N + cols, q.to(tl.int8), mask=mask)


def _exact(t):
    """CUDA: no FMA contraction, so products round like PyTorch's separate ops."""
    return {"enable_fp_fusion": False} if t.device.type == "cuda" else {}


class ModelNew(nn.Module):
    def __init__(self, eps):
        super().__init__()
        self.eps = eps

    def forward(self, x, residual, gamma, scale, zero_point):  # expect: TL002
        h = x + residual  # expect: TL003
        var = torch.mean(h * h, dim=-1, keepdim=True)  # expect: TL003 TL003
        y = h * torch.rsqrt(var + self.eps) * gamma  # expect: TL003 TL003 TL003 TL003
        return torch.round(y / scale + zero_point).clamp(-128, 127).to(torch.int8)  # expect: TL003 TL003 TL003 TL003 TL003
