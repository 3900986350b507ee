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
    def __init__(self, sm_scale, page_size):
        super().__init__()
        self.sm_scale = sm_scale
        self.page_size = page_size

    def forward(self, q, k_nope, k_rope, v, seq_lens, block_table):
        pages = block_table.long()  # expect: TL003
        kn = k_nope[pages].flatten(1, 3).float()  # expect: TL003 TL003
        kr = k_rope[pages].flatten(1, 3).float()  # expect: TL003 TL003
        vv = v[pages].flatten(1, 3)  # expect: TL003
        d = kn.shape[-1]
        scores = (torch.einsum("bhd,bnd->bhn", q[..., :d].float(), kn) + torch.einsum("bhd,bnd->bhn", q[..., d:].float(), kr)) * self.sm_scale  # expect: TL003 TL003 TL003 TL003 TL003 TL003
        p = torch.softmax(scores, dim=-1).to(q.dtype)  # expect: TL003 TL003
        return _copy(torch.einsum("bhn,bnd->bhd", p, vv))  # expect: TL003
