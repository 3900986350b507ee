"""The parent side of `child.py`: run one side over many cases in as few processes as
the submission allows.

The parent watches the child's marker files. A case that runs past the timeout is
charged a Timeout, a child that dies (abort, segfault, exit) is charged a Crash on
the case it had started, and in both cases a new child picks up the cases after it.
So one bad case never costs the others their result, and a well-behaved side costs
one process start-up for all its cases.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

from tritonlint.runtime_check.backends import Backend

LOG_TAIL = 2000
POLL_S = 0.02


def run_side(backend: Backend, module: Path, cls: str, inputs: Path, cases: list[int], timeout: float, *,
             state: bool = False, env: dict[str, str] | None = None) -> dict[int, dict]:
    """{case: result dict}; the results are loaded into memory and their files removed
    before this returns, so the next side's process never sees them."""
    results: dict[int, dict] = {}
    out = Path(tempfile.mkdtemp(prefix=f"tritonlint-{cls}-"))
    try:
        pending = list(cases)
        launch = 0
        while pending:
            launch += 1
            pending = _one_child(backend, module, cls, inputs, out, pending, timeout, state, env, results, launch)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    return results


def _one_child(backend, module, cls, inputs, out, pending, timeout, state, env, results, launch) -> list[int]:
    cmd = [sys.executable, "-m", "tritonlint.runtime_check.child", "--module", str(module), "--cls", cls,
           "--inputs", str(inputs), "--out", str(out), "--cases", ",".join(map(str, pending)),
           "--device", backend.device] + (["--state"] if state else [])
    log = out / f"child{launch}.log"
    with open(log, "wb") as sink:  # a submission may print gigabytes: it goes to a file
        proc = subprocess.Popen(cmd, stdout=sink, stderr=subprocess.STDOUT, env=env or backend.child_env(),
                                start_new_session=True)
        current, since = None, time.monotonic()
        while True:
            done = proc.poll() is not None
            for idx in [i for i in pending if (out / f"{i}.pt").exists()]:
                results[idx] = _load(out / f"{idx}.pt")
                pending.remove(idx)
            if not pending:
                proc.wait()
                return []
            started = pending[0] if (out / f"{pending[0]}.start").exists() else None
            if started != current:
                current, since = started, time.monotonic()
            if done:
                rc = proc.returncode
                why = f"process killed by {signal.Signals(-rc).name}" if rc < 0 else f"process exited with code {rc} and no result"
                results[pending[0]] = {"ok": False, "error_type": "Crash", "error_msg": f"{why}\n{_tail(log)}"}
                return pending[1:]
            if time.monotonic() - since > timeout:
                _kill(proc)
                results[pending[0]] = {"ok": False, "error_type": "Timeout",
                                       "error_msg": f"no result within {timeout:g} s (process killed)"}
                return pending[1:]
            time.sleep(POLL_S)


def _load(path: Path) -> dict:
    try:
        result = torch.load(path, weights_only=True)
    except Exception as e:  # a result file that is not plain tensors is not accepted
        return {"ok": False, "error_type": "CorruptResult", "error_msg": f"{type(e).__name__}: {e}"[:LOG_TAIL]}
    if not isinstance(result, dict) or "ok" not in result:
        return {"ok": False, "error_type": "CorruptResult", "error_msg": "the result file is not a child result"}
    return result


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # the whole group: a submission may have forked
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.wait()


def _tail(log: Path) -> str:
    size = log.stat().st_size
    with open(log, "rb") as f:
        f.seek(max(0, size - LOG_TAIL))
        return f.read().decode(errors="replace")
