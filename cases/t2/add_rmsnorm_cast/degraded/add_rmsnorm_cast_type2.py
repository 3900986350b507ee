"""Add + RMSNorm + cast in one pass over the rows."""
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
def add_rmsnorm_cast_kernel(x_ptr, r_ptr, g_ptr, out_ptr, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    y, cols, mask = _rms_row(x_ptr, r_ptr, g_ptr, row, N, eps, BLOCK)
    tl.store(out_ptr + row * N + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def _exact(t):
    """CUDA: no FMA contraction, so products round like PyTorch's separate ops."""
    return {"enable_fp_fusion": False} if t.device.type == "cuda" else {}


class ModelNew(nn.Module):
    def __init__(self, eps, out_dtype):
        super().__init__()
        self.eps = eps
        self.out_dtype = out_dtype

    def forward(self, x, residual, gamma):  # expect: TL002
        h = x + residual  # expect: TL003
        var = torch.mean(h * h, dim=-1, keepdim=True)  # expect: TL003 TL003
        return (h * torch.rsqrt(var + self.eps) * gamma).half()  # expect: TL003 TL003 TL003 TL003 TL003
