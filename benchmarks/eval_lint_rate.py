"""Lint-only evaluation throughput: submissions per minute for `tritonlint eval --lint-only`.

    python benchmarks/eval_lint_rate.py [--files 2000] [--json out.json]

Corpus: the 13 case solutions and their 65 degraded variants, copied round-robin into
the many-generations layout (`<task>/gen_NNNN.py`, each copy made unique by a comment)
until there are `--files` of them. For -j 1 and -j 2 the same process times
(a) the baseline, `lint_many` over the same files (what linting alone costs), and
(b) the whole lint-only evaluation: discovery, linting, records, every output file
(seed-004 JSON, results.csv, summary.json, report.md and its charts).
The ratio b/a is the harness's overhead on top of the linter.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def build(folder: Path, n: int) -> list[Path]:
    sources = sorted(ROOT.glob("cases/t*/*/*_triton_ascend_impl.py")) + sorted(ROOT.glob("cases/t*/*/degraded/*.py"))
    made = []
    for i in range(n):
        src = sources[i % len(sources)]
        task = src.parent.name if src.parent.name != "degraded" else src.parent.parent.name
        dst = folder / task / f"gen_{i:04d}.py"
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_text(src.read_text() + f"\n# generation {i}\n")
        made.append(dst)
    return made


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--json")
    args = ap.parse_args()
    from tritonlint.config import Config
    from tritonlint.evaluate.outputs import write_all
    from tritonlint.evaluate.report import write_report
    from tritonlint.evaluate.run import EvalOptions, evaluate
    from tritonlint.files import lint_many

    tmp = Path(tempfile.mkdtemp(prefix="tritonlint-evalrate-"))
    try:
        files = build(tmp / "subs", args.files)
        rows = []
        for jobs in (1, 2):
            t = time.perf_counter()
            lint_many([str(f) for f in files], Config(), jobs, keep_trees=False)
            base = time.perf_counter() - t
            out = tmp / f"out-j{jobs}"
            t = time.perf_counter()
            opts = EvalOptions(tmp / "subs", ROOT / "cases", out, jobs=jobs, lint_only=True)
            records, found, env = evaluate(opts)
            written = write_all(out, records, found, env, {"lint_only": True})
            write_report(out, records, written, None)
            full = time.perf_counter() - t
            assert len(records) == args.files, (len(records), found.unmatched[:3])
            rows.append({"jobs": jobs, "files": args.files, "lint_many_s": round(base, 2), "eval_s": round(full, 2),
                         "lint_per_min": round(args.files / base * 60), "eval_per_min": round(args.files / full * 60),
                         "overhead_ratio": round(full / base, 3)})
            print(f"-j {jobs}: lint_many {base:6.1f} s ({rows[-1]['lint_per_min']:>6}/min) | "
                  f"eval --lint-only {full:6.1f} s ({rows[-1]['eval_per_min']:>6}/min) | ratio {full / base:.2f}")
        if args.json:
            Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
