"""One accelerator, shared by the gate's processes of a host (eval --workers above the device
count, several `--run`s at once): while one of them times, the device is its alone.

- `timing_lock`: held around every timed phase. Two timings on one device never overlap, and
  while it is held every other user of the device is stopped (SIGSTOP) with everything it
  started, and continued after: each child (`user`, registered by the parent that started it)
  and each such parent, with its fork server (their loads and copies: a launch-bound timing is
  slowed by a busy host, not only by a busy device). Processes are found by parentage
  (sandbox.keep: the pid namespace's init or a subreaper keeps a child's orphans under its
  keeper), so a child that leaves its session is stopped too.
- `judging`: held (shared) by a parent while it compares on the device, so a timed phase waits
  for the comparisons under way and none starts during it.
- `resume_if_left`: a user still stopped after the timer is gone (the timer's process was killed
  while it held the lock) is continued by the next parent that looks.
One lock file and one folder of users per device this process sees (its visibility variable).
Linux only (/proc); elsewhere the lock still serialises the timings, and nothing is stopped."""

from __future__ import annotations

import atexit
import fcntl
import os
import signal
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from tritonlint.runtime_check.backends import VISIBLE, Backend


STOP_WAIT_S = 2.0  # for every stopped process to be off the CPU (a loaded host schedules it late)


def _name(backend: Backend) -> str:
    seen = os.environ.get(VISIBLE.get(backend.name, ""), "all") or "all"
    return "".join(c if c.isalnum() else "_" for c in f"{backend.name}-{seen}")


def _lock_path(backend: Backend) -> str:
    return os.path.join(tempfile.gettempdir(), f"tritonlint-timing-{_name(backend)}.lock")


def _users(backend: Backend) -> Path:
    return Path(tempfile.gettempdir()) / f"tritonlint-users-{os.getuid()}-{_name(backend)}"


@contextmanager
def timing_lock(backend: Backend, timer: int | None = None):
    """The device to one timed phase: exclusive among timings, and every registered child but
    the timer's (`timer`: its keeper's pid) stopped until it is left."""
    with open(_lock_path(backend), "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        stopped: set[int] = set()
        try:
            stopped = _stop_others(backend, timer)
            yield
        finally:
            for pid in stopped:
                _signal(pid, signal.SIGCONT)
            fcntl.flock(f, fcntl.LOCK_UN)


@contextmanager
def judging(backend: Backend):
    """Shared with other judgements, never with a timed phase."""
    with open(_lock_path(backend), "a") as f:
        fcntl.flock(f, fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


@contextmanager
def user(backend: Backend, pid: int | None):
    """Registers a running child (its keeper's pid) as a user of the device, for as long as it runs,
    and this process (the parent that started it, which judges on the device) for as long as it lives."""
    _register_self(backend)
    entry = _register(backend, pid)
    try:
        yield
    finally:
        if entry is not None:
            entry.unlink(missing_ok=True)


_SELF: dict[tuple[Path, int], Path | None] = {}  # (the device's users, pid) -> this process's entry


def _register_self(backend: Backend) -> None:
    key = (_users(backend), os.getpid())
    if key not in _SELF:
        _SELF[key] = entry = _register(backend, os.getpid())
        if entry is not None:
            atexit.register(entry.unlink, missing_ok=True)


def _register(backend: Backend, pid: int | None) -> Path | None:
    start = _start_time(pid) if pid is not None else None
    if start is None:
        return None
    folder = _users(backend)
    entry = folder / f"{pid}-{start}"
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        entry.touch()
    except OSError:  # a folder of another owner: this process is not stopped for other timings
        return None
    return entry


def resume_if_left(backend: Backend) -> None:
    """Continue every user (and its processes) still stopped when no timed phase holds the device:
    the timer's process was killed while it held the lock."""
    left = [pid for pid in _roots(backend) if _state(pid) == "T"]
    if not left:
        return
    with open(_lock_path(backend), "a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:  # a timing is under way: it continues them when it ends
            return
        try:
            for p in _tree(_processes(), left):
                _signal(p, signal.SIGCONT)
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _roots(backend: Backend) -> list[int]:
    """The registered users alive (an entry whose pid has another start time now is removed)."""
    folder = _users(backend)
    try:
        entries = [e.name.split("-") for e in folder.iterdir()]
    except OSError:
        return []
    roots = []
    for pid, start in (e for e in entries if len(e) == 2 and all(x.isdigit() for x in e)):
        if _start_time(int(pid)) != int(start):  # gone, its pid maybe another process's now
            (folder / f"{pid}-{start}").unlink(missing_ok=True)
        else:
            roots.append(int(pid))
    return roots


def _stop_others(backend: Backend, timer: int | None) -> set[int]:
    roots = [pid for pid in _roots(backend) if pid not in (os.getpid(), timer)]
    stopped: set[int] = set()
    for _ in range(3):  # again: a process forked between the look and the stop
        parents = _processes()
        spared = stopped | _spared(parents, roots, timer)
        fresh = [p for p in _tree(parents, roots) if p not in spared]
        if not fresh:
            break
        for pid in fresh:  # each keeper before its processes: a timer killed midway leaves its keeper stopped
            _signal(pid, signal.SIGSTOP)  # (resume_if_left looks at the keeper)
        stopped.update(fresh)
    deadline = time.monotonic() + STOP_WAIT_S  # a stop is delivered, not done, when kill returns
    while any(_state(p) not in (None, "T", "Z", "X") for p in stopped) and time.monotonic() < deadline:
        time.sleep(0.001)
    return stopped


def _spared(parents: dict[int, int], roots: list[int], timer: int | None) -> set[int]:
    """What a timed phase never stops: the timer's processes, this process and its ancestors (a
    registered parent may have started it), and this process's own processes but its registered
    children (its fork server reports the timer's end)."""
    own = set(_tree(parents, [os.getpid()]))
    return (set(_tree(parents, [timer] if timer else [])) | _line(parents, os.getpid())
            | own - set(_tree(parents, [r for r in roots if r in own])))


def _processes() -> dict[int, int]:
    """pid -> parent pid, for every process this one can see."""
    out = {}
    for entry in os.scandir("/proc") if os.path.isdir("/proc") else ():
        if entry.name.isdigit():
            fields = _stat(int(entry.name))
            if fields is not None:
                out[int(entry.name)] = int(fields[1])
    return out


def _line(parents: dict[int, int], pid: int) -> set[int]:
    """`pid` and its ancestors."""
    out = set()
    while pid > 0 and pid not in out:
        out.add(pid)
        pid = parents.get(pid, 0)
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
