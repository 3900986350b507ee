"""t2/moe_topk_softmax: softmax over experts, top-k, renormalise the k probabilities."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.k = k

    def forward(self, logits):
        p = torch.softmax(logits, dim=-1)
        values, indices = torch.topk(p, self.k, dim=-1)
        return values / values.sum(dim=-1, keepdim=True), indices


def get_inputs():
    return [torch.randn(1024, 8, dtype=torch.float32)]


def get_small_inputs():
    return [torch.randn(37, 8, dtype=torch.float32)]


def get_init_inputs():
    return [2]
