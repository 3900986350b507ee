"""Where gate jobs run: one worker process per accelerator of this host (`local`), or
the workers of a Ray cluster (`ray`, the optional `[ray]` extra) past one host.

A job is a plain dict (submission path, reference, tier, backend name, gate
options); its result is the gate's runtime dict. A worker binds itself to one
device through the visibility variables before torch is imported, so every child
the gate starts inherits it. Submissions never run inside a worker (the gate puts
each in its own child), but a worker that dies anyway costs only the job it held:
it is restarted and the run goes on. A job that runs past its budget is charged a
WorkerTimeout and its worker replaced.
"""

from __future__ import annotations

import importlib
import multiprocessing as mp
import os
import signal
import time
from multiprocessing.connection import wait
from typing import Callable, Iterable

from tritonlint.cli import quick_exit
from tritonlint.runtime_check.backends import VISIBLE
from tritonlint.runtime_check.protocol import failure


Job = dict
OnResult = Callable[[Job, dict], None]


def gate_job(job: Job) -> dict:
    """Run one submission through the gate; the gate's runtime dict, or why it could not run."""
    from tritonlint.runtime_check.backends import BackendUnavailable, get_backend
    from tritonlint.runtime_check.gate import run_gate
    from tritonlint.runtime_check.options import GateOptions

    try:
        backend = get_backend(job["backend"])
    except BackendUnavailable as e:
        return {"error": failure("BackendUnavailable", str(e))}
    opts = GateOptions.from_json(job["opts"], reference=job["reference"])
    try:
        return run_gate(job["path"], True, False, backend, opts, _references())
    except Exception as e:  # the reference itself is broken, the disk is full, ...
        return {"error": failure(type(e).__name__, str(e))}


_REFERENCES = []


def _references():
    """This worker's reference runs: its jobs of one task share the reference's inputs, outputs
    and timing (a worker lives for one run)."""
    if not _REFERENCES:
        import atexit

        from tritonlint.runtime_check.reference import References

        _REFERENCES.append(References())
        atexit.register(_REFERENCES[0].close)
    return _REFERENCES[0]


def _bind(backend: str, device: int | None) -> None:
    """Make `device` (an index among the devices this process sees) the worker's only one; where
    the visibility variable names the devices already, its `device`-th entry."""
    if device is not None and backend in VISIBLE:
        seen = [d.strip() for d in os.environ.get(VISIBLE[backend], "").split(",") if d.strip()]
        os.environ[VISIBLE[backend]] = seen[device] if device < len(seen) else str(device)


def _leave(*_) -> None:
    """A worker's way out (LocalPool.close's SIGTERM, or its parent gone): its fork server and every
    child closed on the way (cli.quick_exit), once."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    quick_exit(0)


def _worker(conn, backend: str, device: int | None, fn) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop
    signal.signal(signal.SIGTERM, _leave)
    _bind(backend, device)
    if fn is gate_job:  # before its first job, the fork server's imports beside this worker's own (torch)
        from tritonlint.runtime_check.backends import Backend
        from tritonlint.runtime_check.protocol import prestart

        prestart(Backend(backend, backend != "cpu").child_env())
        importlib.import_module("tritonlint.runtime_check.gate")
    while True:
        try:
            job = conn.recv()
        except EOFError:
            _leave()
        conn.send(fn(job))


def _next(todo: list[Job], slot: dict, slots: list[dict]) -> Job:
    """The job a free worker takes: of the lowest pending repeat (repeats run as whole passes),
    one of the task it ran last (its reference run, inputs, outputs and timing, is in hand), else
    one of a task no other worker holds, else the first: a task's reference runs on one worker,
    not on every worker, wherever the jobs allow."""
    first = [i for i, j in enumerate(todo) if j.get("repeat") == todo[0].get("repeat")]
    held = {s.get("task") for s in slots if s is not slot}
    for pick in (lambda j: slot.get("task") is not None and j.get("reference") == slot.get("task"),
                 lambda j: j.get("reference") not in held):
        for i in first:
            if pick(todo[i]):
                return todo.pop(i)
    return todo.pop(0)


class LocalPool:
    """N worker processes, worker i bound to device i (round-robin when N > devices).

    Each worker has its own pipe, so a worker that is killed or dies breaks only its
    own connection, never a queue the others share."""

    def __init__(self, backend: str, workers: int, devices: int, job_timeout: float, fn=gate_job):
        self.backend, self.n, self.devices, self.job_timeout, self.fn = backend, workers, devices, job_timeout, fn
        self.ctx = mp.get_context("spawn")  # no inherited torch state, on every platform
        self.slots: list[dict] = []

    def _start(self, i: int) -> dict:
        mine, theirs = self.ctx.Pipe()
        device = i % self.devices if self.devices else None
        proc = self.ctx.Process(target=_worker, args=(theirs, self.backend, device, self.fn), daemon=True)
        proc.start()
        theirs.close()
        return {"proc": proc, "conn": mine, "job": None, "since": 0.0}

    def start(self, n: int) -> None:
        """Start `n` of the workers now (their imports and fork servers start with them)."""
        for i in range(len(self.slots), min(self.n, n)):
            self.slots.append(self._start(i))  # one by one: a failure leaves those started for close()

    def run(self, jobs: Iterable[Job], on_result: OnResult, keep: bool = False) -> None:
        """Every job, then the workers closed; `keep`: left running for the caller's close (eval
        closes them while it writes its outputs), unless a job's loop fails."""
        todo = list(jobs)
        self.start(len(todo))
        try:
            while todo or any(s["job"] is not None for s in self.slots):
                for slot in self.slots:
                    if slot["job"] is None and todo:
                        slot.update(job=_next(todo, slot, self.slots), since=time.monotonic())
                        slot["task"] = slot["job"].get("reference")
                        slot["conn"].send(slot["job"])
                busy = [s for s in self.slots if s["job"] is not None]
                ready = wait([s["conn"] for s in busy] + [s["proc"].sentinel for s in busy], timeout=0.5)
                for i, slot in enumerate(self.slots):
                    if slot["job"] is None:
                        continue
                    result = None
                    if slot["conn"] in ready:
                        try:
                            result = slot["conn"].recv()
                        except (EOFError, OSError):
                            result = None  # it died mid-answer: the sentinel check below charges it
                    if result is not None:
                        job, slot["job"] = slot["job"], None
                        on_result(job, result)
                    elif not slot["proc"].is_alive() or time.monotonic() - slot["since"] > self.job_timeout:
                        self._replace(i, on_result)
        except BaseException:
            self.close()
            raise
        if not keep:
            self.close()

    def _replace(self, i: int, on_result: OnResult) -> None:
        """Charge the job a worker held when it died or overran, and start a new worker."""
        slot = self.slots[i]
        dead = not slot["proc"].is_alive()
        if not dead:
            slot["proc"].kill()
        slot["proc"].join()
        slot["conn"].close()
        why = (failure("WorkerCrash", f"the worker process exited with code {slot['proc'].exitcode}") if dead
               else failure("WorkerTimeout", f"the job ran past {self.job_timeout:g} s"))
        job = slot["job"]
        self.slots[i] = self._start(i)
        on_result(job, {"error": why})

    def close(self) -> None:
        """Each worker stopped (SIGTERM: it closes its fork server, and every child with it, and
        leaves; one still in its imports or its job too), and killed after 5 s."""
        for slot in self.slots:
            try:
                slot["proc"].terminate()
            except (OSError, ValueError):
                pass
        for slot in self.slots:
            slot["proc"].join(timeout=5)
            if slot["proc"].is_alive():
                slot["proc"].kill()
                slot["proc"].join()
            slot["conn"].close()
        self.slots = []


def run_ray(jobs: Iterable[Job], on_result: OnResult, backend: str, address: str | None = None,
            fn=gate_job) -> None:
    """The same jobs as Ray tasks, one accelerator each (Ray sets the visibility variables)."""
    import ray

    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    resources = {"cuda": {"num_gpus": 1}, "npu": {"resources": {"NPU": 1}}}.get(backend, {"num_cpus": 1})
    remote = ray.remote(max_retries=0, **resources)(fn)
    pending = {remote.remote(job): job for job in jobs}
    while pending:
        done, _ = ray.wait(list(pending), num_returns=1)
        for ref in done:
            job = pending.pop(ref)
            try:
                result = ray.get(ref)
            except Exception as e:  # a worker that died is this job's failure, not the run's
                result = {"error": failure("WorkerCrash", f"{type(e).__name__}: {e}")}
            on_result(job, result)
