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
