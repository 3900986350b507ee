import torch
import torch.nn as nn


class ModelNew(nn.Module):  # expect: TL001
    def __init__(self):
        super().__init__()

    def forward(self, x, cos, sin):
        x1, x2 = x.chunk(2, dim=-1)
        rotated = torch.cat((-x2, x1), dim=-1)  # expect: TL003 TL003
        return x * cos + rotated * sin  # expect: TL003 TL003 TL003
