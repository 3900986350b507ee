"""Model runs in their own process: `python -m tritonlint.runtime_check.child ...`.

One child runs one side (the reference `Model` or the candidate `ModelNew`) over
several cases, so torch is imported once per side instead of once per case. For
each case it reads the parent's case input, marks the case started before touching
the model, and writes a case result afterwards: the outputs and the inputs as they
are after the call, all on the CPU, plus the model's parameters and buffers when
`--state` is given (the files and the result are protocol.py's). The parent watches
those files, so a case that hangs or kills the process is charged to that case alone
and the parent restarts a child for the cases after it.

Every case is in its own try/except. Anything that is not a tensor, a number or a
container of those is replaced by a type tag, so the parent can load the file with
`torch.load(weights_only=True)`. Result files are written to a temporary name and
renamed, so the parent never reads half a file."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from pathlib import Path

from tritonlint.runtime_check.protocol import (TIMED_CASE, UNCHANGED, CaseInput, CaseResult, case_input, case_result, case_seeds,
                                               case_started, census_result, check_case, checked_call, child_marks, failed_case,
                                               failure, operators_result, publish, save, timing_done, timing_go, timing_ready,
                                               timing_result)
# The timer, bound here before any submission is imported (the fork server imports this module):
# replacing the timing module's functions does not reach these. The submission runs in this process
# and can still reach anything here; the parent's clock (benchmark.wall_bound) is the check on the
# record, and a coarse one.
from tritonlint.runtime_check.timing import check_untimed, measure, operators, prepare


def _portable(value):
    from tritonlint.runtime_check.compare import portable  # the output contract's: exotic tensors become tags

    return portable(value)


def build(module, cls: str, payload: dict, device: str):
    """(model, inputs) on the device, the model built from the case's model seed."""
    import torch

    torch.manual_seed(payload.get("seed", 0))  # both sides draw the same initial weights
    model = getattr(module, cls)(*payload["init"])
    if isinstance(model, torch.nn.Module):
        model = model.to(device)
    return model, fresh_inputs(payload, device)


def fresh_inputs(payload: dict, device: str) -> list:
    """A fresh device copy of a case's inputs."""
    import torch

    return [v.to(device, copy=True) if isinstance(v, torch.Tensor) else v for v in payload["inputs"]]


def run_case(module, cls: str, payload: dict, device: str, state: bool) -> CaseResult:
    try:
        model, inputs = build(module, cls, payload, device)
        return call_case(model, inputs, device, state)
    except BaseException as e:  # the parent records it as this case's failure
        return _failed(e)


def call_case(model, inputs: list, device: str, state: bool) -> CaseResult:
    """One call of `model` on `inputs`: its outputs and the inputs as they are after it."""
    import torch

    try:
        before = [v.clone() if isinstance(v, torch.Tensor) else None for v in inputs]
        with torch.no_grad():
            out = model(*inputs)
        if device != "cpu":
            getattr(torch, device).synchronize()
        from tritonlint.runtime_check.compare import output_meta, same_bits

        after = [UNCHANGED if b is not None and same_bits(b, v) else v for b, v in zip(before, inputs)]
        result = {"ok": True, "outputs": _portable(out), "outputs_meta": output_meta(out), "inputs_after": _portable(after)}
        if state:
            sd = model.state_dict() if isinstance(model, torch.nn.Module) else {}
            result["state"] = {k: _portable(v) for k, v in sd.items() if isinstance(v, torch.Tensor)}
        return result
    except BaseException as e:  # the parent records it as this case's failure
        return _failed(e)


def make_case(module, make: str, seed: int, device: str) -> tuple[CaseInput, list]:
    """The reference task's inputs for one case, drawn from `seed` on the device (where a
    task's generator cannot run there, on the CPU): as CPU tensors, the case file the parent
    and the candidate read, and as made, for the reference's own call on them."""
    import torch

    from tritonlint.runtime_check.protocol import MODEL_SEED

    torch.manual_seed(seed)
    try:
        with torch.device(device):
            made = list(getattr(module, make)())
    except Exception:
        torch.manual_seed(seed)
        made = list(getattr(module, make)())
    from tritonlint.runtime_check.compare import host_copy

    values = [(v.detach() if v.device.type == "cpu" else host_copy(v)) if isinstance(v, torch.Tensor) else v for v in made]
    return CaseInput(init=list(module.get_init_inputs()), inputs=values, seed=MODEL_SEED), made


def take_census(module, cls: str, payload: dict, device: str) -> dict:
    """One more forward on a verified case's inputs, with census.py's recorders on."""
    import torch

    from tritonlint.runtime_check import census

    try:
        model, inputs = build(module, cls, payload, device)
        with torch.no_grad():
            return census.record(lambda: model(*inputs), device)
    except BaseException as e:
        return {"error": f"the census call raised {type(e).__name__}: {str(e)[:500]}"}


def _failed(e: BaseException) -> CaseResult:
    return failed_case(type(e).__name__, f"{e}\n{traceback.format_exc(limit=-3)}")


def wait_for_order(device: str, order: Path, lock: str, mark) -> list[str]:
    """An early child (`--early DEVICE ORDER LOCK`, started while the reference still runs): its
    device now, under the device's shared lock (LOCK: it may not be registered yet, and no timed
    phase runs beside a device's start), and the fork server's idle imports (zygote.LATER: no-ops
    where it inherited them); then nothing until the parent's order, its arguments
    (protocol.child_order). Nothing of the submission is read or run before it."""
    from tritonlint.runtime_check.device import shared
    from tritonlint.runtime_check.zygote import LATER, _step

    with shared(lock):
        _start_device(device, mark)
    for step in LATER:
        _step(step)
    while not os.path.lexists(order):
        time.sleep(0.001)
    mark("order")  # waiting for the reference
    args = json.loads(order.read_text())
    if not (isinstance(args, list) and all(isinstance(a, str) for a in args)):
        raise SystemExit(f"{order}: not a list of arguments")
    return args


def _start_device(device: str, mark) -> None:
    """The accelerator's start, on its own line of the timeline."""
    if device != "cpu":
        import torch

        torch.empty(0, device=device)
        mark("device")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    mark = Marks()
    early = argv[:1] == ["--early"] and len(argv) == 4
    if early:
        argv = wait_for_order(argv[1], Path(argv[2]), argv[3], mark)
        sys.argv = [sys.argv[0], *argv]  # as a child started with them has it
    ap = argparse.ArgumentParser()
    ap.add_argument("--module", required=True)
    ap.add_argument("--cls", required=True)
    ap.add_argument("--inputs", required=True, help="folder of the parent's case inputs")
    ap.add_argument("--out", required=True, help="folder for the start markers and case results")
    ap.add_argument("--cases", required=True, help="comma-separated case numbers, run in this order")
    ap.add_argument("--device", required=True)
    ap.add_argument("--state", action="store_true", help="also return the model's parameters and buffers")
    ap.add_argument("--census", action="store_true", help="after the cases, record one forward (census.py)")
    ap.add_argument("--time", metavar="WARMUP,REPEATS", help="after the cases (and the census), time the model on "
                    f"case {TIMED_CASE}'s inputs once the parent says go (timing_ready, timing_go)")
    ap.add_argument("--baseline", default="eager", help="with --time and Model: time it as written or compiled")
    ap.add_argument("--operators", action="store_true", help="with --time: also the per-operator device times")
    ap.add_argument("--make-inputs", metavar="FUNC", help="the reference's child: first make each case's inputs "
                    "with the task's FUNC (get_inputs or get_small_inputs) from the seed the parent wrote, on the device")
    args = ap.parse_args(argv)
    import torch

    from tritonlint.runtime_check.tasks import load_module

    inputs, out = Path(args.inputs), Path(args.out)
    cases = [int(c) for c in args.cases.split(",")]
    mark.path = child_marks(out, cases[0])
    if not early:
        _start_device(args.device, mark)
    module, load_error, verified, timed, check = None, None, None, None, None
    seeds = json.loads(case_seeds(inputs).read_text()) if args.make_inputs else {}
    for idx in cases:
        case_started(out, idx).touch()
        if module is None and load_error is None:
            try:
                module = load_module(args.module)
            except BaseException as e:  # an import error fails every case, each with its message
                load_error = _failed(e)
            mark("load")
        result, made = load_error, None
        if args.make_inputs and result is None:
            try:
                payload, made = make_case(module, args.make_inputs, seeds[str(idx)], args.device)
                publish(case_input(inputs, idx), lambda path: save(payload, path))
                # kept as made (the census, the timed phase and the check call copy them afresh): the
                # host copies go back to the page-locked pool, for the next case's copies
                payload = {**payload, "inputs": made}
            except BaseException as e:
                result = _failed(e)
            mark(f"inputs{idx}")
        if result is None:
            if made is None:  # mapped, not read: the case file is read-only to this child
                payload = torch.load(case_input(inputs, idx), weights_only=True, mmap=True)
            result = run_case(module, args.cls, payload, args.device, args.state)
        if verified is None and result.get("ok"):
            verified = payload
        if idx == TIMED_CASE and result.get("ok"):
            timed = payload
        if idx == check_case(cases) and result.get("ok"):
            check = (idx, payload)
        publish(case_result(out, idx), lambda path: save(result, path))
        mark(f"case{idx}")  # the first case's includes compiling the kernels
    if args.census and verified is not None:
        from tritonlint.runtime_check import census

        found = take_census(module, args.cls, verified, args.device)
        publish(census_result(out), lambda path: census.write(found, path))
        mark("census")
    if args.time and timed is not None:
        mark.publish()
        warmup, repeats = (int(n) for n in args.time.split(","))
        time_case(module, args.cls, timed, check, args.device, out, warmup, repeats, args.baseline, args.operators, mark)
        timing_done(out).touch()
        mark("timing")
    mark.publish()
    return 0


def time_case(module, cls: str, payload: dict, check: tuple[int, dict] | None, device: str, out: Path, warmup: int, repeats: int,
              baseline: str, with_operators: bool, mark=lambda name: None) -> None:
    """The timed phase: build the call, call it once, say ready, wait for the parent's go (it holds
    the device's timing lock from then until this child ends), time, write the times; then, outside
    the parent's clock, the candidate's result for one more call of the timed instance on the inputs
    of `check` (case number, payload: another case's, protocol.check_case) and, if asked, the
    per-operator times."""
    import torch

    side = "framework" if cls == "Model" else "implementation"
    call = None
    try:
        model, inputs = build(module, cls, payload, device)
        with torch.no_grad():
            call, warmup = prepare(model, inputs, side == "framework", baseline, warmup)
            call()  # this instance's first call (lazy set-up, a compile or a graph capture), off the parent's clock
            if device != "cpu":
                getattr(torch, device).synchronize()
            timing_ready(out).touch()
            mark("build")  # the model, its inputs and its first call
            while not os.path.lexists(timing_go(out)):
                time.sleep(0.001)
            mark("go")  # waiting for the parent's judgement and the device's timing lock
            times = measure(call, device, warmup, repeats)
            if side == "implementation":
                check_untimed(times)
        result: dict = {side: times}
    except BaseException as e:
        result = failure(type(e).__name__, str(e))
    publish(timing_result(out, TIMED_CASE), lambda path: path.write_text(json.dumps(result)))
    if "error_type" in result:
        return
    if side == "implementation" and check is not None:
        checked = call_case(model, fresh_inputs(check[1], device), device, False)
        publish(checked_call(out, check[0]), lambda path: save(checked, path))
    if with_operators:
        with torch.no_grad():
            ops = operators(call, device)
        publish(operators_result(out, TIMED_CASE), lambda path: path.write_text(json.dumps(ops)))


class Marks:
    """When this child reached each milestone, on the wall clock the parent shares
    (protocol.child_marks): the parent's per-phase times inside a child."""

    def __init__(self, path: Path | None = None):
        self.path, self.marks = path, [["start", time.time()]]  # the path once the arguments are known

    def __call__(self, name: str) -> None:
        self.marks.append([name, time.time()])

    def publish(self) -> None:
        publish(self.path, lambda path: path.write_text(json.dumps(self.marks)))


if __name__ == "__main__":
    sys.exit(main())
