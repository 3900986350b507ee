"""What starting one gate child costs, sandboxed or not, in one process tree.

    python benchmarks/sandbox_cost.py [--children 20] [--out benchmarks/results/sandbox_cost.json]

Each child runs the gate's child module with `--help` (argparse's exit 0) after `import torch`,
which every real child does first: the cost of starting a child, not of its work.
(a) before the sandbox: a fresh `python -m` per child, no isolation (the gate before #13);
(b) the sandbox's fallback: forked from the fork server, subreaper keeper, no namespaces;
(c) the sandbox: forked from the fork server, own pid/mount/net/ipc namespaces, read-only
    view (where the kernel allows; the JSON says what held).
Prints the median wall time per child of each and the ratios c/a and c/b.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODULE = "tritonlint.runtime_check.child"


def fresh(n: int) -> list[float]:
    walls = []
    for _ in range(n):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", f"import torch, {MODULE} as m; m.main(['--help'])"],
                       check=True, stdout=subprocess.DEVNULL)
        walls.append(time.perf_counter() - t)
    return walls


def forked(n: int, isolate: bool) -> tuple[list[float], str | None]:
    from tritonlint.runtime_check.backends import Backend
    from tritonlint.runtime_check.protocol import ChildSpec

    walls, held = [], None
    env = Backend("cpu", False).child_env()
    for i in range(n + 1):  # the first one also starts the fork server: not counted
        t = time.perf_counter()
        with tempfile.TemporaryDirectory() as tmp:
            with ChildSpec(MODULE, ("--help",), env, isolate=isolate).running(Path(tmp) / "log") as proc:
                proc.wait()
            held = proc.isolation
        if i:
            walls.append(time.perf_counter() - t)
    return walls, held


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--children", type=int, default=20)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "sandbox_cost.json"))
    args = ap.parse_args()
    a = fresh(args.children)
    b, b_held = forked(args.children, isolate=False)
    c, c_held = forked(args.children, isolate=True)
    med = {k: statistics.median(v) for k, v in (("a_fresh_unsandboxed", a), ("b_forked_fallback", b), ("c_forked_namespaces", c))}
    result = {"children": args.children, "median_s": {k: round(v, 4) for k, v in med.items()},
              "ratio_c_over_a": round(med["c_forked_namespaces"] / med["a_fresh_unsandboxed"], 4),
              "ratio_c_over_b": round(med["c_forked_namespaces"] / med["b_forked_fallback"], 4),
              "isolation": {"b": b_held, "c": c_held}, "cpus": os.cpu_count()}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
