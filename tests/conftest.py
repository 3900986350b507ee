from __future__ import annotations

import contextlib
import fcntl
import importlib.util
import io
import json
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import jsonschema
import pytest
from hypothesis import settings

from tritonlint.report import load_schema

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
SUBMISSIONS = FIXTURES / "submissions"
EXAMPLES = ROOT / "examples"  # the README's samples belong to the labelled corpus too
_VALIDATOR = jsonschema.Draft202012Validator(load_schema())


def requires(*modules: str) -> pytest.MarkDecorator:
    """Skip unless every module is installed (the runtime gate's tests need triton)."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    return pytest.mark.skipif(bool(missing), reason=f"not installed: {', '.join(missing)}")


requires_triton = requires("triton")

# How many programs the property tests (test_properties.py) generate: all of them in a plain `pytest`
# (CI, .ci/run), fewer in the fast loop `pytest -m "not slow"`. --hypothesis-profile full|fast picks one.
settings.register_profile("full", max_examples=60)
settings.register_profile("fast", max_examples=10)


def pytest_configure(config):
    if config.getoption("--hypothesis-profile", None) is None:
        fast_loop = re.search(r"\bnot\s+slow\b", config.getoption("markexpr") or "")
        settings.load_profile("fast" if fast_loop else "full")


# Gate tests the fast loop leaves out while each gate child pays its own `import torch` (seconds per child).
# Each takes a path that a test kept in the fast loop takes too (the value), so the fast loop still covers
# every behaviour; CI runs them all. Listed here, not marked in their files, because the gate's process
# model (and those files) are being rewritten; once children start fast, delete the entries.
SLOW_GATE_TESTS = {  # node id, or its start -> the fast-loop test that covers the same path
    "tests/test_verify.py::test_hang_is_killed_at_the_timeout":  # 20 s asleep
        "test_runner.py::test_a_crash_or_hang_costs_only_its_own_case",
    "tests/test_verify.py::test_hostile_submission_fails_for_its_reason[segfault-":
        "its [abort-...]: a signal kills the child",
    "tests/test_verify.py::test_hostile_submission_fails_for_its_reason[wrong_type-":
        "test_output_contract.py's [wrong_type-...]: the same fixture",
    "tests/test_verify.py::test_hostile_submission_fails_for_its_reason[patches_comparison-":
        "test_verify.py::test_a_failure_says_why: the same fixture",
    "tests/test_verify.py::test_hostile_submission_fails_for_its_reason[freed_memory-":
        "its [gc_scavenger-...]: the reference's answer sought in the candidate's memory",
    "tests/test_verify.py::test_hostile_submission_fails_for_its_reason[mutates_input-":
        "test_output_contract.py::test_a_candidate_that_mutates_an_input_the_reference_leaves_alone_fails",
    "tests/test_output_contract.py::test_seed_002_command_line_keeps_its_fields":
        "test_verify.py::test_seed_002_command_line: the same command line",
    "tests/test_output_contract.py::test_each_output_family_fails_for_its_own_reason[float64_output-":
        "test_no_cast_before_comparing (dtype, no child); [wrong_type-...] and [nested_output-...] in children",
    "tests/test_output_contract.py::test_each_output_family_fails_for_its_own_reason[one_item_list-":
        "test_bare_tensor_and_one_item_sequence_differ_both_ways (container, no child)",
    "tests/test_output_contract.py::test_each_output_family_fails_for_its_own_reason[extra_output-":
        "test_bare_tensor_and_one_item_sequence_differ_both_ways (count, no child)",
    "tests/test_output_contract.py::test_each_output_family_fails_for_its_own_reason[sparse_output-":
        "test_a_forged_result_file_with_exotic_tensors_still_fails_by_name, test_portable_tags_... (layout)",
    "tests/test_output_contract.py::test_each_output_family_fails_for_its_own_reason[meta_output-":
        "test_a_forged_result_file_with_exotic_tensors_still_fails_by_name, test_portable_tags_... (device)",
    "tests/test_output_contract.py::test_each_output_family_fails_for_its_own_reason[dict_of_tensors-":
        "its [wrong_type-...]: the same check and message",
    "tests/test_output_contract.py::test_each_output_family_fails_for_its_own_reason[tensor_subclass-":
        "test_portable_tags_what_must_not_cross_as_itself, test_a_forged_result_file_... (subclass, no child)",
    "tests/test_output_contract.py::test_a_correct_solution_keeps_clean_results":
        "test_verify.py::test_correct_solution_passes_every_seed; test_in_place_state_is_learned_from_the_reference",
    "tests/test_sandbox.py::test_a_sabotaged_case_result_fails_its_case[namespaces-symlink]":
        "test_a_malformed_case_result_is_a_corrupt_result[symlink] (no child); [namespaces-fifo] in a child",
    "tests/test_sandbox.py::test_a_sabotaged_case_result_fails_its_case[namespaces-giant]":
        "test_a_malformed_case_result_is_a_corrupt_result[giant] (no child); [namespaces-fifo] in a child",
    "tests/test_sandbox.py::test_a_sabotaged_case_result_fails_its_case[fallback-symlink]":
        "test_a_malformed_case_result_is_a_corrupt_result[symlink] (no child); [fallback-fifo] in a child",
    "tests/test_sandbox.py::test_a_sabotaged_case_result_fails_its_case[fallback-giant]":
        "test_a_malformed_case_result_is_a_corrupt_result[giant] (no child); [fallback-fifo] in a child",
    "tests/test_sandbox.py::test_the_candidate_is_not_handed_the_reference[namespaces]":
        "its [fallback]: the parent builds the child's command line the same way in either mode",
    "tests/test_benchmark_gate.py::test_timed_calls_must_still_be_right[timing_aware]":
        "its [wrong_when_repeated]: a timed call that differs from the verified one",
    "tests/test_runner.py::test_hidden_state_probe[candidate2-":
        "its ['calls' is not bit-identical] (the probe fails a submission) and [... -None] (it passes one)",
}


@pytest.hookimpl(tryfirst=True)  # before -m deselects
def pytest_collection_modifyitems(config, items):
    used = set()
    for item in items:
        for prefix in SLOW_GATE_TESTS:
            if item.nodeid.startswith(prefix):
                item.add_marker(pytest.mark.slow)
                used.add(prefix)
    if [Path(a).resolve() for a in config.args] == [ROOT / "tests"]:  # the whole suite was collected
        for prefix in SLOW_GATE_TESTS.keys() - used:
            warnings.warn(pytest.PytestWarning(f"tests/conftest.py: SLOW_GATE_TESTS names no test: {prefix}"))


def validate_report(report: dict) -> dict:
    _VALIDATOR.validate(report)
    return report


class CliRun:
    def __init__(self, proc: subprocess.CompletedProcess) -> None:
        self.rc = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr

    @property
    def json(self) -> dict:
        return validate_report(json.loads(self.stdout))


def run_cli(*args: str, cwd: Path | None = None, timeout: float = 300) -> CliRun:
    """The real CLI in a child process, as users and pre-commit run it."""
    proc = subprocess.run(
        [sys.executable, "-m", "tritonlint", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return CliRun(proc)


def cli_in_process(*args: str, cwd: Path | None = None) -> CliRun:
    """The same CLI, `tritonlint.cli.main`, in this process: its arguments, exit code, stdout and stderr
    as run_cli gives them, without starting Python for each call (0.3 s). For lint runs of a few files;
    run_cli keeps a real child process wherever the process itself is tested (standard input, colour on
    a terminal, what gets imported, argparse's exit, -j with enough files for a pool, --run, eval)."""
    from tritonlint.cli import main

    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = main(list(args))
            except SystemExit as e:  # argparse: a usage error, --version
                rc = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    finally:
        os.chdir(here)
    return CliRun(subprocess.CompletedProcess(args, rc, out.getvalue(), err.getvalue()))


@pytest.fixture
def cli():
    return run_cli


@contextlib.contextmanager
def _locked(path: Path):
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield


@pytest.fixture(autouse=True)
def _exclusive(request):
    """@pytest.mark.exclusive("name"): a lock per name in the temp folder, held while the test runs, so
    that tests sharing a fixed path or scanning every process (test_sandbox's orphans) never overlap,
    whichever pytest-xdist workers, or pytest runs in other checkouts, they are in."""
    mark = request.node.get_closest_marker("exclusive")
    if mark is None:
        yield
        return
    with _locked(Path(os.environ.get("TMPDIR", "/tmp")) / f"tritonlint-tests-{mark.args[0]}.lock"):
        yield


def computed_once(tmp_path_factory, name: str, compute):
    """compute() once per test run, also under pytest-xdist, whose workers would each run a module
    fixture: the first worker computes it and leaves the JSON in the run's temp folder, which every
    worker's base temp folder is in; the others read it."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        return compute()
    root = tmp_path_factory.getbasetemp().parent
    with _locked(root / f"{name}.lock"):
        done = root / f"{name}.json"
        if done.exists():
            return json.loads(done.read_text())
        value = compute()
        done.write_text(json.dumps(value))
        return value
