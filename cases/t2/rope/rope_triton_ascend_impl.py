"""Rotary embedding in one pass; each product and the sum are rounded to fp16
where the PyTorch reference's ops round, so results match it bit for bit on CUDA."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def rope_kernel(x_ptr, cos_ptr, sin_ptr, out_ptr, R, S, D: tl.constexpr, HALF: tl.constexpr, BLOCK_R: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    rmask = (rows < R)[:, None]
    c = tl.arange(0, HALF)[None, :]
    xo = rows.to(tl.int64)[:, None] * D + c
    po = (rows % S)[:, None] * D + c
    x1 = tl.load(x_ptr + xo, mask=rmask, other=0.0).to(tl.float32)
    x2 = tl.load(x_ptr + xo + HALF, mask=rmask, other=0.0).to(tl.float32)
    cos1 = tl.load(cos_ptr + po, mask=rmask, other=0.0).to(tl.float32)
    cos2 = tl.load(cos_ptr + po + HALF, mask=rmask, other=0.0).to(tl.float32)
    sin1 = tl.load(sin_ptr + po, mask=rmask, other=0.0).to(tl.float32)
    sin2 = tl.load(sin_ptr + po + HALF, mask=rmask, other=0.0).to(tl.float32)
    o1 = (x1 * cos1).to(tl.float16).to(tl.float32) + (-x2 * sin1).to(tl.float16).to(tl.float32)
    o2 = (x2 * cos2).to(tl.float16).to(tl.float32) + (x1 * sin2).to(tl.float16).to(tl.float32)
    tl.store(out_ptr + xo, o1.to(out_ptr.dtype.element_ty), mask=rmask)
    tl.store(out_ptr + xo + HALF, o2.to(out_ptr.dtype.element_ty), mask=rmask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, cos, sin):
        x = x.contiguous()
        d = x.shape[-1]
        s = x.shape[-2]
        cos = cos.contiguous().view(-1, s, d)[0]
        sin = sin.contiguous().view(-1, s, d)[0]
        out = torch.empty_like(x)
        rows = x.numel() // d
        block_r = 32
        rope_kernel[(triton.cdiv(rows, block_r),)](x, cos, sin, out, rows, s, D=d, HALF=d // 2, BLOCK_R=block_r, num_warps=4)
        return out
