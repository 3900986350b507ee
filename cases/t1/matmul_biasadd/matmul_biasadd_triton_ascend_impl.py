"""fp16 a @ b + bias with the bias added in the GEMM's epilogue."""
import torch
import torch.nn as nn
import triton
import triton.language as tl

# (BM, BN, BK, warps, stages) per device type, from an H100 sweep (benchmarks/_probe_gpu.py biasadd):
# (128, 256, 64, 8, 4) 0.192 ms, (256, 128, 64, 8, 4) 0.206, (128, 256, 64, 8, 3) 0.207, torch 0.225.
# A fixed choice, not the autotuner: its dispatch adds ~30 us of host time to every call.
CONFIG = {"cuda": (128, 256, 64, 8, 4), "default": (128, 128, 64, 4, 4)}


@triton.heuristics({"EVEN_K": lambda args: args["K"] % args["BK"] == 0})
@triton.jit
def matmul_kernel(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
                  HAS_BIAS: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                  GROUP_M: tl.constexpr, EVEN_K: tl.constexpr):
    pid = tl.program_id(0)
    grid_m = tl.cdiv(M, BM)
    grid_n = tl.cdiv(N, BN)
    group = GROUP_M * grid_n
    first_m = (pid // group) * GROUP_M
    size_m = min(grid_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group) % size_m
    pid_n = (pid % group) // size_m
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * sam + rk[None, :] * sak
    b_ptrs = b_ptr + rk[:, None] * sbk + rn[None, :] * sbn
    m_ok = rm[:, None] < M
    n_ok = rn[None, :] < N
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        if EVEN_K:
            a = tl.load(a_ptrs, mask=m_ok, other=0.0)
            b = tl.load(b_ptrs, mask=n_ok, other=0.0)
        else:
            k_ok = k * BK + rk
            a = tl.load(a_ptrs, mask=m_ok & (k_ok[None, :] < K), other=0.0)
            b = tl.load(b_ptrs, mask=(k_ok[:, None] < K) & n_ok, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK * sak
        b_ptrs += BK * sbk
    if HAS_BIAS:  # round the product first, as `a @ b + bias` does in PyTorch
        acc = acc.to(c_ptr.dtype.element_ty).to(tl.float32) + tl.load(bias_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)[None, :]
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc.to(c_ptr.dtype.element_ty), mask=m_ok & n_ok)


def matmul(a, b, bias=None):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    grid = lambda meta: (triton.cdiv(M, meta["BM"]) * triton.cdiv(N, meta["BN"]),)  # noqa: E731
    args = (a, b, bias if bias is not None else c, c, M, N, K, a.stride(0), a.stride(1),
            b.stride(0), b.stride(1), c.stride(0), c.stride(1))
    bm, bn, bk, warps, stages = CONFIG.get(a.device.type, CONFIG["default"])
    matmul_kernel[grid](*args, HAS_BIAS=bias is not None, BM=bm, BN=bn, BK=bk, GROUP_M=8, num_warps=warps, num_stages=stages)
    return c


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b, bias):
        return matmul(a.contiguous(), b.contiguous(), bias.contiguous().view(-1))
