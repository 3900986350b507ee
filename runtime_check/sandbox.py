"""The keeper: the process the fork server (zygote.py) forks for each child, and the only
one it waits on: `keep(box, rw, report, isolate, start)`.

With isolate, on Linux, where the kernel lets it (root, or unprivileged user
namespaces are not needed: we ask only for what root may do), the keeper unshares
pid, mount, network and IPC namespaces, then:
- makes every mount read-only in its own mount namespace except the private box and
  the `rw` folders (a candidate cannot rewrite the reference task, plant a module
  for the next child, or poison anything outside its box); device files stay usable
  (opening a character device for writing is allowed on a read-only mount), /dev/shm
  is a fresh tmpfs and /proc is the new pid namespace's own (the candidate cannot see
  or signal the parent, nor read its command line or environment);
- forks the namespace's init, which forks the child (`start()`) and, once it has
  exited, exits itself: the kernel then kills every process left in the namespace
  (setsid or not) and the keeper's wait returns only when they are all gone.
Without namespaces (not asked, not Linux, or unshare refused) the keeper is a child
subreaper: every orphan of the child's tree is re-parented to it, and it kills them
all once the child is done or it is told to stop (SIGTERM). A candidate that kills
the keeper itself in that mode can leave orphans (the fork server then kills the
keeper's session): the namespaces are what hold.

The keeper writes one line to the report fd before it starts the child: which
isolation held. The child never inherits that fd. The keeper ends the way the child
ended (same exit code, or killed by the same signal), so the parent's crash report is
unchanged. The process it runs in was forked from a server that imported torch but
never initialised an accelerator, so the child starts in a fraction of a second."""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import sys
import time

CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWPID, CLONE_NEWNET = 0x00020000, 0x08000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER = 1, 36
NO_NAMESPACES = "TRITONLINT_NO_NAMESPACES"  # set in the parent's environment to force the fallback (tests, debugging)
READ_ONLY = "read-only except the child's folders"  # what the keeper reports when every mount but those held


def read_only_held(isolation: object) -> bool:
    """Whether a child's isolation line (protocol.ISOLATION) says every mount but its own folders was
    read-only to it: the case files it read could not be rewritten."""
    return any(part.strip() == READ_ONLY for part in str(isolation).split(";"))

_libc = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None


def _call(name: str, *args) -> None:
    if _libc is None:
        raise OSError(0, "not Linux")
    if getattr(_libc, name)(*args) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{name}: {os.strerror(err)}")


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    enc = (lambda s: s.encode() if s is not None else None)
    _call("mount", enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data))


def _mount_points() -> list[tuple[str, int]]:
    """(mount point, flags to keep) for every mount, from /proc/self/mountinfo."""
    keep = {"nosuid": MS_NOSUID, "nodev": MS_NODEV, "noexec": MS_NOEXEC}
    out = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            point = fields[4].encode().decode("unicode_escape")  # octal escapes such as \040 for a space
            out.append((point, sum(keep.get(o, 0) for o in fields[5].split(","))))
    return out


def _under(path: str, folders: list[str]) -> bool:
    return any(path == d or path.startswith(d.rstrip("/") + "/") for d in folders)


def lock_down(writable: list[str]) -> str:
    """In a fresh mount namespace: everything read-only but `writable`. Returns what held."""
    _mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing we do here reaches the host's mounts
    for d in writable:
        _mount(d, d, None, MS_BIND | MS_REC)  # its own mount, so the read-only pass below can leave it out
    failed = []
    for point, flags in _mount_points():
        if _under(point, writable) or _under(point, ["/proc"]):
            continue
        try:
            _mount(None, point, None, MS_REMOUNT | MS_BIND | MS_RDONLY | flags)
        except OSError as e:
            failed.append(f"{point} ({e.strerror})")
    if os.path.isdir("/dev/shm"):
        try:
            _mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "size=1g")  # shared memory, private to this child
        except OSError as e:
            failed.append(f"/dev/shm ({e.strerror})")
    if failed:
        return READ_ONLY + ", but not: " + ", ".join(failed[:5])
    return READ_ONLY


def _descendants(root: int) -> list[int]:
    parent = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    parent[int(name)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    found, frontier = [], [root]
    while frontier:
        kids = [p for p, pp in parent.items() if pp in frontier]
        found += kids
        frontier = kids
    return found


def kill_descendants() -> None:
    """SIGKILL every descendant (the subreaper holds them all) and reap them, until none is left."""
    me = os.getpid()
    for _ in range(200):
        left = _descendants(me) if os.path.isdir("/proc") else []
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        _reap()
        if not left:
            return
        time.sleep(0.005)


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _start(start) -> None:
    """In the forked process: become the child (`start` never returns)."""
    try:
        start()
    finally:
        os._exit(127)


def _init(start, status_w: int) -> None:
    """Pid 1 of the new namespace: start the child, reap everything, send its status, exit."""
    try:
        _call("prctl", PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # the keeper killed: the namespace goes with it
        _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)  # this namespace's processes only
        pid = os.fork()
        if pid == 0:
            os.close(status_w)
            _start(start)
        while True:
            done, status = os.wait()
            if done == pid:
                break
        os.write(status_w, str(status).encode())
    finally:
        os._exit(0)  # the kernel kills what is left in the namespace


def _end_like(status: int) -> None:
    """Exit as the child did: its exit code, or its signal (no core file)."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
        time.sleep(1)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def fork_piped(child) -> tuple[int, int]:
    """Fork: the new process runs `child(write_fd)` and never returns; this one gets (pid, read_fd)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        child(w)
    os.close(w)
    return pid, r


def keep(box: str, rw: list[str], report: int, isolate: bool, start) -> None:
    """Be the keeper of one child: isolate what the kernel allows, write which isolation held
    to the `report` fd, run `start()` (which becomes the child and never returns) in a forked
    process, wait for it and everything it started, and end the way it ended."""
    held, namespaces = [], False
    if isolate and os.environ.get(NO_NAMESPACES) != "1":
        try:
            _call("unshare", CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC)
            namespaces = True
        except OSError as e:
            held.append(f"no namespaces (unshare refused: {e.strerror})")
    if namespaces:
        held.append("pid+mount+net+ipc namespaces")
        try:
            held.append(lock_down([os.path.realpath(d) for d in [box, *rw]]))
        except OSError as e:
            held.append(f"filesystem writable ({e.strerror})")
    else:
        try:
            _call("prctl", PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
            held.append("subreaper keeper (descendants killed; not if the keeper itself is killed)")
        except OSError as e:
            held.append(f"process group only ({e.strerror})")
    os.write(report, ("; ".join(held) + "\n").encode())
    os.close(report)
    if namespaces:
        init, status_r = fork_piped(lambda status_w: _init(start, status_w))

        def stop(*_):  # the parent's deadline: the namespace goes, then the keeper
            os.kill(init, signal.SIGKILL)
            os.waitpid(init, 0)
            os._exit(128 + signal.SIGTERM)

        signal.signal(signal.SIGTERM, stop)
        os.waitpid(init, 0)  # returns once every process of the namespace is gone
        raw = os.read(status_r, 64)
        _end_like(int(raw) if raw.strip().lstrip(b"-").isdigit() else 1 << 8)
    pid = os.fork()
    if pid == 0:
        _start(start)

    def stop(*_):
        kill_descendants()
        os._exit(128 + signal.SIGTERM)

    signal.signal(signal.SIGTERM, stop)
    _, status = os.waitpid(pid, 0)
    kill_descendants()
    _end_like(status)
