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
        assert {"build", "go", "timing"} <= set(r["verify"]["child_phases_s"]["candidate"]) and r["verify"]["phases_s"]["timing"] > 0
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
def test_a_kernel_that_sees_it_is_timed_fails_the_call_after_its_timed_ones(backend):
    """It hands back an empty tensor once timed: on a GPU the allocator gives it the memory of an
    earlier call, which holds the timed case's answer, not the answer for the case it is checked on."""
    r = gate(backend, FIXTURES / "hostile" / "gelu_timing_aware.py")
    row = r["benchmark"]["per_shape_results"][0]
    assert (row["status"], row["error_type"]) == ("fail", "TimedOutputMismatch") and r["verdict"] == "incorrect"
    assert "after the timed ones, on case 2's inputs" in row["error_msg"]


def test_the_wall_bound():
    from tritonlint.runtime_check.benchmark import wall_bound

    honest = {"avg_latency_ms": 1.0, "times_ms": [1.0] * 50, "wall_ms": 120.0}
    assert wall_bound(honest, 5, 50) is None
    assert wall_bound({**honest, "avg_latency_ms": 0.001, "wall_ms": 2000.0}, 5, 50)["error_type"] == "TimingRefused"
    assert "claims 50.0 ms" in wall_bound({**honest, "wall_ms": 10.0}, 5, 50)["error_msg"]  # more than it waited


TIMED = "os.path.exists(os.path.join(sys.argv[sys.argv.index('--out') + 1], 'ready'))"  # its timed phase has begun


def hostile(tmp_path, name: str, when_timed: str, at_import: str = "") -> str:
    """The case's GELU, doing `when_timed` once its timed phase has begun (or `at_import`)."""
    src = (GELU / "gelu_triton_ascend_impl.py").read_text()
    src = src.replace("import torch\n", f"import json\nimport os\nimport sys\nimport time\nimport torch\n{at_import}\n", 1)
    src = src.replace("    def forward(self, x):\n", f"    def forward(self, x):\n        if {TIMED}:\n            {when_timed}\n", 1)
    path = tmp_path / f"gelu_{name}.py"
    path.write_text(src)
    return str(path)


@requires_triton
@pytest.mark.parametrize("name,when_timed,error", [
    ("hangs_when_timed", "time.sleep(3600)", "Timeout"),
    ("dies_when_timed", "os._exit(3)", "Crash"),
    # its record, written while the parent waits to say go: the child cannot time before it is told to
    ("writes_times_early", "pass", "TimingRefused"),
    # a go of its own, a link the parent would follow to create a file of the child's choosing
    ("makes_its_own_go", "pass", "TimingRefused"),
    # the reference's side in its record: the candidate's times are the only ones it may give
    ("claims_the_reference_s_side", "open(os.path.join(OUT, 'timing1.json'), 'w').write("
                                    "json.dumps({'framework': {'avg_latency_ms': 1.0}})); os._exit(0)", "CorruptResult"),
])
def test_a_timed_phase_that_hangs_dies_or_jumps_the_gun_fails_the_shape(backend, tmp_path, name, when_timed, error):
    at_import = "OUT = sys.argv[sys.argv.index('--out') + 1]\n"
    if name == "writes_times_early":
        at_import += ("open(os.path.join(OUT, 'timing1.json'), 'w').write(json.dumps("
                      "{'implementation': {'avg_latency_ms': 0.001, 'times_ms': [0.001] * 3, 'repeats': 3}}))\n")
    if name == "makes_its_own_go":
        at_import += f"os.symlink({str(tmp_path / 'planted')!r}, os.path.join(OUT, 'go'))\n"
    r = gate(backend, hostile(tmp_path, name, when_timed, at_import), timeout=20)
    assert r["verify"]["passed_cases"] == 2, r["verify"]["failures"]  # right when verified
    row = r["benchmark"]["per_shape_results"][0]
    assert (row["status"], row["error_type"]) == ("fail", error), row
    assert not (tmp_path / "planted").exists()  # the parent followed no link of the child's
