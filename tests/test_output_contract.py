"""The output contract and in-place outputs (issue #13, sections 4 and 5), on real child
processes and real Triton kernels through the CPU interpreter: each hostile output family
fails for its own named reason; a non-contiguous right answer passes with a note; the
in-place state of causal_conv1d is learned from the reference when the task does not
declare it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
import torch

from conftest import FIXTURES, ROOT, requires_triton
from tritonlint.runtime_check.compare import CONTRACT_CHECKS, compare_outputs, contract, portable
from tritonlint.runtime_check.verify import inplace_learned, same_bits

GELU = ROOT / "cases" / "t1" / "gelu"
CONV = ROOT / "cases" / "t3" / "causal_conv1d"
CONV_UNDECLARED = FIXTURES / "tasks" / "causal_conv1d_torch.py"  # the official file: no INPLACE_OUTPUTS
HOSTILE = FIXTURES / "hostile"
SEED_002_FIELDS = {"op_name", "total_cases", "passed_cases", "failed_cases", "failures"}
SEED_002_FAILURE = {"case_idx", "input_desc", "error_type", "error_msg"}


def run_verify(task, impl, seeds=2):
    from tritonlint.runtime_check.backends import get_backend
    from tritonlint.runtime_check.verify import verify

    return verify(task, impl, get_backend("cpu"), seeds=seeds, timeout=120)


# --- on real children ----------------------------------------------------------------------------

@requires_triton
@pytest.mark.parametrize("name,check,says", [
    ("float64_output", "dtype", "dtype torch.float64 != reference torch.float32"),
    ("one_item_list", "container", "one-item sequence where the reference returns a bare tensor"),
    ("extra_output", "count", "2 outputs, reference returns one bare tensor"),
    ("sparse_output", "layout", "sparse_coo tensor"),
    ("tensor_subclass", "subclass", "tensor subclass (AlwaysEqual)"),
    ("meta_output", "device", "meta tensor"),
    ("nested_output", "nested", "list inside the outputs"),
    ("dict_of_tensors", "type", "expected a tensor, got dict"),
    ("wrong_type", "type", "expected a tensor, got dict"),
])
def test_each_output_family_fails_for_its_own_reason(name, check, says):
    r = run_verify(GELU / "gelu_torch.py", HOSTILE / f"gelu_{name}.py")
    assert (r["total_cases"], r["passed_cases"]) == (2, 0)
    assert [f["error_type"] for f in r["failures"]] == ["OutputContract"] * 2
    assert [f["check"] for f in r["failures"]] == [check] * 2
    assert says in r["failures"][0]["error_msg"]
    assert SEED_002_FIELDS <= set(r) and SEED_002_FAILURE <= set(r["failures"][0])
    json.dumps(r)  # the result is plain data


@requires_triton
def test_non_contiguous_right_answer_passes_with_a_note():
    r = run_verify(GELU / "gelu_torch.py", HOSTILE / "gelu_non_contiguous.py")
    assert (r["passed_cases"], r["failures"]) == (2, [])
    assert [n["case_idx"] for n in r["notes"]] == [1, 2]
    assert "output 0 is not contiguous" in r["notes"][0]["note"] and "strides [1, 4, 32]" in r["notes"][0]["note"]


@requires_triton
def test_the_parent_compares_inputs_with_its_own_copy_not_a_file_the_candidate_can_rewrite():
    r = run_verify(GELU / "gelu_torch.py", HOSTILE / "gelu_rewrites_case_files.py")
    assert r["passed_cases"] == 0 and len(r["failures"]) == 2
    for f in r["failures"]:  # namespaces: the rewrite itself is refused; without them the parent's copy catches it
        sandboxed = "Read-only file system" in f["error_msg"]
        assert (f["error_type"], sandboxed) in (("InputModified", False), ("RuntimeError", True)), f
        assert sandboxed or "input 0 was modified" in f["error_msg"]


@requires_triton
def test_a_correct_solution_keeps_clean_results():
    r = run_verify(GELU / "gelu_torch.py", GELU / "gelu_triton_ascend_impl.py")
    assert (r["passed_cases"], r["notes"], r["inplace_outputs"], r["inplace_source"]) == (2, [], [], "learned")


@requires_triton
def test_in_place_state_is_learned_from_the_reference():
    r = run_verify(CONV_UNDECLARED, CONV / "causal_conv1d_triton_ascend_impl.py", seeds=3)
    assert (r["total_cases"], r["passed_cases"], r["failures"]) == (3, 3, [])
    assert (r["inplace_outputs"], r["inplace_source"]) == ([1], "learned")  # conv_state


@requires_triton
def test_declared_in_place_outputs_still_override():
    r = run_verify(CONV / "causal_conv1d_torch.py", CONV / "causal_conv1d_triton_ascend_impl.py")
    assert (r["passed_cases"], r["inplace_outputs"], r["inplace_source"]) == (2, [1], "declared")


@requires_triton
def test_a_candidate_that_leaves_the_state_untouched_fails():
    r = run_verify(CONV_UNDECLARED, HOSTILE / "causal_conv1d_state_untouched.py")
    assert [f["error_type"] for f in r["failures"]] == ["MismatchError"] * 2
    assert r["failures"][0]["error_msg"].startswith("in-place output (input 1): fail")


@requires_triton
def test_a_candidate_that_mutates_an_input_the_reference_leaves_alone_fails():
    r = run_verify(CONV_UNDECLARED, HOSTILE / "causal_conv1d_mutates_x.py")
    assert [f["error_type"] for f in r["failures"]] == ["InputModified"] * 2
    assert "input 0 was modified by the candidate" in r["failures"][0]["error_msg"]


@requires_triton
def test_seed_002_command_line_keeps_its_fields(tmp_path):
    shutil.copy(CONV_UNDECLARED, tmp_path / "causal_conv1d_torch.py")
    shutil.copy(CONV / "causal_conv1d_triton_ascend_impl.py", tmp_path / "causal_conv1d_triton_ascend_impl.py")
    shutil.copy(HOSTILE / "causal_conv1d_state_untouched.py", tmp_path / "causal_conv1d_triton_stale.py")
    cmd = [sys.executable, "-m", "tritonlint.runtime_check.verify", "--op_name", "causal_conv1d", "--verify_dir",
           str(tmp_path), "--backend", "cpu", "--seeds", "1"]
    ok = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert ok.returncode == 0, ok.stderr
    result = json.loads((tmp_path / "verify_result.json").read_text())
    assert SEED_002_FIELDS <= set(result) and result["inplace_outputs"] == [1]
    bad = subprocess.run(cmd + ["--triton_impl_name", "triton_stale"], capture_output=True, text=True, timeout=300)
    assert bad.returncode == 1
    failed = json.loads((tmp_path / "verify_result_stale.json").read_text())
    assert SEED_002_FAILURE <= set(failed["failures"][0]) and failed["failures"][0]["error_type"] == "MismatchError"


# --- the parent's rules, on values as a result file can hold them ------------------------------------

X = torch.randn(4, 5)


def checks(ref, out, **kw):
    return [(v.passed, v.check) for v in compare_outputs(ref, out, **kw)]


def test_tuple_and_list_are_one_container_kind():
    assert checks((X, X), [X, X]) == [(True, "mere_mare")] * 2


def test_bare_tensor_and_one_item_sequence_differ_both_ways():
    assert checks(X, (X,)) == [(False, "container")]
    assert checks([X], X) == [(False, "container")]
    assert checks([X, X], X) == [(False, "count")]
    assert checks([X, X], [X, X, X]) == [(False, "count")]
    assert checks([X, X], [X]) == [(False, "count")]


def test_no_cast_before_comparing():
    assert checks(X, X.double()) == [(False, "dtype")]
    assert checks(X.half(), X.half().float()) == [(False, "dtype")]
    assert checks(X.half(), X.half()) == [(True, "mere_mare")]
    assert checks(torch.arange(4), torch.arange(4, dtype=torch.int32)) == [(False, "dtype")]


def test_thresholds_follow_the_reference_dtype():
    ref = torch.ones(1000)
    off = ref * (1 + 2.0**-11)  # above float32's MERE limit (2^-13), below float16's (2^-10)
    assert checks(ref, off) == [(False, "mere_mare")]
    assert checks(ref.half(), off.half()) == [(True, "mere_mare")]


def test_wrong_device_from_the_childrens_own_view():
    meta = {"device": "cuda:0", "strides": [5, 1], "contiguous": True}
    assert checks(X, X, ref_meta=meta, out_meta={**meta, "device": "cpu"}) == [(False, "device")]
    assert checks(X, X, ref_meta=meta, out_meta=meta) == [(True, "mere_mare")]
    assert checks(X, X, ref_meta=meta) == [(True, "mere_mare")]  # one side without its view: the loaded devices


def test_a_forged_result_file_with_exotic_tensors_still_fails_by_name():
    # weights_only=True loads sparse and meta tensors: the parent checks what it loaded, not only the tags
    assert checks(X, X.to_sparse()) == [(False, "layout")]
    assert checks(X, torch.empty(4, 5, device="meta")) == [(False, "device")]
    assert checks(X, {"__type__": "AlwaysEqual", "check": "subclass", "why": "a tensor subclass"}) == [(False, "subclass")]
    assert checks(X, {"__type__": "Tensor", "check": "nonsense"}) == [(False, "type")]


def test_portable_tags_what_must_not_cross_as_itself():
    class Sub(torch.Tensor):
        pass

    class Num(int):
        pass

    assert portable(X.as_subclass(Sub))["check"] == "subclass"
    assert portable(X.to_sparse())["check"] == "layout"
    assert portable(torch.empty(2, device="meta"))["check"] == "device"
    assert portable(Num(3)) == {"__type__": "Num"} and portable({"a": X}) == {"__type__": "dict"}
    assert portable((X, 1, None))[1:] == [1, None]


def test_scalars_and_none_in_a_sequence():
    assert checks((X, 3, None), (X, 3, None)) == [(True, "mere_mare"), (True, "scalar"), (True, "scalar")]
    assert checks((X, 3), (X, 4)) == [(True, "mere_mare"), (False, "scalar")]
    assert checks((X, 3), (X, 3.0)) == [(False, "type")]


def test_an_unsupported_reference_output_is_the_references_problem():
    v = contract({"__type__": "dict"}, X)
    assert v.check == "reference" and v.check in CONTRACT_CHECKS


def test_inputs_are_compared_bit_for_bit():
    nan = torch.tensor([float("nan"), 1.0])
    assert same_bits(nan, nan.clone())  # torch.equal says False here
    assert not same_bits(torch.tensor([0.0]), torch.tensor([-0.0]))
    assert not same_bits(X, X.double()) and not same_bits(X, X.to_sparse()) and not same_bits(X, None)
    assert same_bits(X.t(), X.t().contiguous())


def test_learning_which_inputs_the_reference_changed():
    pristine = [X, X + 1, 3, torch.tensor([float("nan")])]
    after = [X.clone(), X + 2, 3, torch.tensor([float("nan")])]
    assert inplace_learned(pristine, {"inputs_after": after}) == [1]
    assert inplace_learned(pristine, {"inputs_after": after[:1]}) == [1, 3]
