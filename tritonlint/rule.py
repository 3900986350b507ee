"""The contract between the engine and a rule.

A rule is one class in one module of `tritonlint.rules`: a code, a
kebab-case name, a severity, a docstring with the sections *What it does*,
*Why is this bad?*, *Example*, *Use instead*, *Fix safety*, and its own
BAD/GOOD example submissions. In a BAD example, each line a diagnostic must
land on ends with `# expect: CODE` (several codes: `# expect: TL002 TL003`);
`# expect-file: CODE` anywhere means a finding at line 1. The test suite
runs every rule's examples; the docs are generated from the same text.
"""

from __future__ import annotations

import dataclasses
import re
import textwrap
from typing import TYPE_CHECKING, ClassVar, Iterable

import libcst as cst

if TYPE_CHECKING:
    from tritonlint.config import Config
    from tritonlint.model import ModuleModel

ERROR, WARNING = "error", "warning"

# What a finding does to the verdict (`valid`, `regression_type`). Severity is
# separate: it only decides the exit code (`--fail-on`).
DEGRADATION = "degradation"  # the math is not in Triton kernels: invalid, `regression_type` says which type
INTEGRITY = "integrity"  # games or escapes the measurement: invalid, no regression type
HAZARD = "hazard"  # may break or mis-measure the kernel: a diagnostic, `valid` unchanged
PERFORMANCE = "performance"  # slow or unportable: a diagnostic, `valid` unchanged
ENGINE = "engine"  # the engine's own codes (TL9xx)
INVALIDATING = frozenset({DEGRADATION, INTEGRITY})


SAFE, UNSAFE = "safe", "unsafe"


@dataclasses.dataclass
class Fix:
    """A libcst edit: each (old, new) replaces a node; new=None removes a statement."""

    applicability: str  # SAFE: keeps behaviour; UNSAFE: may change it, opt in
    description: str
    changes: list[tuple[cst.CSTNode, cst.CSTNode | None]]


def remove_statement(model: "ModuleModel", expr: cst.BaseExpression, description: str) -> Fix | None:
    """A safe fix deleting the statement `expr` stands alone in; None when it is part of a larger one."""
    stmt = model.statement_of.get(expr)
    return Fix(SAFE, description, [(stmt, None)]) if stmt is not None else None


@dataclasses.dataclass
class Diagnostic:
    code: str
    name: str
    severity: str
    message: str
    node: cst.CSTNode | None = dataclasses.field(default=None, repr=False, compare=False)
    line: int = 1  # 1-based
    col: int = 1  # 1-based
    end_line: int = 1
    end_col: int = 1  # 1-based, exclusive
    fix: Fix | None = dataclasses.field(default=None, repr=False, compare=False)
    data: dict = dataclasses.field(default_factory=dict, compare=False)
    fix_json: dict | None = None  # the fix as positioned edits, filled in by the engine
    category: str = HAZARD  # the rule's verdict category

    @property
    def invalidates(self) -> bool:
        return self.category in INVALIDATING

    def to_json(self) -> dict:
        return {
            "code": self.code,
            "name": self.name,
            "severity": self.severity,
            "line": self.line,
            "col": self.col,
            "end_line": self.end_line,
            "end_col": self.end_col,
            "message": self.message,
            "category": self.category,
            "fix": self.fix_json,
        }


@dataclasses.dataclass
class Context:
    """What a rule may look at besides the model."""

    model: "ModuleModel"
    config: "Config"
    path: str


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[str] = ERROR
    category: ClassVar[str] = HAZARD
    message: ClassVar[str]
    # Degradation rules (category DEGRADATION): their seed-002 type, `checks` key and suggestion.
    regression_type: ClassVar[int | None] = None
    check_key: ClassVar[str | None] = None
    suggestion: ClassVar[str | None] = None
    # Whether the rule runs on a library module (triton kernels and wrappers, no entry class).
    # Default: hazards and performance findings do; verdict rules are about submissions.
    checks_libraries: ClassVar[bool | None] = None
    BAD: ClassVar[list[str]] = []
    GOOD: ClassVar[list[str]] = []
    # (before, after) pairs: applying this rule's fixes (safe and unsafe) to
    # `before` must give exactly `after`; the tests check both.
    FIXES: ClassVar[list[tuple[str, str]]] = []

    def run(self, ctx: Context) -> Iterable[Diagnostic]:
        raise NotImplementedError

    def check_details(self, ctx: Context, found: list[Diagnostic]) -> dict:
        """Extra fields of this rule's seed-002 `checks` entry."""
        return {}

    def report(self, node: cst.CSTNode | None, message: str | None = None, fix: Fix | None = None, **data) -> Diagnostic:
        return Diagnostic(
            self.code, self.name, self.severity, message or self.message, node, fix=fix, data=data, category=self.category
        )

    @classmethod
    def runs_on_libraries(cls) -> bool:
        return cls.checks_libraries if cls.checks_libraries is not None else cls.category in (HAZARD, PERFORMANCE)

    @classmethod
    def doc(cls) -> str:
        return textwrap.dedent(cls.__doc__ or "").strip()

    @classmethod
    def fix_examples(cls) -> list[tuple[str, str]]:
        return [(textwrap.dedent(a).lstrip("\n"), textwrap.dedent(b).lstrip("\n")) for a, b in cls.FIXES]

    @classmethod
    def examples(cls) -> list[tuple[str, str]]:
        return [("bad", textwrap.dedent(s).lstrip("\n")) for s in cls.BAD] + [
            ("good", textwrap.dedent(s).lstrip("\n")) for s in cls.GOOD
        ]


_EXPECT = re.compile(r"#\s*expect:\s*((?:TL\d{3}[ ,]*)+)")
_EXPECT_FILE = re.compile(r"#\s*expect-file:\s*((?:TL\d{3}[ ,]*)+)")


def expected_findings(source: str) -> list[tuple[str, int]]:
    """(code, line) pairs written into a labelled example or fixture."""
    out = []
    for i, line in enumerate(source.splitlines(), start=1):
        for rx, at in ((_EXPECT, i), (_EXPECT_FILE, 1)):
            m = rx.search(line)
            if m:
                out += [(c, at) for c in re.findall(r"TL\d{3}", m.group(1))]
    return sorted(out)
