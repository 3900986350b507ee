"""Every reference solution in cases/ at seed-001 shapes on the accelerator:
correctness under seed 002's MERE/MARE rule and seed 001's two tolerance
readings, then reference and solution timed in this one process.

    python benchmarks/cases_gpu.py [--out DIR] [--warmup 10] [--repeats 100] [--only t1/gelu,...]

Timing: device events around each call, an L2-sized buffer zeroed before every
repeat (so no run starts with warm caches), median and spread; triton.testing.do_bench
on the same callables as a cross-check. Needs torch and triton only.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import torch

from tritonlint.runtime_check.compare import POLICIES, all_integer, compare_outputs, flatten_outputs
from tritonlint.runtime_check.score import score
from tritonlint.runtime_check.tasks import TIER_WEIGHTS, discover_cases, load_module

ROOT = Path(__file__).resolve().parent.parent


def to_device(values, device):
    return [v.to(device) if isinstance(v, torch.Tensor) else v for v in values]


def clone(values):
    return [v.clone() if isinstance(v, torch.Tensor) else v for v in values]


def event_times(fn, warmup: int, repeats: int, flush: torch.Tensor) -> list[float]:
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(repeats)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(repeats)]
    for i in range(repeats):
        flush.zero_()
        starts[i].record()
        fn()
        ends[i].record()
    torch.cuda.synchronize()
    return [s.elapsed_time(e) for s, e in zip(starts, ends)]


def spread(times: list[float]) -> dict:
    q = statistics.quantiles(times, n=10)
    return {"median_ms": statistics.median(times), "min_ms": min(times), "p20_ms": q[1], "p80_ms": q[7]}


def run_case(case, args, flush) -> dict:
    import triton.testing

    task = load_module(case.reference)
    sol = load_module(case.solution())
    torch.manual_seed(0)
    inputs = to_device(task.get_inputs(), "cuda")
    init = task.get_init_inputs()
    ref_model = task.Model(*init).cuda()
    new_model = sol.ModelNew(*init).cuda()
    inplace = list(getattr(task, "INPLACE_OUTPUTS", {}).values())
    ref_in, new_in = clone(inputs), clone(inputs)
    with torch.no_grad():
        ref = ref_model(*ref_in)
        out = new_model(*new_in)
    torch.cuda.synchronize()
    refs = flatten_outputs(ref) + [ref_in[i] for i in inplace]
    outs = flatten_outputs(out) + [new_in[i] for i in inplace]
    integer_inputs = all_integer(inputs)
    verdicts = {p: [v.to_json() for v in compare_outputs(refs, outs, p, integer_inputs)] for p in POLICIES}
    correct = {p: all(v["passed"] for v in vs) for p, vs in verdicts.items()}
    del ref, out, refs, outs, ref_in, new_in
    torch.cuda.empty_cache()

    timed_in = clone(inputs)
    with torch.no_grad():
        t_ref = spread(event_times(lambda: ref_model(*timed_in), args.warmup, args.repeats, flush))
        t_new = spread(event_times(lambda: new_model(*timed_in), args.warmup, args.repeats, flush))
        db_ref = triton.testing.do_bench(lambda: ref_model(*timed_in), return_mode="median")
        db_new = triton.testing.do_bench(lambda: new_model(*timed_in), return_mode="median")
    speedup = t_ref["median_ms"] / t_new["median_ms"]
    weight = TIER_WEIGHTS[case.tier]
    raw = score(speedup, correct["mere_mare"])
    return {
        "case": case.key, "tier": case.tier, "correct": correct, "verdicts": verdicts,
        "reference": t_ref, "solution": t_new, "speedup": speedup,
        "do_bench": {"reference_ms": db_ref, "solution_ms": db_new},
        "score": raw, "weighted_score": raw * weight,
        "score_if_correct": score(speedup, True) * weight,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="out")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=100)
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    import triton

    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    env = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
           "cuda": torch.version.cuda, "driver": None}
    try:
        import subprocess
        env["driver"] = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                       capture_output=True, text=True).stdout.strip()
    except OSError:
        pass
    print(json.dumps(env), flush=True)
    l2 = 256 * 1024 * 1024  # more than any current GPU's L2
    flush = torch.empty(l2, dtype=torch.int8, device="cuda")
    only = {s for s in args.only.split(",") if s}
    results = []
    for case in discover_cases(ROOT / "cases"):
        if only and case.key not in only:
            continue
        t0 = time.time()
        try:
            r = run_case(case, args, flush)
        except Exception as e:  # one case's failure is reported, the rest still run
            r = {"case": case.key, "tier": case.tier, "error": f"{type(e).__name__}: {e}"}
        r["wall_s"] = round(time.time() - t0, 1)
        results.append(r)
        brief = {k: r.get(k) for k in ("case", "correct", "speedup", "weighted_score", "error", "wall_s")}
        brief["ref_ms"] = r.get("reference", {}).get("median_ms")
        brief["sol_ms"] = r.get("solution", {}).get("median_ms")
        print(json.dumps(brief), flush=True)
    report = {"environment": env, "warmup": args.warmup, "repeats": args.repeats, "cases": results,
              "total_weighted_score": sum(r.get("weighted_score", 0.0) for r in results)}
    (out_dir / "cases_gpu.json").write_text(json.dumps(report, indent=2) + "\n")
    print("total weighted score", report["total_weighted_score"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
