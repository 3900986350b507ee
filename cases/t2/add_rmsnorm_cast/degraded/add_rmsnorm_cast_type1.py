import torch
import torch.nn as nn


class ModelNew(nn.Module):  # expect: TL001
    def __init__(self, eps, out_dtype):
        super().__init__()
        self.eps = eps
        self.out_dtype = out_dtype

    def forward(self, x, residual, gamma):
        h = x + residual  # expect: TL003
        var = torch.mean(h * h, dim=-1, keepdim=True)  # expect: TL003 TL003
        return (h * torch.rsqrt(var + self.eps) * gamma).half()  # expect: TL003 TL003 TL003 TL003 TL003
