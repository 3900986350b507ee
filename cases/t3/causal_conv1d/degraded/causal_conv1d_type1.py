import torch
import torch.nn as nn


class ModelNew(nn.Module):  # expect: TL001
    def __init__(self, activation):
        super().__init__()
        self.activation = activation

    def forward(self, x, conv_state, weight, bias, conv_state_indices):
        xp = torch.cat([conv_state, x.unsqueeze(-1)], dim=-1)  # expect: TL003
        out = torch.nn.functional.silu(torch.sum(xp * weight, dim=-1) + bias)  # expect: TL003 TL003 TL003 TL003
        conv_state.copy_(xp[..., 1:])  # expect: TL201
        return out
