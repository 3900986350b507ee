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
    # For the CPU interpreter only. CPU torch's own GELU takes 1 + erf in float32 and loses the
    # tail below x = -4.5 to cancellation; an accurate kernel differs from it there by more than
    # seed 002's MARE allows, so these stay inside it (get_inputs, on a GPU, keeps the tail).
    return [torch.randn(4, 8, 100, dtype=torch.float32).clamp_(-4.0, 4.0)]


def get_init_inputs():
    return []
