"""The timed phase: each side is timed in its own child after its cases (the candidate's after
its census too), on the parent's go, under the device's timing lock and the parent's clock
(runner.Timed). Run on the CPU interpreter with a backend that times (its times mean nothing,
the protocol is the same); the GPU run of the same tests is in the device notes."""

from __future__ import annotations

import dataclasses
import importlib.util

import pytest

from conftest import FIXTURES, ROOT, requires_triton
from tritonlint.runtime_check.backends import Backend
from tritonlint.runtime_check.options import DEFAULTS

GELU = ROOT / "cases" / "t1" / "gelu"
# The interpreter, timed: the protocol without a device; and the GPU where there is one.
BACKENDS = [Backend("cpu", True)] + ([Backend("cuda", True)] if importlib.util.find_spec("torch")
                                     and __import__("torch").cuda.is_available() else [])


@pytest.fixture(params=BACKENDS, ids=lambda b: b.name)
def backend(request):
    return request.param


def gate(backend, impl, refs=None, **opts):
    from tritonlint.runtime_check.gate import run_gate

    opts = dataclasses.replace(DEFAULTS, **{"seeds": 2, "warmup": 1, "repeats": 3, "timeout": 120, **opts})
    return run_gate(str(impl), True, False, backend, opts, refs)


@requires_triton
def test_each_side_is_timed_in_its_own_child_and_the_reference_once_per_run(backend):
    from tritonlint.runtime_check.reference import References

    refs = References()
    try:
        first, second = (gate(backend, GELU / "gelu_triton_ascend_impl.py", refs) for _ in range(2))
    finally:
        refs.close()
    for r in (first, second):
        assert r["verdict"] == "passed", r["why"]
        row = r["benchmark"]["per_shape_results"][0]
        assert row["status"] == "pass" and row["speedup_vs_torch"] > 0
        impl = row["implementation"]
        # the parent's clock saw the timed calls it was told of: 1 warmup and 3 repeats
        assert sum(impl["times_ms"]) <= impl["wall_ms"] and len(impl["times_ms"]) == 3
        assert "timing" in r["verify"]["child_phases_s"]["candidate"] and r["verify"]["phases_s"]["timing"] > 0
    assert "timing" in first["verify"]["child_phases_s"]["reference"]  # the reference's child timed Model
    assert second["verify"]["reference_reused"]  # and the second submission reused that timing
    assert second["benchmark"]["framework"]["avg_latency_ms"] == first["benchmark"]["framework"]["avg_latency_ms"]


@requires_triton
def test_a_census_refusal_is_never_timed(backend):
    r = gate(backend, FIXTURES / "census" / "gelu_hidden_torch.py")
    assert r["verdict"] == "degraded" and r["benchmark"] is None
    assert "timing" not in r["verify"]["child_phases_s"]["candidate"] and "timing" not in r["verify"]["phases_s"]


@requires_triton
def test_a_rewritten_timing_record_is_refused_by_the_parent_s_clock(backend):
    """It claims 1/1000 of the 20 ms each call spends: the parent waited far longer than that."""
    r = gate(backend, FIXTURES / "hostile" / "gelu_forges_timing.py", repeats=20)
    row = r["benchmark"]["per_shape_results"][0]
    assert (row["status"], row["error_type"]) == ("fail", "TimingRefused"), row
    assert "parent's clock" in row["error_msg"] and r["verdict"] == "untimed_work"


@requires_triton
def test_a_kernel_that_sees_it_is_timed_fails_its_last_timed_call(backend):
    r = gate(backend, FIXTURES / "hostile" / "gelu_timing_aware.py")
    row = r["benchmark"]["per_shape_results"][0]
    assert (row["status"], row["error_type"]) == ("fail", "TimedOutputMismatch") and r["verdict"] == "incorrect"


def test_the_wall_bound():
    from tritonlint.runtime_check.benchmark import wall_bound

    honest = {"avg_latency_ms": 1.0, "times_ms": [1.0] * 50, "wall_ms": 120.0}
    assert wall_bound(honest, 5, 50) is None
    assert wall_bound({**honest, "avg_latency_ms": 0.001, "wall_ms": 2000.0}, 5, 50)["error_type"] == "TimingRefused"
    assert "claims 50.0 ms" in wall_bound({**honest, "wall_ms": 10.0}, 5, 50)["error_msg"]  # more than it waited
