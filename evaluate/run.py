"""The evaluation run: discover → lint (process pool) → gate the lint-clean ones on
the workers, `repeats` times → records → output files.

Every finished gate job is written at once, atomically, to `OUT/runs/`, keyed by
the submission, the repeat and a hash of the submission's bytes and of the gate
options. A run that is interrupted and started again reuses those files and
redoes only what is missing or what changed.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from tritonlint.config import Config
from tritonlint.files import lint_many
from tritonlint.runtime_check.protocol import strict_json
from tritonlint.runtime_check.options import GateOptions
from tritonlint.runtime_check.tasks import discover_cases
from tritonlint.writer import write_atomic

from .discover import Found, discover_submissions
from .progress import Progress
from .records import Lint, Record, run_status


@dataclasses.dataclass
class EvalOptions:
    submissions: Path
    cases: Path
    out: Path
    backend: str = "auto"
    repeats: int = 1
    workers: int = 0  # 0: one per accelerator found (1 on the cpu backend)
    jobs: int = 0  # lint processes; 0: one per CPU
    engine: str = "local"  # local | ray
    ray_address: str | None = None
    lint_only: bool = False
    report_only: bool = False  # rebuild every output from runs/ without gating anything
    gate: GateOptions = dataclasses.field(default_factory=GateOptions)  # its reference is unused: each job has its own

    def to_json(self) -> dict:
        """summary.json's `options`: paths as text, the gate's options as its jobs carry them, and
        the baseline always (the jobs leave out the default one)."""
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        data = {k: str(v) if isinstance(v, Path) else v for k, v in data.items()}
        data["gate"] = {**self.gate.to_json(), "baseline": self.gate.baseline}
        return data


def evaluate(opts: EvalOptions, progress: Progress | None = None,
             write: Callable[[list[Record], Found, dict], None] | None = None) -> tuple[list[Record], Found, dict]:
    """`write(records, found, env)`: the run's outputs, written while its workers shut down (each
    one's fork server and children); this returns once both are done."""
    started = time.time()
    timeline = {}  # seconds from the start: when each stage was done (summary.json's environment.timeline_s)
    cases = discover_cases(opts.cases)
    found = discover_submissions(opts.submissions, cases)
    gating = None if opts.lint_only or opts.report_only else _Gating(opts, len(found.submissions))
    closing = None
    try:
        try:
            # spawned, not forked, lint processes: the gating thread may be inside an import at the fork
            lints = lint_many([str(s.path) for s in found.submissions], Config(), opts.jobs, keep_trees=False,
                              start="spawn" if gating is not None else None)
            timeline["lint"] = round(time.time() - started, 3)
            records = [Record(s, Lint.of(r), []) for s, r in zip(found.submissions, lints)]
            runs_dir = opts.out / "runs"
            runs_dir.mkdir(parents=True, exist_ok=True)
            env: dict = {"backend": None, "workers": 0, "engine": opts.engine}

            def mark(stage: str, again: bool = False) -> None:
                if again or stage not in timeline:
                    timeline[stage] = round(time.time() - started, 3)

            if not opts.lint_only:
                env.update(_gate_all(records, opts, runs_dir, progress, gating, mark))
        finally:
            if gating is not None:
                closing = threading.Thread(target=gating.close, name="tritonlint-close")
                closing.start()
        env["elapsed_s"] = round(time.time() - started, 3)
        env["timeline_s"] = timeline
        if write is not None:
            write(records, found, env)
    finally:
        if closing is not None:
            closing.join()
    return records, found, env


class _Gating:
    """The gate's side of a run, started on a thread before the lint: its backend found (torch's
    import), then its local workers (and each one's fork server) started, one per submission at
    most; those seconds overlap the lint's. `get()`: (backend name, devices, workers, the pool or
    None for Ray), or the error (BackendUnavailable) raised where the caller can report it. Then,
    while the workers gate, the report's chart library is imported (report.warm)."""

    def __init__(self, opts: EvalOptions, submissions: int):
        self.opts, self.submissions, self.done, self.error, self.pool = opts, submissions, None, None, None
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True, name="tritonlint-gating")
        self.thread.start()

    def _run(self) -> None:
        try:
            from tritonlint.runtime_check.backends import get_backend, likely_backend

            from .workers import LocalPool

            local = self.opts.engine != "ray"
            budget = self.opts.gate.timeout * (2 * self.opts.gate.seeds + 2) + 300  # every child at its limit, plus start-up
            if local and self.submissions:  # the first worker (device 0) starts now: its imports overlap the detection's
                guess = likely_backend(self.opts.backend)
                self.pool = LocalPool(guess, 1, 0 if guess == "cpu" else 1, budget)  # closed by close(), however far it got
                self.pool.start(1)
            name = get_backend(self.opts.backend).name
            devices = _device_count(name)
            workers = self.opts.workers or (devices if name != "cpu" else 1)
            if self.pool is not None and self.pool.backend != name:  # guessed wrong: started again below
                self.pool.close()
                self.pool = None
            if local:
                if self.pool is None:
                    self.pool = LocalPool(name, workers, devices, budget)
                else:  # its first worker is every pool's first: device 0 (LocalPool._start)
                    self.pool.n, self.pool.devices = workers, devices
                self.pool.start(min(workers, self.submissions))
            self.done = (name, devices, workers, self.pool)
        except BaseException as e:
            self.error = e
            if self.pool is not None:  # a worker started on a guess: no job will come
                self.pool.close()
        finally:
            self.ready.set()
        if self.error is None:
            from .report import warm

            warm()

    def get(self) -> tuple:
        self.ready.wait()
        if self.error is not None:
            raise self.error
        return self.done

    def close(self) -> None:
        self.thread.join()
        if self.pool is not None:
            self.pool.close()


def _gate_all(records: list[Record], opts: EvalOptions, runs_dir: Path, progress: Progress | None,
              gating: _Gating | None, mark) -> dict:
    """`mark(stage, again=False)`: notes when a stage of the run was reached (the first time, or the last)."""
    from .workers import gate_job, run_ray

    pool = None
    if opts.report_only:  # no device needed: only what runs/ already holds for this backend
        name, devices, workers = opts.backend, 0, 0
    else:
        name, devices, workers, pool = gating.get()  # BackendUnavailable goes to the caller with its one line
        mark("workers")
    gate = opts.gate.to_json()
    fingerprint = json.dumps({"backend": name, **gate}, sort_keys=True)
    jobs, by_key = [], {}
    for rec in records:
        if rec.status != "not_run":
            continue
        digest = hashlib.sha256(rec.sub.path.read_bytes() + rec.sub.case.reference.read_bytes()
                                + fingerprint.encode()).hexdigest()
        rec.runs = [None] * opts.repeats
        for k in range(opts.repeats):
            key = f"{rec.sub.key}#r{k + 1}"
            saved = _load(runs_dir / _file_name(key))
            if saved and saved.get("digest") == digest:
                rec.runs[k] = saved["runtime"]
                continue
            job = {"key": key, "path": str(rec.sub.path), "reference": str(rec.sub.case.reference), "tier": rec.sub.case.tier,
                   "backend": name, "opts": gate, "digest": digest, "repeat": k}
            jobs.append(job)
            by_key[key] = rec
    if opts.report_only:
        for rec in records:
            rec.runs = [r for r in rec.runs if r is not None]
        return {"backend": name, "workers": 0, "devices": 0, "report_only": True, "missing_jobs": len(jobs)}
    # repeats run as whole passes over the set, so a slow drift of the device spreads over all cases
    jobs.sort(key=lambda j: j["repeat"])
    if progress:
        progress.start([(j["key"], by_key[j["key"]].sub.case.key) for j in jobs],
                        reused=sum(r is not None for rec in records for r in rec.runs or []))

    def on_result(job: dict, runtime: dict) -> None:
        mark("first_result")
        mark("last_result", again=True)
        rec = by_key[job["key"]]
        rec.runs[job["repeat"]] = runtime
        write_atomic(str(runs_dir / _file_name(job["key"])),
                     strict_json({"key": job["key"], "digest": job["digest"], "runtime": runtime}, default=str), "utf-8")
        if progress:
            progress.done(job["key"], rec.sub.case.key, _label(rec, runtime))

    if opts.engine == "ray":
        run_ray(jobs, on_result, name, opts.ray_address, fn=gate_job)
    else:
        pool.run(jobs, on_result, keep=True)  # closed by the gating's close, while the outputs are written
    mark("gated")
    if progress:
        progress.finish()
    return {"backend": name, "workers": workers, "devices": devices}


def _label(rec: Record, runtime: dict) -> str:
    status = run_status(runtime)
    s = (runtime.get("benchmark") or {}).get("speedup_vs_torch")
    return f"{status} {s:.2f}x" if s else status


def _device_count(backend: str) -> int:
    if backend == "cpu":
        return 0
    import torch

    mod = getattr(torch, backend)
    return int(mod.device_count())


def _file_name(key: str) -> str:
    return hashlib.sha1(key.encode()).hexdigest()[:16] + ".json"


def _load(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # missing, or cut short by a crash: the job runs again


def is_tty() -> bool:
    return sys.stderr.isatty() and os.environ.get("TERM") != "dumb"
