"""The runtime gate over every reference solution in cases/, through seed 002's own
command lines (verify, then benchmark behind the L1 gate), on one backend.

    python benchmarks/gate_cases.py [--backend cuda] [--seeds 2] [--out DIR]

Writes DIR/gate_results.json: per case the verify_result.json and perf_result.json
objects and the wall time the gate took.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", default="cuda")
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=50)
    ap.add_argument("--out", default="out")
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    only = {s for s in args.only.split(",") if s}
    results = []
    for ref in sorted((ROOT / "cases").glob("t*/*/*_torch.py")):
        name, tier = ref.parent.name, ref.parent.parent.name
        if only and f"{tier}/{name}" not in only:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            for f in (ref, ref.parent / f"{name}_triton_ascend_impl.py"):
                shutil.copy(f, work / f.name)
            common = ["--op_name", name, "--verify_dir", str(work), "--backend", args.backend]
            t0 = time.time()
            v = subprocess.run([sys.executable, "-m", "tritonlint.runtime_check.verify", *common, "--seeds", str(args.seeds),
                                "--timeout", "300"], capture_output=True, text=True)
            t1 = time.time()
            b = subprocess.run([sys.executable, "-m", "tritonlint.runtime_check.benchmark", *common, "--warmup", str(args.warmup),
                                "--repeats", str(args.repeats), "--timeout", "300"], capture_output=True, text=True)
            t2 = time.time()
            verify = json.loads((work / "verify_result.json").read_text()) if (work / "verify_result.json").exists() else None
            perf = json.loads((work / "perf_result.json").read_text()) if (work / "perf_result.json").exists() else None
        row = {"case": f"{tier}/{name}", "verify_rc": v.returncode, "benchmark_rc": b.returncode, "verify": verify, "perf": perf,
               "verify_wall_s": round(t1 - t0, 2), "benchmark_wall_s": round(t2 - t1, 2), "stderr": (v.stderr + b.stderr)[-1500:]}
        results.append(row)
        print(json.dumps({"case": row["case"], "verify": f"{verify and verify['passed_cases']}/{verify and verify['total_cases']}",
                          "speedup": perf and perf["speedup_vs_torch"], "rc": [v.returncode, b.returncode],
                          "wall_s": [row["verify_wall_s"], row["benchmark_wall_s"]]}), flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "gate_results.json").write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
