"""SARIF 2.1.0: rule metadata from the catalog, one result per finding, fixes as replacements."""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import quote
from typing import IO, Sequence

import tritonlint
from tritonlint.codes import ENGINE_CODES
from tritonlint.engine import FileResult
from tritonlint.registry import all_rules
from tritonlint.rule import ERROR

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _uri(path: str) -> str:
    """A URI reference: relative to the working folder when the file is below it, else file:///...,
    percent-encoded either way (a space or a non-ASCII letter must not break a SARIF consumer)."""
    absolute = os.path.abspath(path)
    rel = os.path.relpath(absolute)
    if rel.startswith(".."):
        return Path(absolute).as_uri()
    return quote(rel.replace(os.sep, "/"))


def _rules() -> list[dict]:
    out = []
    for r in all_rules():
        out.append({
            "id": r.code,
            "name": r.name,
            "shortDescription": {"text": r.message},
            "fullDescription": {"text": r.doc().split("## Why is this bad?")[0].replace("## What it does", "").strip()},
            "help": {"text": r.doc(), "markdown": r.doc()},
            "defaultConfiguration": {"level": "error" if r.severity == ERROR else "warning"},
            "properties": {"regression_type": r.regression_type} if r.regression_type else {},
        })
    for c in ENGINE_CODES:
        out.append({"id": c.code, "name": c.name, "shortDescription": {"text": c.summary}})
    return out


def build_sarif(results: Sequence[FileResult]) -> dict:
    rules = _rules()
    index = {r["id"]: i for i, r in enumerate(rules)}
    sarif_results = []
    for fr in results:
        for d in fr.diagnostics:
            region = {"startLine": d.line, "startColumn": d.col, "endLine": d.end_line, "endColumn": max(d.end_col, d.col)}
            res = {
                "ruleId": d.code,
                "ruleIndex": index[d.code],
                "level": "error" if d.severity == ERROR else "warning",
                "message": {"text": d.message},
                "locations": [{"physicalLocation": {"artifactLocation": {"uri": _uri(fr.path)}, "region": region}}],
            }
            if d.fix_json is not None:
                res["fixes"] = [{
                    "description": {"text": f"{d.fix_json['description']} ({d.fix_json['applicability']})"},
                    "artifactChanges": [{
                        "artifactLocation": {"uri": _uri(fr.path)},
                        "replacements": [
                            {"deletedRegion": {"startLine": e["line"], "startColumn": e["col"], "endLine": e["end_line"], "endColumn": e["end_col"]},
                             "insertedContent": {"text": e["content"]}}
                            for e in d.fix_json["edits"]
                        ],
                    }],
                }]
            sarif_results.append(res)
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "tritonlint", "version": tritonlint.__version__, "informationUri": "https://github.com/tritonlint/tritonlint", "rules": rules}},
            "results": sarif_results,
            "columnKind": "unicodeCodePoints",
        }],
    }


def write_sarif(results: Sequence[FileResult], out: IO[str]) -> None:
    json.dump(build_sarif(results), out, indent=2)
    out.write("\n")
