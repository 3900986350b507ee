"""A case solution's first call in a process forked the way the gate forks its candidate: from one
that imported what the fork server imports (zygote.PRELOAD) and did its idle steps (zygote.LATER),
with the Triton cache warm. Where the first call's seconds go (cProfile, top entries), beside the
second call's.

    python benchmarks/probes/_probe_first_call.py cases/t1/softmax/softmax_triton_ascend_impl.py
"""
import cProfile
import importlib
import io
import os
import pstats
import sys
import time

from tritonlint.runtime_check import zygote

for name in zygote.PRELOAD:
    importlib.import_module(name)
for step in zygote.LATER:
    step()

from tritonlint.runtime_check.tasks import load_module  # noqa: E402

for i in range(2):  # the first fork may compile into the cache; the second finds it there
    pid = os.fork()
    if pid == 0:
        import torch

        torch.empty(0, device="cuda")
        impl = load_module(sys.argv[1])
        ref = load_module(sys.argv[1].replace("_triton_ascend_impl.py", "_torch.py"))
        with torch.device("cuda"):
            inputs = ref.get_inputs()
        model = impl.ModelNew(*ref.get_init_inputs()).cuda()
        prof = cProfile.Profile()
        t0 = time.perf_counter()
        prof.enable()
        model(*inputs)
        torch.cuda.synchronize()
        prof.disable()
        t1 = time.perf_counter()
        model(*inputs)
        torch.cuda.synchronize()
        t2 = time.perf_counter()
        print(f"fork {i}: first call {t1 - t0:.3f} s, second {t2 - t1:.4f} s", flush=True)
        if i == 1:
            out = io.StringIO()
            pstats.Stats(prof, stream=out).sort_stats("cumtime").print_stats(30)
            print(out.getvalue()[:7000], flush=True)
        os._exit(0)
    os.waitpid(pid, 0)
