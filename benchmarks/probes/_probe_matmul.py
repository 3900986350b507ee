"""One-off device probe: can split-K lift matmul_basic (bf16 32x8192 @ 8192x8192) above cuBLAS?

Times (events, 256 MiB flush before each call, 100 calls, median): cuBLAS `a @ b`, the shipped
solution, and a two-kernel split-K (fp32 partials, then a sum-and-cast kernel) over a small sweep.
Checks each against the reference with seed 002's rule before timing it."""
import statistics
from pathlib import Path

import torch, triton, triton.language as tl

from tritonlint.runtime_check.compare import compare_tensor
from tritonlint.runtime_check.tasks import load_module

ROOT = Path(__file__).resolve().parents[2]
shipped = load_module(ROOT / "cases/t1/matmul_basic/matmul_basic_triton_ascend_impl.py")


@triton.jit
def splitk_kernel(a_ptr, b_ptr, ws_ptr, M, N, K, KS, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_n = tl.program_id(0)
    pid_k = tl.program_id(1)
    rm = tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    k0 = pid_k * KS
    a_ptrs = a_ptr + rm[:, None] * K + (k0 + rk)[None, :]
    b_ptrs = b_ptr + (k0 + rk)[:, None] * N + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(0, KS // BK):
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc)
        a_ptrs += BK
        b_ptrs += BK * N
    tl.store(ws_ptr + pid_k * M * N + rm[:, None] * N + rn[None, :], acc)


@triton.jit
def sum_cast_kernel(ws_ptr, c_ptr, MN, S: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for s in tl.static_range(S):
        acc += tl.load(ws_ptr + s * MN + offs)
    tl.store(c_ptr + offs, acc.to(c_ptr.dtype.element_ty))


def splitk(a, b, S, BN, BK, warps, stages):
    M, K = a.shape
    N = b.shape[1]
    ws = torch.empty((S, M, N), device=a.device, dtype=torch.float32)
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    splitk_kernel[(N // BN, S)](a, b, ws, M, N, K, K // S, BM=M, BN=BN, BK=BK, num_warps=warps, num_stages=stages)
    sum_cast_kernel[(M * N // 1024,)](ws, c, M * N, S=S, BLOCK=1024)
    return c


def ev(fn, reps=100, flush=torch.empty(256 << 20, dtype=torch.int8, device="cuda")):
    for _ in range(10):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        flush.zero_()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); e.synchronize()
        ts.append(s.elapsed_time(e))
    return statistics.median(ts)


torch.manual_seed(0)
a = torch.randn(32, 8192, dtype=torch.bfloat16, device="cuda")
b = torch.randn(8192, 8192, dtype=torch.bfloat16, device="cuda")
ref = a @ b
print(f"device {torch.cuda.get_device_name()}")
base = ev(lambda: a @ b)
print(f"cuBLAS                       {base:.4f} ms")
t = ev(lambda: shipped.matmul(a, b))
print(f"shipped (16,64,128,4,4)      {t:.4f} ms  speedup {base / t:.3f}")
for S in (2, 4, 8):
    for BN in (64, 128):
        for BK in (64, 128):
            for stages in (3, 4):
                try:
                    out = splitk(a, b, S, BN, BK, 4, stages)
                    v = compare_tensor(ref.cpu(), out.cpu())
                    t = ev(lambda: splitk(a, b, S, BN, BK, 4, stages))
                    print(f"splitK S={S} BN={BN:3} BK={BK:3} st={stages} {t:.4f} ms  speedup {base / t:.3f}  {'ok' if v.passed else 'WRONG ' + v.message}", flush=True)
                except Exception as e:  # out of shared memory and the like
                    print(f"splitK S={S} BN={BN} BK={BK} st={stages}: {type(e).__name__}", flush=True)
