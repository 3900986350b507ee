"""t1/matmul_basic: bf16 a (32, 8192) @ b (8192, 8192)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return a @ b


def get_inputs():
    return [torch.randn(32, 8192, dtype=torch.bfloat16), torch.randn(8192, 8192, dtype=torch.bfloat16)]


def get_small_inputs():
    return [torch.randn(32, 256, dtype=torch.bfloat16), torch.randn(256, 192, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
