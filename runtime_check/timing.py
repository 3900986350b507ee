"""Timing child: `python -m tritonlint.runtime_check.timing ...`. Both sides are timed
here, on the same inputs with the same cache flush. The event class and its
elapsed_time are taken before any submission code is imported, so a submission that
patches them changes nothing measured here."""

from __future__ import annotations

import argparse
import json
import statistics
import sys

import torch

from tritonlint.runtime_check.options import BASELINES, DEFAULTS
from tritonlint.runtime_check.protocol import CaseResult, failure

_EVENT = getattr(torch, "Event", None)
_ELAPSED = _EVENT.elapsed_time if _EVENT is not None else None
_PERF_COUNTER = __import__("time").perf_counter
_SYNC = {d: getattr(getattr(torch, d, None), "synchronize", None) for d in ("cuda", "npu")}  # before any submission
# Work left on the device after the end event (another stream, which the events do not see):
# the host-timed wait of a device-wide synchronize right after the end event, median over
# PROBE_CALLS extra calls after the timed ones (a synchronize inside the timed loop slows the
# launch-bound references), less the same wait on an idle device (~10 us on an H100), may not
# exceed this fraction of the median event time plus this floor.
UNTIMED_FRACTION, UNTIMED_FLOOR_MS, PROBE_CALLS = 0.1, 0.012, 15
FLUSH_BYTES = 256 * 1024 * 1024  # larger than any current device's L2


def _timer(device: str):
    if device == "cpu":  # the interpreter: wall time, only to exercise the pipeline
        return lambda fn: _wall(fn)
    mod = getattr(torch, device)
    event_cls = _EVENT if _EVENT is not None else mod.Event
    elapsed = _ELAPSED if _ELAPSED is not None else event_cls.elapsed_time

    sync = _SYNC.get(device) or mod.synchronize

    def run(fn, probe: bool = False):
        """(ms between the events around the call, its output, and with `probe` the ms the host
        then waits for every stream of the device to finish: ~0 for honest code)."""
        start = event_cls(device=device, enable_timing=True) if _EVENT is not None else event_cls(enable_timing=True)
        end = event_cls(device=device, enable_timing=True) if _EVENT is not None else event_cls(enable_timing=True)
        start.record()
        out = fn()
        end.record()
        end.synchronize()
        if not probe:
            return elapsed(start, end), out, 0.0
        t = _PERF_COUNTER()
        sync()
        return elapsed(start, end), out, (_PERF_COUNTER() - t) * 1e3

    def idle_wait() -> float:
        """The same synchronize wait with nothing queued: what honest code costs."""
        waits = []
        for _ in range(21):
            _, _, w = run(lambda: None, probe=True)
            waits.append(w)
        return statistics.median(waits)

    run.idle_wait = idle_wait
    return run


def _wall(fn, probe: bool = False):
    t = _PERF_COUNTER()
    out = fn()
    return (_PERF_COUNTER() - t) * 1e3, out, 0.0


class UntimedWork(Exception):
    pass


class BaselineCompileError(Exception):
    """torch.compile could not compile the reference: there is no baseline to time against."""


def compiled_call(model, inputs, after):
    """`--baseline compile`: a call of torch.compile(model) on `inputs`, compiled here by its
    first call, which counts as the first untimed warmup call (its output goes to `after`)."""
    compiled = torch.compile(model)
    try:
        after(compiled(*inputs))
    except Exception as e:
        why = str(e)[:2000]  # cut here, so the cut a failure makes at its start keeps what failed
        raise BaselineCompileError(f"torch.compile of the reference failed: {type(e).__name__}: {why}") from None
    return lambda: compiled(*inputs)


def _tensors(value) -> list:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v)]
    return []


def scrubber(inputs):
    """Zero a call's outputs once it is timed, so the memory the allocator hands out next
    (to the candidate, later in this process) holds no reference result. Outputs that share
    storage with an input are left alone."""
    keep = {t.untyped_storage().data_ptr() for t in _tensors(inputs)}

    def scrub(out) -> None:
        for t in _tensors(out):
            if t.untyped_storage().data_ptr() not in keep:
                t.detach().zero_()

    return scrub


def measure(fn, device: str, warmup: int, repeats: int, after=None) -> tuple[dict, object]:
    """Median of `repeats` timed calls after `warmup`; also the last call's output.
    `after(out)` runs on every output outside the timed region."""
    flush = torch.empty(FLUSH_BYTES if device != "cpu" else 1 << 20, dtype=torch.int8, device=device)
    timer = _timer(device)
    mod = getattr(torch, device, None)
    for _ in range(warmup):
        out = fn()
        if after:
            after(out)
    if device != "cpu":
        mod.synchronize()
        mod.reset_peak_memory_stats()
    times, out = [], None
    for _ in range(repeats):
        flush.zero_()
        ms, out, _ = timer(fn)
        times.append(ms)
        if after:
            after(out)
    waits = []
    for _ in range(PROBE_CALLS if device != "cpu" else 0):  # after the timed calls, so they stay as they were
        flush.zero_()
        _, probe_out, wait = timer(fn, probe=True)
        waits.append(wait)
        if after:
            after(probe_out)
    q = statistics.quantiles(times, n=10) if len(times) >= 2 else [times[0]] * 9
    peak = mod.max_memory_allocated() / 2**20 if device != "cpu" else 0.0
    return {"avg_latency_ms": statistics.median(times), "min_ms": min(times), "p20_ms": q[1], "p80_ms": q[7],
            "mean_ms": statistics.fmean(times), "peak_memory_mb": round(peak, 2), "repeats": repeats,
            "times_ms": [round(t, 6) for t in times], "sync_wait_ms": statistics.median(waits) if waits else 0.0,
            "idle_sync_wait_ms": timer.idle_wait() if waits else 0.0}, out


def operators(fn, device: str, calls: int = 5, top: int = 20) -> dict[str, float]:
    """Seed 002's `operators`: {operator: device ms per call}, from the torch profiler,
    the `top` most expensive. On the CPU backend, host time (the interpreter's)."""
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU]
    if device == "cuda":
        activities.append(ProfilerActivity.CUDA)
    elif device != "cpu" and hasattr(ProfilerActivity, "PrivateUse1"):  # torch_npu registers as PrivateUse1
        activities.append(ProfilerActivity.PrivateUse1)
    with profile(activities=activities) as prof:
        for _ in range(calls):
            fn()
        if device != "cpu":
            getattr(torch, device).synchronize()
    per_op = {}
    for evt in prof.key_averages():
        if device == "cpu":
            us = evt.self_cpu_time_total
        else:
            us = getattr(evt, "self_device_time_total", None)
            us = getattr(evt, "self_cuda_time_total", 0) if us is None else us
        if us > 0:
            per_op[evt.key] = round(us / 1e3 / calls, 6)
    return dict(sorted(per_op.items(), key=lambda kv: -kv[1])[:top])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--task", required=True)
    ap.add_argument("--impl", required=True)
    ap.add_argument("--inputs", required=True)
    ap.add_argument("--device", required=True)
    ap.add_argument("--warmup", type=int, default=DEFAULTS.warmup)
    ap.add_argument("--repeats", type=int, default=DEFAULTS.repeats)
    ap.add_argument("--skip_framework", action="store_true")
    ap.add_argument("--baseline", choices=BASELINES, default=DEFAULTS.baseline, help="time the reference as written or compiled")
    ap.add_argument("--operators", action="store_true", help="add the torch profiler's per-operator breakdown")
    ap.add_argument("--out", required=True)
    ap.add_argument("--outputs", help="save the candidate's output of the last timed call here")
    args = ap.parse_args(argv)
    from tritonlint.runtime_check.child import _portable
    from tritonlint.runtime_check.tasks import load_module

    payload = torch.load(args.inputs, weights_only=True)
    inputs = [v.to(args.device) if isinstance(v, torch.Tensor) else v for v in payload["inputs"]]
    result: dict = {}
    try:
        with torch.no_grad():
            sides = [] if args.skip_framework else [("framework", args.task, "Model")]
            for side, path, cls in sides + [("implementation", args.impl, "ModelNew")]:
                torch.manual_seed(payload.get("seed", 0))
                model = getattr(load_module(path), cls)(*payload["init"])
                model = model.to(args.device) if isinstance(model, torch.nn.Module) else model
                framework = side == "framework"
                after = scrubber(inputs) if framework else None  # scrubs the profiled calls' leftovers too
                call, warmup = (lambda m=model: m(*inputs)), args.warmup
                if framework and args.baseline == "compile":
                    call, warmup = compiled_call(model, inputs, after), max(args.warmup - 1, 0)
                ops = operators(call, args.device) if args.operators and framework else None
                result[side], last = measure(call, args.device, warmup, args.repeats, after=after)
                if not framework:
                    wait, event = result[side]["sync_wait_ms"], result[side]["avg_latency_ms"]
                    wait -= result[side]["idle_sync_wait_ms"]
                    if wait > UNTIMED_FRACTION * event + UNTIMED_FLOOR_MS:
                        raise UntimedWork(f"after the end event the device stayed busy {wait:.4f} ms (median, idle wait subtracted), against "
                                          f"{event:.4f} ms between the events: work on a stream the events do not see")
                    if args.outputs:
                        torch.save(CaseResult(ok=True, outputs=_portable(last)), args.outputs)
                    ops = operators(call, args.device) if args.operators else None
                if ops is not None:
                    result[side]["operators"] = ops
    except BaseException as e:
        result = failure(type(e).__name__, str(e))
    with open(args.out, "w") as f:
        json.dump(result, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
