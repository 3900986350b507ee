"""Codes the engine itself reports (TL9xx), declared once for the engine, fixes, SARIF and the catalog."""

from __future__ import annotations

import dataclasses

from tritonlint.rule import ENGINE, ERROR, WARNING, Diagnostic


@dataclasses.dataclass(frozen=True)
class EngineCode:
    code: str
    name: str
    severity: str
    summary: str  # one sentence: what the code means

    def diagnostic(self, message: str, line: int = 1, col: int = 1) -> Diagnostic:
        """A finding at line:col (both 1-based), with no node and no fix."""
        return Diagnostic(self.code, self.name, self.severity, message, None, line, col, line, col, category=ENGINE)


SYNTAX_ERROR = EngineCode("TL900", "syntax-error", ERROR, "The file does not parse.")
UNREADABLE_FILE = EngineCode("TL901", "unreadable-file", ERROR, "The file cannot be read or decoded.")
INTERNAL_ERROR = EngineCode("TL902", "internal-error", ERROR, "A rule failed on this file.")
UNUSED_SUPPRESSION = EngineCode("TL905", "unused-suppression", WARNING, "A suppression comment suppresses nothing.")
UNSUPPRESSIBLE_CODE = EngineCode("TL906", "unsuppressible-code", WARNING, "Degradation findings cannot be suppressed by the submission.")
FIX_DROPPED = EngineCode("TL907", "fix-dropped", WARNING, "A fix was not applied because its result would not parse.")

ENGINE_CODES: tuple[EngineCode, ...] = (SYNTAX_ERROR, UNREADABLE_FILE, INTERNAL_ERROR, UNUSED_SUPPRESSION, UNSUPPRESSIBLE_CODE, FIX_DROPPED)
