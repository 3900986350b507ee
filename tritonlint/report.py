"""Reporters: they only render FileResults (JSON, text)."""

from __future__ import annotations

import json
import sys
from typing import IO, Sequence

import tritonlint
from tritonlint.engine import FAILED, SKIPPED, FileResult
from tritonlint.rule import ERROR, WARNING

SCHEMA_VERSION = 1
_CHECK_LISTS = {"triton_kernel_exists": "kernels", "kernel_called_from_forward": "called"}


def build_report(results: Sequence[FileResult], elapsed_ms: float) -> dict:
    """The unified JSON: seed-002 keys on top (for one file exactly its
    output), then one entry per file, then a summary."""
    valid = all(r.valid for r in results)
    types = [r.regression_type for r in results if r.regression_type is not None]
    lowest = min(types) if types else None
    if len(results) == 1:
        checks, suggestion = results[0].checks, results[0].suggestion
    else:
        checks = _merge_checks(results)
        suggestion = next((r.suggestion for r in results if r.regression_type == lowest), None)
    diags = [d for r in results for d in r.diagnostics]
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "tritonlint", "version": tritonlint.__version__},
        "valid": valid,
        "regression_type": lowest,
        "checks": checks,
        "suggestion": suggestion,
        "files": [r.to_json() for r in results],
        "summary": {
            "files": len(results),
            "skipped": sum(r.status == SKIPPED for r in results),
            "checked": sum(r.status != SKIPPED for r in results),  # what the text's "N files checked" says
            "failed": sum(r.status == FAILED for r in results),
            "invalid": sum(not r.valid for r in results if r.status != SKIPPED),
            "gate_failures": sum(r.gate_failed for r in results),
            "errors": sum(d.severity == ERROR for d in diags),
            "warnings": sum(d.severity == WARNING for d in diags),
            "fixable": sum(d.fix_json is not None for d in diags),
            "elapsed_ms": round(elapsed_ms, 3),
        },
    }


def _merge_checks(results: Sequence[FileResult]) -> dict:
    """Several files: a check passes when it passed in every file; lists are
    concatenated, each item naming its file."""
    merged: dict = {}
    for r in results:
        for key, entry in r.checks.items():
            m = merged.setdefault(key, {"passed": True})
            m["passed"] = m["passed"] and entry.get("passed", True)
            for field, value in entry.items():
                if field == "passed" or not isinstance(value, list):
                    continue
                items = m.setdefault(field, [])
                for v in value:
                    items.append({**v, "path": r.path} if isinstance(v, dict) else f"{r.path}::{v}")
    return merged


def write_json(report: dict, out: IO[str]) -> None:
    from tritonlint.runtime_check.protocol import strict_json  # torch-free: no NaN/Infinity tokens

    out.write(strict_json(report, indent=2) + "\n")


def _gh_escape(s: str, prop: bool = False) -> str:
    s = s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return s.replace(":", "%3A").replace(",", "%2C") if prop else s


def write_github(results: Sequence[FileResult], out: IO[str]) -> None:
    """GitHub Actions workflow commands: one annotation per finding."""
    for r in results:
        for d in r.diagnostics:
            level = "error" if d.severity == ERROR else "warning"
            props = (f"file={_gh_escape(r.path, True)},line={d.line},col={d.col},"
                     f"endLine={d.end_line},endColumn={d.end_col},title={_gh_escape(f'{d.code} {d.name}', True)}")
            out.write(f"::{level} {props}::{_gh_escape(f'{d.code} {d.message}')}\n")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' * (n != 1)}"


def verdict_line(r: FileResult) -> str | None:
    """Why a file is invalid, in one line; None for a valid file."""
    if r.valid or r.status == FAILED:
        return None
    why = []
    if r.regression_type is not None:
        why.append(f"degradation type {r.regression_type}")
    gaming = r.checks.get("no_measurement_gaming", {})
    if not gaming.get("passed", True):
        why.append("games the measurement (" + ", ".join(sorted({v["code"] for v in gaming["violations"]})) + ")")
    if r.gate_failed:
        why.append(f"runtime gate: {r.runtime['verdict']}")
    return f"{r.path}: invalid: " + "; ".join(why or ["see findings"])


def write_statistics(results: Sequence[FileResult], out: IO[str]) -> None:
    """`--statistics`: one line per code, most frequent first, with its fixable count."""
    counts: dict[str, list] = {}
    for r in results:
        for d in r.diagnostics:
            row = counts.setdefault(d.code, [0, 0, d.name])
            row[0] += 1
            row[1] += d.fix_json is not None
    for code, (n, fixable, name) in sorted(counts.items(), key=lambda kv: (-kv[1][0], kv[0])):
        out.write(f"{n:>5}  {code}  {'[*]' if fixable else '   '} {name}\n")


def write_diff_summary(results: Sequence[FileResult], out: IO[str]) -> None:
    """--diff: stdout holds only the diff; what it would fix goes here (stderr)."""
    n = sum(r.fixes_applied for r in results if r.diff)
    out.write(f"Would fix {n} finding{'s' * (n != 1)}.\n" if n else "No fixes available.\n")


def write_text(results: Sequence[FileResult], report: dict, out: IO[str], color: bool, quiet: bool = False) -> None:
    lines: list[tuple[str, str]] = []  # (style, text)
    for r in results:
        for d in r.diagnostics:
            style = "red" if d.severity == ERROR else "yellow"
            mark = " [*]" if d.fix_json is not None else ""
            lines.append((style, f"{r.path}:{d.line}:{d.col}: {d.code}{mark} {d.message}"))
        if r.runtime and r.runtime.get("why"):  # the gate ran: its verdict and why, or speedup and times
            passed = r.runtime["verdict"] == "passed"
            lines.append(("green" if passed else "red", f"{r.path}: gate {r.runtime['verdict']}: {r.runtime['why']}"))
        why = verdict_line(r)
        if why:
            lines.append(("red", why))
    if not quiet:
        lines += _summary(results, report)
    _print(lines, out, color)


def _summary(results: Sequence[FileResult], report: dict) -> list[tuple[str, str]]:
    lines: list[tuple[str, str]] = []
    s = report["summary"]
    checked = s["checked"]
    tail = _plural(checked, "file") + " checked" + (f", {s['skipped']} skipped" if s["skipped"] else "")
    parts = []
    if s["errors"] or s["warnings"]:
        n_files = sum(1 for r in results if r.diagnostics)
        parts.append(f"Found {_plural(s['errors'], 'error')} and {_plural(s['warnings'], 'warning')} in {_plural(n_files, 'file')}")
    if s["invalid"]:
        parts.append(f"{s['invalid']} of {_plural(checked, 'file')} invalid")
    if parts:
        lines.append(("bold", "; ".join(parts) + f" ({tail})."))
    else:
        lines.append(("green", f"All checks passed ({tail})."))
    fixed = sum(r.fixes_applied for r in results)
    if fixed:
        lines.append(("green", f"Fixed {fixed} finding{'s' * (fixed != 1)}."))
    fixes = [d.fix_json["applicability"] for r in results for d in r.diagnostics if d.fix_json is not None]
    safe, unsafe = fixes.count("safe"), fixes.count("unsafe")
    if safe or unsafe:
        parts = [f"{safe} fixable with `--fix`"] if safe else []
        if unsafe:
            parts.append(f"{unsafe} {'more ' if safe else ''}with `--unsafe-fixes`")
        lines.append(("", ", ".join(parts) + " [*]."))
    return lines


def _print(lines: list[tuple[str, str]], out: IO[str], color: bool) -> None:
    if color:
        from rich.console import Console
        from rich.text import Text

        console = Console(file=out, highlight=False, soft_wrap=True, force_terminal=True, no_color=False)  # the caller decided
        for style, text in lines:
            console.print(Text(text, style=style))
    else:
        for _, text in lines:
            out.write(text + "\n")


def use_color(stream: IO[str] = sys.stdout, mode: str = "auto") -> bool:
    """--color: always/never as said; auto: NO_COLOR turns it off, FORCE_COLOR on, else a terminal decides."""
    import os

    if mode != "auto":
        return mode == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return bool(getattr(stream, "isatty", lambda: False)())


def load_schema() -> dict:
    from importlib.resources import files

    return json.loads((files("tritonlint") / "schema" / "report.schema.json").read_text(encoding="utf-8"))
