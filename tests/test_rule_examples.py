"""Every rule ships BAD and GOOD examples; each must lint exactly as labelled."""

from __future__ import annotations

import pytest

from tritonlint.engine import lint_source
from tritonlint.registry import all_rules
from tritonlint.rule import expected_findings

CASES = [
    pytest.param(rule, kind, src, id=f"{rule.code}-{kind}{i}")
    for rule in all_rules()
    for i, (kind, src) in enumerate(rule.examples())
]


@pytest.mark.parametrize("rule,kind,src", CASES)
def test_example(rule, kind, src):
    result = lint_source(src, f"{rule.code}_{kind}.py")
    got = sorted((d.code, d.line) for d in result.diagnostics)
    assert got == expected_findings(src)
    if kind == "bad":
        assert any(code == rule.code for code, _ in got), "a BAD example must trigger its own rule"
    else:
        assert got == [], "a GOOD example must be a clean submission"


def test_every_rule_has_examples_and_doc():
    for rule in all_rules():
        assert rule.BAD and rule.GOOD, rule.code
        doc = rule.doc()
        for section in ("## What it does", "## Why is this bad?", "## Example", "## Use instead", "## Fix safety"):
            assert section in doc, (rule.code, section)
        assert rule.name == rule.name.lower() and " " not in rule.name
        assert rule.severity in ("error", "warning")


def test_rule_codes_unique_and_one_rule_per_module():
    rules = all_rules()
    assert len({r.code for r in rules}) == len(rules)
    assert len({r.__module__ for r in rules}) == len(rules)
    for r in rules:
        assert r.__module__.split(".")[-1].startswith(r.code.lower())
