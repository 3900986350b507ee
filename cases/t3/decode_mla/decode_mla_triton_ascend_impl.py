"""Paged MLA decode in one kernel: per (batch, head block), two passes over the pages of
the sequence. The first keeps the running max and sum of exp of the fp32 scores; the
second casts the normalised probabilities to bf16 before the V product, as the reference
does. (One online pass would round exp(s - running max) instead, which differs from the
reference by up to a bf16 ulp of each probability: outputs near zero then miss seed 002's
MARE.)"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _scores(q_nope, q_rope, kn_ptr, kr_ptr, bt_ptr, b, stride_bt, start, seq, sm_scale,
            PAGE: tl.constexpr, DN: tl.constexpr, DR: tl.constexpr, BLOCK_N: tl.constexpr):
    """fp32 scores of the block of keys from `start`, -inf past the sequence; its mask and slots."""
    n = start + tl.arange(0, BLOCK_N)
    nmask = n < seq
    page = tl.load(bt_ptr + b * stride_bt + n // PAGE, mask=nmask, other=0)
    slot = (page.to(tl.int64) * PAGE + n % PAGE)[:, None]
    kn = tl.load(kn_ptr + slot * DN + tl.arange(0, DN)[None, :], mask=nmask[:, None], other=0.0)
    kr = tl.load(kr_ptr + slot * DR + tl.arange(0, DR)[None, :], mask=nmask[:, None], other=0.0)
    s = (tl.dot(q_nope, tl.trans(kn)) + tl.dot(q_rope, tl.trans(kr))) * sm_scale
    return tl.where(nmask[None, :], s, -float("inf")), nmask, slot


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
        s, nmask, slot = _scores(q_nope, q_rope, kn_ptr, kr_ptr, bt_ptr, b, stride_bt, start, seq, sm_scale,
                                 PAGE, DN, DR, BLOCK_N)
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        l_i = l_i * tl.exp(m_i - m_new) + tl.sum(tl.exp(s - m_new[:, None]), axis=1)
        m_i = m_new
    for start in range(0, seq, BLOCK_N):
        s, nmask, slot = _scores(q_nope, q_rope, kn_ptr, kr_ptr, bt_ptr, b, stride_bt, start, seq, sm_scale,
                                 PAGE, DN, DR, BLOCK_N)
        p = tl.exp(s - m_i[:, None]) / l_i[:, None]
        v = tl.load(v_ptr + slot * DN + dn, mask=nmask[:, None], other=0.0)
        acc += tl.dot(p.to(v.dtype), v)
    tl.store(out_ptr + b * stride_ob + heads[:, None] * stride_oh + dn, acc.to(out_ptr.dtype.element_ty), mask=hmask)


class ModelNew(nn.Module):
    def __init__(self, sm_scale, page_size):
        super().__init__()
        self.sm_scale = sm_scale
        self.page_size = page_size

    def forward(self, q, k_nope, k_rope, v, seq_lens, block_table):
        batch, heads, _ = q.shape
        dn = k_nope.shape[-1]
        dr = k_rope.shape[-1]
        q = q.contiguous()
        bt = block_table.contiguous()
        out = torch.empty((batch, heads, dn), device=q.device, dtype=q.dtype)
        block_h = 16
        mla_decode_kernel[(batch, triton.cdiv(heads, block_h))](
            q, k_nope.contiguous(), k_rope.contiguous(), v.contiguous(), seq_lens, bt, out, self.sm_scale, heads,
            q.stride(0), q.stride(1), bt.stride(0), out.stride(0), out.stride(1),
            PAGE=self.page_size, DN=dn, DR=dr, BLOCK_H=block_h, BLOCK_N=32, num_warps=4, num_stages=2)
        return out
