"""Lint every .py file of an installed large package (torch's own sources)."""

from __future__ import annotations

import importlib.util
import json
import os

import pytest

from conftest import run_cli, validate_report

spec = importlib.util.find_spec("torch")  # finds, does not import
TORCH_DIR = os.path.dirname(spec.origin) if spec and spec.origin else None


@pytest.mark.slow
@pytest.mark.skipif(TORCH_DIR is None, reason="torch is not installed (CI installs the CPU build)")
def test_torch_sources(tmp_path):
    out = tmp_path / "torch.json"
    run = run_cli(TORCH_DIR, "--json", "-j", "2", "-o", str(out), timeout=1200)
    assert run.rc in (0, 1), run.stderr[-2000:]
    report = validate_report(json.loads(out.read_text()))
    assert report["summary"]["files"] > 2000
    assert report["summary"]["failed"] == 0
