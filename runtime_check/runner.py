"""The parent side of `child.py`: run one side over many cases in as few processes as
the submission allows.

The parent watches the child's marker files. A case that runs past the timeout is
charged a Timeout, a child that dies (abort, segfault, exit) is charged a Crash on
the case it had started, and in both cases a new child picks up the cases after it.
So one bad case never costs the others their result, and a well-behaved side costs
one process start-up for all its cases.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from contextlib import ExitStack, nullcontext
from pathlib import Path

from tritonlint.runtime_check import device
from tritonlint.runtime_check.backends import Backend
from tritonlint.runtime_check.options import DEFAULTS
from tritonlint.runtime_check.protocol import (TIMED_CASE, CaseResult, ChildSpec, case_result, case_started, census_result,
                                               check_case, checked_call, child_log, child_marks, child_order, crash_report,
                                               failed_case, failure, load_case_result, load_marks, load_operators,
                                               load_timing_result, operators_result, publish, timing_done, timing_go, timing_ready,
                                               timing_result)

CHILD = "tritonlint.runtime_check.child"
POLL_S = 0.02
TIMED_POLL_S = 0.002  # while the parent's clock runs around a timed phase


def _all_passed(results: dict[int, CaseResult], census: dict | None) -> bool:
    return all(r.get("ok") for r in results.values())


@dataclasses.dataclass
class Timed:
    """A timed phase in the same child, after its cases and census (child.py --time): the child
    builds the call on case 1's inputs and says ready; the parent decides (`go`, given the results
    and the census), takes the device's timing lock, says go, and runs its own clock until the
    times appear (`wall_s`). Timing never runs beside another timing on the device."""

    warmup: int = DEFAULTS.warmup
    repeats: int = DEFAULTS.repeats
    baseline: str = DEFAULTS.baseline
    operators: bool = False
    go: Callable[[dict[int, CaseResult], dict | None], bool] = _all_passed
    # what came back, set by run_side: the times ({side: times}) or why there are none (a Failure);
    # None when the parent did not say go
    result: dict | None = None
    # the candidate's call after its timed ones, on another case's inputs (protocol.check_case):
    # (that case, its CaseResult), which the parent checks as it checks a verify case
    checked: tuple[int, CaseResult] | None = None
    wall_s: float | None = None  # the parent's clock from its go to the times
    lock_s: dict | None = None  # the device's timing lock: {"wait": for it, "held": from the go to the child's done}
    side_name: str = "implementation"  # set by run_side: "framework" for Model

    def side(self, name: str) -> dict:
        """One side's times ("framework" or "implementation") with the parent's `wall_ms`, or why
        there are none (a Failure)."""
        if self.result is None:
            return failure("NotTimed", "the child gave no timed phase")
        if "error_type" in self.result:
            return self.result
        return {**self.result[name], "wall_ms": round(self.wall_s * 1e3, 3)}  # one side, after a go: _timed_phase

    def key(self) -> tuple:
        """What a reference's timing depends on besides its inputs: the same for every submission of a run."""
        return (self.warmup, self.repeats, self.operators, self.baseline)

    def args(self) -> tuple[str, ...]:
        return ("--time", f"{self.warmup},{self.repeats}", "--baseline", self.baseline) + (("--operators",) if self.operators else ())


class Early:
    """A side's child started before its inputs exist: the candidate's, while the reference runs
    (verify.py). It starts its device and its imports, then waits, reading and running nothing
    of the submission, until run_side gives it its arguments (child.py --early, protocol.child_order),
    which it does only once the reference's run is over: its outputs and seeds gone. Its start is
    then off the submission's critical path. `close()` stops it if run_side never ordered it."""

    def __init__(self, backend: Backend, cls: str, env: dict[str, str] | None = None):
        self.out = Path(tempfile.mkdtemp(prefix=f"tritonlint-{cls}-"))
        self.log, self.asked, self.stack = child_log(self.out, 0), time.time(), ExitStack()
        spec = ChildSpec(CHILD, ("--early", backend.device, str(child_order(self.out)), device.lock_file(backend)),
                         env or backend.child_env(), writable=(str(self.out),))
        try:  # not under the device's shared lock: its start waits for the fork server, its device start takes that lock
            self.proc = _started(spec, self.log, backend, self.stack, hold=False)
        except BaseException:
            self.close()
            raise

    def order(self, args: tuple[str, ...]) -> None:
        publish(child_order(self.out), lambda path: path.write_text(json.dumps(list(args))))

    def close(self) -> None:
        self.stack.close()
        shutil.rmtree(self.out, ignore_errors=True)


class Starting:
    """An Early child started on a thread (`start`): a fork server still busy with its idle imports
    answers late, and the side that asks (the reference's, watching its child) goes on meanwhile.
    `get()`: the child, or None where it could not start (the side then starts its child afresh)."""

    def __init__(self, backend: Backend, cls: str, env: dict[str, str] | None = None):
        self.args, self.made, self.thread = (backend, cls, env), [], None

    def start(self) -> None:
        self.thread = threading.Thread(target=self._run, daemon=True, name="tritonlint-early")
        self.thread.start()

    def _run(self) -> None:
        try:
            self.made.append(Early(*self.args))
        except Exception:  # the fork server is gone: the side's own start says so
            pass

    def get(self) -> Early | None:
        if self.thread is not None:
            self.thread.join()
        return self.made[0] if self.made else None


def _started(spec: ChildSpec, log: Path, backend: Backend, stack: ExitStack, hold: bool = True):
    """A child started and registered as a user of the device, both under the device's shared lock
    (`hold`): no child is born during a timed phase, where the timer, which looked for users before
    it, would not stop it. Both undone when `stack` closes."""
    with device.judging(backend) if hold else nullcontext():
        proc = stack.enter_context(spec.running(log))
        stack.enter_context(device.user(backend, proc.pid))
    return proc


def run_side(backend: Backend, module: Path, cls: str, inputs: Path, cases: list[int], timeout: float, *,
             state: bool = False, env: dict[str, str] | None = None, census: dict | None = None,
             make_inputs: str | None = None, phases: dict | None = None, timed: Timed | None = None,
             on_result: Callable[[int, CaseResult], None] | None = None, early: Early | None = None,
             started: Callable[[], None] | None = None) -> dict[int, CaseResult]:
    """{case: result}; the results are loaded into memory and their files removed
    before this returns, so the next side's process never sees them. `census`, when given,
    receives the runtime census the child took after its cases (census.load's form).
    `make_inputs` (the reference's side only): the child first makes each case's input file
    in `inputs` with the task's generator of that name (child.make_case). `phases`, when given,
    receives the children's own timelines (protocol.load_marks). `timed`: a timed phase after the
    cases, on case 1 (Timed), in the child that ran case 1 and every case after it. `on_result(idx,
    result)` is called with each result loaded from a child's file as it comes, while the child goes
    on with its next case (an exception in it leaves that result for the caller to see later).
    `early`: the first child, started already (Early; its folder is this side's). `started()`: called
    once the first child has started, while it runs."""
    results: dict[int, CaseResult] = {}
    out = early.out if early is not None else Path(tempfile.mkdtemp(prefix=f"tritonlint-{cls}-"))
    try:
        pending = list(cases)
        while pending:  # each child settles at least one case, so this ends
            spec = ChildSpec(CHILD,
                             ("--module", str(Path(module).resolve()), "--cls", cls, "--inputs", str(inputs), "--out", str(out),
                              "--cases", ",".join(map(str, pending)), "--device", backend.device)
                             + (("--state",) if state else ()) + (("--census",) if census is not None else ())
                             + (("--make-inputs", make_inputs) if make_inputs else ())
                             + (timed.args() if timed is not None else ()),
                             env or backend.child_env(), writable=(str(out),) + ((str(inputs),) if make_inputs else ()),
                             warm=cls != "Model")
            if timed is not None:
                timed.side_name = "framework" if cls == "Model" else "implementation"
            results.update(_one_child(spec, out, pending, timeout, phases, timed, backend, census, on_result, early, started))
            early = started = None  # a restarted child starts afresh
            pending = [i for i in pending if i not in results]
        if census is not None and not census:  # not read at a timed phase's go
            from tritonlint.runtime_check.census import load

            census.update(load(census_result(out)))
    finally:
        shutil.rmtree(out, ignore_errors=True)
    return results


def _one_child(spec: ChildSpec, out: Path, cases: list[int], timeout: float, phases: dict | None, timed: Timed | None,
               backend: Backend, census: dict | None, on_result=None, early: Early | None = None,
               started: Callable[[], None] | None = None) -> dict[int, CaseResult]:
    """Run one child over `cases`, in order, until it has done them all or one case hangs
    or kills it; the results it left, with that case's Timeout or Crash, each with the
    isolation that held (`isolation`, set here: the child cannot forge it). `early`: the child,
    started already, is given `spec`'s arguments."""
    results: dict[int, CaseResult] = {}
    if early is not None and early.proc.poll() is not None:  # it died before its order: afresh, in the same folder
        early.stack.close()
        early = None
    log, asked = (early.log, early.asked) if early is not None else (child_log(out, cases[0]), time.time())
    timed = timed if timed is not None and cases[0] == TIMED_CASE else None  # a restarted child has not run it
    with early.stack if early is not None else ExitStack() as stack:
        if early is not None:
            proc = early.proc
            early.order(spec.args)
        else:
            proc = _started(spec, log, backend, stack)
        if started is not None:
            started()
        _watch(proc, out, cases, timeout, log, results, ready=timing_ready(out) if timed else None, on_result=on_result,
               backend=backend)
        if timed is not None and len(results) == len(cases) and results[TIMED_CASE].get("ok"):
            _timed_phase(proc, out, timed, backend, timeout, results, census, log)
        leaving = time.time()
    if phases is not None:  # with the parent's wait for its end (a device's teardown), as `exit`
        phases.update({**load_marks(child_marks(out, cases[0]), asked), "exit": round(time.time() - leaving, 4)})
    for r in results.values():
        r["isolation"] = proc.isolation
    return results


def _timed_phase(proc, out: Path, timed: Timed, backend: Backend, timeout: float, results: dict[int, CaseResult],
                 census: dict | None, log: Path) -> None:
    """After the child's cases: go or not, then the timed phase under the parent's clock (Timed)."""
    from tritonlint.runtime_check.census import load

    if census is not None:  # the one read of it: run_side reports what the go was decided on
        census.update(load(census_result(out)))
    try:
        go = timed.go(results, census)
    except Exception:  # the parent could not judge now (the device full while the child lives): judged after it ends
        go = False
    if not go:
        return  # the child is stopped, untimed
    early = os.path.lexists(timing_result(out, TIMED_CASE))  # before the go: only a failure may be there already
    if not early and os.path.lexists(timing_ready(out)):
        # until the child says done (its check call and operators run on the device too), with every
        # other child on the device stopped
        asked = time.perf_counter()
        with device.timing_lock(backend, proc.pid):
            started = time.perf_counter()
            if not _say_go(out):
                proc.stop()
                timed.result = failure("TimingRefused", "the child made its own go file")
                return
            ended = _until(proc, timing_result(out, TIMED_CASE), timeout, TIMED_POLL_S)
            timed.wall_s = time.perf_counter() - started
            if ended != "timeout":  # its check call and operators; its exit (the device's teardown) is outside
                ended = _until(proc, timing_done(out), timeout, POLL_S)
            timed.lock_s = {"wait": round(started - asked, 3), "held": round(time.perf_counter() - started, 3)}
        # a child that works on after it said done is still a user of the device: the next timer stops it
        ended = "timeout" if ended == "timeout" else _until(proc, None, timeout, POLL_S, backend)
    else:  # it wrote its times before it was told to (a failure before it was ready, or a forgery), or it died
        proc.stop()
        ended = "exited"
    if ended == "timeout":
        proc.stop()
        timed.result = failure("Timeout", f"the timed phase gave no result within {timeout:g} s (process killed)")
        return
    timed.result = load_timing_result(timing_result(out, TIMED_CASE)) if os.path.lexists(timing_result(out, TIMED_CASE)) \
        else failure("Crash", crash_report(proc.returncode, log))
    if "error_type" not in timed.result:
        if timed.wall_s is None:
            timed.result = failure("TimingRefused", "the child wrote times before the parent said go")
        elif set(timed.result) != {timed.side_name}:
            timed.result = failure("CorruptResult", f"{timing_result(out, TIMED_CASE).name}: times of {sorted(timed.result)}, "
                                                    f"not of the {timed.side_name} alone")
    if "error_type" in timed.result:
        return
    if "implementation" in timed.result:
        idx = check_case(sorted(results))
        timed.checked = (idx, load_case_result(checked_call(out, idx)))
    if timed.operators:
        ops = load_operators(operators_result(out, TIMED_CASE))
        if "error_type" in ops:
            timed.result = ops
        else:
            for side in timed.result.values():
                side["operators"] = ops


def _say_go(out: Path) -> bool:
    """Create the go file in the child's folder without following a link the child put there:
    False when anything already stands under its name."""
    try:
        os.close(os.open(timing_go(out), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644))
    except OSError:
        return False
    return True


def _until(proc, path: Path | None, timeout: float, poll: float, backend: Backend | None = None) -> str:
    """Wait for `path` to appear (None: for the child to end): "done", "exited" or "timeout"."""
    deadline = time.monotonic() + timeout
    while True:
        if path is not None and os.path.lexists(path):
            return "done"
        if proc.poll() is not None:
            return "exited" if path is not None else "done"
        if time.monotonic() > deadline:
            return "timeout"
        deadline += _nap(proc, poll, backend)


def _nap(proc, poll: float, backend: Backend | None) -> float:
    """One poll's sleep; then a child left stopped by a timer that died is continued. The seconds
    the child was seen stopped (by another's timed phase, device.timing_lock), which its deadlines
    do not count: a timed phase that hangs until its timeout must not time out the device's others."""
    time.sleep(poll)
    return poll if backend is not None and device.resume_if_left(backend, proc.pid) else 0.0


def _watch(proc, out: Path, cases: list[int], timeout: float, log: Path, results: dict[int, CaseResult],
           ready: Path | None = None, on_result=None, backend: Backend | None = None) -> None:
    # One fixed deadline per case: `timeout` from the moment its start marker is first seen
    # (or, before any, from the moment the child started). A child that deletes and re-creates
    # its marker does not move it.
    deadline = {None: time.monotonic() + timeout}
    while True:
        done = proc.poll() is not None  # before the files: a child that wrote its last result and exited is not a crash
        for idx in cases:
            if idx not in results and os.path.lexists(case_result(out, idx)):  # a symlink too: it is refused, not followed
                results[idx] = load_case_result(case_result(out, idx))
                if on_result is not None:
                    try:
                        on_result(idx, results[idx])
                    except Exception:  # the caller sees this result again in what run_side returns
                        pass
        pending = [i for i in cases if i not in results]
        if not pending:  # the census, if asked for, comes after the last case: it gets a case's time
            if _until(proc, ready, timeout, POLL_S, backend) == "timeout":  # with a timed phase to come, until it is ready
                proc.stop()
            return
        started = pending[0] if os.path.lexists(case_started(out, pending[0])) else None
        if started is not None and started not in deadline:
            deadline[started] = time.monotonic() + timeout
        if done:
            results[pending[0]] = failed_case("Crash", crash_report(proc.returncode, log))
            return
        if time.monotonic() > deadline[started]:
            proc.stop()
            results[pending[0]] = failed_case("Timeout", f"no result within {timeout:g} s (process killed)")
            return
        stopped = _nap(proc, POLL_S, backend)
        if stopped:
            deadline = {k: v + stopped for k, v in deadline.items()}
