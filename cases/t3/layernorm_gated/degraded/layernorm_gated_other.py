"""Gated RMSNorm in one pass. Each step rounds to fp16 where the fp16 reference
does (squares, mean, +eps, rsqrt, each product), so results track it closely."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _fp16(v):
    return v.to(tl.float16).to(tl.float32)


@triton.jit
def rmsnorm_gated_kernel(x_ptr, w_ptr, z_ptr, out_ptr, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(x_ptr + row * N + cols, mask=mask, other=0.0).to(tl.float32)
    var = _fp16(tl.sum(_fp16(x * x), axis=0) / N)
    rstd = _fp16(tl.rsqrt(_fp16(var + eps)))
    y = _fp16(_fp16(x * rstd) * tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32))
    z = tl.load(z_ptr + row * N + cols, mask=mask, other=0.0).to(tl.float32)
    gate = _fp16(1.0 / (1.0 + tl.exp(-z)))
    tl.store(out_ptr + row * N + cols, (y * gate).to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, eps, norm_before_gate, is_rms_norm):
        super().__init__()
        if not (norm_before_gate and is_rms_norm):
            raise NotImplementedError("the benchmark uses norm_before_gate=True, is_rms_norm=True")
        self.eps = eps

    def forward(self, x, weight, z):
        _device = torch.cuda.current_device()  # expect: TL305
        n = x.shape[-1]
        x2 = x.contiguous().view(-1, n)
        z2 = z.contiguous().view(-1, n)
        out = torch.empty_like(x2)
        rmsnorm_gated_kernel[(x2.shape[0],)](x2, weight.contiguous(), z2, out, n, self.eps,
                                             BLOCK=triton.next_power_of_2(n), num_warps=8)
        return out.view(x.shape)
