"""Bad input: a clear result and the right exit code, never a traceback,
and one bad file never stops the others."""

from __future__ import annotations

import os
import shutil

import pytest

from conftest import SUBMISSIONS, cli_in_process
from tritonlint.config import Config
from tritonlint.engine import lint_source
from tritonlint.files import discover, lint_many

CLEAN = SUBMISSIONS / "clean_01_direct_launch.py"
DEGRADED = SUBMISSIONS / "type3_01_softmax_after_kernel.py"


def only_file(report: dict) -> dict:
    assert len(report["files"]) == 1
    return report["files"][0]


def test_empty_file_is_skipped(tmp_path):
    p = tmp_path / "empty.py"
    p.write_text("")
    run = cli_in_process(str(p), "--json")
    assert run.rc == 0
    assert only_file(run.json)["status"] == "skipped"


def test_binary_file(tmp_path):
    p = tmp_path / "blob.py"
    p.write_bytes(b"import torch\n\x00\x01\x02\xff")
    run = cli_in_process(str(p))
    assert run.rc == 2
    assert f"{p}:2:1: TL901 binary file (NUL byte on line 2)" in run.stdout


def test_non_utf8_file(tmp_path):
    p = tmp_path / "latin.py"
    p.write_bytes(b"import torch\nx = 1\nname = '\xe9t\xe9'\n")
    run = cli_in_process(str(p), "--json")
    assert run.rc == 2
    f = only_file(run.json)
    assert f["status"] == "error" and f["valid"] is False
    assert f["diagnostics"][0]["code"] == "TL901" and f["diagnostics"][0]["line"] == 3


def test_declared_encoding_and_bom_are_honoured(tmp_path):
    latin = b"# -*- coding: latin-1 -*-\n" + DEGRADED.read_bytes().replace(b"import triton\n", b"import triton\nNAME = '\xe9'\n", 1)
    r = lint_source(latin, "latin.py")
    assert r.status == "ok" and [d.code for d in r.diagnostics] == ["TL003"]
    bom = lint_source(b"\xef\xbb\xbf" + CLEAN.read_bytes(), "bom.py")
    assert bom.status == "ok" and bom.diagnostics == []


def test_syntax_error_names_file_and_line(tmp_path):
    p = tmp_path / "broken.py"
    p.write_text("import triton\n\nclass ModelNew:\n    def forward(self, x)\n        return x\n")
    run = cli_in_process(str(p), "--json")
    assert run.rc == 2
    d = only_file(run.json)["diagnostics"][0]
    assert d["code"] == "TL900" and d["line"] == 4
    text = cli_in_process(str(p))
    assert text.rc == 2 and text.stdout.startswith(f"{p}:4:")


@pytest.mark.parametrize(
    "source",
    [
        "x = " + "(" * 5000 + "1" + ")" * 5000 + "\n",  # crashes libcst's native parser unguarded
        "x = " + "[" * 300 + "]" * 300 + "\n",
        "x = " + "+".join(["a"] * 20000) + "\n",  # quadratic in libcst
        "x = " + "-" * 6000 + "1\n",
        "x = " + "a if b else " * 1000 + "c\n",
        "x = " + "(" * 2000 + "\n",  # and a syntax error on top
    ],
    ids=["parens", "lists", "long-chain", "unary", "ifexp", "unclosed"],
)
def test_deep_nesting_is_refused_cleanly(tmp_path, cli, source):
    p = tmp_path / "deep.py"
    p.write_text("import triton\n" + source)
    run = cli(str(p), "--json", timeout=60)
    assert run.rc == 2
    d = only_file(run.json)["diagnostics"][0]
    assert d["code"] == "TL900" and d["line"] == 2


def test_twenty_thousand_line_file(tmp_path, cli):
    src = CLEAN.read_text()
    helpers = "".join(f"\n\ndef helper_{i}(a, b):\n    c = a + b\n    return c * {i}\n" for i in range(4000))
    p = tmp_path / "big.py"
    p.write_text(src + helpers)
    assert p.read_text().count("\n") >= 20000
    run = cli(str(p), "--json")
    assert run.rc == 0, run.stdout[-2000:]
    assert only_file(run.json)["valid"] is True


def test_file_deleted_between_listing_and_reading(tmp_path):
    for i in range(3):
        shutil.copy(DEGRADED, tmp_path / f"s{i}.py")
    files = discover([str(tmp_path)], Config())
    os.remove(files[1])
    results = lint_many(files, Config(), jobs=1)
    assert [r.status for r in results] == ["ok", "error", "ok"]
    assert "cannot read" in results[1].reason
    assert [d.code for d in results[2].diagnostics] == ["TL003"]


def test_broken_symlink_and_missing_path(tmp_path):
    (tmp_path / "gone.py").symlink_to(tmp_path / "nowhere.py")
    shutil.copy(CLEAN, tmp_path / "ok.py")
    run = cli_in_process(str(tmp_path), "--json")
    assert run.rc == 2
    statuses = {os.path.basename(f["path"]): f["status"] for f in run.json["files"]}
    assert statuses == {"gone.py": "error", "ok.py": "ok"}
    missing = cli_in_process(str(tmp_path / "no_such_dir"))
    assert missing.rc == 2 and "no such file or directory" in missing.stderr


@pytest.mark.slow
def test_five_thousand_files_in_parallel(tmp_path, cli):
    sources = sorted(SUBMISSIONS.glob("*.py"))
    for i in range(5000):
        sub = tmp_path / f"d{i % 50}"
        sub.mkdir(exist_ok=True)
        shutil.copy(sources[i % len(sources)], sub / f"f{i}.py")
    (tmp_path / "d0" / "zz_broken.py").write_text("def (:\n")
    run = cli(str(tmp_path), "--json", "-j", "2", timeout=600)
    assert run.rc == 2  # the broken file; every other file still linted
    r = run.json
    assert r["summary"]["files"] == 5001 and r["summary"]["failed"] == 1
    linted = [f for f in r["files"] if f["status"] == "ok"]
    assert len(linted) == 5000
    clean = [f for f in linted if os.path.basename(f["path"]) in {f"f{i}.py" for i in range(5000) if sources[i % len(sources)].name.startswith("clean_")}]
    assert clean and all(f["valid"] for f in clean)
