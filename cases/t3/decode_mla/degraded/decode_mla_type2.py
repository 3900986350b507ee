"""Paged MLA decode as one flash-decoding kernel: per (batch, head block) an online
softmax over the pages of the sequence, scores in fp32, probabilities cast to bf16
before the V product like the reference."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def mla_decode_kernel(q_ptr, kn_ptr, kr_ptr, v_ptr, seq_ptr, bt_ptr, out_ptr, sm_scale, H,
                      stride_qb, stride_qh, stride_bt, stride_ob, stride_oh,
                      PAGE: tl.constexpr, DN: tl.constexpr, DR: tl.constexpr,
                      BLOCK_H: tl.constexpr, BLOCK_N: tl.constexpr):
    b = tl.program_id(0).to(tl.int64)
    heads = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    hmask = (heads < H)[:, None]
    dn = tl.arange(0, DN)[None, :]
    dr = tl.arange(0, DR)[None, :]
    q_row = q_ptr + b * stride_qb + heads[:, None] * stride_qh
    q_nope = tl.load(q_row + dn, mask=hmask, other=0.0)
    q_rope = tl.load(q_row + DN + dr, mask=hmask, other=0.0)
    seq = tl.load(seq_ptr + b)
    m_i = tl.full((BLOCK_H,), -float("inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_H,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_H, DN), dtype=tl.float32)
    for start in range(0, seq, BLOCK_N):
        n = start + tl.arange(0, BLOCK_N)
        nmask = n < seq
        page = tl.load(bt_ptr + b * stride_bt + n // PAGE, mask=nmask, other=0)
        slot = (page.to(tl.int64) * PAGE + n % PAGE)[:, None]
        kn = tl.load(kn_ptr + slot * DN + dn, mask=nmask[:, None], other=0.0)
        kr = tl.load(kr_ptr + slot * DR + dr, mask=nmask[:, None], other=0.0)
        s = (tl.dot(q_nope, tl.trans(kn)) + tl.dot(q_rope, tl.trans(kr))) * sm_scale
        s = tl.where(nmask[None, :], s, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(v_ptr + slot * DN + dn, mask=nmask[:, None], other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(out_ptr + b * stride_ob + heads[:, None] * stride_oh + dn, out.to(out_ptr.dtype.element_ty), mask=hmask)


class ModelNew(nn.Module):
    def __init__(self, sm_scale, page_size):
        super().__init__()
        self.sm_scale = sm_scale
        self.page_size = page_size

    def forward(self, q, k_nope, k_rope, v, seq_lens, block_table):  # expect: TL002
        pages = block_table.long()  # expect: TL003
        kn = k_nope[pages].flatten(1, 3).float()  # expect: TL003 TL003
        kr = k_rope[pages].flatten(1, 3).float()  # expect: TL003 TL003
        vv = v[pages].flatten(1, 3)  # expect: TL003
        d = kn.shape[-1]
        scores = (torch.einsum("bhd,bnd->bhn", q[..., :d].float(), kn) + torch.einsum("bhd,bnd->bhn", q[..., d:].float(), kr)) * self.sm_scale  # expect: TL003 TL003 TL003 TL003 TL003 TL003
        p = torch.softmax(scores, dim=-1).to(q.dtype)  # expect: TL003 TL003
        return torch.einsum("bhn,bnd->bhd", p, vv)  # expect: TL003
