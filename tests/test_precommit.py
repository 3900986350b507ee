"""The hook as users run it: real `pre-commit try-repo` in a temporary git repo."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import EXAMPLES, ROOT, SUBMISSIONS

PRE_COMMIT = [sys.executable, "-m", "pre_commit"]
pytestmark = pytest.mark.slow  # each test builds a pre-commit environment


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def solutions_repo(tmp_path_factory) -> Path:
    repo = tmp_path_factory.mktemp("solutions")
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "dev@example.com")
    git(repo, "config", "user.name", "dev")
    (repo / "t1").mkdir()
    shutil.copy(EXAMPLES / "gelu_triton.py", repo / "t1" / "gelu.py")
    shutil.copy(SUBMISSIONS / "type3_01_softmax_after_kernel.py", repo / "t1" / "softmax.py")
    (repo / "README.md").write_text("solutions\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "solutions")
    return repo


def try_repo(repo: Path, home: Path, *extra: str, hook: str = "tritonlint") -> subprocess.CompletedProcess:
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    env.pop("PYTHONPATH", None)
    return subprocess.run(
        [*PRE_COMMIT, "try-repo", str(ROOT), hook, *extra],
        cwd=repo, env=env, capture_output=True, text=True, timeout=900,
    )


def test_hook_fails_degraded_and_passes_clean(solutions_repo, tmp_path_factory):
    home = tmp_path_factory.mktemp("pre-commit-home")
    everything = try_repo(solutions_repo, home, "--all-files")
    out = everything.stdout + everything.stderr
    assert everything.returncode == 1, out
    assert "t1/softmax.py:26:18: TL003" in out
    assert "t1/gelu.py" not in out

    clean = try_repo(solutions_repo, home, "--files", "t1/gelu.py")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "Passed" in clean.stdout


def test_fix_hook_rewrites_then_passes(solutions_repo, tmp_path_factory):
    home = tmp_path_factory.mktemp("pre-commit-home-fix")
    target = solutions_repo / "t1" / "device.py"
    src = (SUBMISSIONS / "clean_01_direct_launch.py").read_text()
    target.write_text(src.replace("torch.empty_like(x)", 'torch.empty(x.shape, device="cuda")'))
    git(solutions_repo, "add", "t1/device.py")
    first = try_repo(solutions_repo, home, "--files", "t1/device.py", hook="tritonlint-fix")
    assert first.returncode == 1, first.stdout + first.stderr  # files were modified
    assert "files were modified by this hook" in first.stdout
    assert 'device=x.device' in target.read_text()
    git(solutions_repo, "add", "t1/device.py")
    second = try_repo(solutions_repo, home, "--files", "t1/device.py", hook="tritonlint-fix")
    assert second.returncode == 0, second.stdout + second.stderr
