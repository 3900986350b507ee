"""Every rule's fix examples: exact output, parses, the finding is gone, a
second run changes nothing, comments and formatting elsewhere survive."""

from __future__ import annotations

import os
import stat

import libcst as cst
import pytest

from conftest import cli_in_process, run_cli
from tritonlint.config import Config
from tritonlint.engine import lint_source
from tritonlint.examples import LAUNCH, submission
from tritonlint.fix import fix_result
from tritonlint.registry import all_rules

CASES = [
    pytest.param(rule, before, after, id=f"{rule.code}-{i}")
    for rule in all_rules()
    for i, (before, after) in enumerate(rule.fix_examples())
]


def fixed(src: str) -> str:
    result, code = fix_result(lint_source(src, "f.py"), Config(), unsafe=True)
    return code


@pytest.mark.parametrize("rule,before,after", CASES)
def test_fix_example(rule, before, after):
    assert rule.code in {d.code for d in lint_source(before, "f.py").diagnostics}
    out = fixed(before)
    assert out == after
    cst.parse_module(out)
    compile(out, "f.py", "exec")
    assert rule.code not in {d.code for d in lint_source(out, "f.py").diagnostics}
    assert fixed(out) == out  # idempotent
    touched = {d.line for d in lint_source(before, "f.py").diagnostics if d.code == rule.code}
    for i, line in enumerate(before.splitlines(), start=1):  # comments elsewhere survive
        if "#" in line and i not in touched:
            assert line.split("#", 1)[1] in out


def test_enough_rules_have_fixes():
    assert sum(bool(r.FIXES) for r in all_rules()) >= 5


def test_unsafe_fixes_need_opt_in():
    unsafe_rules = [r for r in all_rules() if r.FIXES and "Unsafe" in r.doc().split("## Fix safety")[1]]
    assert unsafe_rules
    for rule in unsafe_rules:
        before, _ = rule.fix_examples()[0]
        result, code = fix_result(lint_source(before, "f.py"), Config(), unsafe=False)
        assert code == before, rule.code


def test_cli_fix_writes_atomically_and_keeps_mode(tmp_path):
    rule = next(r for r in all_rules() if r.code == "TL204")
    before, after = rule.fix_examples()[0]
    p = tmp_path / "sub.py"
    p.write_text(before)
    os.chmod(p, 0o640)
    diff = run_cli(str(p), "--diff")
    assert diff.rc == 1 and "+def k(x_ptr, n, BM: language.constexpr" in diff.stdout
    assert p.read_text() == before  # --diff writes nothing
    run = run_cli(str(p), "--fix", "--json")
    assert p.read_text() == after
    assert stat.S_IMODE(os.stat(p).st_mode) == 0o640
    assert run.json["files"][0]["fixes_applied"] == 2  # BM and BN
    assert [f for f in os.listdir(tmp_path)] == ["sub.py"]  # no temp file left behind
    assert run_cli(str(p), "--fix").rc == 0
    assert p.read_text() == after


def test_fix_that_would_not_parse_is_dropped(tmp_path, monkeypatch):
    """A rule whose fix produces invalid code: the file is left alone and TL907 says why."""
    from tritonlint import fix as fixmod
    from tritonlint.rule import SAFE, Fix

    src = next(r for r in all_rules() if r.code == "TL204").fix_examples()[0][0]
    result = lint_source(src, "f.py")
    d = next(d for d in result.diagnostics if d.code == "TL204")
    bad_param = d.fix.changes[0][0].with_changes(name=cst.Name("lambda"))  # a keyword: builds, does not parse
    d.fix = Fix(SAFE, "broken", [(d.fix.changes[0][0], bad_param)])
    result.diagnostics = [d]
    out_result, code = fixmod.fix_result(result, Config(), unsafe=True)
    assert code == src
    assert "TL907" in {x.code for x in out_result.diagnostics}


def test_fix_json_edits_describe_the_change():
    src = next(r for r in all_rules() if r.code == "TL205").fix_examples()[0][0]
    d = next(d for d in lint_source(src, "f.py").diagnostics if d.code == "TL205")
    assert d.fix_json["applicability"] == "safe"
    [edit] = d.fix_json["edits"]
    assert edit["line"] == 7 and edit["content"] == ""


def test_diff_is_only_the_patch_and_git_applies_it(tmp_path):
    """--diff: stdout is a patch `git apply` takes (no ./ in its paths), the count goes to stderr as
    'Would fix', and --json reports the unchanged file's findings with the fixes that would apply."""
    import subprocess

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    src = submission(LAUNCH.replace("torch.empty_like(x)", "torch.zeros_like(x)").replace("return out", 'print("hi")\nreturn out'))
    (tmp_path / "s.py").write_text(src)
    diff = cli_in_process("./s.py", "--diff", "--unsafe-fixes", cwd=tmp_path)
    assert diff.rc == 1 and diff.stdout.startswith("--- a/s.py\n+++ b/s.py\n") and "Fixed" not in diff.stdout + diff.stderr
    assert diff.stderr.strip() == "Would fix 2 findings."
    as_json = cli_in_process("s.py", "--diff", "--unsafe-fixes", "--json", cwd=tmp_path).json["files"][0]
    plain = cli_in_process("s.py", "--json", cwd=tmp_path).json["files"][0]
    assert as_json["diagnostics"] == plain["diagnostics"] and all(d["fix"] for d in plain["diagnostics"])
    (tmp_path / "patch.diff").write_text(diff.stdout)
    subprocess.run(["git", "apply", "patch.diff"], cwd=tmp_path, check=True)
    assert cli_in_process("s.py", "--json", cwd=tmp_path).json["files"][0]["diagnostics"] == []
