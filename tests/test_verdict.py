"""The verdict model through the real CLI: what makes a file invalid, what only sets the exit code."""

from __future__ import annotations

from conftest import cli_in_process, run_cli
from tritonlint.examples import LAUNCH, submission


def write(tmp_path, name: str, src: str):
    p = tmp_path / name
    p.write_text(src)
    return p


def test_hazard_error_keeps_the_file_valid_but_fails_the_exit_code(tmp_path):
    """TL204 (a block size without tl.constexpr) is an error-severity hazard: reported, not a verdict."""
    src = submission().replace("BLOCK: tl.constexpr", "BLOCK")
    p = write(tmp_path, "hazard.py", src)
    run = run_cli(str(p), "--json")
    f = run.json["files"][0]
    assert [d["code"] for d in f["diagnostics"]] == ["TL204"] and f["diagnostics"][0]["category"] == "hazard"
    assert f["valid"] is True and run.json["valid"] is True and f["regression_type"] is None
    assert run.rc == 1
    assert run_cli(str(p), "--fail-on", "never").rc == 0


def test_warnings_alone_exit_zero_and_print_no_invalid_line(tmp_path):
    p = write(tmp_path, "warn.py", submission(LAUNCH.replace("return out", 'print("hi")\nreturn out')))
    run = cli_in_process(str(p))
    assert run.rc == 0, run.stdout
    assert "TL304" in run.stdout and "invalid" not in run.stdout and "All checks passed" not in run.stdout
    assert cli_in_process(str(p), "--fail-on", "warning").rc == 1


def test_gaming_is_invalid_without_a_regression_type(tmp_path):
    src = submission(init="self.cache = {}", forward="""
        key = x.data_ptr()
        if key not in self.cache:
            out = torch.empty_like(x)
            k[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), BLOCK=256)
            self.cache[key] = out
        return self.cache[key]
    """)
    run = cli_in_process(str(write(tmp_path, "cache.py", src)), "--json")
    r = run.json
    assert run.rc == 1 and r["valid"] is False and r["regression_type"] is None and r["suggestion"] is None
    gaming = r["checks"]["no_measurement_gaming"]
    assert gaming["passed"] is False and {v["code"] for v in gaming["violations"]} == {"TL101"}
    assert r["checks"]["no_forbidden_torch_ops"]["passed"] is True  # seed 002's keys say nothing false


def test_type3_by_another_road_is_listed_under_seed_002_key(tmp_path):
    """TL108 (dynamic attribute evasion) is degradation type 3, and seed 002's type-3 key lists it."""
    src = submission(LAUNCH.replace("return out", 'return getattr(torch, "rel" + "u")(out)'))
    run = cli_in_process(str(write(tmp_path, "evade.py", src)), "--json")
    r = run.json
    assert r["valid"] is False and r["regression_type"] == 3 and "Type 3" in r["suggestion"]
    v = r["checks"]["no_forbidden_torch_ops"]
    assert v["passed"] is False and any(x["call"].startswith("getattr(torch") for x in v["violations"])


def test_a_submission_cannot_suppress_an_integrity_finding(tmp_path):
    src = submission(LAUNCH.replace("return out", "import subprocess  # tritonlint: ignore[TL104]\nsubprocess.run(['true'])  # tritonlint: ignore[TL104]\nreturn out"))
    run = cli_in_process(str(write(tmp_path, "escape.py", src)), "--json")
    codes = sorted(d["code"] for d in run.json["files"][0]["diagnostics"])
    assert "TL104" in codes and "TL906" in codes and run.json["valid"] is False


def test_text_output_says_which_file_is_invalid_and_why(tmp_path):
    bad = write(tmp_path, "bad.py", submission(LAUNCH.replace("return out", "return out.sum()")))
    good = write(tmp_path, "good.py", submission())
    run = cli_in_process(str(bad), str(good))
    assert run.rc == 1
    assert f"{bad}: invalid: degradation type 3" in run.stdout
    assert str(good) + ": invalid" not in run.stdout
    assert run.stdout.strip().endswith("1 of 2 files invalid (2 files checked).")


def test_unknown_codes_are_usage_errors(tmp_path):
    p = write(tmp_path, "good.py", submission())
    for flag in ("--select", "--ignore"):
        run = cli_in_process(str(p), flag, "TL003,TL999")
        assert run.rc == 2 and run.stderr.strip() == f"tritonlint: error: {flag}: unknown code TL999 (see `tritonlint rules`)"
    assert cli_in_process(str(p), "--select", "TL1,TL20").rc == 0  # prefixes of real codes are fine
    (tmp_path / "pyproject.toml").write_text('[tool.tritonlint]\nignore = ["TL30X"]\n')
    run = cli_in_process(str(p), cwd=tmp_path)
    assert run.rc == 2 and "unknown code TL30X" in run.stderr and "Traceback" not in run.stderr


def test_instance_attribute_replacing_forward_is_one_finding(tmp_path):
    src = submission(init="self.forward = self.fast  # the instance attribute wins over the method", after="")
    src = src.replace("    def forward(self, x):", "    def fast(self, x):\n        return x\n\n    def forward(self, x):")
    run = cli_in_process(str(write(tmp_path, "swap.py", src)), "--json")
    codes = [d["code"] for d in run.json["files"][0]["diagnostics"]]
    assert codes == ["TL110"] and run.json["valid"] is False and run.json["regression_type"] is None


def test_entry_class_that_no_file_defines_is_a_usage_error(tmp_path):
    p = write(tmp_path, "good.py", submission())
    run = cli_in_process(str(p), "--entry-class", "Solution")
    assert run.rc == 2 and run.stderr.strip() == "tritonlint: error: --entry-class Solution: no checked file defines class Solution"
    renamed = write(tmp_path, "renamed.py", submission().replace("class ModelNew", "class Solution"))
    assert cli_in_process(str(renamed), "--entry-class", "Solution").rc == 0
    misnamed = cli_in_process(str(renamed), "--json")  # the default entry class: Solution looks like a misnamed ModelNew
    d = misnamed.json["files"][0]["diagnostics"]
    assert [x["code"] for x in d] == ["TL002"] and "no class ModelNew" in d[0]["message"] and misnamed.json["regression_type"] == 2


def test_library_module_gets_kernel_checks_without_a_verdict(tmp_path):
    """Kernels and wrappers, no module class: hazards only, never invalid (kernel repositories stay clean)."""
    src = submission(LAUNCH).split("class ModelNew")[0] + "def launch(x):\n    import subprocess\n    subprocess.run(['true'])\n    return x\n"
    src = src.replace("BLOCK: tl.constexpr", "BLOCK")
    run = cli_in_process(str(write(tmp_path, "lib.py", src)), "--json")
    f = run.json["files"][0]
    assert f["valid"] is True and [d["code"] for d in f["diagnostics"]] == ["TL204"]
