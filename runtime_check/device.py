"""One accelerator, shared by the gate's processes of a host (eval --workers above the device
count, several `--run`s at once): while one of them times, the device is its alone.

- `timing_lock`: held around every timed phase. Two timings on one device never overlap, and
  while it is held every other child that uses the device (`user`, registered by the parent that
  started it) is stopped (SIGSTOP) with everything it started, and continued after. A child's
  processes are found by parentage under its keeper (sandbox.keep: the pid namespace's init or a
  subreaper keeps orphans under it), so a child that leaves its session is stopped too.
- `judging`: held (shared) by a parent while it compares on the device, so a timed phase waits
  for the comparisons under way and none starts during it.
- `resume_if_left`: a parent's child still stopped after the timer is gone (the timer's process
  was killed while it held the lock) is continued.
One lock file and one folder of users per device this process sees (its visibility variable).
Linux only (/proc); elsewhere the lock still serialises the timings, and nothing is stopped."""

from __future__ import annotations

import fcntl
import os
import signal
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from tritonlint.runtime_check.backends import VISIBLE, Backend


STOP_WAIT_S = 2.0  # for every process to be stopped, not only sent the stop (a loaded host schedules it late)


def _name(backend: Backend) -> str:
    seen = os.environ.get(VISIBLE.get(backend.name, ""), "all") or "all"
    return "".join(c if c.isalnum() else "_" for c in f"{backend.name}-{seen}")


def lock_file(backend: Backend) -> str:
    """The device's timing lock, a file every gate process of this host opens by this name."""
    return os.path.join(tempfile.gettempdir(), f"tritonlint-timing-{_name(backend)}.lock")


def _users(backend: Backend) -> Path:
    return Path(tempfile.gettempdir()) / f"tritonlint-users-{os.getuid()}-{_name(backend)}"


@contextmanager
def timing_lock(backend: Backend, timer: int | None = None):
    """The device to one timed phase: exclusive among timings, and every registered child but
    the timer's (`timer`: its keeper's pid) stopped until it is left."""
    with open(lock_file(backend), "a") as f, _held(f, fcntl.LOCK_EX):
        stopped: set[int] = set()  # filled as they are stopped: a look that fails midway leaves none stopped
        try:
            _stop_others(backend, timer, stopped)
            yield
        finally:  # continued before the lock is left
            for pid in stopped:
                _signal(pid, signal.SIGCONT)


@contextmanager
def judging(backend: Backend):
    """Shared with other judgements, never with a timed phase."""
    with open(lock_file(backend), "a") as f, _held(f, fcntl.LOCK_SH):
        yield


@contextmanager
def shared(path: str):
    """`judging` by the lock's path, for a child that cannot write it (a read-only /tmp): nothing
    held where the file is not there (no timing has ever run)."""
    try:
        f = open(path, "rb")
    except OSError:
        yield
        return
    with f, _held(f, fcntl.LOCK_SH):
        yield


@contextmanager
def _held(f, how: int):
    fcntl.flock(f, how)
    try:
        yield
    finally:
        fcntl.flock(f, fcntl.LOCK_UN)


@contextmanager
def user(backend: Backend, pid: int | None):
    """Registers a running child (its keeper's pid) as a user of the device, for as long as it runs."""
    start = _start_time(pid) if pid is not None else None
    if start is None:
        yield
        return
    folder = _users(backend)
    entry = folder / f"{pid}-{start}"
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        entry.touch()
    except OSError:  # a folder of another owner: this child is not stopped for other timings
        entry = None
    try:
        yield
    finally:
        if entry is not None:
            entry.unlink(missing_ok=True)


def resume_if_left(backend: Backend, pid: int | None) -> bool:
    """Whether a child (its keeper) is stopped; continued, with its processes, when no timed phase
    holds the device (the timer's process was killed while it held the lock)."""
    if pid is None or _state(pid) != "T":
        return False
    with open(lock_file(backend), "a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:  # a timing is under way: it continues them when it ends
            return True
        try:
            for p in _tree(_processes(), [pid]):
                _signal(p, signal.SIGCONT)
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
    return True


def _stop_others(backend: Backend, timer: int | None, stopped: set[int]) -> None:
    folder = _users(backend)
    try:
        entries = [e.name.split("-") for e in folder.iterdir()]
    except OSError:
        return
    roots = []
    for pid, start in (e for e in entries if len(e) == 2 and all(x.isdigit() for x in e)):
        if int(pid) == timer:
            continue
        if _start_time(int(pid)) != int(start):  # gone, its pid maybe another process's now
            (folder / f"{pid}-{start}").unlink(missing_ok=True)
            continue
        roots.append(int(pid))
    deadline = time.monotonic() + STOP_WAIT_S
    while True:  # until a look finds nothing new: a process forks until its stop is done, not sent
        parents = _processes()
        mine = set(_tree(parents, [timer] if timer else []))
        fresh = [p for p in _tree(parents, roots) if p not in stopped and p not in mine]
        if not fresh or time.monotonic() > deadline:
            return
        for pid in fresh:  # each keeper before its processes: a timer killed midway leaves its keeper stopped
            _signal(pid, signal.SIGSTOP)  # (resume_if_left looks at the keeper)
        stopped.update(fresh)
        while any(_state(p) not in (None, "T", "Z", "X") for p in fresh) and time.monotonic() < deadline:
            time.sleep(0.001)


def _processes() -> dict[int, int]:
    """pid -> parent pid, for every process this one can see."""
    out = {}
    for entry in os.scandir("/proc") if os.path.isdir("/proc") else ():
        if entry.name.isdigit():
            fields = _stat(int(entry.name))
            if fields is not None:
                out[int(entry.name)] = int(fields[1])
    return out


def _tree(parents: dict[int, int], roots: list[int]) -> list[int]:
    """`roots` (those alive) and all their descendants, each after its parent."""
    kids: dict[int, list[int]] = {}
    for pid, ppid in parents.items():
        kids.setdefault(ppid, []).append(pid)
    out: dict[int, None] = {}
    todo = [r for r in roots if r in parents]
    while todo:
        pid = todo.pop(0)
        if pid not in out:
            out[pid] = None
            todo.extend(kids.get(pid, ()))
    return list(out)


def _stat(pid: int) -> list[str] | None:
    """/proc/PID/stat's fields after the command name: state, ppid, ..., starttime at [19]."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read().decode(errors="replace")
    except OSError:
        return None
    return raw[raw.rfind(")") + 2:].split()


def _start_time(pid: int) -> int | None:
    fields = _stat(pid)
    return int(fields[19]) if fields is not None and len(fields) > 19 else None


def _state(pid: int) -> str | None:
    fields = _stat(pid)
    return fields[0] if fields else None


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass
