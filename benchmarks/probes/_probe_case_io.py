"""Where a large case's seconds go between the children and the parent: a 256 MB float32 tensor
(softmax's input) from the device to a file and back, with the save the gate uses
(protocol.save), in the temporary folder and in /dev/shm; and the host's write-back settings."""
import os
import sys
import tempfile
import time
from pathlib import Path

import torch

from tritonlint.runtime_check.protocol import save

os.system("df -h /tmp /dev/shm | tail -2; grep -H . /proc/sys/vm/dirty_ratio /proc/sys/vm/dirty_background_ratio")
x = torch.randn(32, 512, 4096, device="cuda")
torch.cuda.synchronize()
for where in (Path(tempfile.gettempdir()), Path("/dev/shm")):
    for rep in range(2):
        folder = Path(tempfile.mkdtemp(dir=where))
        t0 = time.perf_counter()
        host = x.cpu()
        t1 = time.perf_counter()
        save({"inputs": [host]}, folder / "case.pt")
        t2 = time.perf_counter()
        back = torch.load(folder / "case.pt", weights_only=True, mmap=True)["inputs"][0]
        t3 = time.perf_counter()
        dev = back.to("cuda")
        torch.cuda.synchronize()
        t4 = time.perf_counter()
        same = bool((dev == x).all())
        print(f"{where}: d2h {t1 - t0:.3f} s, save {t2 - t1:.3f} s, load(mmap) {t3 - t2:.3f} s, h2d {t4 - t3:.3f} s, same {same}",
              flush=True)
        os.system(f"rm -rf {folder}")
t0 = time.perf_counter()
pinned = torch.empty(x.shape, dtype=x.dtype, pin_memory=True)
t1 = time.perf_counter()
pinned.copy_(x)
t2 = time.perf_counter()
print(f"pinned alloc {t1 - t0:.3f} s, d2h into it {t2 - t1:.3f} s", file=sys.stdout)
