"""Runs each case's solution against its reference at small shapes, in this process, and
prints the verdicts as JSON: {folder: {"results": [...]}} or {folder: {"error": traceback}}.
Started once for all cases by tests/test_cases.py with TRITON_INTERPRET=1 (one torch and
Triton import for every case, not one per case)."""

from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path

import torch

from tritonlint.runtime_check.compare import compare_outputs
from tritonlint.runtime_check.tasks import Case, load_module


def clone(values):
    return [v.clone() if isinstance(v, torch.Tensor) else v for v in values]


def run_case(folder: Path, seeds: int) -> list[dict]:
    case = Case(folder.parent.name, folder.name, folder)
    task = load_module(case.reference)
    solution = load_module(case.solution())
    inplace = getattr(task, "INPLACE_OUTPUTS", {})
    results = []
    for seed in range(seeds):
        torch.manual_seed(seed)
        inputs = task.get_small_inputs()
        init = task.get_init_inputs()
        ref_inputs, sol_inputs = clone(inputs), clone(inputs)
        ref = task.Model(*init)(*ref_inputs)
        out = solution.ModelNew(*init)(*sol_inputs)
        ints = all(not t.is_floating_point() for t in inputs if isinstance(t, torch.Tensor))
        extra_ref = [ref_inputs[i] for i in inplace.values()]
        extra_out = [sol_inputs[i] for i in inplace.values()]
        for policy in ("mere_mare", "allclose", "seed001_strict"):
            verdicts = compare_outputs([*(ref if isinstance(ref, (list, tuple)) else [ref]), *extra_ref],
                                       [*(out if isinstance(out, (list, tuple)) else [out]), *extra_out], policy, ints)
            results.append({"seed": seed, "policy": policy, "verdicts": [v.to_json() for v in verdicts]})
    return results


def main(seeds: int, folders: list[str]) -> None:
    report = {}
    for folder in folders:
        try:
            report[folder] = {"results": run_case(Path(folder), seeds)}
        except Exception:  # one broken case fails its own test, not the others
            report[folder] = {"error": traceback.format_exc()}
    json.dump(report, sys.stdout)


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2:])
