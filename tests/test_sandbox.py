"""The sandbox around every child (protocol.ChildSpec, sandbox.py): each hostile
submission in fixtures/hostile/sandbox_*.py fails for its own named reason on the CPU
backend, in real child processes, and the parent survives, reports and leaves nothing
running. Where it matters, both ways the keeper can hold are tested: its own namespaces
and the fallback without them (TRITONLINT_NO_NAMESPACES=1)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import time
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT, requires_triton
from tritonlint.runtime_check.protocol import (crash_report, json_safe, load_case_result, load_marks, load_timing_result, open_untrusted,
                                               strict_json)
from tritonlint.runtime_check.sandbox import NO_NAMESPACES

GELU = ROOT / "cases" / "t1" / "gelu"
HOSTILE = FIXTURES / "hostile"
MODES = ["namespaces", "fallback"]


def _namespaces_allowed() -> bool:
    from tritonlint.runtime_check.backends import Backend
    from tritonlint.runtime_check.protocol import ChildSpec

    log = Path(os.environ.get("TMPDIR", "/tmp")) / f"tritonlint-probe-{os.getpid()}.log"
    with ChildSpec("tritonlint.runtime_check.options", (), Backend("cpu", False).child_env()).running(log) as proc:
        proc.wait()
    log.unlink()
    return "namespaces;" in proc.isolation and "no namespaces" not in proc.isolation


@pytest.fixture(params=MODES)
def mode(request, monkeypatch):
    if request.param == "fallback":
        monkeypatch.setenv(NO_NAMESPACES, "1")
    elif not _namespaces_allowed():
        pytest.skip("this kernel refuses the namespaces: only the fallback can be tested here")
    return request.param


def verify(impl, ref=GELU / "gelu_torch.py", seeds=2, timeout=60):
    from tritonlint.runtime_check.backends import get_backend
    from tritonlint.runtime_check.verify import verify as run

    return run(ref, impl, get_backend("cpu"), seeds=seeds, timeout=timeout)


def errors(result) -> list[str]:
    return [f["error_type"] for f in result["failures"]]


# -- the protocol, without child processes ------------------------------------------------------

def test_crash_report_names_unknown_signals(tmp_path):
    (tmp_path / "log").write_text("the end\n")
    assert crash_report(-99, tmp_path / "log").startswith("process killed by signal 99")
    assert crash_report(-6, tmp_path / "log").startswith("process killed by SIGABRT")


def test_reports_are_strict_json():
    value = {"a": float("nan"), "b": [float("inf"), -float("inf"), 1.5], "c": (None, "x")}
    assert json_safe(value) == {"a": "NaN", "b": ["Infinity", "-Infinity", 1.5], "c": [None, "x"]}
    json.loads(strict_json(value), parse_constant=lambda name: pytest.fail(f"{name} token in a report"))


@pytest.mark.parametrize("content,why", [
    ('{"implementation": {"avg_latency_ms": NaN}}', "not JSON"),
    ('{"implementation": {"avg_latency_ms": "1"}}', "avg_latency_ms"),
    ('{"implementation": {"avg_latency_ms": 1, "times_ms": ["x"]}}', "times_ms"),
    ('{"implementation": {"avg_latency_ms": 1}, "speedup": 100}', "unexpected keys"),
    ('{"error_type": 3, "error_msg": "x"}', "malformed failure"),
    ("[1, 2]", "not a JSON object"),
    ("\x00\xff garbage", "not JSON"),
])
def test_a_malformed_timing_result_is_a_corrupt_result(tmp_path, content, why):
    (tmp_path / "timing1.json").write_text(content, errors="surrogateescape")
    got = load_timing_result(tmp_path / "timing1.json")
    assert got["error_type"] == "CorruptResult" and why in got["error_msg"], got


def test_a_well_formed_timing_result_loads(tmp_path):
    ok = {"implementation": {"avg_latency_ms": 1.0, "times_ms": [1.0], "repeats": 1, "operators": {"aten::gelu": 0.5}}}
    (tmp_path / "timing1.json").write_text(json.dumps(ok))
    assert load_timing_result(tmp_path / "timing1.json") == ok


@pytest.mark.parametrize("content", ['[["start", 101.5], ["load", 102.0]]', '[["start", "late"]]', "[[1, 2]]",
                                     '{"start": 1}', "[[\"start\", NaN]]", "not json"])
def test_a_child_s_timeline_is_laps_from_the_parent_s_clock_or_nothing(tmp_path, content):
    """The child's own account of its milestones, a diagnostic: anything malformed is dropped whole."""
    (tmp_path / "marks1.json").write_text(content)
    want = {"start": 1.5, "load": 0.5} if content.startswith('[["start", 101') else {}
    assert load_marks(tmp_path / "marks1.json", since=100.0) == want
    os.mkfifo(tmp_path / "fifo")
    assert load_marks(tmp_path / "fifo", since=100.0) == {}  # not blocked on


@pytest.mark.parametrize("make", ["fifo", "symlink", "giant", "garbage", "wrong_types"])
def test_a_malformed_case_result_is_a_corrupt_result(tmp_path, make):
    import torch

    path = tmp_path / "1.pt"
    if make == "fifo":
        os.mkfifo(path)
    elif make == "symlink":
        os.symlink("/etc/passwd", path)
    elif make == "giant":
        with open(path, "wb") as f:
            f.truncate(1 << 40)
    elif make == "garbage":
        path.write_bytes(os.urandom(1000))
    else:
        torch.save({"ok": "yes", "outputs": 1}, path)
    t = time.monotonic()
    got = load_case_result(path)
    assert got["ok"] is False and got["error_type"] == "CorruptResult" and time.monotonic() - t < 5, got


def test_a_result_that_grows_while_it_is_read_is_read_to_its_size_when_opened(tmp_path):
    """A child still alive may append to a result the parent reads: the parent sees the file as it
    was when opened, however much is added, and still loads it."""
    import torch

    path = tmp_path / "1.pt"
    torch.save({"ok": True, "outputs": torch.arange(6.0), "inputs_after": []}, path)
    size = path.stat().st_size
    with open_untrusted(path, size) as f:
        with open(path, "ab") as grow:
            grow.write(b"\0" * (4 << 20))  # now four megabytes over the limit
        got = torch.load(f, weights_only=True)
        assert f.seek(0, os.SEEK_END) == size
        f.seek(0)
        assert len(f.read()) == size
    assert torch.equal(got["outputs"], torch.arange(6.0))
    assert load_case_result(path)["error_type"] == "CorruptResult"  # opened now, its end is not a zip's


# -- hostile submissions in real children -------------------------------------------------------

@requires_triton
def test_the_caller_s_secrets_do_not_reach_a_child(mode, monkeypatch):
    secret = "s3cr3t-value-that-must-not-leak"
    monkeypatch.setenv("TRITONLINT_TEST_SECRET", secret)
    r = verify(HOSTILE / "sandbox_env_secret.py", seeds=1)
    assert errors(r) == ["RuntimeError"]
    msg = r["failures"][0]["error_msg"]
    assert "SecretProbe" in msg and "'own': 'none'" in msg
    assert secret not in json.dumps(r)  # not in its own environment, nor the parent's /proc files
    names = msg.split("'env_names': ")[1]
    assert "HOME" in names and "TRITON_INTERPRET" in names and "PYTEST_CURRENT_TEST" not in names


@requires_triton
def test_a_child_that_kills_its_parent_is_a_crash_and_the_parent_reports(mode):
    r = verify(HOSTILE / "sandbox_kills_parent.py", seeds=2, timeout=30)
    assert errors(r) == ["Crash", "Crash"]  # the forged "3/3 passed" on its stdout is only its log's text
    why = r["failures"][0]["error_msg"]
    if mode == "namespaces":  # its parent is the namespace's init, which ignores signals from inside
        assert why.startswith("process exited with code 0"), why
    else:  # its parent is the keeper: killed, and the gate's parent reports that
        assert why.startswith("process killed by SIGKILL") or why.startswith("process exited with code 0"), why


@requires_triton
def test_a_rewritten_reference_is_refused(mode, tmp_path):
    from tritonlint.runtime_check.backends import get_backend
    from tritonlint.runtime_check.gate import run_gate
    from tritonlint.runtime_check.options import GateOptions

    shutil.copy(GELU / "gelu_torch.py", tmp_path / "gelu_torch.py")
    shutil.copy(HOSTILE / "sandbox_rewrites_reference.py", tmp_path / "gelu_triton_ascend_impl.py")
    before = (tmp_path / "gelu_torch.py").read_text()
    out = run_gate(str(tmp_path / "gelu_triton_ascend_impl.py"), True, False, get_backend("cpu"),
                   GateOptions(seeds=1, timeout=60))
    assert out["verdict"] == "incorrect", out
    if mode == "namespaces":  # the write itself is refused: the reference is as it was
        assert "Read-only file system" in out["why"] and (tmp_path / "gelu_torch.py").read_text() == before
    else:  # the write went through, and the parent's hash refuses the result
        assert out["why"].startswith("ReferenceTampered") and out["benchmark"] is None


@requires_triton
def test_a_planted_module_is_not_imported_by_the_next_child(mode):
    r = verify(HOSTILE / "sandbox_plants_module.py", seeds=3)
    assert errors(r) == ["Crash"] * 3  # each case's child planted and died; none found the plant
    assert all("exited with code 3" in f["error_msg"] for f in r["failures"])
    assert not (Path.cwd() / "tritonlint_planted.py").exists()


def _orphans(tag: str) -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if tag.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(int(pid))
        except OSError:
            pass
    return found


@requires_triton
@pytest.mark.exclusive("sandbox-orphan")  # every mode: the fixture's one marker file, and a scan of every process
def test_a_setsid_grandchild_dies_with_its_child(mode):
    MARKER, ORPHAN_TAG = "/tmp/tritonlint-sandbox-orphan-marker", "tritonlint-sandbox-orphan"  # the fixture's

    if os.path.exists(MARKER):
        os.remove(MARKER)
    try:
        r = verify(HOSTILE / "sandbox_setsid_grandchild.py", seeds=2)
        left = _orphans(ORPHAN_TAG)  # the gate has returned: nothing of the child may be running
        for pid in left:
            os.kill(pid, signal.SIGKILL)
        assert left == []
        assert r["passed_cases"] == 2  # its answer was right: what it left behind is what must go
        time.sleep(4)  # past the orphan's sleep: had it lived, it would have written by now
        assert not os.path.exists(MARKER)
    finally:
        if os.path.exists(MARKER):
            os.remove(MARKER)


@requires_triton
@pytest.mark.parametrize("kind", ["fifo", "symlink", "giant"])
def test_a_sabotaged_case_result_fails_its_case(mode, kind):
    t = time.monotonic()
    r = verify(HOSTILE / f"sandbox_result_{kind}.py", seeds=2, timeout=60)
    assert time.monotonic() - t < 50  # no read blocked on a FIFO or swallowed a terabyte
    assert errors(r)[0] == "CorruptResult", r["failures"]
    assert {"fifo": "not a regular file", "symlink": "cannot be opened as a plain file",
            "giant": "over the"}[kind] in r["failures"][0]["error_msg"]


@requires_triton
@pytest.mark.parametrize("kind", ["fifo", "giant"])
def test_a_sabotaged_timing_result_fails_its_shape(kind):
    from tritonlint.runtime_check.backends import get_backend
    from tritonlint.runtime_check.benchmark import benchmark

    t = time.monotonic()
    perf = benchmark(GELU / "gelu_torch.py", HOSTILE / f"sandbox_result_{kind}.py", get_backend("cpu"),
                     warmup=1, repeats=2, timeout=60)
    assert time.monotonic() - t < 50
    row = perf["per_shape_results"][0]
    assert row["error_type"] == "CorruptResult" and row["status"] == "fail", row


@requires_triton
def test_the_candidate_is_not_handed_the_reference(mode, tmp_path):
    """The runner child's command line names the submission and the parent's input tensors:
    never the reference task file."""
    (tmp_path / "argv.py").write_text(
        "import sys\nimport torch\n\nclass ModelNew(torch.nn.Module):\n"
        "    def forward(self, x):\n        raise RuntimeError('ARGV ' + ' '.join(sys.argv))\n")
    r = verify(tmp_path / "argv.py", seeds=1)
    msg = r["failures"][0]["error_msg"]
    assert "ARGV" in msg and "gelu_torch" not in msg and r["isolation"]


def test_a_triton_cache_folder_that_does_not_exist_yet_is_made_writable(tmp_path):
    """Found on the H100: TRITON_CACHE_DIR naming a folder not yet made stayed read-only in the child's
    namespace, so every kernel compile failed with 'Read-only file system'."""
    import os

    from tritonlint.runtime_check.backends import get_backend
    from tritonlint.runtime_check.verify import verify

    cache = tmp_path / "not-yet" / "triton-cache"
    old = os.environ.get("TRITON_CACHE_DIR")
    os.environ["TRITON_CACHE_DIR"] = str(cache)
    try:
        gelu = ROOT / "cases" / "t1" / "gelu"
        r = verify(gelu / "gelu_torch.py", gelu / "gelu_triton_ascend_impl.py", get_backend("cpu"), seeds=1, timeout=120)
    finally:
        if old is None:
            os.environ.pop("TRITON_CACHE_DIR")
        else:
            os.environ["TRITON_CACHE_DIR"] = old
    assert r["failures"] == [] and cache.is_dir()


@requires_triton
@pytest.mark.exclusive("killed-server-marker")  # the fixture's one marker file in /tmp, shared by every run here
def test_a_child_that_kills_the_fork_server_is_a_crash_and_the_gate_goes_on(monkeypatch):
    """Without namespaces a candidate can see the fork server (its keeper's parent) and kill it: the
    case is a Crash, the keeper's session is killed with it (nothing is left running), and the next
    case gets a new server (which it kills again: that case's result may or may not get out first).
    In namespaces the server is out of its sight."""
    marker = "/tmp/tritonlint-killed-server-marker"  # the fixture's
    monkeypatch.setenv(NO_NAMESPACES, "1")
    if os.path.exists(marker):
        os.remove(marker)
    try:
        r = verify(HOSTILE / "sandbox_kills_fork_server.py", seeds=1, timeout=60)
        assert errors(r) == ["Crash"] and "SIGKILL" in r["failures"][0]["error_msg"], r["failures"]
        time.sleep(4)  # past its linger: had it outlived the server, it would have written by now
        assert not os.path.exists(marker)
    finally:
        if os.path.exists(marker):
            os.remove(marker)
    ok = verify(GELU / "gelu_triton_ascend_impl.py", seeds=1)  # the gate still works: a new server
    assert ok["passed_cases"] == 1


@requires_triton
def test_the_candidate_s_child_started_early_sees_nothing_of_the_reference_s_run(mode, tmp_path, monkeypatch):
    """The candidate's child starts while the reference's child runs (runner.Early), and the
    submission looks for the reference's results and seeds where the gate keeps them, at import
    and at call: it finds none, since its module is read only once the reference's run is over.
    Where one is there (planted here), it finds it: the look itself works."""
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the gate's folders, and only this test's
    r = verify(HOSTILE / "sandbox_spies_on_reference.py")
    assert r["failures"] == [] and r["child_phases_s"]["candidate"].get("order") is not None, r["failures"]
    planted = tmp_path / "tritonlint-Model-planted"
    planted.mkdir()
    (planted / "1.pt").write_bytes(b"")
    r = verify(HOSTILE / "sandbox_spies_on_reference.py")
    assert errors(r)[0] == "RuntimeError" and "Model/1.pt" in r["failures"][0]["error_msg"], r["failures"]
