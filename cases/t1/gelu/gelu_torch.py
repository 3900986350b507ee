"""t1/gelu: exact GELU, 0.5 * x * (1 + erf(x / sqrt(2)))."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.nn.functional.gelu(x)


def get_inputs():
    return [torch.randn(32, 512, 1024, dtype=torch.float32)]


def get_small_inputs():
    return [torch.randn(4, 8, 100, dtype=torch.float32)]


def get_init_inputs():
    return []
