"""Row softmax, one program per row, the row held in registers."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * stride + cols, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        _ = torch.relu(x)  # expect: TL003
        moved = x.movedim(self.dim, -1).contiguous()
        rows = moved.numel() // moved.shape[-1]
        n_cols = moved.shape[-1]
        out = torch.empty_like(moved)
        block = triton.next_power_of_2(n_cols)
        warps = 16 if block >= 4096 else (8 if block >= 1024 else 4)
        softmax_kernel[(rows,)](moved, out, n_cols, n_cols, BLOCK=block, num_warps=warps)
        return out.movedim(-1, self.dim)
