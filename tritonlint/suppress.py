"""`# tritonlint: ignore[CODE]` and `# tritonlint: ignore-file[CODE]` comments."""

from __future__ import annotations

import dataclasses
import io
import re
import tokenize

_DIRECTIVE = re.compile(r"#\s*tritonlint:\s*(ignore-file|ignore)\b(?:\[([A-Za-z0-9,\s]*)\])?")


@dataclasses.dataclass
class Suppression:
    line: int  # where the comment is
    target: int | None  # the line it covers; None for ignore-file
    codes: frozenset[str] | None  # None: every (suppressible) code
    used: set[str] = dataclasses.field(default_factory=set)


def parse(text: str) -> list[Suppression]:
    if "tritonlint:" not in text:  # the common case costs one substring search
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
        if not m:
            continue
        codes = frozenset(c.strip().upper() for c in (m.group(2) or "").split(",") if c.strip()) or None
        line = tok.start[0]
        if m.group(1) == "ignore-file":
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
