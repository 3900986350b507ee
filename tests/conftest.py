from __future__ import annotations

import importlib.util
import json
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


@pytest.fixture
def cli():
    return run_cli
