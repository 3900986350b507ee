"""Lint speed against bare libcst parsing, measured in the same process.

    python benchmarks/lint_speed.py [--copies 8] [--json out.json]

Corpus: the labelled fixture submissions (tests/fixtures/submissions),
replicated to at least 500 files in a temporary folder. For each file the
same process times (a) `libcst.parse_module` alone and (b) the full lint
(decode, CPython pre-check, parse, module model, every rule, positions).
Then the whole folder through the CLI's worker layer with -j 1 and -j 2,
and the one-file CLI from process start to exit.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import libcst as cst

from tritonlint.config import Config
from tritonlint.engine import lint_source
from tritonlint.files import discover, lint_many

ROOT = Path(__file__).resolve().parent.parent

SOURCES = sorted((ROOT / "tests" / "fixtures" / "submissions").glob("*.py")) + sorted((ROOT / "examples").glob("*.py"))
TYPICAL = sorted((ROOT / "cases").glob("t*/*/*_triton_ascend_impl.py"))  # real solutions, 40-110 lines


def build_corpus(folder: Path, copies: int) -> list[Path]:
    out = []
    for c in range(copies):
        for src in SOURCES:
            dst = folder / f"c{c}" / src.name
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(src, dst)
            out.append(dst)
    return out


def per_file(files: list[Path]) -> tuple[list[float], list[float]]:
    parse_ms, lint_ms = [], []
    for f in files:
        data = f.read_bytes()
        text = data.decode()
        t = time.perf_counter()
        cst.parse_module(text)
        parse_ms.append((time.perf_counter() - t) * 1e3)
        t = time.perf_counter()
        lint_source(data, str(f))
        lint_ms.append((time.perf_counter() - t) * 1e3)
    return parse_ms, lint_ms


def folder_rate(folder: Path, jobs: int) -> float:
    t = time.perf_counter()
    files = discover([str(folder)], Config())
    results = lint_many(files, Config(), jobs)
    assert len(results) == len(files)
    return len(files) / (time.perf_counter() - t)


def start_to_exit(args: list[str], runs: int) -> float:
    """Median wall time of `python ARGS`, bytecode caching allowed as on a
    user's machine (this workplace sets PYTHONDONTWRITEBYTECODE)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, *args], capture_output=True, cwd=ROOT, env=env)  # writes .pyc
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run([sys.executable, *args], capture_output=True, cwd=ROOT, env=env)
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--copies", type=int, default=8, help="replicas of the fixture set (66 files each)")
    ap.add_argument("--cli-runs", type=int, default=10)
    ap.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        files = build_corpus(folder, args.copies)
        per_file(files[: len(SOURCES)])  # warm caches and imports once
        parse_ms, lint_ms = per_file(files)
        per_file(TYPICAL)
        typ_parse, typ_lint = per_file(TYPICAL * 5)
        rate1 = folder_rate(folder, 1)
        rate2 = folder_rate(folder, 2)
        cli_ms = start_to_exit(["-m", "tritonlint", str(SOURCES[0])], args.cli_runs)
        libcst_ms = start_to_exit(["-c", "import libcst"], args.cli_runs)
        python_ms = start_to_exit(["-c", "pass"], args.cli_runs)
    lines = [len(f.read_text().splitlines()) for f in SOURCES]
    figures = {
        "files": len(files),
        "median_lines_per_file": statistics.median(lines),
        "median_parse_ms": round(statistics.median(parse_ms), 3),
        "median_lint_ms": round(statistics.median(lint_ms), 3),
        "total_parse_s": round(sum(parse_ms) / 1e3, 3),
        "total_lint_s": round(sum(lint_ms) / 1e3, 3),
        "ratio_lint_to_parse": round(sum(lint_ms) / sum(parse_ms), 3),
        "typical_median_lines": statistics.median(len(f.read_text().splitlines()) for f in TYPICAL),
        "typical_median_parse_ms": round(statistics.median(typ_parse), 3),
        "typical_median_lint_ms": round(statistics.median(typ_lint), 3),
        "typical_ratio_lint_to_parse": round(sum(typ_lint) / sum(typ_parse), 3),
        "files_per_s_j1": round(rate1, 1),
        "files_per_s_j2": round(rate2, 1),
        "cli_one_file_ms": round(cli_ms, 1),
        "floor_python_import_libcst_ms": round(libcst_ms, 1),
        "floor_python_startup_ms": round(python_ms, 1),
        "cli_minus_libcst_import_ms": round(cli_ms - libcst_ms, 1),
    }
    width = max(map(len, figures))
    for k, v in figures.items():
        print(f"{k:<{width}}  {v}")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
