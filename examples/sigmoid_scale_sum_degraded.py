import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sig_kernel(x_ptr, b_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=m)
    b = tl.load(b_ptr + cols, mask=m)
    tl.store(out_ptr + row * n_cols + cols, tl.sigmoid(2.0 * x + b), mask=m)


class ModelNew(nn.Module):
    def forward(self, x, bias):
        rows, cols = x.shape
        out = torch.empty_like(x)
        sig_kernel[(rows,)](x, bias, out, cols, BLOCK=triton.next_power_of_2(cols))
        return out.sum(dim=-1, keepdim=True)  # expect: TL003
