from __future__ import annotations

import contextlib
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
