import torch
import torch.nn as nn


class ModelNew(nn.Module):  # expect: TL001
    def __init__(self):
        super().__init__()

    def forward(self, x, bias):
        s = torch.sigmoid(2.0 * x + bias)  # expect: TL003 TL003 TL003
        return torch.sum(s, dim=-1, keepdim=True)  # expect: TL003
