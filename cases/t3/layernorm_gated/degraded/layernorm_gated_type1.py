import torch
import torch.nn as nn


class ModelNew(nn.Module):  # expect: TL001
    def __init__(self, eps, norm_before_gate, is_rms_norm):
        super().__init__()
        self.eps = eps
        self.norm_before_gate = norm_before_gate
        self.is_rms_norm = is_rms_norm

    def forward(self, x, weight, z):
        rstd = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)  # expect: TL003 TL003 TL003 TL003
        return x * rstd * weight * torch.sigmoid(z)  # expect: TL003 TL003 TL003 TL003
