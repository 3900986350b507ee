"""The runtime census (runtime_check/census.py): what a forward really ran, judged by the glue
list lint uses. Real recorders on real torch calls; real gate runs of the hostile fixtures in
fixtures/census/ on the CPU backend (Triton's interpreter), each failing for its own reason."""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import FIXTURES, ROOT, requires_triton
from tritonlint.runtime_check.census import CONVERSION, is_glue_op, judge, load, record

GELU = ROOT / "cases" / "t1" / "gelu"
CENSUS = FIXTURES / "census"


def test_the_dispatch_recorder_sees_every_operator_and_conversions():
    import torch

    a, b = torch.randn(4, 4), torch.randn(4, 4)
    got = record(lambda: (torch.mm(a, b).t().contiguous() + 1).to(torch.float16), "cpu")
    ops = got["ops"]
    assert ops.get("aten::mm") == 1 and ops.get("aten::add.Tensor", ops.get("aten::add")) == 1, ops
    assert ops.get(CONVERSION) == 1 and got["triton"] == {} and got["kernels"] is None
    same = record(lambda: a.to(torch.float32).view(16), "cpu")["ops"]
    assert CONVERSION not in same


# In a fresh interpreter: the pytest process may have imported torch._dynamo already.
WITHOUT_DYNAMO = """
import sys, torch
from tritonlint.runtime_check.census import imports, record
a = torch.randn(4, 4)
plain = record(lambda: torch.mm(a, a), "cpu")["ops"]
print(imports(False), "torch._dynamo" in sys.modules, plain.get("aten::mm"))
graphs = []
def backend(gm, example_inputs):  # every graph torch.compile makes, the census's own hook's included
    graphs.append(gm)
    return gm.forward
def forward():  # a forward that loads dynamo and compiles during the census: its frame is skipped, run as written
    return torch.compile(lambda x: torch.mm(x, x) + 1, backend=backend)(a)
during = record(forward, "cpu")["ops"]
print("torch._dynamo" in sys.modules, during.get("aten::mm"), len(graphs))
after = record(forward, "cpu")["ops"]  # dynamo loaded before the census
print(after.get("aten::mm"), len(graphs))
"""

# What the device's profiler imports at its start, before and after the census's own list.
PROFILER_IMPORTS = """
import importlib, sys, torch
from torch.profiler import ProfilerActivity, profile
from tritonlint.runtime_check.census import imports
heavy = lambda: {m for m in sys.modules if m.startswith(("torch._inductor", "torch._dynamo"))}
def start():
    before = heavy()
    with profile(activities=[ProfilerActivity.CPU]):
        torch.ones(2) + 1
    return len(heavy() - before)
print(start() > 0)  # the profiler's start imports torch._inductor, and with it torch._dynamo
"""


def _python(code: str) -> list[str]:
    import subprocess
    import sys

    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert got.returncode == 0, got.stderr[-2000:]
    return got.stdout.split()


def test_the_census_does_not_import_dynamo_and_still_sees_a_forward_that_compiles():
    assert _python(WITHOUT_DYNAMO) == ["[]", "False", "1", "True", "1", "0", "1", "0"]


def test_what_the_fork_server_imports_for_the_census_is_all_the_device_profiler_imports():
    """zygote.LATER imports census.imports(True) for a device's children: after it, the profiler's
    start imports nothing of torch._inductor or torch._dynamo (7 s in a CUDA child, measured)."""
    preloaded = PROFILER_IMPORTS.replace("print(start() > 0)", "[importlib.import_module(m) for m in imports(True)]\nprint(start())")
    assert _python(PROFILER_IMPORTS) == ["True"]
    assert _python(preloaded) == ["0"]


@pytest.mark.parametrize("op,glue", [
    ("aten::empty_like", True), ("aten::view", True), ("aten::_unsafe_view", True), ("aten::copy_", True),
    ("aten::fill_", True), ("aten::zeros", True), ("aten::_to_copy", True), ("aten::t", True),
    ("aten::mm", False), ("aten::gelu", False), ("aten::add", False), ("aten::sum", False), (CONVERSION, False),
    ("mylib::fused_gemm", False),  # a custom operator (an extension's kernel) is compute
])
def test_operators_are_classified_by_lint_s_glue_list(op, glue):
    assert is_glue_op(op) is glue


def _census(ops=None, triton=None, kernels=None):
    return {"ops": ops or {}, "triton": triton if triton is not None else {"k": 1}, "kernels": kernels}


def test_judge_gives_type_3_for_compute_and_foreign_kernels_and_type_2_for_no_launch():
    assert judge(_census({"aten::empty_like": 1}))["regression_type"] is None
    got = judge(_census({"aten::mm": 2, "aten::view": 1}))
    assert got["regression_type"] == 3 and got["compute"] == {"aten::mm": 2} and "aten::mm x2" in got["why"]
    kernels = [{"name": "my_kernel", "via": None, "count": 1},  # Triton's, by the name it launched
               {"name": "Memcpy HtoD (Pageable -> Device)", "via": None, "count": 1},
               {"name": "void at::native::fill_kernel", "via": "aten::fill_", "count": 1}]
    assert judge(_census(triton={"my_kernel": 1}, kernels=kernels))["regression_type"] is None
    foreign = kernels + [{"name": "sm90_xmma_gemm_f32f32", "via": None, "count": 3}]
    got = judge(_census(triton={"my_kernel": 1}, kernels=foreign))
    assert got["regression_type"] == 3 and got["foreign_kernels"] == {"sm90_xmma_gemm_f32f32": 3}
    got = judge(_census({"aten::empty_like": 1}, triton={}))
    assert got["regression_type"] == 2 and "no Triton kernel" in got["why"]


@pytest.mark.parametrize("content,why", [
    ('{"ops": {"aten::mm": -1}, "triton": {}, "kernels": null}', "not a census"),
    ('{"ops": {}, "triton": {"k": 1.5}, "kernels": null}', "not a census"),
    ('{"ops": {}, "triton": {}, "kernels": [{"name": 1}]}', "not a census"),
    ('{"ops": NaN}', "not JSON"),
    ("[]", "not a census"),
])
def test_a_malformed_census_is_reported_not_trusted(tmp_path, content, why):
    (tmp_path / "census.json").write_text(content)
    got = load(tmp_path / "census.json")
    assert why in got["error"]
    assert judge(got)["why"].startswith("census unreadable")


def _gate(impl, tmp_path):
    from tritonlint.runtime_check.backends import get_backend
    from tritonlint.runtime_check.gate import run_gate
    from tritonlint.runtime_check.options import GateOptions

    shutil.copy(GELU / "gelu_torch.py", tmp_path / "gelu_torch.py")
    shutil.copy(impl, tmp_path / "gelu_triton_ascend_impl.py")
    return run_gate(str(tmp_path / "gelu_triton_ascend_impl.py"), True, False, get_backend("cpu"),
                    GateOptions(seeds=1, timeout=120))


@requires_triton
def test_an_honest_solution_s_census_lists_its_launch_and_glue(tmp_path):
    out = _gate(GELU / "gelu_triton_ascend_impl.py", tmp_path)
    census = out["verify"]["census"]
    assert out["verdict"] == "passed" and census["regression_type"] is None, out["why"]
    assert census["triton"] == {"gelu_kernel": 1} and census["compute"] == {}


@requires_triton
@pytest.mark.parametrize("name,rtype,words", [
    ("gelu_hidden_torch", 3, "aten::gelu x1"),  # right answer, computed by PyTorch behind a run-time name
    ("gelu_no_launch", 2, "no Triton kernel"),  # right answer, computed on the host; the launch is never reached
])
def test_a_correct_forward_that_does_not_compute_in_triton_is_degraded(tmp_path, name, rtype, words):
    out = _gate(CENSUS / f"{name}.py", tmp_path)
    assert out["verify"]["passed_cases"] == 1  # the values are right: only the census sees it
    assert (out["verdict"], out["regression_type"]) == ("degraded", rtype), out
    assert words in out["why"] and out["benchmark"] is None


@requires_triton
def test_the_cli_reports_the_census_type_as_the_file_s_verdict(cli, tmp_path):
    shutil.copy(GELU / "gelu_torch.py", tmp_path / "gelu_torch.py")
    sub = tmp_path / "gelu_triton_ascend_impl.py"
    shutil.copy(CENSUS / "gelu_no_launch.py", sub)
    run = cli(str(sub), "--run", "--backend", "cpu", "--seeds", "1", "--json", timeout=600)
    assert run.rc == 1
    f = run.json["files"][0]
    assert f["valid"] is False and f["regression_type"] == 2 and run.json["regression_type"] == 2
    assert f["runtime"]["verdict"] == "degraded"
    text = cli(str(sub), "--run", "--backend", "cpu", "--seeds", "1", timeout=600)
    assert text.rc == 1 and "gate degraded: census: the forward launched no Triton kernel" in text.stdout
    assert "degradation type 2" in text.stdout and "All checks passed" not in text.stdout
    assert json.dumps(f["runtime"]["verify"]["census"]["triton"]) == "{}"


def _cuda() -> bool:
    import importlib.util

    return importlib.util.find_spec("torch") is not None and __import__("torch").cuda.is_available()


@pytest.mark.skipif(not _cuda(), reason="needs a CUDA device (the device profiler); run on the device tool")
def test_on_cuda_the_device_profiler_sees_kernels_the_dispatcher_does_not(tmp_path):
    from tritonlint.runtime_check.backends import get_backend
    from tritonlint.runtime_check.gate import run_gate
    from tritonlint.runtime_check.options import GateOptions

    def gate(impl, sub):
        folder = tmp_path / sub
        folder.mkdir()
        shutil.copy(GELU / "gelu_torch.py", folder / "gelu_torch.py")
        shutil.copy(impl, folder / "gelu_triton_ascend_impl.py")
        return run_gate(str(folder / "gelu_triton_ascend_impl.py"), True, False, get_backend("cuda"),
                        GateOptions(seeds=1, timeout=300))

    honest = gate(GELU / "gelu_triton_ascend_impl.py", "honest")
    census = honest["verify"]["census"]
    assert honest["verdict"] == "passed" and census["foreign_kernels"] == {}, honest["why"]
    assert any(k["name"].startswith("gelu_kernel") and k["via"] is None for k in census["kernels"]), census["kernels"]
    hidden = gate(CENSUS / "gelu_hidden_torch.py", "hidden")
    assert (hidden["verdict"], hidden["regression_type"]) == ("degraded", 3) and "aten::gelu" in hidden["why"]
    assert any(k["via"] == "aten::gelu" for k in hidden["verify"]["census"]["kernels"])
    jit = gate(CENSUS / "gelu_jiterator.py", "jiterator")
    assert jit["verify"]["passed_cases"] == 1 and jit["verify"]["census"]["compute"] == {}, jit["verify"]["census"]
    assert (jit["verdict"], jit["regression_type"]) == ("degraded", 3), jit
    assert "device kernel" in jit["why"] and jit["verify"]["census"]["foreign_kernels"], jit["verify"]["census"]
