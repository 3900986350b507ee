"""Generated Python modules through the engine and every fix: no crash, and
every fix output parses."""

from __future__ import annotations

import warnings

import hypothesmith
import libcst as cst
import pytest
from hypothesis import HealthCheck, given, settings

from tritonlint.config import Config
from tritonlint.engine import FAILED, lint_source
from tritonlint.fix import fix_result

HEADER = "import torch\nimport triton\nimport triton.language as tl\n"
FOOTER = "\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return helper(x) + x\n"
# hypothesmith compiles each program it generates as "<string>" (to filter and to score them), and odd
# generated code such as `1()` or "\d" makes that compile warn. The warnings are about the generator's
# programs, not ours: ignore them from "<string>" in this module only, so any other warning still shows.
pytestmark = [
    pytest.mark.filterwarnings("ignore::SyntaxWarning:<string>"),
    pytest.mark.filterwarnings("ignore:invalid escape sequence:DeprecationWarning:<string>"),  # Python 3.11's spelling
]
SETTINGS = settings(deadline=None, suppress_health_check=list(HealthCheck))  # max_examples: conftest.py's profile


def check(code: str) -> None:
    for src in (code, HEADER + code + FOOTER):
        result = lint_source(src, "gen.py")
        if result.status == FAILED:
            assert {d.code for d in result.diagnostics} <= {"TL900", "TL901"}, result.diagnostics
            continue
        fixed, out = fix_result(result, Config(), unsafe=True)
        cst.parse_module(out)
        with warnings.catch_warnings():  # generated code is full of odd escapes: compiling it warns, by design
            warnings.simplefilter("ignore", SyntaxWarning)
            compile(out, "gen.py", "exec")


@SETTINGS
@given(hypothesmith.from_node())
def test_generated_from_cst_nodes(code):
    check(code)


@SETTINGS
@given(hypothesmith.from_grammar())
def test_generated_from_grammar(code):
    check(code)
