"""`# tritonlint: ignore[CODE]` and `# tritonlint: ignore-file[CODE]` comments."""

from __future__ import annotations

import dataclasses
import io
import re
import tokenize

_DIRECTIVE = re.compile(r"#\s*tritonlint:\s*(ignore-file|ignore)\b(?:\[([A-Za-z0-9,\s]*)\])?")
# `# noqa: TL205` (flake8/ruff style) means `# tritonlint: ignore[TL205]`; a noqa that names no TL
# code belongs to another tool, and a bare `# noqa` is not taken as "ignore everything".
_NOQA = re.compile(r"#\s*noqa\s*:\s*([A-Za-z0-9,\s]+)", re.IGNORECASE)


@dataclasses.dataclass
class Suppression:
    line: int  # where the comment is
    target: int | None  # the line it covers; None for ignore-file
    codes: frozenset[str] | None  # None: every (suppressible) code
    used: set[str] = dataclasses.field(default_factory=set)


def parse(text: str) -> list[Suppression]:
    if "tritonlint:" not in text and "noqa" not in text.lower():  # the common case: one substring search
        return []
    out: list[Suppression] = []
    lines = text.splitlines()
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return []
    for tok in tokens:
        if tok.type != tokenize.COMMENT:
            continue
        m = _DIRECTIVE.search(tok.string)
        if m:
            kind = m.group(1)
            codes = frozenset(c.strip().upper() for c in (m.group(2) or "").split(",") if c.strip()) or None
        else:
            noqa = _NOQA.search(tok.string)
            ours = frozenset(c for c in re.split(r"[,\s]+", noqa.group(1).upper()) if c.startswith("TL")) if noqa else None
            if not ours:
                continue
            kind, codes = "ignore", ours
        line = tok.start[0]
        if kind == "ignore-file":
            out.append(Suppression(line, None, codes))
            continue
        target = line
        if lines[line - 1][: tok.start[1]].strip() == "":  # a comment line covers the next code line
            target = _next_code_line(lines, line)
        out.append(Suppression(line, target, codes))
    return out


def _next_code_line(lines: list[str], line: int) -> int:
    for i in range(line, len(lines)):
        s = lines[i].strip()
        if s and not s.startswith("#"):
            return i + 1
    return line


def matches(s: Suppression, code: str, line: int) -> bool:
    return (s.target is None or s.target == line) and (s.codes is None or code in s.codes)
