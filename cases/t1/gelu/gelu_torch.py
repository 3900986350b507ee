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
    # tail to cancellation: an accurate kernel differs from it by more than seed 002's MARE allows
    # from about x = -3.5 (3.0e-3 against 1.2e-3 seen inside [-4, 4] on one host's vector erf),
    # so these stay inside [-3, 3] (get_inputs, on a GPU, keeps the tail).
    return [torch.randn(4, 8, 100, dtype=torch.float32).clamp_(-3.0, 3.0)]


def get_init_inputs():
    return []
