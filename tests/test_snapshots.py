"""Every rule's BAD examples as a user sees them, compared with tests/snapshots/<CODE>.txt.

test_rule_examples.py checks only (code, line); a change of wording, of a range, or of a
fix shows up here as a diff of a plain-text file. After a deliberate change, rewrite the
snapshots and review their diff with the code:

    TRITONLINT_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest tests/test_snapshots.py

Each fix is rendered from the diagnostic's `fix_json`, the positioned edits that the
JSON, SARIF and GitHub reporters hand on: per edit its range, the text it replaces (-)
and the new text (+). A change of range then shows as new coordinates and a new `-`
text, a change of wording as a new description or `+` text, both under the one finding
whose fix changed. (Applying one fix through libcst needs a private helper of fix.py,
and the diff of applying every fix mixes the findings and hides a range change whose
result is the same text; the FIXES examples already check the applied result.)
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest

from tritonlint.engine import lint_source
from tritonlint.registry import all_rules

SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"
UPDATE = os.environ.get("TRITONLINT_UPDATE_SNAPSHOTS") == "1"
HOW_TO_UPDATE = "TRITONLINT_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest tests/test_snapshots.py"
SHOWN_DIFF_LINES = 40


def _span(lines: list[str], line: int, col: int, end_line: int, end_col: int) -> str:
    """The source text from (line, col) to (end_line, end_col): 1-based, end exclusive."""
    if line == end_line:
        return lines[line - 1][col - 1:end_col - 1]
    return "\n".join([lines[line - 1][col - 1:], *lines[line:end_line - 1], lines[end_line - 1][:end_col - 1]])


def _underline(lines: list[str], d) -> list[str]:
    """The reported line with carets under the diagnostic's range (to the line's end when it
    goes on, with the range's end after them)."""
    text = lines[d.line - 1]
    end = d.end_col if d.end_line == d.line else len(text) + 1
    carets = " " * (d.col - 1) + "^" * max(1, end - d.col)
    if d.end_line != d.line:
        carets += f" ... {d.end_line}:{d.end_col}"
    return [f"  {d.line:>3} | {text}", f"      | {carets}"]


def _fix(lines: list[str], fix: dict) -> list[str]:
    out = [f"  fix ({fix['applicability']}): {fix['description']}"]
    for e in fix["edits"]:
        out.append(f"    @ {e['line']}:{e['col']}-{e['end_line']}:{e['end_col']}")
        out += [f"    - {s}" for s in _span(lines, e["line"], e["col"], e["end_line"], e["end_col"]).split("\n")]
        out += [f"    + {s}" for s in e["content"].split("\n")]
    return out


def render(rule) -> str:
    out = [f"# {rule.code} {rule.name} ({rule.severity}): its BAD examples as tritonlint reports them.",
           f"# Rewrite after a deliberate change: {HOW_TO_UPDATE}"]
    bad = [src for kind, src in rule.examples() if kind == "bad"]
    for i, src in enumerate(bad, start=1):
        result = lint_source(src, f"{rule.code}_bad.py")  # the name test_rule_examples.py lints it under
        lines = src.splitlines()
        out += ["", f"== BAD example {i} of {len(bad)}: {len(result.diagnostics)} finding(s)"]
        for d in result.diagnostics:
            mark = " [*]" if d.fix_json is not None else ""
            out.append(f"{d.line}:{d.col}: {d.code}{mark} {d.message}")
            if d.line <= len(lines):
                out += _underline(lines, d)
            if d.fix_json is not None:
                out += _fix(lines, d.fix_json)
    return "\n".join(s.rstrip() for s in out) + "\n"  # no trailing blanks for editors to strip


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_bad_examples_match_snapshot(rule):
    path = SNAPSHOTS / f"{rule.code}.txt"
    got = render(rule)
    if UPDATE:
        SNAPSHOTS.mkdir(exist_ok=True)
        path.write_text(got)
        return
    if not path.exists():
        pytest.fail(f"no snapshot {path.relative_to(SNAPSHOTS.parent.parent)} for {rule.code}; write it with:\n  {HOW_TO_UPDATE}")
    want = path.read_text()
    if got != want:
        diff = list(difflib.unified_diff(want.splitlines(), got.splitlines(), "snapshot", "now", lineterm=""))
        shown = diff[:SHOWN_DIFF_LINES] + ([f"... {len(diff) - SHOWN_DIFF_LINES} more lines"] if len(diff) > SHOWN_DIFF_LINES else [])
        pytest.fail(f"{rule.code}'s BAD examples no longer lint as {path.name} says:\n" + "\n".join(shown)
                    + f"\nIf the change is intended, rewrite the snapshots and review their diff:\n  {HOW_TO_UPDATE}")


def test_no_snapshot_for_a_rule_that_is_gone():
    codes = {r.code for r in all_rules()}
    stale = sorted(p for p in SNAPSHOTS.glob("*.txt") if p.stem not in codes)
    if UPDATE:
        for p in stale:
            p.unlink()
        return
    assert not stale, f"snapshots for rules that no longer exist (delete them): {[p.name for p in stale]}"
