"""t2/rope: rotary embedding, x * cos + cat(-x2, x1) * sin (torch_npu.npu_rotary_mul on NPU)."""
import torch
import torch.nn as nn

try:
    import torch_npu
except ImportError:
    torch_npu = None


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, cos, sin):
        if torch_npu is not None and x.device.type == "npu":
            return torch_npu.npu_rotary_mul(x, cos, sin)
        x1, x2 = x.chunk(2, dim=-1)
        return x * cos + torch.cat((-x2, x1), dim=-1) * sin


def _inputs(b, h, s, d):
    x = torch.randn(b, h, s, d, dtype=torch.float16)
    cos = torch.randn(1, 1, s, d, dtype=torch.float16).clamp(-1, 1)
    sin = torch.randn(1, 1, s, d, dtype=torch.float16).clamp(-1, 1)
    return [x, cos, sin]


def get_inputs():
    return _inputs(16, 48, 1000, 128)


def get_small_inputs():
    return _inputs(2, 3, 10, 128)


def get_init_inputs():
    return []
