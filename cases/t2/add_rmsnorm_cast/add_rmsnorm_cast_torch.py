"""t2/add_rmsnorm_cast: h = x + residual; h * rsqrt(mean(h^2) + eps) * gamma, cast to fp16."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, eps, out_dtype):
        super().__init__()
        self.eps = eps
        self.out_dtype = out_dtype

    def forward(self, x, residual, gamma):
        h = x + residual
        var = h.pow(2).mean(dim=-1, keepdim=True)
        return (h * torch.rsqrt(var + self.eps) * gamma).to(self.out_dtype)


def get_inputs():
    shape = (32, 1024, 4096)
    return [torch.randn(shape), torch.randn(shape), torch.randn(4096)]


def get_small_inputs():
    shape = (2, 3, 4096)
    return [torch.randn(shape), torch.randn(shape), torch.randn(4096)]


def get_init_inputs():
    return [1e-6, torch.float16]
