"""Verification that the candidate cannot influence: seed 002's verify.py, isolated.

    python -m tritonlint.runtime_check.verify --op_name softmax --verify_dir DIR \\
        [--triton_impl_name triton_ascend_impl] [--timeout 900] [--output FILE] \\
        [--backend auto|npu|cuda|cpu] [--tolerance mere_mare|allclose|seed001_strict|exact|three_term]
        [--non_compute] [--seeds 3] [--probe_state] [--fresh_cache]

The parent imports only the trusted reference task (for its inputs). The reference
and the candidate each run in a child process on inputs the parent wrote; their
outputs come back as tensors that the parent compares. The reference's outputs never
exist in the candidate's process. Exit 0 when every case passed, 1 otherwise
(seed 002's strict policy A); 2 on a usage error.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import torch

from tritonlint.runtime_check.backends import Backend, BackendUnavailable, get_backend
from tritonlint.runtime_check.device import judging
from tritonlint.runtime_check.census import judge
from tritonlint.runtime_check.compare import (CONTRACT_CHECKS, all_integer, compare_outputs, compare_tensor, contract,
                                              flatten_outputs, layout_notes, on_device, same_bits)
from tritonlint.runtime_check.options import BACKENDS, DEFAULTS, POLICIES
from tritonlint.runtime_check.protocol import UNCHANGED, strict_json, Failure, failure
from tritonlint.runtime_check.reference import References, reference_key, run_reference
from tritonlint.runtime_check.runner import Starting, Timed, run_side
from tritonlint.runtime_check.sandbox import read_only_held
from tritonlint.runtime_check.tasks import IMPL, load_module

def describe(values) -> list[dict]:
    out = []
    for v in values:
        if isinstance(v, torch.Tensor):
            out.append({"type": "tensor", "shape": list(v.shape), "dtype": str(v.dtype)})
        else:
            out.append({"type": type(v).__name__, "value": v if isinstance(v, (int, float, bool, str)) else repr(v)})
    return out


def environment(backend: Backend) -> dict:
    import importlib.metadata as md

    def version(name: str) -> str | None:
        try:
            return md.version(name)
        except md.PackageNotFoundError:
            return None

    env = {"backend": backend.name, "python": platform.python_version(), "torch": torch.__version__,
           "triton": version("triton") or version("triton-ascend"), "torch_npu": version("torch_npu"),
           "device": None, "triton_cache_dir": backend.child_env()["TRITON_CACHE_DIR"]}
    if backend.name in ("cuda", "npu"):  # which physical device this run had, when the host has several
        var = "CUDA_VISIBLE_DEVICES" if backend.name == "cuda" else "ASCEND_RT_VISIBLE_DEVICES"
        env["visible_devices"] = os.environ.get(var)
    if backend.name == "cuda":
        env["device"] = torch.cuda.get_device_name()
        env["cuda"] = torch.version.cuda
        env["device_uuid"] = str(getattr(torch.cuda.get_device_properties(0), "uuid", "")) or None
    elif backend.name == "npu":
        env["device"] = torch.npu.get_device_name()
    else:
        env["device"] = platform.processor() or platform.machine()
    env["driver"] = driver_version(backend.name)
    return env


@functools.lru_cache(maxsize=None)  # a subprocess; the driver does not change under a running process
def driver_version(backend: str) -> str | None:
    """The accelerator driver's version, from the vendor's own tool or file; None when unknown."""
    if backend == "cuda" and shutil.which("nvidia-smi"):
        try:
            out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                 capture_output=True, text=True, timeout=20).stdout.split()
            return out[0] if out else None
        except (OSError, subprocess.SubprocessError):
            return None
    if backend == "npu":  # Ascend's driver package records its version here
        info = Path(os.environ.get("ASCEND_DRIVER_PATH", "/usr/local/Ascend/driver")) / "version.info"
        if info.exists():
            for line in info.read_text(errors="replace").splitlines():
                if line.startswith("Version="):
                    return line.split("=", 1)[1].strip()
    return None


def verify(task_path: Path, impl_path: Path, backend: Backend, *, seeds: int = DEFAULTS.seeds, timeout: float = DEFAULTS.timeout,
           policy: str = DEFAULTS.policy, small: bool | None = None, op_name: str | None = None,
           probe_state: bool = False, cache_dir: str | None = None, keep: dict | None = None,
           references: References | None = None, timed: Timed | None = None) -> dict:
    """`keep`, when given, receives case 1's inputs (the ones a timed phase times), how to check the
    candidate's call after its timed ones (`keep["check"]`: check_timed), and the reference run
    itself (`keep["reference"]`). `references`: the reference runs of this gate run, reused by every
    submission of the same task (reference.py); without it the reference runs afresh.
    `timed` (its options): each side's child times its model on case 1 after its cases, the
    candidate's only when every case passed and the census accepts it; the candidate's timed
    phase comes back in `keep["timed"]`, the reference's in `keep["reference"].framework`."""
    task = load_module(task_path)
    if small is None:
        small = backend.name == "cpu" and hasattr(task, "get_small_inputs")
    declared = getattr(task, "INPLACE_OUTPUTS", None)  # the task's override; otherwise learned from the reference
    declared = sorted(declared.values()) if declared else None
    cases = list(range(1, seeds + 1))
    clock = Phases()
    warm = _start_device(backend)  # the parent compares on the device: its start overlaps the children
    env = backend.child_env(cache_dir)
    key = reference_key(task_path, backend, cases, small, probe_state, timed)
    run = references.get(key) if references is not None else None
    reused = run is not None
    theirs = dataclasses.replace(timed) if timed is not None else None  # the reference's timed phase
    # the candidate's child starts once the reference's has, and waits for its arguments until the reference is done
    starting = Starting(backend, "ModelNew", env)
    try:  # the early child goes on every way out, run_side ordered it or not
        if run is None:
            run = run_reference(task_path, backend, cases, timeout, small=small, state=probe_state, env=env, timed=theirs,
                                started=starting.start)
            if references is not None:
                references.put(key, run)
        early = starting.get()
        clock.lap("reference")  # its child's start, the inputs on the device, the reference's calls and timing (0 when reused)
        refs, inputs = run.results, run.inputs
        descs = {idx: describe(inputs[idx]) for idx in cases}
        for idx in cases:
            if declared is not None and refs[idx].get("ok") and not all(
                    0 <= i < len(inputs[idx]) and isinstance(inputs[idx][i], torch.Tensor) for i in declared):
                if references is None:  # a shared run stays with the run's other submissions, which References.close removes
                    run.cleanup()
                raise ValueError(f"INPLACE_OUTPUTS {declared} must name tensor inputs (get_inputs gives {len(inputs[idx])})")
        judged: dict = {}
        per_case = _Cases(backend, refs, inputs, declared, policy, probe_state, descs)

        def judge_one(idx: int, cand: dict) -> None:
            warm.join()
            per_case.judge(idx, cand)

        def judge_cases(cands: dict, found: dict | None) -> bool:
            """The parent's verdict on the candidate's cases (and census); True: time it."""
            started = time.perf_counter()
            warm.join()
            judged.update(per_case.summary(cases, cands))
            judged["census"] = judge(found) if found else None
            judged["judge_s"] = round(time.perf_counter() - started, 3)  # what was left to judge at the end
            return census_refusal({"failures": judged["failures"], "total_cases": len(cases), "census": judged["census"]}) is None

        found, timeline = {}, {}
        mine = dataclasses.replace(timed, go=judge_cases) if timed is not None else None
        try:
            ready = [i for i in cases if refs[i].get("ok")]  # a case the reference failed is the reference's error
            cands = run_side(backend, impl_path, "ModelNew", run.folder, ready, timeout, state=probe_state, env=env,
                             census=found, phases=timeline, timed=mine, on_result=judge_one, early=early) if ready else {}
            run.exposed = run.exposed or not all(read_only_held(c.get("isolation")) for c in cands.values())
            clock.lap("candidate")  # its child's start, compile, the verify cases, the census and its timed phase
        finally:
            if references is None:
                run.cleanup()
    finally:
        if (early := starting.get()) is not None:
            early.close()
    if not judged:  # judged already when the child that ran every case reached its timed phase
        judge_cases(cands, found)
    if keep is not None and refs.get(1, {}).get("ok"):
        keep["inputs"] = inputs[1]  # the timed phase's inputs: case 1's, whose seed the candidate never saw
        keep["check"] = functools.partial(check_timed, backend, inputs, refs, judged["learned"], policy)
        keep["reference"] = run
        keep["timed"] = mine
    clock.lap("compare")
    clock.laps["judge"] = judged["judge_s"]  # the parent's comparison of every case and its census (within `candidate` when timed)
    if mine is not None and mine.wall_s is not None:
        clock.laps["timing"] = round(mine.wall_s, 3)  # the candidate's timed phase, on the parent's clock (within `candidate`)
    for side, t in (("reference", None if reused else theirs), ("candidate", mine)):  # the device's timing lock, per side:
        if t is not None and t.lock_s:  # waited for (other timings, judgements) and held (go to done, others stopped)
            clock.laps.update({f"{side}_lock_{k}": v for k, v in t.lock_s.items()})
    env_json = environment(backend)
    if cache_dir:
        env_json["triton_cache_dir"] = str(cache_dir)
    failures = judged["failures"]
    return {
        "op_name": op_name or impl_path.stem,
        "total_cases": len(cases),
        "passed_cases": len(cases) - len(failures),
        "failed_cases": len(failures),
        "failures": failures,
        "policy": policy,
        "max_abs_diff": judged["diffs"].get("max_abs_diff"),
        "max_rel_diff": judged["diffs"].get("max_rel_diff"),
        "input_desc": descs.get(1),
        "reference_outputs": _output_desc(refs),
        # Inputs that are outputs too (compared after the call, not required intact): the task's
        # INPLACE_OUTPUTS, or the inputs the reference changed. Repeated calls on these inputs move
        # the state on, so a timed call has no single-call answer to check.
        "inplace_outputs": judged["learned"],
        "input_seeds": {str(i): run.seeds[i] for i in cases},  # for reproducing a run; written after every child is gone
        "inplace_source": "declared" if declared is not None else "learned",
        "notes": judged["notes"],
        # what the candidate's forward ran (census.py), judged by lint's glue list: type 3 or 2 fails the file
        "census": judged["census"],  # the one the parent judged, at its go if the child had a timed phase
        "environment": env_json,
        "phases_s": clock.laps,  # wall time the parent saw per phase
        # inside each child, by its own account (protocol.load_marks): start (the fork and the sandbox), device,
        # load (the module), inputsN (made on the device), caseN (the first compiles), census, and the
        # timed phase: build (its call and the first, untimed call), go (waiting for the parent's
        # judgement and the timing lock), timing (the timed calls, the check call, the files)
        "child_phases_s": {"reference": {} if reused else run.phases, "candidate": timeline},
        "reference_reused": reused,  # its inputs and outputs came from an earlier submission of this run
        "isolation": next((c.get("isolation") for c in cands.values() if c.get("isolation")), None),  # protocol.ChildSpec
    }


class _Cases:
    """The parent's verdict on a candidate's cases against the reference's, on the device: each case
    judged once, as its result comes in (while the candidate's child goes on with the next) or
    at the end (`summary`)."""

    def __init__(self, backend: Backend, refs: dict, inputs: dict, declared: list | None, policy: str,
                 probe_state: bool, descs: dict):
        self.backend, self.refs, self.inputs, self.declared = backend, refs, inputs, declared
        self.policy, self.probe_state, self.descs = policy, probe_state, descs
        self.diffs: dict = {}
        self.done: dict[int, tuple] = {}  # case -> (failure or None, notes, in-place outputs)

    def judge(self, idx: int, cand: dict | None) -> None:
        # `inputs[idx]` is the parent's own copy, loaded from the file the reference's child made
        # before any candidate's child started: no candidate ever had it. It stays on the host: an
        # input a child reports unchanged is this very copy, and only what changed is compared.
        if idx in self.done:
            return
        pristine = self.inputs[idx]
        with judging(self.backend):  # never beside another process's timed phase on the device
            ref, cand = (prepared(self.backend, r, pristine) for r in (self.refs[idx], cand))
            inplace = self.declared if self.declared is not None else (inplace_learned(pristine, ref) if ref.get("ok") else [])
            why = judge_case(self.backend, pristine, ref, cand, inplace, self.policy, self.diffs, self.probe_state)
        notes = []
        if ref.get("ok") and (cand or {}).get("ok"):
            notes = [{"case_idx": idx, "note": n} for n in layout_notes(cand["outputs"], cand.get("outputs_meta"))]
        self.done[idx] = ({"case_idx": idx, "input_desc": self.descs[idx], **why} if why is not None else None, notes, inplace)

    def summary(self, cases: list[int], cands: dict) -> dict:
        """{failures, diffs, notes, learned (the in-place outputs)}, judging the cases not judged yet."""
        for idx in cases:
            self.judge(idx, cands.get(idx))
        done = [self.done[idx] for idx in cases]
        return {"failures": [f for f, _, _ in done if f is not None], "diffs": self.diffs,
                "notes": [n for _, notes, _ in done for n in notes], "learned": sorted({i for _, _, inp in done for i in inp})}


def prepared(backend: Backend, result: dict | None, pristine: list) -> dict | None:
    """A child's result as judge_case takes it: its tensors on the device, each input it reported
    unchanged replaced by the parent's own copy (`pristine`, which stays on the host)."""
    return unchanged_inputs(on_device(backend.device, result), pristine)


def judge_case(backend: Backend, pristine: list, ref: dict, cand: dict | None, inplace: list[int], policy: str,
               diffs: dict | None = None, probe_state: bool = False) -> Failure | None:
    """Why a candidate's result for one case fails against the reference's (both `prepared`,
    `pristine` the parent's copy of the case's inputs), or None; compared on the device."""
    if not ref.get("ok"):
        return failure("ReferenceError", f"the reference failed: {ref['error_type']}: {ref['error_msg']}")
    if not (cand or {}).get("ok"):
        return failure(cand["error_type"], cand["error_msg"]) if cand else failure("NotRun", "the candidate's child ran no such case")
    return _check(pristine, ref, cand, inplace, policy, {} if diffs is None else diffs, backend.device) or (
        _probe(ref, cand) if probe_state else None)


def check_timed(backend: Backend, inputs: dict, refs: dict, inplace: list[int], policy: str,
                checked: tuple[int, dict] | None) -> Failure | None:
    """The candidate's call after its timed ones (runner.Timed.checked: on another case's inputs
    than the timed case's) judged as that case was: TimedOutputMismatch, or None."""
    if checked is None:
        return failure("TimedOutputMismatch", "the candidate's child made no call after its timed ones")
    idx, cand = checked
    with judging(backend):
        why = judge_case(backend, inputs[idx], prepared(backend, refs[idx], inputs[idx]), prepared(backend, cand, inputs[idx]),
                         inplace, policy)
    return None if why is None else failure(
        "TimedOutputMismatch", f"the call after the timed ones, on case {idx}'s inputs, differs from the reference's: "
                               f"{why['error_type']}: {why['error_msg']}")


def _start_device(backend: Backend) -> threading.Thread:
    """Initialise the accelerator in this process on a thread, while the children run."""
    def start():
        if backend.name != "cpu":
            torch.empty(1, device=backend.device)

    t = threading.Thread(target=start, daemon=True)
    t.start()
    return t


class Phases:
    """Wall-clock laps, as the parent sees them: {phase: seconds}."""

    def __init__(self):
        self.laps: dict[str, float] = {}
        self._t = time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.laps[name] = round(now - self._t, 3)
        self._t = now


def unchanged_inputs(result: dict | None, pristine: list) -> dict | None:
    """A child's result with each input it reported as unchanged (protocol.UNCHANGED: it was
    bit-identical to the copy the child took before the call, so only changed inputs travel)
    replaced by the parent's copy."""
    after = (result or {}).get("inputs_after")
    if not isinstance(after, list):
        return result
    return {**result, "inputs_after": [pristine[i] if isinstance(a, str) and a == UNCHANGED and i < len(pristine) else a
                                       for i, a in enumerate(after)]}


def inplace_learned(pristine: list, ref: dict) -> list[int]:
    """The tensor inputs the reference changed in this case: its in-place outputs."""
    after = ref.get("inputs_after")
    after = after if isinstance(after, list) else []
    return [i for i, v in enumerate(pristine)
            if isinstance(v, torch.Tensor) and not (i < len(after) and same_bits(v, after[i]))]


def _output_desc(refs: dict[int, dict]) -> list[dict] | None:
    """What the reference returns (first case that ran), for result files that describe the kernel."""
    for r in refs.values():
        if r.get("ok"):
            return describe(flatten_outputs(r["outputs"]))
    return None


def _probe(ref: dict, cand: dict) -> Failure | None:
    """The hidden-state probe: every parameter and buffer of `Model`, after the call,
    must exist in `ModelNew` under the same name with bit-identical values."""
    theirs = cand.get("state", {})
    for name, value in ref.get("state", {}).items():
        if name not in theirs:
            return failure("HiddenStateMismatch", f"Model's state '{name}' has no counterpart in ModelNew")
        mine = theirs[name]
        if not (isinstance(mine, torch.Tensor) and mine.dtype == value.dtype and mine.shape == value.shape
                and torch.equal(mine, value)):
            return failure("HiddenStateMismatch", f"ModelNew's '{name}' is not bit-identical to Model's after the call")
    return None


def _check(inputs, ref: dict, cand: dict, inplace: list[int], policy: str, diffs: dict, device: str) -> dict | None:
    """Inputs first (against the parent's pristine copy), then the output contract, then values."""
    after = cand.get("inputs_after")
    after = after if isinstance(after, list) else []  # a child that reports no inputs changed them all, as far as we know
    for i, before in enumerate(inputs):
        if i in inplace or not isinstance(before, torch.Tensor):
            continue
        if i >= len(after) or not same_bits(before, after[i]):
            return failure("InputModified", f"input {i} was modified by the candidate, and is not an in-place output")
    broken = contract(ref["outputs"], cand["outputs"], ref.get("outputs_meta"), cand.get("outputs_meta"))
    if broken is not None:
        kind = "ReferenceError" if broken.check == "reference" else "OutputContract"
        return {**failure(kind, broken.message), "check": broken.check}
    integer_inputs = all_integer(inputs)
    n_out = len(flatten_outputs(ref["outputs"]))
    labels = [f"output {k}" for k in range(n_out)] + [f"in-place output (input {i})" for i in inplace]
    verdicts = compare_outputs(ref["outputs"], cand["outputs"], policy, integer_inputs)
    verdicts += [compare_tensor(on_device(device, ref["inputs_after"][i]), on_device(device, after[i] if i < len(after) else None),
                                policy, integer_inputs) for i in inplace]
    for v in verdicts:  # seed 001's two error figures, the worst over outputs and cases
        for key in ("max_abs_diff", "max_rel_diff"):
            if isinstance(v.stats.get(key), (int, float)):
                diffs[key] = max(diffs.get(key, 0.0), float(v.stats[key]))
    bad = [(i, v) for i, v in enumerate(verdicts) if not v.passed]
    if not bad:
        return None
    i, v = bad[0]
    return {**failure("OutputContract" if v.check in CONTRACT_CHECKS else "MismatchError", f"{labels[i]}: {v.message}"),
            "output_index": i, "check": v.check, "stats": v.stats, "worst": v.worst,
            "other_failing_outputs": [j for j, _ in bad[1:]]}


def verify_file_name(impl_name: str) -> str:
    """Seed 002's L1 naming: triton_ascend_impl -> verify_result.json, triton_xxx -> verify_result_xxx.json."""
    if impl_name == IMPL:
        return "verify_result.json"
    suffix = impl_name[len("triton_"):] if impl_name.startswith("triton_") else impl_name
    return f"verify_result_{suffix}.json"


def seed002_parser(prog: str, doc: str) -> argparse.ArgumentParser:
    """The arguments verify and benchmark share with seed 002's scripts."""
    ap = argparse.ArgumentParser(prog=f"python -m tritonlint.runtime_check.{prog}", description=doc,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--op_name", required=True)
    ap.add_argument("--verify_dir", default=".")
    ap.add_argument("--triton_impl_name", default=IMPL)
    ap.add_argument("--timeout", type=float, default=DEFAULTS.timeout)
    ap.add_argument("--output")
    ap.add_argument("--backend", default=BACKENDS[0], choices=BACKENDS)
    return ap


def task_files(args, prog: str) -> tuple[Path, Path] | None:
    """`{op}_torch.py` and `{op}_{impl}.py` in --verify_dir, or None after saying which is missing."""
    folder = Path(args.verify_dir)
    task, impl = folder / f"{args.op_name}_torch.py", folder / f"{args.op_name}_{args.triton_impl_name}.py"
    for p in (task, impl):
        if not p.exists():
            print(f"{prog}: error: {p} not found", file=sys.stderr)
            return None
    return task, impl


def main(argv: list[str] | None = None) -> int:
    ap = seed002_parser("verify", __doc__)
    ap.add_argument("--tolerance", default=DEFAULTS.policy, choices=POLICIES)
    ap.add_argument("--non_compute", action="store_true", help="data-movement op: outputs must be bit-identical (= --tolerance exact)")
    ap.add_argument("--seeds", type=int, default=DEFAULTS.seeds)
    ap.add_argument("--probe_state", action="store_true", help="Model's parameters and buffers must be reproduced bit-exactly")
    ap.add_argument("--fresh_cache", action="store_true", help="compile in a private, empty Triton cache")
    args = ap.parse_args(argv)
    folder = Path(args.verify_dir)
    files = task_files(args, "verify")
    if files is None:
        return 2
    task, impl = files
    try:
        backend = get_backend(args.backend)
    except BackendUnavailable as e:
        print(f"verify: error: {e}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="tritonlint-cache-") as cache:
        result = verify(task, impl, backend, seeds=args.seeds, timeout=args.timeout,
                        policy="exact" if args.non_compute else args.tolerance, op_name=args.op_name,
                        probe_state=args.probe_state, cache_dir=cache if args.fresh_cache else None)
    out = Path(args.output) if args.output else folder / verify_file_name(args.triton_impl_name)
    out.write_text(strict_json(result, indent=2, default=str) + "\n")
    print(f"verify {args.op_name}: {result['passed_cases']}/{result['total_cases']} passed -> {out}")
    for f in result["failures"]:
        if f["error_type"] == "Timeout":
            print("验证超时")  # seed 002's timeout line, which its callers look for
        print(f"  case {f['case_idx']}: {f['error_type']}: {f['error_msg'].splitlines()[0] if f['error_msg'] else ''}")
    if (why := census_refusal(result)) is not None:
        print(f"  census: {why}")
        return 1
    return 0 if result["passed_cases"] == result["total_cases"] else 1


def census_refusal(result: dict) -> str | None:
    """Why the census refuses a verified candidate (type 3, type 2, or no readable census), or None."""
    c = result.get("census")
    if result["failures"] or result["total_cases"] == 0:
        return None
    if c is None:
        return "no census was taken (the candidate's child ended before it)"
    return c.get("why") if c.get("regression_type") or "error" in c else None


if __name__ == "__main__":
    sys.exit(main())
