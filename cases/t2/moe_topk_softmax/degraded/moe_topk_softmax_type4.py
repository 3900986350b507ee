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
    def __init__(self, k):
        super().__init__()
        self.k = k

    def forward(self, logits):
        p = torch.softmax(logits, dim=-1)  # expect: TL003
        values, indices = torch.topk(p, self.k, dim=-1)  # expect: TL003
        return _copy(values / values.sum(dim=-1, keepdim=True)), indices  # expect: TL003 TL003
