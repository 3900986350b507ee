"""Does the census (torch's profiler with CUDA activity) change what the timed phase measures
after it in the same child? In children forked from a parent that imported torch and Triton,
the gate's own timer (timing.measure) on the case's GELU and on torch's gelu, before and after
one census.record, with TEARDOWN_CUPTI unset, then set to 1."""
import os
import sys
import tempfile

os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="probe-cache-"))
sys.path.insert(0, os.getcwd())

import torch  # noqa: E402

from tritonlint.runtime_check import census, timing  # noqa: E402
from tritonlint.runtime_check.tasks import load_module  # noqa: E402

impl = load_module("cases/t1/gelu/gelu_triton_ascend_impl.py")


def row(label, fn):
    t, _ = timing.measure(fn, "cuda", 5, 50)
    print(f"  {label:<26} event {t['avg_latency_ms']:.4f} ms  sync wait {t['sync_wait_ms']:.4f}  idle {t['idle_sync_wait_ms']:.4f}"
          f"  excess {t['sync_wait_ms'] - t['idle_sync_wait_ms']:+.4f}", flush=True)


for teardown in (None, "1"):
    pid = os.fork()
    if pid == 0:
        if teardown:
            os.environ["TEARDOWN_CUPTI"] = teardown
        print(f"TEARDOWN_CUPTI={teardown}", flush=True)
        x = torch.randn(32, 512, 1024, device="cuda")
        mine, ref = impl.ModelNew(), torch.nn.GELU()
        for when in ("before census", "after census"):
            row(f"triton {when}", lambda: mine(x))
            row(f"torch {when}", lambda: ref(x))
            if when == "before census":
                census.record(lambda: mine(x), "cuda")
        os._exit(0)
    os.waitpid(pid, 0)
