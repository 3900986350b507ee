"""How the gate's parent and its children talk, in one place: the files they exchange,
what a case result is, how a child is started and stopped, and how a dead child is
reported.

The reference's child writes each case's inputs to `caseN.pt`. A child (`child.py`)
touches `N.start` before it runs case N and writes `N.pt` when it is done; with a
timed phase (`--time`) it then touches `ready`, waits for the parent's `go`, and
writes its times to `timing1.json`, the result of one more call after the timed ones, on
another case's inputs (`checkedN.pt`, check_case), and, if asked, `operators1.json`; `marksN.json` is its own timeline. Every child's
stdout and stderr go to a log file, whose end is the crash report when the child
dies. Imports no torch.

Every child runs sandboxed (ChildSpec, sandbox.py), and everything a child leaves is
data from the submission: result files are read as bounded regular files without
following links or blocking, and validated (read_untrusted, load_case_result,
load_timing_result); a malformed one is that case's CorruptResult. Which isolation held
is each case result's `isolation` (set by the parent) and verify's `isolation`.
Reports are written by the parent alone, as strict JSON (strict_json)."""

from __future__ import annotations

import dataclasses
import io
import json
import secrets
import math
import os
import shutil
import signal
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

if TYPE_CHECKING:
    from tritonlint.runtime_check.zygote import Forked

MESSAGE_CHARS = 4000  # an error message is cut to its last this many characters: a traceback ends with the cause


class CaseInput(TypedDict):
    """What the parent writes to `caseN.pt`: the same for both sides of a case."""

    init: list  # get_init_inputs()
    inputs: list  # get_inputs(), or get_small_inputs() on the cpu backend
    seed: int  # torch.manual_seed before the model is built: both sides draw the same weights (MODEL_SEED)


# Both models are built from this seed: public, and independent of the inputs, which are drawn from
# seeds the OS gives each run (`input_seed`). A candidate that knew the input seed could regenerate
# the inputs in __init__ and precompute the answer; it never learns it before its outputs are in.
MODEL_SEED = 20260501


def input_seed() -> int:
    return secrets.randbits(62)


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
    inputs_after: list  # the inputs as they were after the call, to catch mutation; UNCHANGED where bit-identical
    state: dict  # with --state: the model's parameters and buffers after the call
    error_type: str  # when not ok
    error_msg: str


# In a case result's inputs_after: this input is bit-identical to the child's copy from before the
# call. Only inputs a call changed travel back (a large unchanged input costs nothing); a child
# that says so falsely gains nothing it could not have by returning its copy.
UNCHANGED = "unchanged"


def failure(kind: str, message: str) -> Failure:
    return {"error_type": kind, "error_msg": message[-MESSAGE_CHARS:]}


def failed_case(kind: str, message: str) -> CaseResult:
    return {"ok": False, **failure(kind, message)}


def save(value, path: Path) -> None:
    """torch.save, without the archive's CRC32s where torch allows (about half the time of a large
    save): every file is read back by a validating loader, and a CRC guards against no sender."""
    import torch

    try:
        from torch.utils.serialization import config
        config.save.compute_crc32 = False
    except (ImportError, AttributeError):
        pass
    torch.save(value, path)


def case_input(folder: Path, idx: int) -> Path:
    return folder / f"case{idx}.pt"


def case_started(folder: Path, idx: int) -> Path:
    return folder / f"{idx}.start"


def case_result(folder: Path, idx: int) -> Path:
    return folder / f"{idx}.pt"


def timing_result(folder: Path, idx: int) -> Path:
    return folder / f"timing{idx}.json"


def case_seeds(folder: Path) -> Path:
    """{case: input seed}, which the parent writes for the reference's child to make the
    inputs from and removes before any candidate's child starts."""
    return folder / "seeds.json"


def census_result(folder: Path) -> Path:
    return folder / "census.json"


def checked_call(folder: Path, idx: int) -> Path:
    return folder / f"checked{idx}.pt"


TIMED_CASE = 1  # the case whose inputs a timed phase times (its seed, like every case's, is secret)
CHECK_CASE = 2  # the case whose inputs the call after the timed ones runs on (check_case)


def check_case(cases: list[int]) -> int:
    """The case of the call after a candidate's timed ones, which must match the reference's answer
    for it: not the timed case where the run has another, so a call that skipped its work and
    returned a buffer from an earlier call (the allocator hands the same memory back) holds the
    answer to other inputs. With one case, the timed case itself."""
    return CHECK_CASE if CHECK_CASE in cases else TIMED_CASE


def timing_ready(folder: Path) -> Path:
    """Touched by a child with a timed phase (child.py --time) once the call to time is built: it
    then waits for `timing_go`, which the parent touches while it holds the device's timing lock."""
    return folder / "ready"


def timing_go(folder: Path) -> Path:
    return folder / "go"


def timing_done(folder: Path) -> Path:
    """Touched by a child after its timed phase's last work on the device (the times, the check
    call, the operators): the parent leaves the device's timing lock then, not at the child's end."""
    return folder / "done"


def operators_result(folder: Path, idx: int) -> Path:
    """{operator: device ms per call} of a timed phase with --operators, written after its times."""
    return folder / f"operators{idx}.json"


def child_marks(folder: Path, first_case: int) -> Path:
    """[[milestone, wall clock], ...]: when the child that starts at `first_case` reached each
    milestone (started, device, load, inputsN, caseN, census, ...)."""
    return folder / f"marks{first_case}.json"


MARKS_BYTES = 64 << 10


def load_marks(path: Path, since: float) -> dict[str, float]:
    """A child's milestones as {milestone: seconds since the previous one}, the first counted
    from `since` (the parent's wall clock when it asked for the child). The child's own
    account, so a diagnostic only (verify's `child_phases_s`); malformed or missing: {}."""
    marks = _load_json(path, MARKS_BYTES, lambda marks: None if isinstance(marks, list) and all(
        isinstance(m, list) and len(m) == 2 and isinstance(m[0], str) and _number(m[1]) for m in marks) else "malformed")
    laps, last = {}, since
    for mark in marks if isinstance(marks, list) else []:  # a failure (a dict) gives none
        laps[mark[0][:40]] = round(max(mark[1] - last, 0.0), 4)
        last = mark[1]
    return laps


def child_order(folder: Path) -> Path:
    """An early child's order (child.py --early): the JSON list of its arguments, which the parent
    writes once the child may run the submission (the reference's outputs and seeds are gone)."""
    return folder / "order.json"


def publish(final: Path, write) -> None:
    """`write(path)` to a temporary name, then renamed to `final`: a reader on the other side never
    reads half a file."""
    partial = final.with_name(final.name + ".tmp")
    write(partial)
    os.replace(partial, final)


def child_log(folder: Path, first_case: int) -> Path:
    """The log of the child that starts at `first_case` (a restarted child starts later)."""
    return folder / f"child{first_case}.log"


# The children's environment is an allow-list: a secret in the caller's environment (a token, a
# key) must not reach a submission. Names, then prefixes.
ENV_NAMES = frozenset({"PATH", "LANG", "LANGUAGE", "LD_LIBRARY_PATH", "TRITON_INTERPRET", "HIP_VISIBLE_DEVICES",
                       "ROCR_VISIBLE_DEVICES", "TRITONLINT_NO_NAMESPACES"})
ENV_PREFIXES = ("LC_", "TRITON_", "CUDA_", "NVIDIA_", "ASCEND_", "ASCEND", "NPU_")  # what the backends read


def child_environment(env: dict[str, str], box: Path) -> dict[str, str]:
    """`env` (Backend.child_env()) cut to the allow-list, with a private HOME and TMPDIR in `box`."""
    out = {k: v for k, v in env.items() if k in ENV_NAMES or k.startswith(ENV_PREFIXES)}
    out["HOME"] = str(box / "home")
    out["TMPDIR"] = str(box / "tmp")
    return out


@dataclasses.dataclass(frozen=True)
class ChildSpec:
    """One child process: `python -I -m MODULE ARGS...`, sandboxed (sandbox.py): an isolated
    interpreter (no PYTHONPATH, no user site, no working directory on sys.path), a private
    empty working directory with its own HOME and TMPDIR, the environment cut to an
    allow-list, and where the kernel allows its own pid/mount/net namespaces with every
    folder but its own and `writable` read-only. Every process it starts dies with it."""

    module: str  # tritonlint.runtime_check.child
    args: tuple[str, ...]
    env: dict[str, str]  # Backend.child_env(): the interpreter switch, a private Triton cache
    writable: tuple[str, ...] = ()  # folders the child writes besides its box (its result folder)
    isolate: bool = True  # own namespaces where the kernel allows (sandbox.py)
    # forked once the fork server has done its idle imports (zygote.LATER), which a child that launches
    # Triton kernels and takes a census would otherwise do itself: the candidate's
    warm: bool = False

    @contextmanager
    def running(self, log: Path) -> Iterator["Forked"]:
        """The started child (forked from the fork server for this environment, zygote.py);
        on leaving, it and everything it started are gone (killed if still running), and
        `proc.isolation` says which isolation held. Its output goes to `log`: a submission
        may print gigabytes."""
        from tritonlint.runtime_check.zygote import server_for

        box = Path(tempfile.mkdtemp(prefix="tritonlint-box-"))
        for sub in ("home", "tmp", "work"):
            (box / sub).mkdir()
        env = child_environment(self.env, box)
        cache = env.get("TRITON_CACHE_DIR")
        if cache:  # a cache folder that does not exist yet would stay read-only in the child: every compile fails
            os.makedirs(cache, exist_ok=True)
        writable = [str(box), *self.writable, *([cache] if cache else [])]
        try:
            proc = server_for(env).spawn(self.module, list(self.args), env, str(box / "work"), writable, self.isolate, log,
                                         self.warm)
        except BaseException:
            shutil.rmtree(box, ignore_errors=True)
            raise
        try:
            yield proc
        finally:
            proc.stop()
            proc.isolation = ISOLATION.format(proc.report or "the keeper died before it said")
            shutil.rmtree(box, ignore_errors=True)


def prestart(env: dict[str, str]) -> None:
    """Start the fork server that children of `env` (Backend.child_env()) will be forked from, without
    waiting for it: its imports overlap the caller's own work until the first child is needed."""
    from tritonlint.runtime_check.zygote import server_for

    server_for(child_environment(env, Path(tempfile.gettempdir())))


ISOLATION = "python -I, private working directory, scrubbed environment; {}"


def crash_report(returncode: int, log: Path) -> str:
    """Why a child died without a result: the signal or exit code, then the end of its log."""
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:  # a real-time or unnamed signal
            name = f"signal {-returncode}"
        why = f"process killed by {name}"
    else:
        why = f"process exited with code {returncode} and no result"
    return f"{why}\n{_tail(log, MESSAGE_CHARS - len(why) - 1)}"


def _tail(log: Path, size: int) -> str:
    """The end of a child's log, read as untrusted data: the child may have replaced it."""
    data = read_untrusted(log, 1 << 62, tail=size)
    return data.decode(errors="replace") if isinstance(data, bytes) else f"(log unreadable: {data['error_msg']})"


# Result files are written by the child, so they are data from the submission: a FIFO would
# block the parent's read forever, a symlink would make it read a file of its choosing, a
# sparse terabyte would exhaust its memory. Each is opened without following links or
# blocking, must be a regular file within a size limit, and is parsed as plain data only.
CASE_RESULT_BYTES = 16 << 30  # a case result: outputs, inputs after the call, the model's state
TIMING_RESULT_BYTES = 4 << 20  # a timing result: numbers and operator names


class _Bounded(io.RawIOBase):
    """The first `size` bytes of an open file, whatever is appended to it meanwhile: what a reader
    of a file that a live child may still write gets to see."""

    def __init__(self, f, size: int):
        self.f, self.size = f, size

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.f.tell()

    def seek(self, pos: int, whence: int = 0) -> int:
        return self.f.seek({0: 0, 1: self.f.tell(), 2: self.size}[whence] + pos)

    def readinto(self, b) -> int:
        n = max(0, min(len(b), self.size - self.f.tell()))
        return self.f.readinto(memoryview(b).cast("B")[:n]) if n else 0


@contextmanager
def open_untrusted(path: Path, limit: int, *, tail: int | None = None) -> Iterator[io.RawIOBase | Failure]:
    """A regular file of at most `limit` bytes (the last `tail` of any size, for logs) as a
    readable, seekable stream of the size it had when opened, or a CorruptResult failure saying
    why not. Read straight into its destination (torch.load reads each tensor into its own memory):
    a 256 MB result read into bytes, then loaded from them, took 0.4 s on the H100's host."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        yield failure("MissingResult", f"{path.name}: no such file")
        return
    except OSError as e:  # ELOOP: a symlink
        yield failure("CorruptResult", f"{path.name}: cannot be opened as a plain file ({e.strerror})")
        return
    with os.fdopen(fd, "rb", buffering=0) as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            yield failure("CorruptResult", f"{path.name}: not a regular file (mode {stat.filemode(st.st_mode)})")
        elif tail is None and st.st_size > limit:
            yield failure("CorruptResult", f"{path.name}: {st.st_size} bytes, over the {limit}-byte limit")
        else:
            if tail is not None:
                f.seek(max(0, st.st_size - tail))
            yield _Bounded(f, st.st_size)


def read_untrusted(path: Path, limit: int, *, tail: int | None = None) -> bytes | Failure:
    """The bytes of a regular file of at most `limit` bytes (the last `tail` of any size, for logs),
    or a CorruptResult failure saying why not (open_untrusted)."""
    with open_untrusted(path, limit, tail=tail) as f:
        return f if isinstance(f, dict) else f.read()


def not_a_plain_file(path: Path, limit: int) -> str | None:
    """Why `path` (written by a child that is gone) may not be opened as data, or None."""
    st = os.lstat(path)
    if not stat.S_ISREG(st.st_mode):
        return f"{path.name}: not a regular file (mode {stat.filemode(st.st_mode)})"
    return f"{path.name}: {st.st_size} bytes, over the {limit}-byte limit" if st.st_size > limit else None


def load_case_result(path: Path) -> CaseResult:
    """A runner child's case result, or that case's CorruptResult. Never raises, never blocks."""
    import torch

    with open_untrusted(path, CASE_RESULT_BYTES) as f:
        if isinstance(f, dict):
            return failed_case(f["error_type"], f["error_msg"])
        try:
            result = torch.load(f, weights_only=True)  # tensors and plain containers only
        except Exception as e:
            return failed_case("CorruptResult", f"{path.name}: {type(e).__name__}: {e}")
    if not isinstance(result, dict) or not isinstance(result.get("ok"), bool):
        return failed_case("CorruptResult", f"{path.name}: not a case result")
    if not result["ok"]:
        if not (isinstance(result.get("error_type"), str) and isinstance(result.get("error_msg"), str)):
            return failed_case("CorruptResult", f"{path.name}: a failed case without its error")
        return failed_case(result["error_type"][:200], result["error_msg"])
    if not isinstance(result.get("inputs_after"), list) or "outputs" not in result:
        return failed_case("CorruptResult", f"{path.name}: a passed case without its outputs")
    if "state" in result and not isinstance(result["state"], dict):
        return failed_case("CorruptResult", f"{path.name}: the model state is not a dict")
    return result


_SIDE_NUMBERS = ("avg_latency_ms", "min_ms", "p20_ms", "p80_ms", "mean_ms", "peak_memory_mb", "sync_wait_ms",
                 "idle_sync_wait_ms")


def _load_json(path: Path, limit: int, problem):
    """A JSON file a child wrote, read as untrusted data (read_untrusted) and checked by `problem`
    (why the value is malformed, or None): the value, or a CorruptResult failure. Never raises,
    never blocks."""
    data = read_untrusted(path, limit)
    if isinstance(data, dict):
        return data
    try:
        value = json.loads(data, parse_constant=_no_constant)
    except (ValueError, RecursionError) as e:
        return failure("CorruptResult", f"{path.name}: not JSON ({type(e).__name__}: {str(e)[:200]})")
    why = problem(value)
    return failure("CorruptResult", f"{path.name}: {why}") if why else value


def load_timing_result(path: Path) -> dict:
    """A timed phase's result ({"framework"} or {"implementation"}, or a failure), validated:
    anything else is a CorruptResult failure."""
    return _load_json(path, TIMING_RESULT_BYTES, _timing_problem)


def load_operators(path: Path) -> dict[str, float] | Failure:
    """A timed phase's per-operator times ({name: ms}), validated like a timing result's `operators`."""
    return _load_json(path, TIMING_RESULT_BYTES, lambda ops: None if isinstance(ops, dict) and all(
        isinstance(k, str) and _number(v) for k, v in ops.items()) else "not a map of operator names to numbers")


def _no_constant(name: str):
    raise ValueError(f"{name} is not a number the protocol allows")


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _timing_problem(result) -> str | None:
    if not isinstance(result, dict):
        return "not a JSON object"
    if "error_type" in result:
        ok = set(result) == {"error_type", "error_msg"} and all(isinstance(v, str) for v in result.values())
        return None if ok else "a malformed failure"
    if set(result) - {"framework", "implementation"} or not result:
        return f"unexpected keys {sorted(result)}"
    for side, times in result.items():
        if not isinstance(times, dict):
            return f"{side} is not an object"
        for key in _SIDE_NUMBERS:
            if key in times and not _number(times[key]):
                return f"{side}.{key} is not a finite number"
        if not (_number(times.get("avg_latency_ms")) and times["avg_latency_ms"] >= 0):
            return f"{side}.avg_latency_ms is missing or negative"
        if not (isinstance(times.get("repeats", 0), int) and isinstance(times.get("times_ms", []), list)
                and all(_number(t) for t in times.get("times_ms", []))):
            return f"{side}: malformed repeats or times_ms"
        ops = times.get("operators", {})
        if not (isinstance(ops, dict) and all(isinstance(k, str) and _number(v) for k, v in ops.items())):
            return f"{side}.operators is not a map of names to numbers"
        if set(times) - {*_SIDE_NUMBERS, "repeats", "times_ms", "operators"}:
            return f"{side}: unexpected keys"
    return None


def json_safe(value):
    """`value` with every NaN and infinity replaced by the strings "NaN", "Infinity", "-Infinity",
    so the reports are strict JSON: `json.dumps(json_safe(x), allow_nan=False)`."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


def strict_json(value, **kwargs) -> str:
    """The one way a report is written: no NaN or Infinity tokens, which strict parsers reject."""
    return json.dumps(json_safe(value), allow_nan=False, **kwargs)
