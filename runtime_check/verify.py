"""Verification that the candidate cannot influence: seed 002's verify.py, isolated.

    python -m tritonlint.runtime_check.verify --op_name softmax --verify_dir DIR \\
        [--triton_impl_name triton_ascend_impl] [--timeout 900] [--output FILE] \\
        [--backend auto|npu|cuda|cpu] [--tolerance mere_mare|allclose|seed001_strict] [--seeds 3]

The parent imports only the trusted reference task (for its inputs). The reference
and the candidate each run in a child process on inputs the parent wrote; their
outputs come back as tensors that the parent compares. The reference's outputs never
exist in the candidate's process. Exit 0 when every case passed, 1 otherwise
(seed 002's strict policy A); 2 on a usage error.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

from tritonlint.runtime_check.backends import Backend, BackendUnavailable, get_backend
from tritonlint.runtime_check.compare import POLICIES, compare_outputs, flatten_outputs
from tritonlint.runtime_check.tasks import IMPL, load_module

LOG_TAIL = 2000


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
           "device": None, "triton_cache_dir": os.environ.get("TRITON_CACHE_DIR", str(Path.home() / ".triton" / "cache"))}
    if backend.name == "cuda":
        env["device"] = torch.cuda.get_device_name()
        env["cuda"] = torch.version.cuda
    elif backend.name == "npu":
        env["device"] = torch.npu.get_device_name()
    return env


def run_child(backend: Backend, module: Path, cls: str, payload: Path, out: Path, timeout: float, log: Path) -> dict:
    """One isolated model run; whatever happens comes back as a result dict."""
    cmd = [sys.executable, "-m", "tritonlint.runtime_check.child", "--module", str(module), "--cls", cls,
           "--inputs", str(payload), "--out", str(out), "--device", backend.device]
    with open(log, "wb") as sink:  # a submission may print gigabytes: it goes to a file
        try:
            proc = subprocess.run(cmd, stdout=sink, stderr=subprocess.STDOUT, env=backend.child_env(), timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"ok": False, "error_type": "Timeout", "error_msg": f"no result within {timeout:g} s (process killed)"}
    tail = _tail(log)
    if proc.returncode < 0:
        name = signal.Signals(-proc.returncode).name
        return {"ok": False, "error_type": "Crash", "error_msg": f"process killed by {name}\n{tail}"}
    if not out.exists():
        return {"ok": False, "error_type": "Crash", "error_msg": f"process exited with code {proc.returncode} and no result\n{tail}"}
    try:
        result = torch.load(out, weights_only=True)
    except Exception as e:  # a result file that is not plain tensors is not accepted
        return {"ok": False, "error_type": "CorruptResult", "error_msg": f"{type(e).__name__}: {e}"[:LOG_TAIL]}
    return result


def _tail(log: Path) -> str:
    size = log.stat().st_size
    with open(log, "rb") as f:
        f.seek(max(0, size - LOG_TAIL))
        return f.read().decode(errors="replace")


def verify(task_path: Path, impl_path: Path, backend: Backend, *, seeds: int = 3, timeout: float = 900,
           policy: str = "mere_mare", small: bool | None = None, op_name: str | None = None) -> dict:
    task = load_module(task_path)
    if small is None:
        small = backend.name == "cpu" and hasattr(task, "get_small_inputs")
    make_inputs = task.get_small_inputs if small else task.get_inputs
    inplace = sorted(getattr(task, "INPLACE_OUTPUTS", {}).values())
    failures, total = [], 0
    with tempfile.TemporaryDirectory(prefix="tritonlint-verify-") as tmp:
        work = Path(tmp)
        for idx in range(1, seeds + 1):
            total += 1
            torch.manual_seed(idx - 1)
            inputs = make_inputs()
            desc = describe(inputs)
            payload = work / f"case{idx}.pt"
            torch.save({"init": list(task.get_init_inputs()), "inputs": inputs}, payload)
            ref = run_child(backend, task_path, "Model", payload, work / f"ref{idx}.pt", timeout, work / f"ref{idx}.log")
            if not ref.get("ok"):
                failures.append({"case_idx": idx, "input_desc": desc, "error_type": "ReferenceError",
                                 "error_msg": f"the reference failed: {ref['error_type']}: {ref['error_msg']}"})
                continue
            cand = run_child(backend, impl_path, "ModelNew", payload, work / f"new{idx}.pt", timeout, work / f"new{idx}.log")
            if not cand.get("ok"):
                failures.append({"case_idx": idx, "input_desc": desc, "error_type": cand["error_type"], "error_msg": cand["error_msg"]})
                continue
            failure = _check(inputs, ref, cand, inplace, policy)
            if failure is not None:
                failures.append({"case_idx": idx, "input_desc": desc, **failure})
    return {
        "op_name": op_name or impl_path.stem,
        "total_cases": total,
        "passed_cases": total - len(failures),
        "failed_cases": len(failures),
        "failures": failures,
        "policy": policy,
        "environment": environment(backend),
    }


def _check(inputs, ref: dict, cand: dict, inplace: list[int], policy: str) -> dict | None:
    after = cand["inputs_after"]
    for i, (before, now) in enumerate(zip(inputs, after)):
        if i in inplace or not isinstance(before, torch.Tensor):
            continue
        if not isinstance(now, torch.Tensor) or not torch.equal(before, now):
            return {"error_type": "InputModified", "error_msg": f"input {i} was modified by the candidate"}
    refs = flatten_outputs(ref["outputs"]) + [ref["inputs_after"][i] for i in inplace]
    outs = flatten_outputs(cand["outputs"]) + [after[i] for i in inplace]
    integer_inputs = all(not t.is_floating_point() for t in inputs if isinstance(t, torch.Tensor))
    bad = [(i, v) for i, v in enumerate(compare_outputs(refs, outs, policy, integer_inputs)) if not v.passed]
    if not bad:
        return None
    i, v = bad[0]
    return {"error_type": "MismatchError" if v.check not in ("type", "count", "shape") else "OutputError",
            "error_msg": f"output {i}: {v.message}", "output_index": i, "check": v.check,
            "stats": v.stats, "worst": v.worst, "other_failing_outputs": [j for j, _ in bad[1:]]}


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
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--output")
    ap.add_argument("--backend", default="auto", choices=("auto", "npu", "cuda", "cpu"))
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
    ap.add_argument("--tolerance", default="mere_mare", choices=POLICIES)
    ap.add_argument("--seeds", type=int, default=3)
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
    result = verify(task, impl, backend, seeds=args.seeds, timeout=args.timeout, policy=args.tolerance, op_name=args.op_name)
    out = Path(args.output) if args.output else folder / verify_file_name(args.triton_impl_name)
    out.write_text(json.dumps(result, indent=2, default=str) + "\n")
    print(f"verify {args.op_name}: {result['passed_cases']}/{result['total_cases']} passed -> {out}")
    for f in result["failures"]:
        if f["error_type"] == "Timeout":
            print("验证超时")  # seed 002's timeout line, which its callers look for
        print(f"  case {f['case_idx']}: {f['error_type']}: {f['error_msg'].splitlines()[0] if f['error_msg'] else ''}")
    return 0 if result["passed_cases"] == result["total_cases"] else 1


if __name__ == "__main__":
    sys.exit(main())
