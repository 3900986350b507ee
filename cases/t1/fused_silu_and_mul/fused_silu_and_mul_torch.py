"""t1/fused_silu_and_mul: SwiGLU, silu(first half) * second half of the last dim."""
import torch
import torch.nn as nn

try:
    import torch_npu
except ImportError:
    torch_npu = None


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, combined):
        if torch_npu is not None and combined.device.type == "npu":
            return torch_npu.npu_swiglu(combined, dim=-1)
        x, y = combined.chunk(2, dim=-1)
        return torch.nn.functional.silu(x) * y


def get_inputs():
    return [torch.randn(4096, 8192, dtype=torch.float32)]


def get_small_inputs():
    return [torch.randn(16, 200, dtype=torch.float32)]


def get_init_inputs():
    return []
