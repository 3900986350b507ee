"""The Python API for agent loops that check thousands of generations in one process.

    import tritonlint
    report = tritonlint.check(source, path="softmax_impl.py")
    if not report.valid:
        for d in report.diagnostics:
            print(d.line, d.code, d.message)
    report.to_dict()  # the same JSON as `tritonlint softmax_impl.py --json`

`check` never imports torch and never touches the accelerator; `gate` runs the runtime
gate (verify, then benchmark) on a file, in child processes, as `--run` does.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from tritonlint.config import Config
from tritonlint.engine import FileResult, lint_source
from tritonlint.rule import Diagnostic


@dataclasses.dataclass
class Report:
    """One file's verdict and findings; `to_dict()` is the CLI's `--json` for that file."""

    result: FileResult
    elapsed_ms: float

    @property
    def valid(self) -> bool:
        return self.result.valid

    @property
    def regression_type(self) -> int | None:
        return self.result.regression_type

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return self.result.diagnostics

    @property
    def checks(self) -> dict:
        return self.result.checks

    def to_dict(self) -> dict[str, Any]:
        from tritonlint.report import build_report

        return build_report([self.result], self.elapsed_ms)


def check(source: str | bytes, path: str | None = None, config: Config | None = None) -> Report:
    """Lint one submission given as text (or bytes, whose encoding declaration is honoured)."""
    t0 = time.perf_counter()
    result = lint_source(source, path or "<string>", config or Config())
    result.module = None  # the CST is the caller's to drop: an agent loop holds thousands of reports
    return Report(result, (time.perf_counter() - t0) * 1e3)


def gate(path: str, reference: str | None = None, backend: str = "auto", config: Config | None = None, **options) -> Report:
    """Lint `path`, then run the gate on it (`options`: the fields of `GateOptions`: seeds, timeout,
    policy, baseline="compile", ...; a bad value raises ValueError). Needs the [runtime] extra.
    Raises GateError when there is no usable reference."""
    from tritonlint.engine import SKIPPED, lint_path
    from tritonlint.runtime_check.backends import get_backend
    from tritonlint.runtime_check.gate import run_gate
    from tritonlint.runtime_check.options import GateOptions

    t0 = time.perf_counter()
    result = lint_path(path, config or Config())
    result.runtime = run_gate(path, result.valid, result.status == SKIPPED, get_backend(backend),
                              GateOptions(reference=reference, **options))
    return Report(result, (time.perf_counter() - t0) * 1e3)
