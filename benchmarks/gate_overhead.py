"""Gate overhead per case: the gate's wall time minus the time spent inside timed calls.

    python benchmarks/gate_overhead.py [cases/gate_results.json]

Timed time = (warmup + repeats) x median latency, for the framework and the
implementation, from each case's perf_result. Everything else is overhead: child
process start-up (torch imports), input generation, Triton compilation, the
reference runs for verification, comparisons and file I/O.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "cases" / "gate_results.json"
    rows = json.loads(path.read_text())
    print(f"{'case':24} {'gate s':>8} {'timed s':>8} {'overhead s':>10} {'overhead %':>10}")
    total_gate = total_timed = 0.0
    for r in rows:
        wall = r["verify_wall_s"] + r["benchmark_wall_s"]
        perf = r["perf"]
        timed = 0.0
        if perf:
            calls = perf["warmup"] + perf["repeats"]
            for side in ("framework", "implementation"):
                if perf[side]["avg_latency_ms"]:
                    timed += calls * perf[side]["avg_latency_ms"] / 1e3
        total_gate, total_timed = total_gate + wall, total_timed + timed
        print(f"{r['case']:24} {wall:8.1f} {timed:8.3f} {wall - timed:10.1f} {100 * (wall - timed) / wall:9.2f}%")
    print(f"{'total':24} {total_gate:8.1f} {total_timed:8.3f} {total_gate - total_timed:10.1f} {100 * (total_gate - total_timed) / total_gate:9.2f}%")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
