"""SwiGLU: silu(a) * b over the two halves of the last dim, one pass."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def swiglu_kernel(in_ptr, out_ptr, half, stride_in, stride_out, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < half
    base = in_ptr + row * stride_in
    a = tl.load(base + cols, mask=mask)
    b = tl.load(base + half + cols, mask=mask)
    tl.store(out_ptr + row * stride_out + cols, a * tl.sigmoid(a) * b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, combined):
        _ = torch.relu(combined)  # expect: TL003
        x = combined.contiguous().view(-1, combined.shape[-1])
        half = x.shape[1] // 2
        out = torch.empty((x.shape[0], half), device=x.device, dtype=x.dtype)
        block = 1024
        swiglu_kernel[(x.shape[0], triton.cdiv(half, block))](x, out, half, x.stride(0), out.stride(0), BLOCK=block, num_warps=4)
        return out.view(*combined.shape[:-1], half)
