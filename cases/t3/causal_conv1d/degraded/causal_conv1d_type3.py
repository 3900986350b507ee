"""One decode step of a depthwise causal conv with silu, and the state update, in one
kernel. Products, the sum and the bias add round to fp16 where the reference's ops do."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _fp16(v):
    return v.to(tl.float16).to(tl.float32)


@triton.jit
def conv1d_update_kernel(x_ptr, state_ptr, w_ptr, b_ptr, out_ptr, D, BLOCK: tl.constexpr, SILU: tl.constexpr):
    batch = tl.program_id(0).to(tl.int64)
    c = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = c < D
    s_ptr = state_ptr + (batch * D + c) * 3
    s0 = tl.load(s_ptr, mask=mask, other=0.0)
    s1 = tl.load(s_ptr + 1, mask=mask, other=0.0)
    s2 = tl.load(s_ptr + 2, mask=mask, other=0.0)
    xv = tl.load(x_ptr + batch * D + c, mask=mask, other=0.0)
    w_row = w_ptr + c * 4
    acc = _fp16(s0.to(tl.float32) * tl.load(w_row, mask=mask, other=0.0).to(tl.float32))
    acc += _fp16(s1.to(tl.float32) * tl.load(w_row + 1, mask=mask, other=0.0).to(tl.float32))
    acc += _fp16(s2.to(tl.float32) * tl.load(w_row + 2, mask=mask, other=0.0).to(tl.float32))
    acc += _fp16(xv.to(tl.float32) * tl.load(w_row + 3, mask=mask, other=0.0).to(tl.float32))
    y = _fp16(_fp16(acc) + tl.load(b_ptr + c, mask=mask, other=0.0).to(tl.float32))
    if SILU:
        y = y / (1.0 + tl.exp(-y))
    tl.store(out_ptr + batch * D + c, y.to(out_ptr.dtype.element_ty), mask=mask)
    tl.store(s_ptr, s1, mask=mask)
    tl.store(s_ptr + 1, s2, mask=mask)
    tl.store(s_ptr + 2, xv, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, activation):
        super().__init__()
        self.silu = activation == "silu"

    def forward(self, x, conv_state, weight, bias, conv_state_indices):
        _ = torch.relu(x)  # expect: TL003
        batch, dim = x.shape
        if weight.shape[-1] != 4 or not conv_state.is_contiguous():
            raise ValueError("kernel expects width 4 and a contiguous conv_state")
        out = torch.empty_like(x)
        block = 256
        # conv_state is updated in place on purpose: it is the layer's recurrent state.
        conv1d_update_kernel[(batch, triton.cdiv(dim, block))](x.contiguous(), conv_state, weight.contiguous(),  # tritonlint: ignore[TL201]
                                                               bias.contiguous(), out, dim, BLOCK=block, SILU=self.silu, num_warps=4)
        return out
