"""`tritonlint eval SUBMISSIONS [options]` and `tritonlint eval --compare A B`."""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path

from tritonlint.runtime_check.options import BACKENDS, BASELINES, DEFAULTS, POLICIES, GateOptions
from tritonlint.runtime_check.tasks import CASES

USAGE_ERROR = 2


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tritonlint eval", description=(
        "Lint many submissions, gate the lint-clean ones on every accelerator of this host (or a Ray cluster), "
        "and write seed-004 kernel results, results.csv, summary.json, team files, a leaderboard and report.md."))
    p.add_argument("submissions", nargs="?", type=Path, help="folder: <team>/<tier>/<task>.py, <task>/<gen>.py or {task}_{impl}.py")
    p.add_argument("--cases", type=Path, default=CASES, help="the reference tasks (default: the bundled cases/)")
    p.add_argument("--out", type=Path, default=Path("eval-out"), help="output folder (default eval-out/); reused to resume")
    p.add_argument("--backend", default=BACKENDS[0], choices=BACKENDS)
    p.add_argument("--repeats", type=int, default=1, help="whole-run repeats, for mean, std and 95%% CI per case")
    p.add_argument("--workers", type=int, default=0, help="gate workers (default: one per accelerator; 1 on cpu)")
    p.add_argument("-j", "--jobs", type=int, default=0, help="lint processes (default: one per CPU)")
    p.add_argument("--engine", default="local", choices=("local", "ray"), help="ray: run the gate jobs on a Ray cluster ([ray] extra)")
    p.add_argument("--ray-address", default=None, help="Ray cluster address (default: start a local one)")
    p.add_argument("--lint-only", action="store_true", help="lint and report; gate nothing")
    p.add_argument("--report-only", action="store_true",
                   help="rebuild the outputs from the finished jobs in --out/runs (same options and --backend as that run); gate nothing")
    p.add_argument("--seeds", type=int, default=DEFAULTS.seeds)
    p.add_argument("--timeout", type=float, default=DEFAULTS.timeout, help="seconds per case in each child")
    p.add_argument("--tolerance", default=DEFAULTS.policy, choices=POLICIES)
    p.add_argument("--warmup", type=int, default=DEFAULTS.warmup)
    p.add_argument("--bench-repeats", type=int, default=DEFAULTS.repeats, help="timed calls per benchmark (seed 002's --repeats)")
    p.add_argument("--baseline", default=DEFAULTS.baseline, choices=BASELINES,
                   help="time each reference as written (eager, the default) or through torch.compile (compile)")
    p.add_argument("--operators", action="store_true", help="per-operator device time from the torch profiler")
    p.add_argument("--fresh-cache", action="store_true", help="each submission compiles in a private, empty Triton cache")
    p.add_argument("--compare", nargs=2, type=Path, metavar=("A", "B"), help="compare two evaluation folders instead")
    return p


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    if args.compare:
        return _compare(args)
    if args.submissions is None:
        print("tritonlint eval: error: give a SUBMISSIONS folder (or --compare A B)", file=sys.stderr)
        return USAGE_ERROR
    problems = [f"{p}: not a folder" for p in (args.submissions, args.cases) if not p.is_dir()]
    problems += [f"--{k.replace('_', '-')} must be at least 1" for k in ("repeats", "seeds") if getattr(args, k) < 1]
    if args.report_only and args.backend == "auto":
        problems.append("--report-only needs the --backend the run used (npu, cuda or cpu)")
    if problems:
        print("tritonlint eval: error: " + "; ".join(problems), file=sys.stderr)
        return USAGE_ERROR
    if args.engine == "ray":
        if importlib.util.find_spec("ray") is None:
            print("tritonlint eval: error: --engine ray needs the ray extra (pip install 'tritonlint[ray]')", file=sys.stderr)
            return USAGE_ERROR
    if importlib.util.find_spec("matplotlib") is None:  # found, not imported: the gating thread imports it (report.warm)
        print("tritonlint eval: error: the report needs the eval extra (pip install 'tritonlint[eval]')", file=sys.stderr)
        return USAGE_ERROR
    from tritonlint.runtime_check.backends import BackendUnavailable
    from tritonlint.runtime_check.tasks import discover_cases

    from .discover import discover_submissions
    from .outputs import write_all
    from .progress import Progress
    from .report import write_report
    from .run import EvalOptions, evaluate, is_tty

    try:  # an output folder that cannot be made is one line, before any work
        args.out.mkdir(parents=True, exist_ok=True)
        if not os.access(args.out, os.W_OK):
            raise PermissionError(13, "Permission denied")
    except OSError as e:
        print(f"tritonlint eval: error: --out {args.out}: cannot write: {e.strerror or e}", file=sys.stderr)
        return USAGE_ERROR
    cases = discover_cases(args.cases)
    found = discover_submissions(args.submissions, cases)
    if not found.submissions:
        why = [f"tritonlint eval: error: {args.submissions}: no submission fits a layout "
               f"(<team>/<tier>/<task>.py, [<set>/]<task>/<gen>.py or {{task}}_{{impl}}.py; tasks: {', '.join(sorted(c.key for c in cases)) or 'none in ' + str(args.cases)})"]
        why += [f"  {f}: fits no task" for f in found.unmatched]
        print("\n".join(why), file=sys.stderr)
        return USAGE_ERROR
    gate = GateOptions(seeds=args.seeds, timeout=args.timeout, policy=args.tolerance, warmup=args.warmup,
                       repeats=args.bench_repeats, operators=args.operators, fresh_cache=args.fresh_cache,
                       baseline=args.baseline)
    opts = EvalOptions(args.submissions, args.cases, args.out, backend=args.backend, repeats=args.repeats,
                       workers=args.workers, jobs=args.jobs, engine=args.engine, ray_address=args.ray_address,
                       lint_only=args.lint_only, report_only=args.report_only, gate=gate)
    made: dict = {}

    def write(records, found, env) -> None:  # while the workers shut down
        made["written"] = written = write_all(args.out, records, found, env, opts.to_json())
        board = (args.out / "leaderboard.md").read_text(encoding="utf-8") if written["teams"] else None
        write_report(args.out, records, written, board)

    try:
        records, found, env = evaluate(opts, Progress(rich=is_tty()), write)
    except BackendUnavailable as e:
        print(f"tritonlint eval: error: {str(e).replace('--run: ', '')}", file=sys.stderr)
        return USAGE_ERROR
    s = made["written"]["summary"]
    counts = ", ".join(f"{n} {k}" for k, n in s["by_status"].items() if n)
    print(f"tritonlint eval: {s['total']} submissions{f' ({counts})' if counts else ''} in {env['elapsed_s']:.1f} s -> {args.out}/report.md")
    if found.unmatched:
        print(f"tritonlint eval: {len(found.unmatched)} .py file(s) fit no layout (listed in summary.json)", file=sys.stderr)
    return 0


def _compare(args) -> int:
    from .compare import write_compare

    for d in args.compare:
        if not (d / "summary.json").exists():
            print(f"tritonlint eval: error: {d}: no summary.json (not an evaluation folder)", file=sys.stderr)
            return USAGE_ERROR
    out = args.out if args.out != Path("eval-out") else Path("compare-out")
    c = write_compare(args.compare[0], args.compare[1], out)
    if c["warning"]:
        print(f"tritonlint eval --compare: warning: {c['warning']}", file=sys.stderr)
    if not c["common_tasks"]:
        print(f"tritonlint eval --compare: {args.compare[0]} and {args.compare[1]} have no task in common: nothing to compare "
              f"task by task -> {out}/compare.md", file=sys.stderr)
        return USAGE_ERROR
    print(f"tritonlint eval --compare: {len(c['faster'])} task(s) faster, {len(c['slower'])} slower in B -> {out}/compare.md")
    return 0
