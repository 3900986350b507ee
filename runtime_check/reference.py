"""The reference's side of a gate run: its cases' inputs, made from secret seeds by the
reference's own child on the device, and its outputs for them; kept for every submission
of the same task in one run (`References`), so a run that gates many generations of a
task runs the reference once, not once per generation.

A run's seeds are drawn from the OS when its reference first runs and stay secret from
every candidate: the seeds file is removed before any candidate's child starts, and the
seeds are written into a result only after that submission's children are all gone. The
case files the candidates read are read-only to them where the sandbox's namespaces held;
after a candidate that ran without them (the fallback, where it could rewrite the inputs
the next submission sees) the files are written again from the parent's own copy.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
import tempfile
from collections import OrderedDict
from pathlib import Path

import torch

from tritonlint.runtime_check.backends import Backend
from tritonlint.runtime_check.protocol import (CaseInput, CaseResult, MODEL_SEED, case_input, case_seeds, input_seed,
                                               save)
from tritonlint.runtime_check.runner import Timed, run_side
from tritonlint.runtime_check.sandbox import read_only_held


@dataclasses.dataclass
class ReferenceRun:
    folder: Path  # the case files (caseN.pt) every candidate's child reads
    seeds: dict[int, int]  # case -> input seed
    inputs: dict[int, list]  # case -> the parent's own copy of its inputs (CPU)
    results: dict[int, CaseResult]  # case -> the reference's result
    init: list  # get_init_inputs(), as the case files hold it
    framework: dict | None = None  # the reference's times on case 1 (Timed.side), when the run times
    exposed: bool = False  # a candidate ran where it could write the case files (no read-only namespace)
    phases: dict = dataclasses.field(default_factory=dict)  # its child's timeline (runner.run_side's `phases`)
    mapped: bool = False  # the parent's copy maps the case files (run_reference): it is no copy once one is exposed

    def restore(self) -> bool:
        """After an exposed candidate: every case file written again from the parent's copy. False
        when the parent's copy maps those files: the run cannot be trusted again."""
        if not self.exposed:
            return True
        if self.mapped:
            return False
        for idx, values in self.inputs.items():
            path = case_input(self.folder, idx)
            path.unlink(missing_ok=True)
            save(CaseInput(init=self.init, inputs=values, seed=MODEL_SEED), path)
        self.exposed = False
        return True

    def cleanup(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def run_reference(task_path: Path, backend: Backend, cases: list[int], timeout: float, *, small: bool,
                  state: bool, env: dict[str, str], timed: Timed | None = None, started=None) -> ReferenceRun:
    """Run the reference's side once: its child makes each case's inputs from a fresh secret seed
    on the device, then runs `Model` on them, then (`timed`) times it on case 1's. `started()` is
    called once its child has started (run_side)."""
    folder = Path(tempfile.mkdtemp(prefix="tritonlint-reference-"))
    seeds = {idx: input_seed() for idx in cases}
    case_seeds(folder).write_text(json.dumps({str(i): s for i, s in seeds.items()}))
    phases: dict = {}
    try:
        results = run_side(backend, task_path, "Model", folder, cases, timeout, state=state, env=env,
                           make_inputs="get_small_inputs" if small else "get_inputs", phases=phases, timed=timed,
                           started=started)
    finally:
        case_seeds(folder).unlink(missing_ok=True)  # before any candidate's child can start
    # The parent's own copies, loaded before any candidate ran. Where the reference's child ran in
    # read-only namespaces, every candidate's child does too (the same server, the same kernel), and
    # the case files are read-only to them: the copies then map the files (a gigabyte of inputs is not
    # read until compared, and most never are: an input a child leaves unchanged is not sent back).
    mapped = bool(results) and all(read_only_held(r.get("isolation")) for r in results.values())
    inputs, init = {}, []
    for idx in cases:
        made = case_input(folder, idx)
        if made.is_file() and not made.is_symlink():
            payload = torch.load(made, weights_only=True, mmap=mapped)
            inputs[idx], init = payload["inputs"], payload["init"]
        else:
            inputs[idx] = []
    return ReferenceRun(folder, seeds, inputs, results, init, phases=phases, mapped=mapped,
                        framework=timed.side("framework") if timed is not None else None)


class References:
    """The reference runs of one gate run, the `keep` most recently used (inputs and outputs are
    held in memory; a run over many tasks keeps only the tasks in hand)."""

    def __init__(self, keep: int = 2):
        self.keep = keep
        self.runs: OrderedDict[tuple, ReferenceRun] = OrderedDict()

    def get(self, key: tuple) -> ReferenceRun | None:
        run = self.runs.get(key)
        if run is not None and not run.restore():  # run afresh instead
            del self.runs[key]
            run.cleanup()
            return None
        if run is not None:
            self.runs.move_to_end(key)
        return run

    def put(self, key: tuple, run: ReferenceRun) -> None:
        self.runs[key] = run
        while len(self.runs) > self.keep:
            _, old = self.runs.popitem(last=False)
            old.cleanup()

    def close(self) -> None:
        for run in self.runs.values():
            run.cleanup()
        self.runs.clear()


def reference_digest(ref: Path) -> str:
    """The sha256 of a reference task file: what a reference run is kept under, and what the gate
    checks before and after a submission runs (a candidate that rewrites it is refused)."""
    return hashlib.sha256(Path(ref).read_bytes()).hexdigest()


def reference_key(task_path: Path, backend: Backend, cases: list[int], small: bool, state: bool,
                  timed: Timed | None) -> tuple:
    """What a reference run depends on: the task file's bytes, the device, the cases, which inputs
    and how it is timed."""
    return (reference_digest(task_path), backend.name, tuple(cases), small, state, timed.key() if timed else None)
