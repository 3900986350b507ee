"""One-off device probe: rope rounding variants, gelu block sizes, moe host cost, matmul_basic spread."""
import statistics, sys, time
from pathlib import Path
import torch, triton, triton.language as tl
from tritonlint.runtime_check.tasks import load_module
ROOT = Path(__file__).resolve().parents[2]
torch.manual_seed(0)

@triton.jit
def rope_f16(x_ptr, cos_ptr, sin_ptr, out_ptr, R, S, D: tl.constexpr, HALF: tl.constexpr, BLOCK_R: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    rmask = (rows < R)[:, None]
    c = tl.arange(0, HALF)[None, :]
    xo = rows.to(tl.int64)[:, None] * D + c
    po = (rows % S)[:, None] * D + c
    x1 = tl.load(x_ptr + xo, mask=rmask, other=0.0); x2 = tl.load(x_ptr + xo + HALF, mask=rmask, other=0.0)
    c1 = tl.load(cos_ptr + po, mask=rmask, other=0.0); c2 = tl.load(cos_ptr + po + HALF, mask=rmask, other=0.0)
    s1 = tl.load(sin_ptr + po, mask=rmask, other=0.0); s2 = tl.load(sin_ptr + po + HALF, mask=rmask, other=0.0)
    tl.store(out_ptr + xo, x1 * c1 + (-x2) * s1, mask=rmask)
    tl.store(out_ptr + xo + HALF, x2 * c2 + x1 * s2, mask=rmask)

def ev(fn, reps=200, flush=torch.empty(256 << 20, dtype=torch.int8, device="cuda")):
    for _ in range(20): fn()
    torch.cuda.synchronize(); ts = []
    for _ in range(reps):
        flush.zero_(); s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e))
    q = statistics.quantiles(ts, n=10)
    return f"median {statistics.median(ts):.4f} p20 {q[1]:.4f} p80 {q[7]:.4f}"


if sys.argv[1:] == ["biasadd"]:
    mb = load_module(ROOT / "cases/t1/matmul_biasadd/matmul_biasadd_triton_ascend_impl.py")
    a, b = (torch.randn(4096, 4096, device="cuda", dtype=torch.float16) for _ in range(2))
    bias = torch.randn(4096, device="cuda", dtype=torch.float16)
    print("biasadd torch", ev(lambda: a @ b + bias))
    for cfg in [(128, 256, 64, 8, 3), (128, 256, 64, 8, 4), (256, 128, 64, 8, 3), (128, 128, 64, 4, 4), (128, 128, 64, 8, 4), (128, 128, 32, 4, 4), (64, 256, 64, 4, 4), (256, 128, 64, 8, 4)]:
        bm, bn, bk, w, st = cfg
        c = torch.empty(4096, 4096, device="cuda", dtype=torch.float16)
        grid = (triton.cdiv(4096, bm) * triton.cdiv(4096, bn),)
        try:
            print("biasadd cfg", cfg, ev(lambda: mb.matmul_kernel[grid](a, b, bias, c, 4096, 4096, 4096, 4096, 1, 4096, 1, 4096, 1, HAS_BIAS=True, BM=bm, BN=bn, BK=bk, GROUP_M=8, num_warps=w, num_stages=st)), flush=True)
        except Exception as e:
            print("biasadd cfg", cfg, "failed", type(e).__name__)
    raise SystemExit(0)

task = load_module(ROOT / "cases/t2/rope/rope_torch.py")
sol = load_module(ROOT / "cases/t2/rope/rope_triton_ascend_impl.py")
x, cos, sin = [t.cuda() for t in task.get_inputs()]
ref = task.Model()(x, cos, sin)
def launch(kern, **kw):
    out = torch.empty_like(x); d = x.shape[-1]; s = x.shape[-2]; rows = x.numel() // d
    kern[(triton.cdiv(rows, 32),)](x, cos.view(s, d), sin.view(s, d), out, rows, s, D=d, HALF=d // 2, BLOCK_R=32, **kw)
    return out
for name, out in [("emul", launch(sol.rope_kernel)), ("emul_nofuse", launch(sol.rope_kernel, enable_fp_fusion=False)),
                  ("f16", launch(rope_f16)), ("f16_nofuse", launch(rope_f16, enable_fp_fusion=False))]:
    print("rope", name, "mismatches", int((out != ref).sum()), "of", out.numel(), flush=True)

g = load_module(ROOT / "cases/t1/gelu/gelu_triton_ascend_impl.py")
xg = torch.randn(32, 512, 1024, device="cuda")
print("gelu torch", ev(lambda: torch.nn.functional.gelu(xg)))
for block, warps in [(1024, 4), (2048, 4), (4096, 8), (8192, 8), (8192, 16), (16384, 16)]:
    o = torch.empty_like(xg)
    print("gelu", block, warps, ev(lambda: g.gelu_kernel[(triton.cdiv(xg.numel(), block),)](xg, o, xg.numel(), BLOCK=block, num_warps=warps)), flush=True)

m = load_module(ROOT / "cases/t2/moe_topk_softmax/moe_topk_softmax_triton_ascend_impl.py")
mt = load_module(ROOT / "cases/t2/moe_topk_softmax/moe_topk_softmax_torch.py")
lg = torch.randn(1024, 8, device="cuda")
print("moe torch", ev(lambda: mt.Model(2)(lg)))
model = m.ModelNew(2)
print("moe ours", ev(lambda: model(lg)))
probs = torch.empty((1024, 2), device="cuda"); idx = torch.empty((1024, 2), device="cuda", dtype=torch.int64)
print("moe bare launch", ev(lambda: m.moe_top2_kernel[(4,)](lg, probs, idx, 1024, E=8, BLOCK_R=256)))
print("moe bare 1 program", ev(lambda: m.moe_top2_kernel[(1,)](lg, probs, idx, 1024, E=8, BLOCK_R=1024)))
print("two empties", ev(lambda: (torch.empty((1024, 2), device="cuda"), torch.empty((1024, 2), device="cuda", dtype=torch.int64))))
t0 = time.perf_counter()
for _ in range(1000): m.moe_top2_kernel[(4,)](lg, probs, idx, 1024, E=8, BLOCK_R=256)
torch.cuda.synchronize(); print("moe host launch us", (time.perf_counter() - t0) * 1e3)

mb = load_module(ROOT / "cases/t1/matmul_basic/matmul_basic_triton_ascend_impl.py")
a = torch.randn(32, 8192, device="cuda", dtype=torch.bfloat16); b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
mm = mb.ModelNew()
print("mm torch", ev(lambda: a @ b)); print("mm ours", ev(lambda: mm(a, b)))
print("mm best config", mb.matmul_tuned.best_config)
print("mm do_bench torch/ours", triton.testing.do_bench(lambda: a @ b, return_mode="median"), triton.testing.do_bench(lambda: mm(a, b), return_mode="median"))
for cfg in mb.CONFIGS:
    bm, bn, bk, w, s = cfg
    c = torch.empty(32, 8192, device="cuda", dtype=torch.bfloat16)
    grid = (triton.cdiv(32, bm) * triton.cdiv(8192, bn),)
    print("mm cfg", cfg, ev(lambda: mb.matmul_kernel[grid](a, b, c, c, 32, 8192, 8192, 8192, 1, 8192, 1, 8192, 1, HAS_BIAS=False, BM=bm, BN=bn, BK=bk, GROUP_M=8, num_warps=w, num_stages=s)), flush=True)
