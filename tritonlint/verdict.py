"""One file's lint verdict: `valid`, `regression_type`, `suggestion` and seed 002's `checks`.

Degradation findings make a file invalid and give it the lowest degradation
type found; integrity findings make it invalid with no type; hazards and
performance findings never change the verdict (severity decides the exit code).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tritonlint.rule import DEGRADATION, INTEGRITY, Context, Diagnostic, Rule

if TYPE_CHECKING:
    from tritonlint.engine import FileResult

# Seed 002's three `checks` keys: every finding of a type is listed under its
# type's key, so a consumer that reads only these three sees why the type was given.
SEED_002_KEYS = ("triton_kernel_exists", "kernel_called_from_forward", "no_forbidden_torch_ops")
GAMING_KEY = "no_measurement_gaming"
_SNIPPET = 80


def fill(ctx: Context, result: "FileResult", by_rule: list[tuple[Rule, list[Diagnostic]]]) -> None:
    checks = result.checks
    type_key: dict[int, str] = {}
    suggestion: dict[int, str] = {}  # per type: the seed-002 rule's, else any rule's of that type
    for rule, found in by_rule:
        if rule.check_key is not None:
            entry = {"passed": not found}
            entry.update(rule.check_details(ctx, found))
            checks[rule.check_key] = entry
            if rule.check_key in SEED_002_KEYS and rule.regression_type is not None:
                type_key[rule.regression_type] = rule.check_key
                if rule.suggestion:
                    suggestion[rule.regression_type] = rule.suggestion
        if rule.regression_type is not None and rule.suggestion:
            suggestion.setdefault(rule.regression_type, rule.suggestion)
    lowest: int | None = None
    gaming = []
    for rule, found in by_rule:
        if not found:
            continue
        if rule.category == DEGRADATION and rule.regression_type is not None:
            t = rule.regression_type
            lowest = t if lowest is None else min(lowest, t)
            key = type_key.get(t)
            if key is not None and rule.check_key != key:  # listed under its type's seed-002 key too
                entry = checks[key]
                entry["passed"] = False
                entry.setdefault("violations", []).extend(_violation(ctx, d) for d in found)
        elif rule.category == INTEGRITY:
            gaming += [{"line": d.line, "code": d.code, "reason": d.message} for d in found]
    checks[GAMING_KEY] = {"passed": not gaming, "violations": sorted(gaming, key=lambda v: (v["line"], v["code"]))}
    result.lint_type = lowest
    result.suggestion = suggestion.get(lowest) if lowest is not None else None


def _violation(ctx: Context, d: Diagnostic) -> dict:
    call = d.data.get("call")
    if call is None and d.node is not None:
        call = " ".join(ctx.model.module.code_for_node(d.node).split())[:_SNIPPET]
    return {"line": d.line, "call": call or d.code, "reason": d.data.get("reason") or d.message}
