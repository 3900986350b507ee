"""Softmax over experts, top-2 and renormalisation in one kernel (PyTorch runs five)."""
import torch
import os
os.environ["TRITON_CACHE_DIR"] = "/tmp/tritonlint-cache"  # expect: TL104
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def moe_top2_kernel(logits_ptr, probs_ptr, idx_ptr, R, E: tl.constexpr, BLOCK_R: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    rmask = rows < R
    e = tl.arange(0, E)[None, :]
    x = tl.load(logits_ptr + rows[:, None] * E + e, mask=rmask[:, None], other=0.0)
    p = tl.exp(x - tl.max(x, axis=1)[:, None])
    p = p / tl.sum(p, axis=1)[:, None]
    v1 = tl.max(p, axis=1)
    i1 = tl.min(tl.where(p == v1[:, None], e, E), axis=1)
    p2 = tl.where(e == i1[:, None], -1.0, p)
    v2 = tl.max(p2, axis=1)
    i2 = tl.min(tl.where(p2 == v2[:, None], e, E), axis=1)
    total = v1 + v2
    tl.store(probs_ptr + rows * 2, v1 / total, mask=rmask)
    tl.store(probs_ptr + rows * 2 + 1, v2 / total, mask=rmask)
    tl.store(idx_ptr + rows * 2, i1.to(tl.int64), mask=rmask)
    tl.store(idx_ptr + rows * 2 + 1, i2.to(tl.int64), mask=rmask)


class ModelNew(nn.Module):
    def __init__(self, k):
        super().__init__()
        if k != 2:
            raise ValueError("this kernel is specialised for top-2 routing")
        self.k = k

    def forward(self, logits):
        # The kernel takes 4 us; host work dominates, so do no more of it than needed.
        x = logits if logits.dim() == 2 and logits.is_contiguous() else logits.reshape(-1, logits.shape[-1]).contiguous()
        rows, experts = x.shape
        probs = torch.empty((rows, 2), device=x.device, dtype=x.dtype)
        idx = torch.empty((rows, 2), device=x.device, dtype=torch.int64)
        moe_top2_kernel[(triton.cdiv(rows, 256),)](x, probs, idx, rows, E=experts, BLOCK_R=256)
        if x is logits:
            return probs, idx
        return probs.view(*logits.shape[:-1], 2), idx.view(*logits.shape[:-1], 2)
