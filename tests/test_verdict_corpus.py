"""Honest submissions in real-world styles, and hostile ones that hide PyTorch from the analysis.

Each fixture carries its expected findings as `# expect:` labels (tests/fixtures/precision:
a file without labels must lint clean; tests/fixtures/evasion: every file must be invalid).
"""

from __future__ import annotations

import pytest

from conftest import FIXTURES, computed_once, run_cli
from tritonlint.rule import expected_findings

PRECISION = sorted((FIXTURES / "precision").glob("*.py"))
EVASION = sorted((FIXTURES / "evasion").glob("*.py"))


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    def lint() -> dict:
        run = run_cli("--json", "--isolated", "-j", "2", str(FIXTURES / "precision"), str(FIXTURES / "evasion"))
        return {f["path"]: f for f in run.json["files"]}

    return computed_once(tmp_path_factory, "verdict_corpus_report", lint)


def _found(entry) -> list[tuple[str, int]]:
    return sorted((d["code"], d["line"]) for d in entry["diagnostics"])


@pytest.mark.parametrize("path", PRECISION, ids=lambda p: p.stem)
def test_precision(report, path):
    entry = report[str(path)]
    assert _found(entry) == expected_findings(path.read_text())


@pytest.mark.parametrize("path", EVASION, ids=lambda p: p.stem)
def test_evasion(report, path):
    entry = report[str(path)]
    assert entry["valid"] is False
    assert _found(entry) == expected_findings(path.read_text())


def test_one_finding_per_position_and_code():
    """Every file the repository carries: a position never holds the same code twice (`a * b * c`
    reports each `*` at its own operator; `x.pow(2).mean()` each method at its name)."""
    from conftest import EXAMPLES, ROOT

    run = run_cli("--json", "--isolated", "-j", "2", str(ROOT / "cases"), str(EXAMPLES), str(FIXTURES))
    repeated = []
    for f in run.json["files"]:
        seen = set()
        for d in f["diagnostics"]:
            key = (d["line"], d["col"], d["code"])
            if key in seen:
                repeated.append((f["path"], key))
            seen.add(key)
    assert repeated == []
