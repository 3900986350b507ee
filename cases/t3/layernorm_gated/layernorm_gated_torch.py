"""t3/layernorm_gated: rmsnorm(x) * weight * sigmoid(z) (norm before gate), in fp16 like the FLA reference."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, eps, norm_before_gate, is_rms_norm):
        super().__init__()
        self.eps = eps
        self.norm_before_gate = norm_before_gate
        self.is_rms_norm = is_rms_norm

    def forward(self, x, weight, z):
        if not (self.norm_before_gate and self.is_rms_norm):
            raise NotImplementedError("the benchmark uses norm_before_gate=True, is_rms_norm=True")
        rstd = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return x * rstd * weight * torch.sigmoid(z)


def _inputs(*shape):
    return [torch.randn(*shape, dtype=torch.float16), torch.randn(shape[-1], dtype=torch.float16),
            torch.randn(*shape, dtype=torch.float16)]


def get_inputs():
    return _inputs(32, 512, 4096)


def get_small_inputs():
    return _inputs(2, 3, 4096)


def get_init_inputs():
    return [1e-6, True, True]
