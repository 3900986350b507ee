"""The fork server: one process per gate environment that imports torch, Triton and the
gate's child code once, before any submission code, and forks a fresh sandboxed child
for every side of every submission. A child forked from it starts in well under a second
where a fresh interpreter pays `import torch` (seconds) again.

    python -I -m tritonlint.runtime_check.zygote BOX    (started by Zygote, never by hand)

It is started like any child used to be (`python -I`, a private empty working
directory, the environment cut to the allow-list) and never initialises an accelerator
itself, so each forked child initialises its own. It never sees a reference's outputs
or an input seed: a request names only a module, its arguments, a log file and the
folders the child may write.

Requests and replies are JSON lines on its stdin and stdout:
    {"op": "spawn", "id": N, "module": M, "args": [...], "env": {...}, "box": DIR, "rw": [...],
     "isolate": bool, "log": FILE, "warm": bool}   ->  {"id": N, "pid": KEEPER}
    {"op": "stop", "id": N}          ->  (SIGTERM to the keeper, SIGKILL to its group after a grace)
    a child that ended               ->  {"id": N, "status": WAITSTATUS, "isolation": LINE}
For each spawn it forks a keeper (sandbox.keep: namespaces or the subreaper), which runs
`M.main(args)` in the forked worker. End of its stdin: every keeper is killed, then it exits.
"""

from __future__ import annotations

import atexit
import importlib
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

# What every child needs, imported once here (before any submission exists).
PRELOAD = ("torch", "triton", "tritonlint.runtime_check.child", "tritonlint.runtime_check.timing",
           "tritonlint.runtime_check.census", "tritonlint.runtime_check.compare", "tritonlint.runtime_check.tasks")


def _triton_key() -> None:
    """Triton's key for its own build, a hash of its sources and of libtriton (about 500 MB, 0.4 s
    here): computed by the first compile or cache lookup of every process and kept by lru_cache, so
    a child forked after this inherits it. File hashing only: no accelerator is touched. Not under
    the interpreter, which never compiles."""
    if os.environ.get("TRITON_INTERPRET") == "1":
        return
    for name in ("triton.runtime.cache", "triton.compiler.compiler"):  # where Triton's versions keep it
        try:
            key = getattr(importlib.import_module(name), "triton_key", None)
        except ImportError:
            return
        if key is not None:
            key()
            return


def _census() -> None:
    """What the census would import in every candidate's child (census.imports): the device's
    profiler is used everywhere but under Triton's interpreter (the cpu backend)."""
    from tritonlint.runtime_check.census import imports

    _preload(imports(profiled=os.environ.get("TRITON_INTERPRET") != "1"))


# Done once the server has forked its first child, while it has nothing to do (the reference's runs):
# what every candidate's census and first Triton launch would otherwise do in each child: the census's
# imports, Triton's key, and Gluon (0.17 s on the H100 machine, Triton 3.6) where its version has it.
GLUON = ("triton.experimental.gluon",)
LATER = (_census, _triton_key, lambda: _preload(GLUON))
READY = "ready"
WAIT_POLL_S = 0.05  # how often the server looks at a spawn that waits for its idle steps
STOP_GRACE_S = 5.0  # how long a keeper has to kill its descendants before its group is killed
START_TIMEOUT_S = 600.0  # importing torch on a cold disk


# -- the server ------------------------------------------------------------------------------

def _preload(names) -> None:
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError:  # triton missing: the children say so in their own results
            pass


def _step(step) -> None:
    try:
        step()
    except Exception:  # a step that fails costs the children its time, nothing else
        pass


class _Idle:
    """The rest of the preload (LATER), one step at a time on a thread once the server has forked its
    first child (whose request may be on its way: the parent imports torch as long as the server
    does), so the server goes on answering while a step runs: a child's end is reported when it
    comes, not 1-2 s later. Nothing is forked beside a step: a fork waits for the one under way (a
    process forked mid-import would inherit a half-made module), a warm fork for every step; the
    server answers meanwhile, and starts no further step while a plain fork waits."""

    def __init__(self, steps, wake_w: int):
        self.steps, self.wake_w, self.thread, self.finished = list(steps), wake_w, None, False

    def busy(self) -> bool:
        """Whether a step is under way. One that has finished is joined here, even where its thread
        has not quite exited yet: its wake-up is the only one the loop gets for it."""
        if self.thread is not None and (self.finished or not self.thread.is_alive()):
            self.thread.join()
            self.thread = None
        return self.thread is not None

    def ready(self, warm: bool) -> bool:
        """Whether a child may be forked now: no step under way, and for a warm child none left."""
        return not self.busy() and not (warm and self.steps)

    def poll(self) -> None:
        """Start the next step if none runs."""
        if not self.busy() and self.steps:
            self.finished = False
            self.thread = threading.Thread(target=self._run, args=(self.steps.pop(0),), daemon=True)
            self.thread.start()

    def _run(self, step) -> None:
        _step(step)
        self.finished = True  # before the wake-up: the loop that wakes joins this thread
        try:
            os.write(self.wake_w, b"i")  # wakes the loop's select: the next step, or a fork that waited
        except OSError:
            pass


def _send(msg: dict) -> None:
    os.write(1, (json.dumps(msg) + "\n").encode())


def _worker(module: str, args: list[str], env: dict[str, str], box: str) -> None:
    """In the sandboxed worker: become `python -I -m module args` with `env`, without exec."""
    code = 1
    try:
        os.chdir(box)
        os.environ.clear()
        os.environ.update(env)
        tempfile.tempdir = None  # TMPDIR is the child's own now
        sys.argv = [module, *args]
        code = importlib.import_module(module).main(list(args)) or 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    except BaseException:
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        os._exit(code)


def _keeper(req: dict, report_w: int) -> None:
    """In the forked keeper: its own session, its log as stdout/stderr, no other descriptor."""
    from tritonlint.runtime_check import sandbox

    try:
        os.setsid()
        signal.set_wakeup_fd(-1)
        for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGINT, signal.SIGPIPE):
            signal.signal(sig, signal.SIG_DFL)
        null = os.open(os.devnull, os.O_RDONLY)
        log = os.open(req["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.dup2(report_w, 3)  # the one descriptor besides 0-2 it keeps: which isolation held
        os.closerange(4, 1 << 16)  # the server's pipes and every other child's
        sys.stdout = open(1, "w", closefd=False)
        sys.stderr = open(2, "w", closefd=False)
        sys.stdin = open(0, closefd=False)
        sandbox.keep(req["box"], req["rw"], 3, req["isolate"],
                     lambda: _worker(req["module"], req["args"], req["env"], req["box"]))
    except BaseException:
        traceback.print_exc()
    os._exit(1)


def serve(box: str | None = None) -> None:
    """`box`: the server's own folder (Zygote.box), removed when it leaves: its parent may have been
    killed (an eval worker, a Ray worker) and never get to it."""
    from tritonlint.runtime_check.sandbox import fork_piped

    _preload(PRELOAD)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # only to wake the select below
    keepers: dict[int, tuple[int, int]] = {}  # keeper pid -> (request id, its report pipe)
    stopping: dict[int, float] = {}  # keeper pid -> when its group is killed
    idle, forked = _Idle(LATER, wake_w), False
    waiting: list[dict] = []  # spawn requests not forked yet (_Idle.ready), in the order they came
    _send({"ready": READY})
    buf = b""
    while True:
        for req in [r for r in waiting if idle.ready(bool(r.get("warm")))]:
            waiting.remove(req)
            pid, report_r = fork_piped(lambda report_w, req=req: _keeper(req, report_w))
            forked = True
            keepers[pid] = (req["id"], report_r)
            _send({"id": req["id"], "pid": pid})
        if (forked or waiting) and all(r.get("warm") for r in waiting):
            idle.poll()
        timeout = max(0.0, min(stopping.values()) - time.monotonic()) if stopping else None
        if waiting:  # and should a wake-up be missed, a spawn that waits is looked at again soon
            timeout = WAIT_POLL_S if timeout is None else min(timeout, WAIT_POLL_S)
        ready, _, _ = select.select([0, wake_r], [], [], timeout)
        if wake_r in ready:
            os.read(wake_r, 4096)
        if 0 in ready:
            chunk = os.read(0, 1 << 16)
            if not chunk:  # the parent is gone or done: so is every child
                for pid in keepers:
                    _kill_group(pid)
                if box is not None:
                    shutil.rmtree(box, ignore_errors=True)
                os._exit(0)
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                req = json.loads(line)
                if req["op"] == "spawn":
                    waiting.append(req)  # forked at the loop's top, as soon as it may be
                elif req["op"] == "stop":
                    pid = next((p for p, (i, _) in keepers.items() if i == req["id"]), None)
                    if pid is not None and pid not in stopping:
                        _signal(pid, signal.SIGTERM)
                        stopping[pid] = time.monotonic() + STOP_GRACE_S
        now = time.monotonic()
        for pid, when in list(stopping.items()):
            if when <= now:
                _kill_group(pid)
                stopping[pid] = now + 3600  # once
        for pid in list(keepers):
            try:  # look without reaping, so the group id stays this keeper's while it is killed
                info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                info = None
            if info is None:
                continue
            _kill_group(pid)  # whatever of its session is left (the fallback's stragglers)
            _, status = os.waitpid(pid, 0)
            rid, report_r = keepers.pop(pid)
            stopping.pop(pid, None)
            os.set_blocking(report_r, False)
            try:
                line = os.read(report_r, 1000).decode(errors="replace").strip()
            except BlockingIOError:
                line = ""
            os.close(report_r)
            _send({"id": rid, "status": status, "isolation": line})


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        _signal(pid, signal.SIGKILL)


# -- the parent's side -----------------------------------------------------------------------

class ServerGone(Exception):
    pass


class Forked:
    """A child of the fork server, as the gate's parent sees it: the subset of
    subprocess.Popen the runner and the benchmark use (poll, wait, returncode, pid)."""

    def __init__(self, server: "Zygote", rid: int):
        self.server, self.id, self.pid = server, rid, None
        self.returncode: int | None = None
        self.report = ""
        self.started, self.ended = threading.Event(), threading.Event()
        self.isolation: str | None = None

    def _end(self, status: int, report: str) -> None:
        self.returncode = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        self.report = report
        self.ended.set()

    def poll(self) -> int | None:
        return self.returncode if self.ended.is_set() else None

    def wait(self, timeout: float | None = None) -> int:
        if not self.ended.wait(timeout):
            raise subprocess.TimeoutExpired(f"child {self.id}", timeout)
        return self.returncode

    def stop(self) -> None:
        """Kill it and everything it started (the keeper's job; its group after a grace), and wait."""
        if not self.ended.is_set():
            self.server._request({"op": "stop", "id": self.id})
        self.ended.wait()


class Zygote:
    """The parent's handle on one fork server. A reader thread matches its replies to the
    children waiting for them; a server that dies ends every child it had as killed."""

    def __init__(self, env: dict[str, str]):
        """`env`: the children's environment (protocol.child_environment) less what each child sets itself."""
        from tritonlint.runtime_check.protocol import child_environment

        self.box = Path(tempfile.mkdtemp(prefix="tritonlint-zygote-"))
        for sub in ("home", "tmp", "work"):
            (self.box / sub).mkdir()
        self.stderr = self.box / "server.log"
        with open(self.stderr, "wb") as log:
            self.proc = subprocess.Popen([sys.executable, "-I", "-m", "tritonlint.runtime_check.zygote", str(self.box)],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                                         env=child_environment(env, self.box), cwd=self.box / "work",
                                         start_new_session=True)
        self.lock = threading.Lock()
        self.children: dict[int, Forked] = {}
        self.next_id = 0
        self.dead = False
        threading.Thread(target=self._read, daemon=True, name="tritonlint-zygote").start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            msg = json.loads(line)
            if "ready" in msg:  # its imports are done; requests sent before are answered now
                continue
            child = self.children.get(msg["id"])
            if child is None:
                continue
            if "pid" in msg:
                child.pid = msg["pid"]
                child.started.set()
            else:
                self.children.pop(msg["id"], None)
                child._end(msg["status"], msg["isolation"])
        with self.lock:
            self.dead = True
        for child in list(self.children.values()):  # the server died (a candidate may kill it where it can see it):
            if child.pid is not None:  # its children go too, every keeper's session with everything in it
                _kill_group(child.pid)
            child.started.set()
            child._end(signal.SIGKILL, "")
        self.children.clear()

    def _request(self, msg: dict) -> None:
        with self.lock:
            if self.dead:
                return
            try:
                self.proc.stdin.write((json.dumps(msg) + "\n").encode())
                self.proc.stdin.flush()
            except OSError:
                self.dead = True

    def spawn(self, module: str, args: list[str], env: dict[str, str], box: str, rw: list[str], isolate: bool,
              log: Path, warm: bool = False) -> Forked:
        """Asked at once, ready or not: a request sent while the server still imports waits in its
        pipe, and the server's idle work (LATER) waits for its first child, so the reference's child
        does not wait behind those imports; a `warm` child is forked only once they are done (what it
        inherits, it does not redo)."""
        with self.lock:
            self.next_id += 1
            child = Forked(self, self.next_id)
            self.children[child.id] = child
        self._request({"op": "spawn", "id": child.id, "module": module, "args": list(args), "env": env, "box": box,
                       "rw": list(rw), "isolate": isolate, "log": str(log), "warm": warm})
        if not child.started.wait(START_TIMEOUT_S) or self.dead:
            with self.lock:
                self.children.pop(child.id, None)
            raise ServerGone(f"the gate's fork server did not start: {_tail(self.stderr)}")
        return child

    def close(self) -> None:
        if self.next_id == 0:  # it never forked: nothing of it to wait for, its imports not even
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=STOP_GRACE_S + 5)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        shutil.rmtree(self.box, ignore_errors=True)


# Set per child, not per server: everything else in the environment is fixed when the server starts.
PER_CHILD = ("HOME", "TMPDIR", "TRITON_CACHE_DIR")
_SERVERS: dict[tuple, Zygote] = {}
_SERVERS_LOCK = threading.Lock()


def server_for(env: dict[str, str]) -> Zygote:
    """The running fork server for a child environment, started on first use (a server
    that died is replaced). Servers live until this process exits."""
    key = tuple(sorted((k, v) for k, v in env.items() if k not in PER_CHILD))
    with _SERVERS_LOCK:
        server = _SERVERS.get(key)
        if server is None or server.dead:
            server = _SERVERS[key] = Zygote({k: v for k, v in env.items() if k != "TRITON_CACHE_DIR"})
        return server


@atexit.register
def close_servers() -> None:
    with _SERVERS_LOCK:
        for server in _SERVERS.values():
            server.close()
        _SERVERS.clear()


def _tail(path: Path) -> str:
    try:
        return path.read_text(errors="replace")[-2000:].strip() or "(no output)"
    except OSError:
        return "(no log)"


if __name__ == "__main__":
    serve(*sys.argv[1:2])
