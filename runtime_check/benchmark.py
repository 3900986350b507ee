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

import dataclasses
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

from tritonlint.runtime_check.backends import Backend, BackendUnavailable, get_backend
from tritonlint.runtime_check.compare import compare_outputs, all_integer, on_device
from tritonlint.runtime_check.options import BASELINES, DEFAULTS
from tritonlint.runtime_check.protocol import (MODEL_SEED, CASE_RESULT_BYTES, CaseInput, ChildSpec, case_input, child_log,
                                               crash_report, failure, input_seed, load_timing_result, not_a_plain_file,
                                               strict_json, timed_outputs, timing_result)
from tritonlint.runtime_check.runner import run_side
from tritonlint.runtime_check.score import overall_speedup
from tritonlint.runtime_check.tasks import load_module
from tritonlint.runtime_check.verify import describe, seed002_parser, task_files, verify_file_name

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
              cache_dir: str | None = None, expected: list | None = None, policy: str = DEFAULTS.policy,
              inputs: list | None = None, inplace_outputs: list[int] | None = None, framework: dict | None = None,
              baseline: str = DEFAULTS.baseline) -> dict:
    """`inputs` and `expected`: verify's case-1 inputs and the reference's outputs for them (the
    gate passes both); without them the inputs come from a fresh secret seed and a reference child
    computes the outputs. The candidate's output of its last timed call must match them: a kernel
    that is right once and wrong when called again, or that does less work once it is being
    timed, fails the shape instead of scoring. `inplace_outputs`: what verify learned.
    `framework`: the reference's timing for these inputs, taken for an earlier submission of
    the run: only the candidate is timed. `baseline`: time the reference as written (eager) or
    through torch.compile (compile); its side is still called `framework`, as in seed 002."""
    task = load_module(task_path)
    skip_framework = skip_framework or framework is not None
    small = backend.name == "cpu" and hasattr(task, "get_small_inputs")
    if inputs is None:
        torch.manual_seed(input_seed())
        inputs = task.get_small_inputs() if small else task.get_inputs()
        expected = None  # outputs for other inputs are no answer for these
    shapes = [inputs]
    per_shape, speedups = [], []
    # repeated calls move an in-place state on: there is no single-call answer to check
    inplace = bool(getattr(task, "INPLACE_OUTPUTS", None)) or bool(inplace_outputs)
    with tempfile.TemporaryDirectory(prefix="tritonlint-bench-") as tmp:
        folder = Path(tmp)
        for idx, shape_inputs in enumerate(shapes, start=1):
            torch.save(CaseInput(init=list(task.get_init_inputs()), inputs=shape_inputs, seed=MODEL_SEED), case_input(folder, idx))
            spec = ChildSpec("tritonlint.runtime_check.timing",
                             ("--task", str(Path(task_path).resolve()), "--impl", str(Path(impl_path).resolve()), "--inputs", str(case_input(folder, idx)),
                              "--device", backend.device, "--warmup", str(warmup), "--repeats", str(repeats),
                              "--out", str(timing_result(folder, idx)), "--outputs", str(timed_outputs(folder, idx)))
                             + (("--skip_framework",) if skip_framework else ()) + (("--operators",) if operators else ())
                             + ("--baseline", baseline),
                             backend.child_env(cache_dir))
            row = {"case_idx": idx, "input_desc": describe(shape_inputs), "status": "fail", "framework": None,
                   "implementation": None, "speedup_vs_torch": None, "error_type": None, "error_msg": None}
            timing = _time_shape(spec, folder, idx, timeout)
            if "error_type" not in timing and not inplace:
                timing = _check_last_call(timing, expected, backend, task_path, folder, idx, timeout, policy,
                                          all_integer(shape_inputs))
            if "error_type" in timing:
                row.update(error_type=timing["error_type"], error_msg=timing["error_msg"])
                speedups.append(None)
            else:
                fw = timing.get("framework") or framework or ({"avg_latency_ms": framework_latency_ms, "peak_memory_mb": None} if framework_latency_ms else None)
                impl = timing["implementation"]
                s = fw["avg_latency_ms"] / impl["avg_latency_ms"] if fw and fw["avg_latency_ms"] and impl["avg_latency_ms"] else None
                row.update(status="pass", framework=fw, implementation=impl)
                speedups.append(s)
                row["speedup_vs_torch"] = s if s is not None and s > 0 and s == s and s != float("inf") else None
            per_shape.append(row)
    gm, buckets = overall_speedup(speedups)

    def mean_of(side: str, key: str):
        vals = [r[side][key] for r in per_shape if r[side] and r[side].get(key) is not None]
        return sum(vals) / len(vals) if vals else None

    def operators_of(side: str) -> dict[str, float]:  # mean device ms per call over the shapes
        rows = [r[side].get("operators", {}) for r in per_shape if r[side]]
        names = {name for ops in rows for name in ops}
        return {n: sum(ops.get(n, 0.0) for ops in rows) / len(rows) for n in sorted(names)} if rows else {}

    passed = sum(r["status"] == "pass" for r in per_shape)
    return {
        "op_name": op_name or impl_path.stem, "warmup": warmup, "repeats": repeats, "baseline": baseline,
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


def _time_shape(spec: ChildSpec, folder: Path, idx: int, timeout: float) -> dict:
    """What the timing child wrote for shape `idx` (validated: protocol.load_timing_result),
    or its Timeout, Crash or CorruptResult. The child writes only its own result folder; the
    shape's inputs, which a reference run may read again, must be as the parent wrote them."""
    out = folder / f"timing{idx}"
    out.mkdir(exist_ok=True)
    args = tuple(str(out / Path(a).name) if prev in ("--out", "--outputs") else a
                 for prev, a in zip(("",) + spec.args, spec.args))
    spec = dataclasses.replace(spec, args=args, writable=(str(out),))
    inputs_digest = _digest(case_input(folder, idx))
    log = child_log(out, idx)
    with spec.running(log) as proc:
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.stop()
            return failure("Timeout", f"no result within {timeout:g} s")
    for name in (timing_result(folder, idx).name, timed_outputs(folder, idx).name):
        if os.path.lexists(out / name):  # where the rest of the benchmark looks for them
            os.replace(out / name, folder / name)
    if _digest(case_input(folder, idx)) != inputs_digest:
        return failure("InputsTampered", "the shape's input file changed while the timing child ran")
    result = timing_result(folder, idx)
    if not os.path.lexists(result):
        return failure("Crash", crash_report(proc.returncode, log))
    last = timed_outputs(folder, idx)
    if os.path.lexists(last) and (why := not_a_plain_file(last, CASE_RESULT_BYTES)):  # read later by torch.load
        return failure("CorruptResult", why)
    return load_timing_result(result)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _check_last_call(timing: dict, expected, backend: Backend, task_path: Path, folder: Path, idx: int,
                     timeout: float, policy: str, exact_ints: bool) -> dict:
    try:
        got = torch.load(timed_outputs(folder, idx), weights_only=True)["outputs"]
    except Exception as e:  # missing or not plain tensors: the candidate's process tampered with it
        return failure("TimedOutputMissing", f"the timed calls left no readable output ({type(e).__name__})")
    if expected is None:
        ref = run_side(backend, task_path, "Model", folder, [idx], timeout)[idx]
        if not ref.get("ok"):
            return failure("ReferenceError", f"the reference failed: {ref['error_type']}")
        expected = ref["outputs"]
    expected, got = on_device(backend.device, expected), on_device(backend.device, got)  # compared on the device
    bad = [(i, v) for i, v in enumerate(compare_outputs(expected, got, policy, exact_ints)) if not v.passed]
    if bad:
        i, v = bad[0]
        return failure("TimedOutputMismatch",
                       f"the output of the last timed call differs from the reference: output {i}: {v.message}")
    return timing


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
