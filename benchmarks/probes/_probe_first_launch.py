"""The first launch of a Triton kernel whose compiled form is already cached, in a process forked
from one that imported torch and Triton without starting CUDA (what a gate child is): how much of
a candidate's first case is Triton's own start-up, and where it goes (cProfile of the third fork)."""
import cProfile
import io
import os
import pstats
import tempfile
import time

os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="probe-cache-"))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402


@triton.jit
def double(x, y, n, B: tl.constexpr):
    o = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(y + o, tl.load(x + o, mask=o < n) * 2, mask=o < n)


for i in range(3):  # the first fork compiles into the cache; the others find it there
    pid = os.fork()
    if pid == 0:
        t = time.perf_counter()
        torch.empty(0, device="cuda")
        t1 = time.perf_counter()
        x = torch.randn(1 << 20, device="cuda")
        y = torch.empty_like(x)
        prof = cProfile.Profile()
        prof.enable()
        t2 = time.perf_counter()
        double[(1024,)](x, y, x.numel(), B=1024)
        torch.cuda.synchronize()
        t3 = time.perf_counter()
        prof.disable()
        double[(1024,)](x, y, x.numel(), B=1024)
        torch.cuda.synchronize()
        t4 = time.perf_counter()
        print(f"fork {i}: cuda init {t1 - t:.3f} s, first launch {t3 - t2:.3f} s, second {t4 - t3:.4f} s", flush=True)
        if i == 2:
            out = io.StringIO()
            pstats.Stats(prof, stream=out).sort_stats("cumtime").print_stats(25)
            print(out.getvalue()[:6000])
        os._exit(0)
    os.waitpid(pid, 0)
