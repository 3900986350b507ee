"""t3/decode_mla: paged MLA decode (DeepSeek-V3): one KV head shared by all query heads."""
import math

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, sm_scale, page_size):
        super().__init__()
        self.sm_scale = sm_scale
        self.page_size = page_size

    def forward(self, q, k_nope, k_rope, v, seq_lens, block_table):
        d_nope = k_nope.shape[-1]
        outs = []
        for b in range(q.shape[0]):
            n = int(seq_lens[b].item())
            pages = block_table[b, : (n + self.page_size - 1) // self.page_size].cpu().long()
            kn = k_nope[pages].reshape(-1, d_nope)[:n].float()
            kr = k_rope[pages].reshape(-1, k_rope.shape[-1])[:n].float()
            vv = v[pages].reshape(-1, v.shape[-1])[:n]
            qb = q[b].float()
            scores = (qb[:, :d_nope] @ kn.T + qb[:, d_nope:] @ kr.T) * self.sm_scale
            p = torch.softmax(scores, dim=-1).to(q.dtype)
            outs.append(p @ vv)
        return torch.stack(outs)


def _inputs(batch, heads, seq, pages_per_seq, page_size=128, d_nope=512, d_rope=64):
    num_pages = batch * pages_per_seq
    return [
        torch.randn(batch, heads, d_nope + d_rope, dtype=torch.bfloat16),
        torch.randn(num_pages, page_size, 1, d_nope, dtype=torch.bfloat16),
        torch.randn(num_pages, page_size, 1, d_rope, dtype=torch.bfloat16),
        torch.randn(num_pages, page_size, 1, d_nope, dtype=torch.bfloat16),
        torch.full((batch,), seq, dtype=torch.int32),
        torch.arange(num_pages, dtype=torch.int32).reshape(batch, pages_per_seq),
    ]


def get_inputs():
    return _inputs(16, 128, 1024, 8)


def get_small_inputs():
    return _inputs(2, 16, 200, 2)


def get_init_inputs():
    return [1.0 / math.sqrt(576), 128]
