"""How the gate's parent and its children talk, in one place: the files they exchange,
what a case result is, how a child is started and stopped, and how a dead child is
reported.

The parent writes each case's inputs to `caseN.pt`. A runner child (`child.py`)
touches `N.start` before it runs case N and writes `N.pt` when it is done; the
timing child (`timing.py`) writes its times to `timingN.json` and the output of its
last timed call to `lastN.pt`. Every child's stdout and stderr go to a log file,
whose end is the crash report when the child dies. Imports no torch."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypedDict

MESSAGE_CHARS = 4000  # an error message is cut to its last this many characters: a traceback ends with the cause


class CaseInput(TypedDict):
    """What the parent writes to `caseN.pt`: the same for both sides of a case."""

    init: list  # get_init_inputs()
    inputs: list  # get_inputs(), or get_small_inputs() on the cpu backend
    seed: int  # torch.manual_seed before the model is built: both sides draw the same weights


class Failure(TypedDict):
    """Why a case, a timed shape or an eval job failed, as every result file records it."""

    error_type: str  # the exception's class name, or the gate's: Crash, Timeout, MismatchError, ...
    error_msg: str


class CaseResult(TypedDict, total=False):
    """What a runner child returns for one case. A plain dict, since the parent reads it
    with `torch.load(weights_only=True)`, which accepts only tensors and plain containers."""

    ok: bool  # always present
    outputs: Any  # forward's return value, tensors on the CPU (child._portable)
    outputs_meta: Any  # compare.output_meta(forward's return value): each tensor's device and strides before the move
    inputs_after: list  # the inputs as they were after the call, to catch mutation
    state: dict  # with --state: the model's parameters and buffers after the call
    error_type: str  # when not ok
    error_msg: str


def failure(kind: str, message: str) -> Failure:
    return {"error_type": kind, "error_msg": message[-MESSAGE_CHARS:]}


def failed_case(kind: str, message: str) -> CaseResult:
    return {"ok": False, **failure(kind, message)}


def case_input(folder: Path, idx: int) -> Path:
    return folder / f"case{idx}.pt"


def case_started(folder: Path, idx: int) -> Path:
    return folder / f"{idx}.start"


def case_result(folder: Path, idx: int) -> Path:
    return folder / f"{idx}.pt"


def timing_result(folder: Path, idx: int) -> Path:
    return folder / f"timing{idx}.json"


def timed_outputs(folder: Path, idx: int) -> Path:
    return folder / f"last{idx}.pt"


def child_log(folder: Path, first_case: int) -> Path:
    """The log of the child that starts at `first_case` (a restarted child starts later)."""
    return folder / f"child{first_case}.log"


@dataclasses.dataclass(frozen=True)
class ChildSpec:
    """One child process: `python -m MODULE ARGS...` with this environment, in this folder."""

    module: str  # tritonlint.runtime_check.child or .timing
    args: tuple[str, ...]
    env: dict[str, str]  # Backend.child_env(): the interpreter switch, a private Triton cache
    cwd: str | None = None  # None: the parent's (known limit: children get no private working directory yet)

    @contextmanager
    def running(self, log: Path) -> Iterator[subprocess.Popen]:
        """The started child; on leaving, one still running is killed with all it forked.
        Its output goes to `log`: a submission may print gigabytes."""
        with open(log, "wb") as sink:
            proc = subprocess.Popen([sys.executable, "-m", self.module, *self.args], stdout=sink,
                                    stderr=subprocess.STDOUT, env=self.env, cwd=self.cwd,
                                    start_new_session=True)  # its own process group, for kill()
        try:
            yield proc
        finally:
            if proc.poll() is None:
                kill(proc)


def kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # the whole group: a submission may have forked
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.wait()


def crash_report(returncode: int, log: Path) -> str:
    """Why a child died without a result: the signal or exit code, then the end of its log."""
    if returncode < 0:
        why = f"process killed by {signal.Signals(-returncode).name}"
    else:
        why = f"process exited with code {returncode} and no result"
    return f"{why}\n{_tail(log, MESSAGE_CHARS - len(why) - 1)}"


def _tail(log: Path, size: int) -> str:
    with open(log, "rb") as f:
        f.seek(max(0, log.stat().st_size - size))
        return f.read().decode(errors="replace")
