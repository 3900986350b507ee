"""One child per side for all cases, and what happens when a case hangs or kills it;
the exact and three-term policies; the hidden-state probe; the private cache; the
profiler's operator breakdown. Real child processes throughout."""

from __future__ import annotations

import os
import textwrap
import time

import pytest
import torch

from conftest import requires_triton
from tritonlint.runtime_check.backends import Backend
from tritonlint.runtime_check.compare import compare_tensor
from tritonlint.runtime_check.protocol import CaseInput, case_input
from tritonlint.runtime_check.runner import run_side
from tritonlint.runtime_check.verify import verify

CPU = Backend("cpu", times=False)  # what get_backend("cpu") gives; the tests that run it are marked requires_triton

PID_MODEL = textwrap.dedent("""
    import os, time
    import torch

    PROCESS = int.from_bytes(os.urandom(6), "little")  # one per process: in its own pid namespace every child is pid 2

    class Model(torch.nn.Module):
        def forward(self, x):
            if int(x) == 2:
                os.abort()
            if int(x) == 3:
                time.sleep(600)
            if int(x) == 6:
                os._exit(0)
            return torch.tensor([PROCESS])
""")


def write_cases(folder, values):
    folder.mkdir()
    for i, v in enumerate(values, start=1):
        torch.save(CaseInput(init=[], inputs=[torch.tensor(v)], seed=0), case_input(folder, i))


@requires_triton
def test_one_process_runs_every_case_of_a_side(tmp_path):
    (tmp_path / "m.py").write_text(PID_MODEL)
    write_cases(tmp_path / "in", [1, 4, 5])
    results = run_side(CPU, tmp_path / "m.py", "Model", tmp_path / "in", [1, 2, 3], timeout=60)
    assert all(r["ok"] for r in results.values())
    assert len({int(r["outputs"]) for r in results.values()}) == 1  # one process id


@requires_triton
def test_a_crash_or_hang_costs_only_its_own_case(tmp_path):
    (tmp_path / "m.py").write_text(PID_MODEL)
    write_cases(tmp_path / "in", [1, 2, 3, 4, 5, 6, 7])
    r = run_side(CPU, tmp_path / "m.py", "Model", tmp_path / "in", list(range(1, 8)), timeout=8)
    assert [r[i]["ok"] for i in range(1, 8)] == [True, False, False, True, True, False, True]
    assert r[2]["error_type"] == "Crash" and "SIGABRT" in r[2]["error_msg"]
    assert r[3]["error_type"] == "Timeout"
    assert r[6]["error_type"] == "Crash" and "exited with code 0" in r[6]["error_msg"]
    pids = [int(r[i]["outputs"]) for i in (1, 4, 5, 7)]
    assert pids[0] != pids[1] == pids[2] != pids[3]  # a new child after each death, shared otherwise


WAITS_FOR_PARENT = textwrap.dedent("""
    import os, time
    import torch

    class Model(torch.nn.Module):
        def forward(self, x):  # case k waits for the parent to have seen case k - 1's result
            if int(x) > 1:
                deadline = time.monotonic() + 30
                while not os.path.exists(os.path.join(SEEN, str(int(x) - 1))) and time.monotonic() < deadline:
                    time.sleep(0.01)
            return torch.tensor([float(os.path.exists(os.path.join(SEEN, str(int(x) - 1))))])
""")


@requires_triton
def test_each_result_reaches_the_parent_while_the_child_goes_on(tmp_path):
    """on_result is called as each result comes in, not after the child: the child's next case
    sees that it was (verify judges case k while the candidate runs case k + 1)."""
    seen = tmp_path / "seen"
    seen.mkdir()
    (tmp_path / "m.py").write_text(f"SEEN = {str(seen)!r}\n" + WAITS_FOR_PARENT)
    write_cases(tmp_path / "in", [1, 2, 3])
    calls = []

    def on_result(idx, result):
        calls.append(idx)
        (seen / str(idx)).touch()
        if idx == 2:
            raise RuntimeError("a callback that fails loses nothing")

    r = run_side(CPU, tmp_path / "m.py", "Model", tmp_path / "in", [1, 2, 3], timeout=60, on_result=on_result)
    assert calls == [1, 2, 3]
    assert [float(r[i]["outputs"]) for i in (2, 3)] == [1.0, 1.0] and r[2]["ok"]


def test_exact_policy_is_bit_for_bit():
    a = torch.randn(1000)
    assert compare_tensor(a, a.clone(), "exact").passed
    b = a.clone()
    b[7] = torch.nextafter(b[7], torch.tensor(10.0))
    v = compare_tensor(a, b, "exact")
    assert not v.passed and v.stats["mismatched"] == 1 and v.worst[0]["index"] == [7]
    assert compare_tensor(a, b, "mere_mare").passed  # one ulp passes every tolerance policy
    assert not compare_tensor(a, a.half(), "exact").passed  # a cast is not a copy
    nan = torch.tensor([float("nan"), 1.0])
    assert compare_tensor(nan, nan.clone(), "exact").passed


def test_three_term_policy_each_term_can_fail():
    torch.manual_seed(0)
    ref = torch.randn(10_000)
    t = 2.0**-13
    one_artefact = ref.clone()
    one_artefact[0] = ref[0] + 20 * t * max(abs(float(ref[0])), t)  # past MARE (10 t), inside the cap (100 t)
    assert not compare_tensor(ref, one_artefact, "mere_mare").passed
    assert compare_tensor(ref, one_artefact, "three_term").passed
    beyond_cap = ref.clone()
    beyond_cap[0] = ref[0] + 200 * t * max(abs(float(ref[0])), t)
    assert compare_tensor(ref, beyond_cap, "three_term").check == "three_term"
    assert not compare_tensor(ref, beyond_cap, "three_term").passed
    spread = ref * (1 + 2 * t * (torch.arange(10_000) % 5 == 0))  # 20 % unmatched, MERE just under t
    v = compare_tensor(ref, spread, "three_term")
    assert not v.passed and v.stats["matched_fraction"] == pytest.approx(0.8, abs=1e-3) and v.stats["mere"] < t


STATEFUL = textwrap.dedent("""
    import torch

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = torch.nn.Parameter(torch.randn(8))
            self.register_buffer("calls", torch.zeros(1))

        def forward(self, x):
            self.calls += 1
            return x * self.weight

    def get_inputs():
        return [torch.randn(4, 8)]

    def get_init_inputs():
        return []
""")


@requires_triton
@pytest.mark.parametrize("candidate,error", [
    ("ModelNew = Model", None),
    ("class ModelNew(Model):\n    def forward(self, x):\n        return x * self.weight\n", "'calls' is not bit-identical"),
    ("class ModelNew(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
     "        self.w = torch.nn.Parameter(torch.randn(8))\n    def forward(self, x):\n        return x * self.w\n",
     "'weight' has no counterpart"),
])
def test_hidden_state_probe(tmp_path, candidate, error):
    (tmp_path / "task.py").write_text(STATEFUL)
    (tmp_path / "impl.py").write_text(STATEFUL + "\n" + candidate)
    plain = verify(tmp_path / "task.py", tmp_path / "impl.py", CPU, seeds=2, timeout=60)
    assert plain["passed_cases"] == 2  # same seed, same weights: the outputs match either way
    probed = verify(tmp_path / "task.py", tmp_path / "impl.py", CPU, seeds=2, timeout=60, probe_state=True)
    if error is None:
        assert probed["passed_cases"] == 2
    else:
        assert probed["passed_cases"] == 0 and probed["failures"][0]["error_type"] == "HiddenStateMismatch"
        assert error in probed["failures"][0]["error_msg"]


CACHE_SPY = textwrap.dedent("""
    import os
    import torch

    class Model(torch.nn.Module):
        def forward(self, x):
            return torch.tensor(list(os.environ.get("TRITON_CACHE_DIR", "").encode()) or [0])

    ModelNew = Model

    def get_inputs():
        return [torch.zeros(1)]

    def get_init_inputs():
        return []
""")


@requires_triton
def test_fresh_cache_reaches_the_children(tmp_path):
    (tmp_path / "task.py").write_text(CACHE_SPY)
    write_cases(tmp_path / "in", [0.0])
    cache = tmp_path / "private-cache"
    seen = run_side(CPU, tmp_path / "task.py", "Model", tmp_path / "in", [1], 60, env=CPU.child_env(str(cache)))[1]
    assert bytes(seen["outputs"].tolist()).decode() == str(cache)
    r = verify(tmp_path / "task.py", tmp_path / "task.py", CPU, seeds=1, timeout=60, cache_dir=str(cache))
    assert r["passed_cases"] == 1 and r["environment"]["triton_cache_dir"] == str(cache)
    assert "driver" in r["environment"] and r["environment"]["device"]


_HOLD = """
import sys, time
from tritonlint.runtime_check.backends import Backend
from tritonlint.runtime_check.device import timing_lock
with timing_lock(Backend("cuda", True)):
    print(time.monotonic(), flush=True)
    time.sleep(0.6)
    print(time.monotonic(), flush=True)
"""


def test_timings_on_one_device_never_overlap_across_processes(tmp_path, monkeypatch):
    """eval --workers above the device count: each worker's timed run holds the device's lock."""
    import subprocess
    import sys

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3")
    procs = [subprocess.Popen([sys.executable, "-c", _HOLD], stdout=subprocess.PIPE, text=True) for _ in range(3)]
    spans = sorted(tuple(map(float, p.communicate(timeout=60)[0].split())) for p in procs)
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:])), spans  # one after the other
    assert [p.name for p in tmp_path.iterdir()] == ["tritonlint-timing-cuda_3.lock"]


def test_children_share_the_caller_s_triton_cache_and_the_result_names_it(monkeypatch, tmp_path):
    """Each child's HOME is private and goes with it: Triton's default cache under HOME would make
    every child compile from scratch, and verify's environment named a folder no child used."""
    from tritonlint.runtime_check.backends import Backend

    monkeypatch.delenv("TRITON_CACHE_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert Backend("cpu", False).child_env()["TRITON_CACHE_DIR"] == str(tmp_path / ".triton" / "cache")
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "mine"))
    assert Backend("cpu", False).child_env()["TRITON_CACHE_DIR"] == str(tmp_path / "mine")
    assert Backend("cpu", False).child_env(str(tmp_path / "fresh"))["TRITON_CACHE_DIR"] == str(tmp_path / "fresh")


def test_the_fork_server_sees_a_step_done_at_its_wake_up_even_before_its_thread_has_exited(monkeypatch):
    """A spawn that waits for the server's idle step is forked when the step's wake-up comes: the
    step counts as done from then, though its thread may take longer to exit (here 0.5 s). The
    wake-up is the only one the server's loop gets for it: had it looked at the thread alone, the
    spawn would have waited for some other event."""
    import select

    from tritonlint.runtime_check import zygote

    wake_r, wake_w = os.pipe()
    real_write = os.write

    def late(fd, data):  # the thread lingers after its wake-up
        n = real_write(fd, data)
        if fd == wake_w:
            time.sleep(0.5)
        return n

    monkeypatch.setattr(zygote.os, "write", late)
    try:
        idle = zygote._Idle([lambda: None], wake_w)
        idle.poll()
        assert select.select([wake_r], [], [], 10)[0], "no wake-up"
        assert not idle.busy() and idle.ready(warm=True)
    finally:
        os.close(wake_r)
        os.close(wake_w)


@requires_triton
def test_an_early_child_that_died_before_its_order_is_replaced_and_its_cases_still_pass():
    """The candidate's child started early (runner.Early) and died before it was given its
    arguments (killed here; a device that would not start, an OOM kill): the side starts a child
    afresh, in the same folder, and no case is charged for it."""
    from conftest import ROOT
    from tritonlint.runtime_check.reference import run_reference
    from tritonlint.runtime_check.runner import Early

    gelu = ROOT / "cases" / "t1" / "gelu"
    run = run_reference(gelu / "gelu_torch.py", CPU, [1, 2], 60, small=True, state=False, env=CPU.child_env())
    early = Early(CPU, "ModelNew")
    try:
        os.kill(early.proc.pid, 9)
        early.proc.wait(30)
        results = run_side(CPU, gelu / "gelu_triton_ascend_impl.py", "ModelNew", run.folder, [1, 2], 60, early=early)
    finally:
        early.close()
        run.cleanup()
    assert [r.get("ok") for r in results.values()] == [True, True], results


def test_a_fork_server_whose_parent_is_gone_removes_its_own_folder():
    """An eval or Ray worker killed without its exit handlers never closes its fork server: the
    server sees its stdin end, stops its children and removes its folder itself."""
    from tritonlint.runtime_check.zygote import Zygote

    server = Zygote(Backend("cpu", False).child_env())
    assert server.box.is_dir()
    server.proc.stdin.close()  # what a killed parent leaves it
    server.proc.wait(timeout=120)
    assert not server.box.exists()
