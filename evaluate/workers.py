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

import multiprocessing as mp
import os
import queue
import signal
import time
from typing import Callable, Iterable

VISIBLE = {"cuda": "CUDA_VISIBLE_DEVICES", "npu": "ASCEND_RT_VISIBLE_DEVICES"}

Job = dict
OnResult = Callable[[Job, dict], None]


def gate_job(job: Job) -> dict:
    """Run one submission through the gate; the gate's runtime dict, or why it could not run."""
    from tritonlint.runtime_check.backends import BackendUnavailable, get_backend
    from tritonlint.runtime_check.gate import GateOptions, run_gate

    try:
        backend = get_backend(job["backend"])
    except BackendUnavailable as e:
        return {"error": {"error_type": "BackendUnavailable", "error_msg": str(e)}}
    opts = GateOptions(reference=job["reference"], **job["opts"])
    try:
        return run_gate(job["path"], True, False, backend, opts)
    except Exception as e:  # the reference itself is broken, the disk is full, ...
        return {"error": {"error_type": type(e).__name__, "error_msg": str(e)[-2000:]}}


def _bind(backend: str, device: int | None) -> None:
    if device is not None and backend in VISIBLE:
        os.environ[VISIBLE[backend]] = str(device)


def _worker(inbox, outbox, backend: str, device: int | None, fn) -> None:
    _bind(backend, device)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop
    while True:
        item = inbox.get()
        if item is None:
            return
        ticket, job = item
        outbox.put((ticket, fn(job)))


class LocalPool:
    """N worker processes, worker i bound to device i (round-robin when N > devices)."""

    def __init__(self, backend: str, workers: int, devices: int, job_timeout: float, fn=gate_job):
        self.backend, self.n, self.devices, self.job_timeout, self.fn = backend, workers, devices, job_timeout, fn
        self.ctx = mp.get_context("spawn")  # no inherited torch state, on every platform
        self.outbox = self.ctx.Queue()
        self.slots: list[dict] = []

    def _start(self, i: int) -> dict:
        inbox = self.ctx.Queue()
        device = i % self.devices if self.devices else None
        proc = self.ctx.Process(target=_worker, args=(inbox, self.outbox, self.backend, device, self.fn), daemon=True)
        proc.start()
        return {"proc": proc, "inbox": inbox, "job": None, "since": 0.0, "device": device}

    def run(self, jobs: Iterable[Job], on_result: OnResult) -> None:
        todo = list(jobs)
        self.slots = [self._start(i) for i in range(min(self.n, len(todo)) or 0)]
        tickets: dict[int, tuple[int, Job]] = {}
        next_ticket = 0
        try:
            while todo or any(s["job"] is not None for s in self.slots):
                for i, slot in enumerate(self.slots):
                    if slot["job"] is None and todo:
                        job = todo.pop(0)
                        tickets[next_ticket] = (i, job)
                        slot.update(job=next_ticket, since=time.monotonic())
                        slot["inbox"].put((next_ticket, job))
                        next_ticket += 1
                try:
                    ticket, result = self.outbox.get(timeout=0.2)
                except queue.Empty:
                    self._police(tickets, on_result)
                    continue
                i, job = tickets.pop(ticket)
                self.slots[i]["job"] = None
                on_result(job, result)
        finally:
            self.close()

    def _police(self, tickets, on_result) -> None:
        """Replace workers that died or overran, charging the job they held."""
        for i, slot in enumerate(self.slots):
            if slot["job"] is None:
                continue
            dead = not slot["proc"].is_alive()
            late = time.monotonic() - slot["since"] > self.job_timeout
            if not (dead or late):
                continue
            if late and not dead:
                slot["proc"].kill()
                slot["proc"].join()
            _, job = tickets.pop(slot["job"])
            code = slot["proc"].exitcode
            why = ("WorkerTimeout", f"the job ran past {self.job_timeout:g} s") if late and not dead else \
                  ("WorkerCrash", f"the worker process exited with code {code}")
            self.slots[i] = self._start(i)
            on_result(job, {"error": {"error_type": why[0], "error_msg": why[1]}})

    def close(self) -> None:
        for slot in self.slots:
            if slot["proc"].is_alive():
                slot["inbox"].put(None)
        for slot in self.slots:
            slot["proc"].join(timeout=5)
            if slot["proc"].is_alive():
                slot["proc"].kill()
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
                result = {"error": {"error_type": "WorkerCrash", "error_msg": f"{type(e).__name__}: {e}"[-2000:]}}
            on_result(job, result)
