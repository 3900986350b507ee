"""t1/softmax: softmax over dim (-1)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.softmax(x, dim=self.dim)


def get_inputs():
    return [torch.randn(32, 512, 4096, dtype=torch.float32)]


def get_small_inputs():
    return [torch.randn(2, 8, 300, dtype=torch.float32)]


def get_init_inputs():
    return [-1]
