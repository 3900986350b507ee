"""Wall time of the gate per case on the CPU backend, for one case (gelu by default):
what the sandbox costs. `python benchmarks/gate_cost.py [--runs 3] [--case t1/gelu]`"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from tritonlint.runtime_check.backends import get_backend
from tritonlint.runtime_check.gate import run_gate
from tritonlint.runtime_check.options import GateOptions

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--case", default="t1/gelu")
    args = ap.parse_args()
    folder = ROOT / "cases" / args.case
    name = folder.name
    opts = GateOptions(reference=str(folder / f"{name}_torch.py"))
    impl = str(folder / f"{name}_triton_ascend_impl.py")
    backend = get_backend("cpu")
    walls = []
    for _ in range(args.runs):
        t = time.perf_counter()
        out = run_gate(impl, True, False, backend, opts)
        walls.append(time.perf_counter() - t)
        assert out["verdict"] == "passed", out
    cases = opts.seeds
    print(f"{args.case}: gate wall {statistics.median(walls):.2f} s median of {args.runs} "
          f"({statistics.median(walls) / cases:.2f} s per case, {cases} cases); runs {[round(w, 2) for w in walls]}; "
          f"isolation: {out.get('isolation')}")


if __name__ == "__main__":
    main()
