"""In-process `tritonlint.check()` latency on the 13 case solutions, against bare libcst parsing.

    python benchmarks/check_latency.py [--rounds 20] [--json out.json]

Agent loops call `check()` thousands of times in one process: this is the number they see.
Each round checks every solution once; the median is over all calls, after one warm-up round.
The ratio to `libcst.parse_module` on the same sources, in the same process, is what to
compare across machines (issue #15's target: median check() <= 20 ms).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import libcst as cst

import tritonlint

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = sorted(ROOT.glob("cases/t*/*/*_triton_ascend_impl.py"))


def _times(fn, sources: list[str], rounds: int) -> list[float]:
    for s in sources:  # warm-up: imports, rule registry, caches
        fn(s)
    out = []
    for _ in range(rounds):
        for s in sources:
            t0 = time.perf_counter()
            fn(s)
            out.append((time.perf_counter() - t0) * 1e3)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args()
    sources = [p.read_text() for p in SOLUTIONS]
    check = _times(tritonlint.check, sources, args.rounds)
    parse = _times(cst.parse_module, sources, args.rounds)
    result = {
        "files": len(sources), "calls": len(check),
        "check_median_ms": round(statistics.median(check), 3), "check_p90_ms": round(sorted(check)[int(0.9 * len(check))], 3),
        "parse_median_ms": round(statistics.median(parse), 3),
        "ratio_check_to_parse": round(statistics.median(check) / statistics.median(parse), 3),
    }
    for k, v in result.items():
        print(f"{k:<24} {v}")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
