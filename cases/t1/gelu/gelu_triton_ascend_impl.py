"""Exact GELU, one pass: 0.5 * x * erfc(-x / sqrt(2)), in float32.

1 + erf(x / sqrt(2)) cancels for x below about -4 (erf is -1 to within an ulp there), which
an accurate reference does not: the relative error of the tail alone fails seed 002's MARE.
erfc of |z| is computed directly instead, as t * exp(-z^2 + P(t)) with t = 1 / (1 + z / 2)
and P the degree-9 Chebyshev fit (fractional error below 1.2e-7 for every z >= 0), and
erfc(-|z|) = 2 - erfc(|z|)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _erfc_abs(z):
    t = 1.0 / (1.0 + 0.5 * z)
    p = 0.17087277 * t - 0.82215223
    p = p * t + 1.48851587
    p = p * t - 1.13520398
    p = p * t + 0.27886807
    p = p * t - 0.18628806
    p = p * t + 0.09678418
    p = p * t + 0.37409196
    p = p * t + 1.00002368
    p = p * t - 1.26551223
    return t * tl.exp(p - z * z)


@triton.jit
def gelu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tail = _erfc_abs(tl.abs(x) * 0.7071067811865476)
    tl.store(out_ptr + offs, 0.5 * x * tl.where(x < 0, tail, 2.0 - tail), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        block = 1024
        gelu_kernel[(triton.cdiv(n, block),)](x, out, n, BLOCK=block, num_warps=4)
        return out
