"""source ─▶ parse (libcst) ─▶ module model ─▶ rules ─▶ diagnostics.

The engine knows rules only through the Rule contract: code, severity,
regression_type, check_key, suggestion, run() and check_details().
"""

from __future__ import annotations

import ast
import dataclasses
import io
import time
import tokenize
import warnings

import libcst as cst

from tritonlint import suppress, verdict
from tritonlint.codes import INTERNAL_ERROR, SYNTAX_ERROR, UNREADABLE_FILE, UNSUPPRESSIBLE_CODE, UNUSED_SUPPRESSION, EngineCode
from tritonlint.config import Config
from tritonlint.locate import locate
from tritonlint.model import ModuleModel
from tritonlint.registry import all_rules
from tritonlint.rule import Context, Diagnostic, Rule

OK, SKIPPED, FAILED = "ok", "skipped", "error"
NOT_A_SUBMISSION = "not a Triton submission (no ModelNew class, no triton import)"


@dataclasses.dataclass
class FileResult:
    path: str
    status: str = OK
    reason: str | None = None  # why it was skipped, or what went wrong
    diagnostics: list[Diagnostic] = dataclasses.field(default_factory=list)
    checks: dict = dataclasses.field(default_factory=dict)
    lint_type: int | None = None  # the lowest degradation type lint found (verdict.fill)
    suggestion: str | None = None
    runtime: dict | None = None
    elapsed_ms: float = 0.0
    source: str | None = dataclasses.field(default=None, repr=False)
    module: cst.Module | None = dataclasses.field(default=None, repr=False)
    encoding: str = "utf-8"
    fixes_applied: int = 0
    diff: str | None = None
    has_entry: bool = False  # the file defines the entry class (ModelNew, or --entry-class)

    @property
    def valid(self) -> bool:
        """Degradation and integrity findings, a file that cannot be analysed, and a failed gate
        make a file invalid; hazards and performance findings never do."""
        return not (self.status == FAILED or any(d.invalidates for d in self.diagnostics) or self.gate_failed)

    @property
    def regression_type(self) -> int | None:
        """The lowest degradation type found, by lint or by the gate's runtime census."""
        found = [t for t in (self.lint_type, (self.runtime or {}).get("regression_type")) if t is not None]
        return min(found) if found else None

    @property
    def gate_failed(self) -> bool:
        """The runtime gate ran and did not pass (not run, skipped and passed are no failure)."""
        return bool(self.runtime) and self.runtime.get("verdict") not in (None, "passed", "skipped")

    def to_json(self) -> dict:
        return {
            "path": self.path,
            "status": self.status,
            "reason": self.reason,
            "valid": self.valid,
            "regression_type": self.regression_type,
            "checks": self.checks,
            "suggestion": self.suggestion,
            "diagnostics": [d.to_json() for d in self.diagnostics],
            "fixes_applied": self.fixes_applied,
            "runtime": self.runtime,
        }


def _engine_error(path: str, code: EngineCode, message: str, line: int = 1, col: int = 0) -> FileResult:
    return FileResult(path, FAILED, message, [code.diagnostic(message, line, col + 1)])


def decode(data: bytes, path: str) -> tuple[str, str] | FileResult:
    """Source text, or a failed result naming the line that cannot be read."""
    nul = data.find(b"\x00")
    if nul != -1:
        line = data.count(b"\n", 0, nul) + 1
        return _engine_error(path, UNREADABLE_FILE, f"binary file (NUL byte on line {line})", line)
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as e:
        return _engine_error(path, UNREADABLE_FILE, f"bad encoding declaration: {e}")
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as e:
        start = getattr(e, "start", 0)
        line = data.count(b"\n", 0, start) + 1
        return _engine_error(path, UNREADABLE_FILE, f"not valid {encoding}: {e.__class__.__name__} at line {line}", line)
    return (text[1:] if text.startswith("\ufeff") else text), encoding


MAX_NESTING = 500  # libcst's parser takes seconds beyond this, and crashes on deep brackets
_LONG_LINE = 2000


def _too_deep(path: str, line: int, what: str) -> FileResult:
    return _engine_error(path, SYNTAX_ERROR, f"{what}; tritonlint does not analyse such files", line)


def _bracket_depth(text: str) -> int:
    depth = best = 0
    for ch in text:
        if ch in "([{":
            depth += 1
            best = max(best, depth)
        elif ch in ")]}":
            depth = max(0, depth - 1)
    return best


def _ast_depth(tree: ast.AST) -> tuple[int, int]:
    best, line, stack = 0, 1, [(tree, 0)]
    while stack:
        node, d = stack.pop()
        if d > best:
            best, line = d, getattr(node, "lineno", line)
        stack.extend((c, d + 1) for c in ast.iter_child_nodes(node))
    return best, line


def precheck(text: str, path: str) -> FileResult | SyntaxError | None:
    """Keep inputs that would crash or stall libcst's native parser away from it.
    CPython's parser is fast and refuses deep nesting with a clean error. Its
    other syntax errors are returned, not reported: libcst may know a newer
    grammar than this interpreter, so it has the last word."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except SyntaxError as e:
        if "too many nested" in str(e.msg) or "too complex" in str(e.msg):
            return _too_deep(path, e.lineno or 1, f"nesting too deep: {e.msg}")
        if _bracket_depth(text) > 200:  # libcst reports the syntax error, unless brackets overflow it
            return _too_deep(path, e.lineno or 1, "brackets nested more than 200 deep")
        return e
    except (RecursionError, MemoryError):  # no position from CPython: blame the longest line
        lines = text.splitlines() or [""]
        longest = max(range(len(lines)), key=lambda i: len(lines[i]))
        return _too_deep(path, longest + 1, "expression nesting too deep to parse")
    if max(map(len, text.splitlines()), default=0) > _LONG_LINE:
        depth, line = _ast_depth(tree)
        if depth > MAX_NESTING:
            return _too_deep(path, line, f"expression nested {depth} levels deep (limit {MAX_NESTING})")
    return None


def parse(text: str, path: str) -> cst.Module | FileResult:
    pre = precheck(text, path)
    if isinstance(pre, FileResult):
        return pre
    try:
        return cst.parse_module(text)
    except cst.ParserSyntaxError as e:
        if isinstance(pre, SyntaxError):  # both agree it is broken: CPython's words are clearer
            return _engine_error(path, SYNTAX_ERROR, f"syntax error: {pre.msg}", pre.lineno or 1, max(0, (pre.offset or 1) - 1))
        first = str(e).strip().splitlines()[0] if str(e).strip() else "syntax error"
        return _engine_error(path, SYNTAX_ERROR, f"syntax error: {first}", e.raw_line, e.raw_column)
    except RecursionError:
        return _engine_error(path, SYNTAX_ERROR, "expression nesting too deep to parse")
    except Exception as e:  # libcst raises a few non-syntax errors on odd input
        return _engine_error(path, SYNTAX_ERROR, f"cannot parse: {e.__class__.__name__}: {e}")


def lint_source(data: bytes | str, path: str, config: Config = Config()) -> FileResult:
    t0 = time.perf_counter()
    decoded = decode(data, path) if isinstance(data, bytes) else (data, "utf-8")
    if isinstance(decoded, FileResult):
        return _timed(decoded, t0)
    text, encoding = decoded
    module = parse(text, path)
    if isinstance(module, FileResult):
        return _timed(module, t0)
    result = lint_module(module, text, path, config)
    result.source, result.module, result.encoding = text, module, encoding
    return _timed(result, t0)


def lint_module(module: cst.Module, text: str, path: str, config: Config) -> FileResult:
    try:
        model = ModuleModel(module, config.entry_class, config.entry_method)
    except RecursionError:
        return _engine_error(path, INTERNAL_ERROR, "expression nesting too deep to analyse")
    if model.entry_class is None and not model.uses_triton:
        return FileResult(path, SKIPPED, NOT_A_SUBMISSION)
    ctx = Context(model, config, path)
    result = FileResult(path, has_entry=model.entry_class is not None)
    library = not result.has_entry  # kernels and wrappers, no entry class: kernel checks only
    by_rule: list[tuple[Rule, list[Diagnostic]]] = []
    for rule_cls in all_rules():
        rule = rule_cls()
        found: list[Diagnostic] = []
        if config.enabled(rule.code) and (not library or rule.runs_on_libraries()):
            try:
                found = list(rule.run(ctx))
            except RecursionError:
                result.diagnostics.append(INTERNAL_ERROR.diagnostic(f"{rule.code}: nesting too deep to analyse"))
                result.status, result.reason = FAILED, "internal error"
            except Exception as e:  # a rule bug must not take the other files down
                msg = f"{rule.code} failed: {e.__class__.__name__}: {e}"
                result.diagnostics.append(INTERNAL_ERROR.diagnostic(msg))
                result.status, result.reason = FAILED, msg
        by_rule.append((rule, found))
    repo_ignored = config.ignored_in(path)
    by_rule = [(r, [d for d in found if not d.code.startswith(repo_ignored or ("\0",))]) for r, found in by_rule]
    _place(module, [d for _, found in by_rule for d in found])
    engine_notes = _apply_suppressions(text, by_rule, config)
    for _, found in by_rule:
        result.diagnostics += found
    result.diagnostics += engine_notes
    result.diagnostics.sort(key=lambda d: (d.line, d.col, d.code))
    verdict.fill(ctx, result, by_rule)
    return result


def _apply_suppressions(text: str, by_rule: list[tuple[Rule, list[Diagnostic]]], config: Config) -> list[Diagnostic]:
    """Drop what the file suppresses; findings that decide the verdict only the
    repository's config may suppress. Returns warnings about the suppressions themselves."""
    directives = suppress.parse(text)
    if not directives:
        return []
    notes: list[Diagnostic] = []
    refused: set[int] = set()
    for i, (rule, found) in enumerate(by_rule):
        kept = []
        for d in found:
            hit = next((s for s in directives if suppress.matches(s, d.code, d.line)), None)
            if hit is None:
                kept.append(d)
            elif d.invalidates:
                kept.append(d)
                if id(hit) not in refused:
                    refused.add(id(hit))
                    notes.append(UNSUPPRESSIBLE_CODE.diagnostic(
                                       f"{d.code} decides the verdict: a submission cannot suppress it "
                                       "(the repository can, in [tool.tritonlint] per-file-ignores)", hit.line))
            else:
                hit.used.add(d.code)
        by_rule[i] = (rule, kept)
    for s in directives:
        if not s.used and id(s) not in refused:
            what = ", ".join(sorted(s.codes)) if s.codes else "anything"
            notes.append(UNUSED_SUPPRESSION.diagnostic(f"unused suppression: nothing to ignore for {what} here", s.line))
    return [n for n in notes if config.enabled(n.code)]


def _place(module: cst.Module, diagnostics: list[Diagnostic]) -> None:
    nodes = [d.node for d in diagnostics if d.node is not None]
    nodes += [old for d in diagnostics if d.fix is not None for old, _ in d.fix.changes]
    positions = locate(module, nodes)
    for d in diagnostics:
        p = positions.get(d.node) if d.node is not None else None
        if p is not None:  # columns are reported 1-based, end exclusive
            d.line, d.col, d.end_line, d.end_col = p[0], p[1] + 1, p[2], p[3] + 1
        if d.fix is not None:
            edits = []
            for old, new in d.fix.changes:
                q = positions.get(old)
                if q is not None:
                    content = "" if new is None else module.code_for_node(new)
                    edits.append({"line": q[0], "col": q[1] + 1, "end_line": q[2], "end_col": q[3] + 1, "content": content})
            d.fix_json = {"applicability": d.fix.applicability, "description": d.fix.description, "edits": edits}


def lint_path(path: str, config: Config = Config()) -> FileResult:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        return _engine_error(path, UNREADABLE_FILE, f"cannot read: {e.strerror or e}")
    return lint_source(data, path, config)


def _timed(r: FileResult, t0: float) -> FileResult:
    r.elapsed_ms = (time.perf_counter() - t0) * 1e3
    return r
