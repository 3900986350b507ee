"""One device shared by the gate's processes (runtime_check/device.py): while one timed phase holds
it, every other registered child and everything it started is stopped, and continued after. Real
process trees, real signals, real flocks."""

import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from tritonlint.runtime_check import device
from tritonlint.runtime_check.backends import Backend

CPU = Backend("cpu", False)

# A process that starts one that leaves its session (setsid), both counting into files as fast as they can.
_TREE = """
import os, sys, time
folder = sys.argv[1]
who = "parent"
if os.fork() == 0:
    os.setsid()
    who = "escaped"
n = 0
while True:
    n += 1
    if n % 1000 == 0:
        with open(os.path.join(folder, who + ".tmp"), "w") as f:
            f.write(str(n))
        os.replace(os.path.join(folder, who + ".tmp"), os.path.join(folder, who))
"""


@pytest.fixture(autouse=True)
def own_tmp(tmp_path, monkeypatch):
    """The lock and the users' folder of this test alone."""
    (tmp_path / "t").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "t"))
    monkeypatch.setenv("TMPDIR", str(tmp_path / "t"))


def _tree(folder: Path):
    folder.mkdir()
    proc = subprocess.Popen([sys.executable, "-c", _TREE, str(folder)])
    deadline = time.monotonic() + 30
    while not all((folder / w).exists() for w in ("parent", "escaped")):
        assert time.monotonic() < deadline, "the process tree did not start"
        time.sleep(0.01)
    return proc


def _counts(folder: Path) -> dict[str, int]:
    return {w: int((folder / w).read_text() or 0) for w in ("parent", "escaped")}


def _moving(folder: Path) -> dict[str, bool]:
    before = _counts(folder)
    time.sleep(0.3)
    after = _counts(folder)
    return {w: after[w] != before[w] for w in before}


def _pids(proc) -> list[int]:
    return device._tree(device._processes(), [proc.pid])


def _kill(*procs) -> None:
    for p in procs:
        for pid in _pids(p):
            os.kill(pid, 9)
        p.wait()


def test_a_timed_phase_stops_every_other_user_of_the_device_and_continues_it(tmp_path):
    other, timer = _tree(tmp_path / "other"), _tree(tmp_path / "timer")
    try:
        assert len(_pids(other)) == 2  # the one that left its session is still found, by parentage
        with device.user(CPU, other.pid), device.user(CPU, timer.pid):
            assert _moving(tmp_path / "other") == {"parent": True, "escaped": True}
            with device.timing_lock(CPU, timer.pid):
                assert {device._state(p) for p in _pids(other)} == {"T"}
                assert _moving(tmp_path / "other") == {"parent": False, "escaped": False}
                assert _moving(tmp_path / "timer") == {"parent": True, "escaped": True}  # the timer's own tree runs
            assert _moving(tmp_path / "other") == {"parent": True, "escaped": True}
        assert not list(device._users(CPU).iterdir())  # each user's entry goes with it
    finally:
        _kill(other, timer)


def test_an_entry_of_a_process_gone_stops_nothing(tmp_path):
    """A user's pid, reused by another process after it ended, is told apart by its start time."""
    bystander = _tree(tmp_path / "bystander")
    try:
        folder = device._users(CPU)
        folder.mkdir()
        (folder / f"{bystander.pid}-1").touch()  # its pid, another start time: the entry of a process gone
        with device.timing_lock(CPU):
            assert _moving(tmp_path / "bystander") == {"parent": True, "escaped": True}
        assert not list(folder.iterdir())  # the stale entry is removed
    finally:
        _kill(bystander)


_TIMER = """
import sys, time
from tritonlint.runtime_check.backends import Backend
from tritonlint.runtime_check.device import timing_lock
with timing_lock(Backend("cpu", False)):
    print("held", flush=True)
    time.sleep(600)
"""


def test_a_child_left_stopped_by_a_timer_that_was_killed_is_continued(tmp_path):
    other = _tree(tmp_path / "other")
    try:
        with device.user(CPU, other.pid):
            timer = subprocess.Popen([sys.executable, "-c", _TIMER], stdout=subprocess.PIPE, text=True)
            assert timer.stdout.readline().strip() == "held"
            device.resume_if_left(CPU, other.pid)  # the timing is under way: left stopped
            assert _moving(tmp_path / "other") == {"parent": False, "escaped": False}
            timer.kill()
            timer.wait()
            assert _moving(tmp_path / "other") == {"parent": False, "escaped": False}  # nobody continued it
            device.resume_if_left(CPU, other.pid)
            assert _moving(tmp_path / "other") == {"parent": True, "escaped": True}
    finally:
        _kill(other)


def test_a_timed_phase_waits_for_the_judgements_under_way():
    spans = {}

    def judge():
        with device.judging(CPU):
            spans["judged"] = time.monotonic()
            time.sleep(0.5)
            spans["judge_end"] = time.monotonic()

    t = threading.Thread(target=judge)
    t.start()
    while "judged" not in spans:
        time.sleep(0.01)
    with device.judging(CPU):  # judgements share the device
        assert "judge_end" not in spans
    with device.timing_lock(CPU):
        assert "judge_end" in spans
    t.join()


_SLOW = '''
import time
import torch


class Model(torch.nn.Module):
    def forward(self, x):
        time.sleep(1.5)
        return x + 1


def get_inputs():
    return [torch.ones(4)]


def get_init_inputs():
    return []
'''


def test_the_runner_s_children_are_users_of_the_device(tmp_path):
    """A side's child, forked and sandboxed as the gate runs it, is stopped by a timed phase of
    another and continued after, and its case still passes: the time it spent stopped (longer than
    its whole timeout) is not counted against it."""
    from tritonlint.runtime_check.reference import run_reference

    task = tmp_path / "slow_torch.py"
    task.write_text(_SLOW)
    got = {}
    t = threading.Thread(target=lambda: got.update(run=run_reference(task, CPU, [1], 4, small=False, state=False,
                                                                    env=CPU.child_env())))
    t.start()
    try:
        deadline = time.monotonic() + 60
        while not (device._users(CPU).exists() and list(device._users(CPU).iterdir())):
            assert time.monotonic() < deadline and t.is_alive(), "the child never registered"
            time.sleep(0.01)
        keeper = int(next(device._users(CPU).iterdir()).name.split("-")[0])
        while len(device._tree(device._processes(), [keeper])) < 2:  # the keeper, then the child it forks
            assert time.monotonic() < deadline and t.is_alive(), "the keeper never forked"
            time.sleep(0.01)
        with device.timing_lock(CPU):
            parents = device._processes()
            tree = device._tree(parents, [keeper])
            assert {device._state(p) for p in tree} == {"T"}, tree
            # but not the fork server, the keeper's parent: it reports a timed child's end
            assert device._state(parents[keeper]) != "T"
            time.sleep(5)  # longer than the forward (1.5 s) and than the case's timeout (4 s)
            assert t.is_alive()
    finally:
        t.join(120)
    run = got["run"]
    try:
        assert run.results[1]["ok"], run.results[1]
    finally:
        run.cleanup()


# A child's side of a timed phase, by protocol.py's file names: ready, wait for go, the times, done;
# then, still alive, it tries to take the device's timing lock itself for up to 3 s.
_DONE_EARLY = """
import fcntl, json, os, sys, time
out, lock = sys.argv[1], sys.argv[2]
open(os.path.join(out, "ready"), "w").close()
while not os.path.exists(os.path.join(out, "go")):
    time.sleep(0.001)
with open(os.path.join(out, "timing1.tmp"), "w") as f:
    json.dump({"framework": {"avg_latency_ms": 1.0}}, f)
os.replace(os.path.join(out, "timing1.tmp"), os.path.join(out, "timing1.json"))
open(os.path.join(out, "done"), "w").close()
deadline = time.monotonic() + 3
with open(lock, "a") as f:
    while True:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            sys.exit(0)
        except BlockingIOError:
            if time.monotonic() > deadline:
                sys.exit(3)
            time.sleep(0.01)
"""


class _Child(subprocess.Popen):
    stop = subprocess.Popen.kill  # the runner's name for it (zygote.Forked)


def test_the_timing_lock_is_left_at_the_child_s_done_not_at_its_end(tmp_path):
    """The child's exit (a device's teardown) is no part of the timing: the lock is free once the
    child says its device work is done, while it still runs, and its times are taken."""
    from tritonlint.runtime_check.runner import Timed, _timed_phase

    out = tmp_path / "out"
    out.mkdir()
    with _Child([sys.executable, "-c", _DONE_EARLY, str(out), device.lock_file(CPU)]) as proc:
        deadline = time.monotonic() + 30
        while not (out / "ready").exists():
            assert time.monotonic() < deadline and proc.poll() is None, "the child never got ready"
            time.sleep(0.01)
        timed = Timed(side_name="framework")
        _timed_phase(proc, out, timed, CPU, 30, {1: {"ok": True}}, None, tmp_path / "log")
        assert proc.returncode == 0, "the child never got the lock while it ran: the timer held it to its end"
    assert timed.result == {"framework": {"avg_latency_ms": 1.0}}
    assert round(timed.wall_s, 3) <= timed.lock_s["held"] < 3
