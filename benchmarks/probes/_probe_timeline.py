"""The parent's timeline of one `tritonlint IMPL --run` (CUDA), in-process, with the accelerator's
start in the parent done one of three ways: `thread` (as shipped: on a thread while the children
run), `sync` (before the reference's child) or `lazy` (when the parent first compares). Where the
seconds of a warm-cache run go between the interpreter's start and the verdict, and whether the
parent's CUDA start slows the candidate's first case (it runs beside it).

    t=$(date +%s.%N); python benchmarks/probes/_probe_timeline.py thread cases/t1/gelu/gelu_impl.py $t
"""
import builtins
import json
import sys
import threading
import time

MODE, IMPL, LAUNCHED = sys.argv[1], sys.argv[2], float(sys.argv[3])
BACKEND = sys.argv[4] if len(sys.argv) > 4 else "cuda"
EVENTS = []


def log(what: str) -> None:
    EVENTS.append((round(time.time() - LAUNCHED, 3), what))


log("probe starts (interpreter up)")
_import = builtins.__import__
_depth = [0]
_patched = [False]


def traced_import(name, *args, **kw):
    top = _depth[0] == 0 and "torch" not in sys.modules
    began = time.time()
    _depth[0] += 1
    try:
        return _import(name, *args, **kw)
    finally:
        _depth[0] -= 1
        if top and "torch" in sys.modules:
            EVENTS.append((round(began - LAUNCHED, 3), f"parent: import {name} begins (torch in it)"))
            log(f"parent: import {name} done")
        if not _patched[0] and "tritonlint.runtime_check.verify" in sys.modules and \
                hasattr(sys.modules["tritonlint.runtime_check.verify"], "_start_device"):
            _patched[0] = True
            patch()


def wrap(mod, name: str, label: str) -> None:
    inner = getattr(mod, name)

    def outer(*a, **kw):
        log(f"{label} begins")
        try:
            return inner(*a, **kw)
        finally:
            log(f"{label} ends")
    setattr(mod, name, outer)


def patch() -> None:
    import torch
    from tritonlint.runtime_check import verify, zygote

    from tritonlint.runtime_check import runner

    wrap(verify, "run_reference", "parent: reference run")
    wrap(verify, "run_side", "parent: candidate run")
    wrap(zygote.Zygote, "spawn", "parent: spawn")
    wrap(runner, "load_case_result", "parent: load a case result")
    wrap(runner, "_timed_phase", "parent: timed phase")
    wrap(runner, "_say_go", "parent: go")
    wrap(verify._Cases, "judge", "parent: judge a case")
    wrap(verify._Cases, "summary", "parent: judge the rest")
    wrap(verify, "judge", "parent: judge census")

    def start_device(backend):
        def start():
            if backend.name == "cpu":
                return
            log("parent: cuda start begins")
            torch.empty(1, device=backend.device)
            log("parent: cuda start ends")
        if MODE == "thread":
            t = threading.Thread(target=start, daemon=True)
            t.start()
            return t
        if MODE == "sync":
            start()
            t = threading.Thread(target=lambda: None)
            t.start()
            return t
        return type("Lazy", (), {"join": lambda self: start()})()
    verify._start_device = start_device


def patch_server() -> None:
    from tritonlint.runtime_check import zygote

    class Loads:  # the server's "ready" line, seen by the parent's reader thread
        dumps = staticmethod(json.dumps)

        @staticmethod
        def loads(s):
            msg = json.loads(s)
            if "ready" in msg:
                log("server: ready (its imports done)")
            return msg
    zygote.json = Loads


patch_server()
builtins.__import__ = traced_import
from tritonlint.cli import main  # noqa: E402

log("parent: cli imported")
code = main([IMPL, "--run", "--backend", BACKEND, "--json", "--output", "/tmp/probe-timeline.json"])
log(f"parent: verdict (exit {code})")
rt = json.load(open("/tmp/probe-timeline.json"))["files"][0]["runtime"]
for t, what in sorted(EVENTS):
    print(f"{MODE:6} {t:7.3f}  {what}")
print(MODE, "candidate", rt["verify"]["child_phases_s"]["candidate"])
print(MODE, "reference", rt["verify"]["child_phases_s"]["reference"])
print(MODE, "phases", rt["verify"]["phases_s"], rt["verdict"])
