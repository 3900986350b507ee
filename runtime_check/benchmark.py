"""Seed 002's benchmark.py, with its L1 verify gate and perf_result.json.

    python -m tritonlint.runtime_check.benchmark --op_name softmax --verify_dir DIR \\
        [--triton_impl_name triton_ascend_impl] [--warmup 5] [--repeats 50] [--output FILE] \\
        [--skip_framework] [--framework_latency_ms MS] [--verify_not_required] \\
        [--backend auto|npu|cuda|cpu] [--timeout 900] [--baseline eager|compile]

Exit 0: benchmark done (per-shape pass/fail in the JSON); 1: the script itself failed;
2: the L1 gate refused (verify result missing, unreadable, no case run, or not all
passed; the path, counts and first five failures go to stderr) or no usable device.
The cpu backend (Triton's interpreter) runs the pipeline but its times are no
performance measurement: the JSON says so.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path

from tritonlint.runtime_check.backends import Backend, BackendUnavailable, get_backend
from tritonlint.runtime_check.options import BASELINES, DEFAULTS
from tritonlint.runtime_check.protocol import CHECK_CASE, TIMED_CASE, Failure, failure, strict_json
from tritonlint.runtime_check.reference import run_reference
from tritonlint.runtime_check.runner import Timed, run_side
from tritonlint.runtime_check.score import overall_speedup
from tritonlint.runtime_check.tasks import load_module
from tritonlint.runtime_check.timing import PROBE_CALLS
from tritonlint.runtime_check.verify import (check_timed, describe, inplace_learned, seed002_parser, task_files,
                                             unchanged_inputs, verify_file_name)

GATE_REFUSED = 2


def l1_gate(verify_json: Path) -> str | None:
    """None when benchmarking may go ahead, else why not (seed 002's four refusals)."""
    if not verify_json.exists():
        return f"L1 gate: {verify_json} does not exist: run verify first"
    try:
        data = json.loads(verify_json.read_text())
        total, passed = int(data["total_cases"]), int(data["passed_cases"])
    except (OSError, ValueError, KeyError, TypeError) as e:
        return f"L1 gate: {verify_json} cannot be read ({type(e).__name__}: {e})"
    if total == 0:
        return f"L1 gate: {verify_json}: verify ran no case (0/0)"
    if passed < total:
        lines = [f"L1 gate: {verify_json}: {passed}/{total} cases passed"]
        for f in data.get("failures", [])[:5]:
            lines.append(f"  case {f.get('case_idx')}: {f.get('error_type')}: {str(f.get('error_msg', '')).splitlines()[0] if f.get('error_msg') else ''}")
        return "\n".join(lines)
    return None


def benchmark(task_path: Path, impl_path: Path, backend: Backend, *, warmup: int = DEFAULTS.warmup,
              repeats: int = DEFAULTS.repeats, skip_framework: bool = False, framework_latency_ms: float | None = None,
              timeout: float = DEFAULTS.timeout, op_name: str | None = None, operators: bool = False,
              cache_dir: str | None = None, policy: str = DEFAULTS.policy, baseline: str = DEFAULTS.baseline) -> dict:
    """Seed 002's benchmark on its own (the gate times inside verify's children instead): the
    reference's child makes the inputs from a fresh secret seed on the device, runs `Model` on
    them and times it (`baseline`: as written, or through torch.compile; its side is still called
    `framework`, as in seed 002); the candidate's child runs `ModelNew` on them and times it.
    After its timed calls the candidate's instance is called once more, on a second case's inputs,
    and must match the reference's answer for them: a kernel that is right once and wrong when
    called again, or that does less work once it is being timed, fails the shape instead of
    scoring."""
    task = load_module(task_path)
    small = backend.name == "cpu" and hasattr(task, "get_small_inputs")
    env = backend.child_env(cache_dir)
    reference = None if skip_framework else Timed(warmup, repeats, baseline, operators)
    cases = [TIMED_CASE, CHECK_CASE]
    run = run_reference(task_path, backend, cases, timeout, small=small, state=False, env=env, timed=reference)
    try:
        ref = run.results[1]
        if not ref.get("ok"):
            framework = failure("ReferenceError", f"the reference failed: {ref['error_type']}: {ref['error_msg']}")
        elif reference is not None:
            framework = reference.side("framework")
        else:
            framework = {"avg_latency_ms": framework_latency_ms, "peak_memory_mb": None} if framework_latency_ms else None
        candidate = Timed(warmup, repeats, operators=operators)
        ran = run_side(backend, impl_path, "ModelNew", run.folder, cases, timeout, env=env, timed=candidate) if ref.get("ok") else {}
        declared = getattr(task, "INPLACE_OUTPUTS", None)
        inplace = sorted(declared.values()) if declared else sorted(
            {i for k in cases if run.results[k].get("ok")
             for i in inplace_learned(run.inputs[k], unchanged_inputs(run.results[k], run.inputs[k]))})
        check = functools.partial(check_timed, backend, run.inputs, run.results, inplace, policy)
        row = shape_row(TIMED_CASE, run.inputs[TIMED_CASE], framework, candidate, ran.get(TIMED_CASE), check)
    finally:
        run.cleanup()
    return perf_report([row], op_name or impl_path.stem, warmup, repeats, baseline, backend)


# The parent's own clock around a timed phase (from its go to the times, Timed.wall_s) bounds what
# the child says: the timed calls it claims cannot have taken longer than the parent waited, and
# the parent cannot have waited much longer than the calls it was told of, plus an allowance per
# call (the L2 flush, the event sync) and a fixed one (the probes, the file, the polling). A child
# that rewrote its own record to look faster than it ran is refused (TimingRefused).
WALL_SLACK, WALL_PER_CALL_MS, WALL_FIXED_MS = 3.0, 1.0, 250.0


def wall_bound(times: dict, warmup: int, repeats: int) -> Failure | None:
    """Why the parent refuses a side's claimed times (`times["wall_ms"]`: what it saw), or None."""
    wall, avg = times["wall_ms"], times["avg_latency_ms"]
    timed_sum = sum(times.get("times_ms") or [avg * repeats])
    if timed_sum > 1.05 * wall + 1.0:
        return failure("TimingRefused", f"the child claims {timed_sum:.1f} ms of timed calls, but the parent's clock saw "
                                        f"{wall:.1f} ms for the whole timed phase")
    calls = warmup + repeats + PROBE_CALLS
    allowed = WALL_SLACK * calls * avg + calls * WALL_PER_CALL_MS + WALL_FIXED_MS
    if wall > allowed:
        return failure("TimingRefused", f"the child claims {avg:.4f} ms per call, but its {calls} calls took {wall:.1f} ms on "
                                        f"the parent's clock (at most {allowed:.1f} ms allowed): the record does not match the run")
    return None


def shape_row(idx: int, inputs: list, framework: dict | None, timed: Timed, case: dict | None,
              check: Callable[[tuple | None], Failure | None]) -> dict:
    """One timed shape of the perf result: the candidate's times (`timed`, checked against the
    parent's clock, and its call after the timed ones by `check`: verify.check_timed), the
    reference's (`framework`: times or a Failure), and the speedup."""
    row = {"case_idx": idx, "input_desc": describe(inputs), "status": "fail", "framework": None,
           "implementation": None, "speedup_vs_torch": None, "error_type": None, "error_msg": None}
    if case is not None and not case.get("ok"):  # the untimed call before the timed ones failed
        why = failure(case["error_type"], case["error_msg"])
    elif framework is not None and "error_type" in framework:  # the reference's timed phase: not the candidate's fault
        why = framework if framework["error_type"] == "BaselineCompileError" else failure(
            "ReferenceTimingError", f"the reference's timed phase failed: {framework['error_type']}: {framework['error_msg']}")
    else:
        impl = timed.side("implementation")
        why = (impl if "error_type" in impl else wall_bound(impl, timed.warmup, timed.repeats)) or check(timed.checked)
    if why is not None:
        row.update(error_type=why["error_type"], error_msg=why["error_msg"])
        return row
    fw = framework
    s = fw["avg_latency_ms"] / impl["avg_latency_ms"] if fw and fw["avg_latency_ms"] and impl["avg_latency_ms"] else None
    row.update(status="pass", framework=fw, implementation=impl)
    row["speedup_vs_torch"] = s if s is not None and s > 0 and s == s and s != float("inf") else None
    return row


def perf_report(per_shape: list[dict], op_name: str, warmup: int, repeats: int, baseline: str, backend: Backend) -> dict:
    """Seed 002's perf_result.json from its timed shapes."""
    gm, buckets = overall_speedup([r["speedup_vs_torch"] if r["status"] == "pass" else None for r in per_shape])

    def mean_of(side: str, key: str):
        vals = [r[side][key] for r in per_shape if r[side] and r[side].get(key) is not None]
        return sum(vals) / len(vals) if vals else None

    def operators_of(side: str) -> dict[str, float]:  # mean device ms per call over the shapes
        rows = [r[side].get("operators", {}) for r in per_shape if r[side]]
        names = {name for ops in rows for name in ops}
        return {n: sum(ops.get(n, 0.0) for ops in rows) / len(rows) for n in sorted(names)} if rows else {}

    passed = sum(r["status"] == "pass" for r in per_shape)
    return {
        "op_name": op_name, "warmup": warmup, "repeats": repeats, "baseline": baseline,
        "total_cases": len(per_shape), "passed_cases": passed, "failed_cases": len(per_shape) - passed,
        "nan_indices": buckets["nan"], "inf_indices": buckets["inf"], "zero_indices": buckets["zero"],
        "negative_indices": buckets["negative"], "none_indices": buckets["none"],
        "framework": {"avg_latency_ms": mean_of("framework", "avg_latency_ms"), "peak_memory_mb": mean_of("framework", "peak_memory_mb"), "operators": operators_of("framework")},
        "implementation": {"avg_latency_ms": mean_of("implementation", "avg_latency_ms"), "peak_memory_mb": mean_of("implementation", "peak_memory_mb"), "operators": operators_of("implementation")},
        "speedup_vs_torch": gm,
        "per_shape_results": per_shape,
        "timing": "device events, L2-sized flush before every repeat, median" if backend.times
                  else "cpu backend: Triton's interpreter; these times are not a performance measurement",
    }


def main(argv: list[str] | None = None) -> int:
    ap = seed002_parser("benchmark", __doc__)
    ap.add_argument("--warmup", type=int, default=DEFAULTS.warmup)
    ap.add_argument("--repeats", type=int, default=DEFAULTS.repeats)
    ap.add_argument("--skip_framework", action="store_true")
    ap.add_argument("--baseline", choices=BASELINES, default=DEFAULTS.baseline,
                    help="time the reference as written (eager) or through torch.compile (compile)")
    ap.add_argument("--framework_latency_ms", type=float)
    ap.add_argument("--verify_not_required", action="store_true")
    ap.add_argument("--operators", action="store_true", help="per-operator device time from the torch profiler")
    args = ap.parse_args(argv)
    folder = Path(args.verify_dir)
    if not args.verify_not_required:
        refusal = l1_gate(folder / verify_file_name(args.triton_impl_name))
        if refusal:
            print(refusal, file=sys.stderr)
            return GATE_REFUSED
    try:
        backend = get_backend(args.backend)
    except BackendUnavailable as e:
        print(f"benchmark: error: {e}", file=sys.stderr)
        return GATE_REFUSED
    files = task_files(args, "benchmark")
    if files is None:
        return 1  # seed 002: the script itself failed
    task, impl = files
    result = benchmark(task, impl, backend, warmup=args.warmup, repeats=args.repeats, skip_framework=args.skip_framework,
                       framework_latency_ms=args.framework_latency_ms, timeout=args.timeout, op_name=args.op_name,
                       operators=args.operators, baseline=args.baseline)
    out = Path(args.output) if args.output else folder / "perf_result.json"
    out.write_text(strict_json(result, indent=2) + "\n")
    print(f"benchmark {args.op_name}: speedup {result['speedup_vs_torch']} -> {out}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as e:  # seed 002: exit 1 when the script itself fails
        print(f"benchmark: failed: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)
