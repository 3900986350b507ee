"""t3/causal_conv1d: one decode step of Mamba's depthwise causal conv (silu), updating conv_state in place."""
import torch
import torch.nn as nn

# The gate: conv_state is an in-place output, compared after the call, not an input that must stay unchanged.
INPLACE_OUTPUTS = {"conv_state": 1}


class Model(nn.Module):
    def __init__(self, activation):
        super().__init__()
        self.activation = activation

    def forward(self, x, conv_state, weight, bias, conv_state_indices):
        xp = torch.cat([conv_state, x.unsqueeze(-1)], dim=-1)
        out = torch.sum(xp * weight, dim=-1) + bias
        if self.activation == "silu":
            out = torch.nn.functional.silu(out)
        conv_state.copy_(xp[..., 1:])
        return out


def _inputs(batch, dim, width=4):
    return [
        torch.randn(batch, dim, dtype=torch.float16),
        torch.randn(batch, dim, width - 1, dtype=torch.float16),
        torch.randn(dim, width, dtype=torch.float16),
        torch.randn(dim, dtype=torch.float16),
        torch.arange(batch, dtype=torch.int32),
    ]


def get_inputs():
    return _inputs(32, 2048)


def get_small_inputs():
    return _inputs(3, 100)


def get_init_inputs():
    return ["silu"]
