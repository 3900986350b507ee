"""sum(sigmoid(2x + bias)) per row in one pass (PyTorch runs four kernels)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sigmoid_sum_kernel(x_ptr, b_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
        b = tl.load(b_ptr + cols, mask=mask, other=0.0)
        acc += tl.where(mask, tl.sigmoid(2.0 * x + b), 0.0)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, bias):
        _ = torch.relu(x)  # expect: TL003
        x2 = x.contiguous().view(-1, x.shape[-1])
        rows, n_cols = x2.shape
        out = torch.empty((rows, 1), device=x.device, dtype=x.dtype)
        block = min(2048, triton.next_power_of_2(n_cols))
        sigmoid_sum_kernel[(rows,)](x2, bias.contiguous(), out, n_cols, x2.stride(0), BLOCK=block, num_warps=8)
        return out.view(*x.shape[:-1], 1)
