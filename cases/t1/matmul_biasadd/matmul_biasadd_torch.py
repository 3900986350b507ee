"""t1/matmul_biasadd: fp16 a @ b + bias, 4096 x 4096 x 4096."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b, bias):
        return a @ b + bias


def get_inputs():
    return [
        torch.randn(4096, 4096, dtype=torch.float16),
        torch.randn(4096, 4096, dtype=torch.float16),
        torch.randn(1, 4096, dtype=torch.float16),
    ]


def get_small_inputs():
    return [
        torch.randn(96, 64, dtype=torch.float16),
        torch.randn(64, 80, dtype=torch.float16),
        torch.randn(1, 80, dtype=torch.float16),
    ]


def get_init_inputs():
    return []
