import torch
import torch.nn as nn


class ModelNew(nn.Module):  # expect: TL001
    def __init__(self, eps):
        super().__init__()
        self.eps = eps

    def forward(self, x, residual, gamma, scale, zero_point):
        h = x + residual  # expect: TL003
        var = torch.mean(h * h, dim=-1, keepdim=True)  # expect: TL003 TL003
        y = h * torch.rsqrt(var + self.eps) * gamma  # expect: TL003 TL003 TL003 TL003
        return torch.round(y / scale + zero_point).clamp(-128, 127).to(torch.int8)  # expect: TL003 TL003 TL003 TL003 TL003
