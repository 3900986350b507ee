"""t1/sigmoid_scale_sum: sum(sigmoid(2 * x + bias), dim=-1, keepdim=True)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, bias):
        return torch.sum(torch.sigmoid(2.0 * x + bias), dim=-1, keepdim=True)


def get_inputs():
    return [torch.randn(1000, 8192, dtype=torch.float32), torch.randn(8192, dtype=torch.float32)]


def get_small_inputs():
    return [torch.randn(10, 300, dtype=torch.float32), torch.randn(300, dtype=torch.float32)]


def get_init_inputs():
    return []
