"""The isolated gate against an unsafe in-process runner, on one device, in one process tree.

    python benchmarks/gate_speed.py [--backend cuda] [--seeds 3] [--only gelu,softmax]
                                    [--parts a,b,c] [--out benchmarks/results/gate_speed.json]

(a) `--inprocess`, in a child process: the official runner's way, no isolation: import
    torch, then per case load both models, `seeds` input sets made on the device, compare,
    warmup and timed calls with an L2 flush (the same counts as the gate); on the cpu backend
    (the interpreter, small inputs) no timing, as the gate does none there;
(b) `tritonlint eval` over the cases' solutions, one run (bN, e.g. b2: with N workers sharing the
    device, each timed phase with the device to itself: device.timing_lock); each eval's times are
    compared with b1's, task by task (`drift_from_one_worker`);
(c) `tritonlint IMPL --run` once per case, each a fresh command;
(s) scaling: `tritonlint eval` over `--gens` generations of every case's solution (one folder per
    task), on the first GPU only, then on every GPU of the host (one worker per GPU).
Each part's wall time is measured here, around its child processes. The Triton cache is a
fresh folder for the whole run: (a) runs twice, cold then warm, and (b) and (c) find it
warm (c, run alone, runs each case once first, unmeasured); (c) runs once more with an empty cache of its own (cold). Writes the JSON and prints
the ratios the issue asks for: (b) / (a warm) and (c)'s seconds per case.
"""

from __future__ import annotations

import argparse
import csv
import math
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IMPL = "triton_ascend_impl"
ONE = "b_eval_workers1"  # the run every other eval's times are compared with


def cases(only: set[str]) -> list[tuple[Path, Path]]:
    out = []
    for ref in sorted((ROOT / "cases").glob("t*/*/*_torch.py")):
        name = ref.name[: -len("_torch.py")]
        if not only or name in only:
            out.append((ref, ref.parent / f"{name}_{IMPL}.py"))
    return out


def inprocess(pairs: list[tuple[Path, Path]], backend: str, seeds: int, warmup: int, repeats: int) -> dict:
    """(a): everything in this one process, as an unsafe runner does it."""
    t0 = time.perf_counter()
    import torch

    from tritonlint.runtime_check.tasks import load_module

    dev = backend
    cpu = dev == "cpu"  # the interpreter: the gate checks correctness only there, and so does this loop
    mod = getattr(torch, dev)
    flush = None if cpu else torch.empty(256 * 1024 * 1024, dtype=torch.int8, device=dev)
    rows = []
    for ref_path, impl_path in pairs:
        t = time.perf_counter()
        ref, sol = load_module(ref_path), load_module(impl_path)
        make = ref.get_small_inputs if cpu and hasattr(ref, "get_small_inputs") else ref.get_inputs
        init = ref.get_init_inputs()
        ok = True
        for s in range(seeds):
            torch.manual_seed(1000 + s)
            with torch.device(dev):
                inputs = make()
            inputs = [x.to(dev) if isinstance(x, torch.Tensor) else x for x in inputs]
            torch.manual_seed(7)
            m = ref.Model(*init).to(dev)
            torch.manual_seed(7)
            n = sol.ModelNew(*init).to(dev)
            with torch.no_grad():
                want = m(*[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs])
                got = n(*[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs])
            want = want if isinstance(want, (list, tuple)) else [want]
            got = got if isinstance(got, (list, tuple)) else [got]
            ok &= all(torch.allclose(a.float(), b.float(), atol=2e-2, rtol=2e-2) for a, b in zip(want, got))
        times = {"framework": None, "implementation": None}
        for side, model in (("framework", m), ("implementation", n)) if not cpu else ():
            with torch.no_grad():
                for _ in range(warmup):
                    model(*inputs)
                samples = []
                for _ in range(repeats):
                    flush.zero_()
                    a, b = torch.Event(device=dev, enable_timing=True), torch.Event(device=dev, enable_timing=True)
                    a.record()
                    model(*inputs)
                    b.record()
                    b.synchronize()
                    samples.append(a.elapsed_time(b))
            times[side] = statistics.median(samples)
        if not cpu:
            mod.synchronize()
        rows.append({"case": ref_path.parent.name, "ok": bool(ok), "wall_s": round(time.perf_counter() - t, 3),
                     "speedup": times["framework"] / times["implementation"] if not cpu else None})
    return {"rows": rows, "wall_s": round(time.perf_counter() - t0, 3)}


def eval_results(csv_path: Path) -> tuple[dict, dict]:
    """From an eval's results.csv (its one shape and repeat): {task: [baseline_ms, solution_ms]},
    and {task: its status and error} for each submission that did not pass."""
    if not csv_path.exists():
        return {}, {}
    with csv_path.open() as f:
        rows = list(csv.DictReader(f))
    return ({r["task"]: [float(r["baseline_ms"]), float(r["solution_ms"])] for r in rows if r["baseline_ms"] and r["solution_ms"]},
            {r["task"]: f"{r['status']}: {r['error'][:300]}" for r in rows if r["status"] != "passed"})


def eval_phases(runs: Path, started: float) -> dict:
    """Where an eval's gate time went: each phase's seconds summed over its submissions (their
    runs/ files), the parent's (verify.phases_s) and each child's own (child_phases_s); and when
    each submission's result was written (`ends_s`: seconds from the eval's start, in order); and the
    phases of the first submission written (`first`), whose start-up the others do not pay."""
    sums: dict = {"parent": {}, "reference": {}, "candidate": {}, "submissions": 0, "ends_s": [], "first": {}}
    first_end = math.inf
    for path in sorted(runs.glob("*.json")) if runs.is_dir() else []:
        data = json.loads(path.read_text())
        verify = (data.get("runtime") or {}).get("verify") or {}
        ended = path.stat().st_mtime
        sums["submissions"] += 1
        sums["ends_s"].append((round(ended - started, 2), data.get("key", "").split("/")[-1][:40]))
        laps_of = {"parent": verify.get("phases_s") or {}, **(verify.get("child_phases_s") or {})}
        if ended < first_end:
            first_end, sums["first"] = ended, laps_of
        for part, laps in laps_of.items():
            for phase, s in laps.items():
                sums[part][phase] = round(sums[part].get(phase, 0.0) + s, 3)
    sums["ends_s"].sort()
    return sums


def drift(one: dict, other: dict) -> dict:
    """How far another run's times are from the one-worker run's, task by task: the median and the
    largest factor between them (1.0: the same), over both sides' times. With more workers on the
    device, a timed phase that others disturbed shows here."""
    factors = [math.exp(abs(math.log(b / a))) for t in one.keys() & other.keys() for a, b in zip(one[t], other[t]) if a > 0 and b > 0]
    return {"median": round(statistics.median(factors), 3), "max": round(max(factors), 3), "n": len(factors)} if factors else {}


def timed(cmd: list[str], env: dict) -> tuple[float, subprocess.CompletedProcess]:
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    return time.perf_counter() - t, proc


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", default="cuda")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=50)
    ap.add_argument("--only", default="")
    ap.add_argument("--parts", default="a,b,c_warm,c_cold", help="a, b, bN (eval with N workers on the device: b2, b4), c (= c_warm and c_cold), c_warm, c_cold, s (eval on one GPU, then on all)")
    ap.add_argument("--gens", type=int, default=4, help="(s): generations per task")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "gate_speed.json"))
    ap.add_argument("--inprocess", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    pairs = cases({s for s in args.only.split(",") if s})
    if args.inprocess:
        print(json.dumps(inprocess(pairs, args.backend, args.seeds, args.warmup, args.repeats)))
        return 0
    parts = set(args.parts.split(","))  # "c" means both c parts
    tool = [sys.executable, "-m", "tritonlint"]
    gate = ["--backend", args.backend, "--seeds", str(args.seeds)]  # `--run` times with the defaults (5 warmup, 50 repeats)
    result: dict = {"backend": args.backend, "cases": len(pairs), "seeds": args.seeds, "warmup": args.warmup,
                    "repeats": args.repeats}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)

    def save() -> None:  # after every part: a run cut short keeps what it measured
        for label in [k for k in result if k.startswith("b_eval")]:
            if "a_warm" in result:
                result[f"ratio_{label}_over_a_warm"] = round(result[label]["wall_s"] / result["a_warm"]["wall_s"], 3)
        out.write_text(json.dumps(result, indent=1) + "\n")

    with tempfile.TemporaryDirectory(prefix="gate-speed-") as tmp:
        tmp = Path(tmp)
        env = {**os.environ, "TRITON_CACHE_DIR": str(tmp / "cache")}
        if "a" in parts:
            me = [sys.executable, __file__, "--inprocess", "--backend", args.backend, "--seeds", str(args.seeds),
                  "--warmup", str(args.warmup), "--repeats", str(args.repeats), "--only", args.only]
            for label in ("a_cold", "a_warm"):
                wall, proc = timed(me, env)
                detail = json.loads(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0 else {"error": proc.stderr[-2000:]}
                result[label] = {"wall_s": round(wall, 3), **detail}
                print(f"{label}: {wall:.1f} s", flush=True)
                save()
        runs = [(f"b_eval_workers{n}", n) for n in sorted(int(p[1:]) for p in parts if p[:1] == "b" and p[1:].isdigit())]
        runs += [("b_eval", None)] if "b" in parts else []  # eval's default workers, after b1 (its drift from it)
        for label, workers in runs:
            subs = tmp / "subs"
            subs.mkdir(exist_ok=True)
            for _, impl in pairs:
                shutil.copy(impl, subs / impl.name)
            more = ["--workers", str(workers)] if workers else []
            began = time.time()
            wall, proc = timed(tool + ["eval", str(subs), "--out", str(tmp / label), *gate, *more,
                                       "--warmup", str(args.warmup), "--bench-repeats", str(args.repeats)], env)
            summary = tmp / label / "summary.json"
            data = json.loads(summary.read_text()) if summary.exists() else {}
            times, failed = eval_results(tmp / label / "results.csv")
            result[label] = {"wall_s": round(wall, 3), "rc": proc.returncode, "by_status": {k: n for k, n in (data.get("by_status") or {}).items() if n},
                             "stderr": proc.stderr[-1500:] if proc.returncode not in (0, 1) else None,
                             "times_ms": times, "failed": failed, "phases_s": eval_phases(tmp / label / "runs", began),
                             "timeline_s": (data.get("environment") or {}).get("timeline_s")}
            if label != ONE and ONE in result:
                result[label]["drift_from_one_worker"] = drift(result[ONE]["times_ms"], result[label]["times_ms"])
            print(f"{label}: {wall:.1f} s rc={proc.returncode} {result[label].get('drift_from_one_worker', '')}", flush=True)
            save()
        if "s" in parts:
            gens = tmp / "gens"
            for _, impl in pairs:
                task = impl.name[: -len(f"_{IMPL}.py")]
                (gens / task).mkdir(parents=True, exist_ok=True)
                for g in range(args.gens):
                    shutil.copy(impl, gens / task / f"gen{g}.py")
            var = {"cuda": "CUDA_VISIBLE_DEVICES", "npu": "ASCEND_RT_VISIBLE_DEVICES"}.get(args.backend)
            for label, visible in (("s_one_device", "0"), ("s_all_devices", os.environ.get(var or "", ""))):
                run_env = {**env, **({var: visible} if var and visible else {})}
                if var and not visible:
                    run_env.pop(var, None)
                wall, proc = timed(tool + ["eval", str(gens), "--cases", str(ROOT / "cases"), "--out", str(tmp / label), *gate,
                                           "--warmup", str(args.warmup), "--bench-repeats", str(args.repeats)], run_env)
                result[label] = {"wall_s": round(wall, 3), "rc": proc.returncode, "submissions": len(pairs) * args.gens,
                                 "stderr": proc.stderr[-1500:] if proc.returncode not in (0, 1) else None}
                print(f"{label}: {wall:.1f} s rc={proc.returncode}", flush=True)
                save()
            if "s_one_device" in result and "s_all_devices" in result:
                result["scaling_all_over_one"] = round(result["s_one_device"]["wall_s"] / result["s_all_devices"]["wall_s"], 3)
                save()
        for label, cache in (("c_warm", tmp / "cache"), ("c_cold", None)):
            if label not in parts and label[0] not in parts:
                continue
            rows = []
            if label == "c_warm" and not any(p[:1] in ("a", "b") for p in parts):  # nothing has filled the cache yet
                for _, impl in pairs:
                    timed(tool + [str(impl), "--run", *gate, "--json"], env)
            for ref, impl in pairs:
                cold = tmp / f"cold-{impl.stem}"
                wall, proc = timed(tool + [str(impl), "--run", *gate, "--json"],
                                   {**env, "TRITON_CACHE_DIR": str(cache or cold)})
                try:
                    verdict = json.loads(proc.stdout)["files"][0]["runtime"]
                    verdict = {"verdict": verdict.get("verdict"), "phases_s": (verdict.get("verify") or {}).get("phases_s"),
                               "child_phases_s": (verdict.get("verify") or {}).get("child_phases_s")}
                except (ValueError, KeyError, IndexError, TypeError):
                    verdict = {"verdict": None, "stderr": proc.stderr[-800:]}
                # the process's start (imports, lint, the fork server's) and end, outside the two sides
                outside = wall - sum((verdict.get("phases_s") or {}).get(k, 0.0) for k in ("reference", "candidate"))
                rows.append({"case": ref.parent.name, "wall_s": round(wall, 3), "outside_sides_s": round(outside, 3), **verdict})
                print(f"{label} {ref.parent.name}: {wall:.1f} s ({outside:.1f} s outside the sides) {verdict.get('verdict')}", flush=True)
            walls = [r["wall_s"] for r in rows]
            result[label] = {"rows": rows, "median_s": statistics.median(walls), "max_s": max(walls),
                             "total_s": round(sum(walls), 3)}
            save()
    save()
    print(json.dumps({k: v for k, v in result.items() if k.startswith("ratio")} |
                     {k: result[k].get("median_s") for k in ("c_warm", "c_cold") if k in result}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
