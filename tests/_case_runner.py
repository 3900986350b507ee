"""Runs one case's solution against its reference at small shapes, in this process,
and prints the verdicts as JSON. Started by tests/test_cases.py with TRITON_INTERPRET=1."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch

from tritonlint.runtime_check.compare import compare_outputs
from tritonlint.runtime_check.tasks import Case, load_module


def clone(values):
    return [v.clone() if isinstance(v, torch.Tensor) else v for v in values]


def main(folder: str, seeds: int) -> None:
    folder = Path(folder)
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
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
