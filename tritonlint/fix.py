"""Applying fixes: libcst edits, one validated step at a time, until none applies."""

from __future__ import annotations

import ast
import difflib
import os
import warnings

import libcst as cst

from tritonlint.codes import FIX_DROPPED
from tritonlint.config import Config
from tritonlint.engine import OK, FileResult, lint_module
from tritonlint.rule import SAFE, Diagnostic
from tritonlint.writer import write_atomic

MAX_PASSES = 10


def _parses(code: str) -> bool:
    try:
        cst.parse_module(code)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(code)
        return True
    except Exception:
        return False


def _apply_one(module: cst.Module, d: Diagnostic) -> cst.Module:
    for old, new in d.fix.changes:
        module = module.deep_remove(old) if new is None else module.deep_replace(old, new)
    return module


def fix_result(result: FileResult, config: Config, unsafe: bool) -> tuple[FileResult, str]:
    """Re-lint after each pass; returns the final result and the fixed code.
    A fix whose output does not parse is dropped with a TL907 warning."""
    if result.status != OK or result.module is None:
        return result, result.source or ""
    original = result.source or result.module.code
    module, applied, dropped = result.module, 0, []
    for _ in range(MAX_PASSES):
        todo = [d for d in result.diagnostics if d.fix is not None and (d.fix.applicability == SAFE or unsafe)]
        changed = False
        for d in todo:
            candidate = _apply_one(module, d)
            code = candidate.code
            if code == module.code:
                continue  # overlaps an edit made in this pass; the next pass retries it
            if not _parses(code):
                dropped.append(d)
                continue
            module, applied, changed = cst.parse_module(code), applied + 1, True
        if not changed:
            break
        result = lint_module(module, module.code, result.path, config)
        result.module, result.source = module, module.code
    for d in dropped:
        result.diagnostics.append(FIX_DROPPED.diagnostic(f"{d.code} fix not applied: its result would not parse", d.line, d.col))
    result.fixes_applied = applied
    return result, module.code if applied else original


def fix_file(result: FileResult, config: Config, unsafe: bool, write: bool) -> FileResult:
    """--fix (write=True): the fixed file's result. --diff (write=False): the unchanged file's
    result, with the unified diff `git apply` takes and how many fixes it holds (`fixes_applied`)."""
    encoding = result.encoding
    before = result.source
    fixed, code = fix_result(result, config, unsafe)
    fixed.encoding = encoding
    if before is None or code == before:
        return fixed if write else result
    if write:
        write_atomic(result.path, code, encoding)
        return fixed
    name = os.path.normpath(result.path).replace(os.sep, "/")  # `git apply` wants a/x.py, not a/./x.py
    result.diff = "".join(difflib.unified_diff(before.splitlines(True), code.splitlines(True), f"a/{name}", f"b/{name}"))
    result.fixes_applied = fixed.fixes_applied
    return result
