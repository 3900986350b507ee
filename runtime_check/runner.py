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
import subprocess
import tempfile
import time
from pathlib import Path

from tritonlint.runtime_check.backends import Backend
from tritonlint.runtime_check.protocol import (CaseResult, ChildSpec, case_result, case_started, census_result, child_log,
                                               child_marks, crash_report, failed_case, load_case_result, load_marks)

POLL_S = 0.02


def run_side(backend: Backend, module: Path, cls: str, inputs: Path, cases: list[int], timeout: float, *,
             state: bool = False, env: dict[str, str] | None = None, census: dict | None = None,
             make_inputs: str | None = None, phases: dict | None = None) -> dict[int, CaseResult]:
    """{case: result}; the results are loaded into memory and their files removed
    before this returns, so the next side's process never sees them. `census`, when given,
    receives the runtime census the child took after its cases (census.load's form).
    `make_inputs` (the reference's side only): the child first makes each case's input file
    in `inputs` with the task's generator of that name (child.make_case). `phases`, when given,
    receives the children's own timelines (protocol.load_marks)."""
    results: dict[int, CaseResult] = {}
    out = Path(tempfile.mkdtemp(prefix=f"tritonlint-{cls}-"))
    try:
        pending = list(cases)
        while pending:  # each child settles at least one case, so this ends
            spec = ChildSpec("tritonlint.runtime_check.child",
                             ("--module", str(Path(module).resolve()), "--cls", cls, "--inputs", str(inputs), "--out", str(out),
                              "--cases", ",".join(map(str, pending)), "--device", backend.device)
                             + (("--state",) if state else ()) + (("--census",) if census is not None else ())
                             + (("--make-inputs", make_inputs) if make_inputs else ()),
                             env or backend.child_env(), writable=(str(out),) + ((str(inputs),) if make_inputs else ()))
            results.update(_one_child(spec, out, pending, timeout, phases))
            pending = [i for i in pending if i not in results]
        if census is not None:
            from tritonlint.runtime_check.census import load

            census.update(load(census_result(out)))
    finally:
        shutil.rmtree(out, ignore_errors=True)
    return results


def _one_child(spec: ChildSpec, out: Path, cases: list[int], timeout: float, phases: dict | None) -> dict[int, CaseResult]:
    """Run one child over `cases`, in order, until it has done them all or one case hangs
    or kills it; the results it left, with that case's Timeout or Crash, each with the
    isolation that held (`isolation`, set here: the child cannot forge it)."""
    results: dict[int, CaseResult] = {}
    log, asked = child_log(out, cases[0]), time.time()
    with spec.running(log) as proc:
        _watch(proc, out, cases, timeout, log, results)
    if phases is not None:
        phases.update(load_marks(child_marks(out, cases[0]), asked))
    for r in results.values():
        r["isolation"] = proc.isolation
    return results


def _watch(proc, out: Path, cases: list[int], timeout: float, log: Path, results: dict[int, CaseResult]) -> None:
    # One fixed deadline per case: `timeout` from the moment its start marker is first seen
    # (or, before any, from the moment the child started). A child that deletes and re-creates
    # its marker does not move it.
    deadline = {None: time.monotonic() + timeout}
    while True:
        done = proc.poll() is not None  # before the files: a child that wrote its last result and exited is not a crash
        for idx in cases:
            if idx not in results and os.path.lexists(case_result(out, idx)):  # a symlink too: it is refused, not followed
                results[idx] = load_case_result(case_result(out, idx))
        pending = [i for i in cases if i not in results]
        if not pending:  # the census, if asked for, comes after the last case: it gets a case's time
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
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
        time.sleep(POLL_S)
