"""The timer of a child's timed phase (child.py --time): each side is timed in its own
child, after its cases, on case 1's inputs with the same cache flush, while the parent
holds the device's timing lock and its own clock (runner.Timed). The event class and
its elapsed_time are taken when the fork server imports this module, before any
submission code exists, so a submission that patches them changes nothing measured
here; a submission that rewrites the record is caught by the parent's clock
(benchmark.wall_bound)."""

from __future__ import annotations

import statistics

import torch

_EVENT = getattr(torch, "Event", None)
_ELAPSED = _EVENT.elapsed_time if _EVENT is not None else None
_PERF_COUNTER = __import__("time").perf_counter
_SYNC = {d: getattr(getattr(torch, d, None), "synchronize", None) for d in ("cuda", "npu")}  # before any submission
# Work left on the device after the end event (another stream, which the events do not see):
# the host-timed wait of a device-wide synchronize right after the end event, median over
# PROBE_CALLS extra calls after the timed ones (a synchronize inside the timed loop slows the
# launch-bound references), less the median of the same wait on an idle device (~6-10 us on an
# H100), each idle probe right after a call's (a busy host moves both alike), may not exceed
# this fraction of the median event time plus this floor.
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

    return run


def _wall(fn, probe: bool = False):
    t = _PERF_COUNTER()
    out = fn()
    return (_PERF_COUNTER() - t) * 1e3, out, 0.0


class UntimedWork(Exception):
    pass


class BaselineCompileError(Exception):
    """torch.compile could not compile the reference: there is no baseline to time against."""


def compiled_call(model, inputs):
    """`--baseline compile`: a call of torch.compile(model) on `inputs`, compiled here by its
    first call, which counts as the first untimed warmup call."""
    compiled = torch.compile(model)
    try:
        compiled(*inputs)
    except Exception as e:
        why = str(e)[:2000]  # cut here, so the cut a failure makes at its start keeps what failed
        raise BaselineCompileError(f"torch.compile of the reference failed: {type(e).__name__}: {why}") from None
    return lambda: compiled(*inputs)


def prepare(model, inputs: list, framework: bool, baseline: str, warmup: int):
    """(call, warmup calls left) for timing one side: the reference (`framework`) as written or
    compiled (`baseline`: the compile is the first warmup call); the candidate as written."""
    if framework and baseline == "compile":
        return compiled_call(model, inputs), max(warmup - 1, 0)
    return (lambda: model(*inputs)), warmup


def check_untimed(times: dict) -> None:
    """UntimedWork when the candidate's device stayed busy after its end event (measure's probe)."""
    wait, event = times["sync_wait_ms"] - times["idle_sync_wait_ms"], times["avg_latency_ms"]
    if wait > UNTIMED_FRACTION * event + UNTIMED_FLOOR_MS:
        raise UntimedWork(f"after the end event the device stayed busy {wait:.4f} ms (median, idle wait subtracted), against "
                          f"{event:.4f} ms between the events: work on a stream the events do not see")


def measure(fn, device: str, warmup: int, repeats: int) -> dict:
    """Median of `repeats` timed calls after `warmup`."""
    flush = torch.empty(FLUSH_BYTES if device != "cpu" else 1 << 20, dtype=torch.int8, device=device)
    timer = _timer(device)
    mod = getattr(torch, device, None)
    for _ in range(warmup):
        fn()
    if device != "cpu":
        mod.synchronize()
        mod.reset_peak_memory_stats()
    times = []
    for _ in range(repeats):
        flush.zero_()
        ms, _, _ = timer(fn)
        times.append(ms)
    waits, idle = [], []
    for _ in range(PROBE_CALLS if device != "cpu" else 0):  # after the timed calls, so they stay as they were
        flush.zero_()
        waits.append(timer(fn, probe=True)[2])
        idle.append(timer(lambda: None, probe=True)[2])  # the same wait with nothing queued: what honest code costs
    q = statistics.quantiles(times, n=10) if len(times) >= 2 else [times[0]] * 9
    peak = mod.max_memory_allocated() / 2**20 if device != "cpu" else 0.0
    return {"avg_latency_ms": statistics.median(times), "min_ms": min(times), "p20_ms": q[1], "p80_ms": q[7],
            "mean_ms": statistics.fmean(times), "peak_memory_mb": round(peak, 2), "repeats": repeats,
            "times_ms": [round(t, 6) for t in times], "sync_wait_ms": statistics.median(waits) if waits else 0.0,
            "idle_sync_wait_ms": statistics.median(idle) if idle else 0.0}


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
