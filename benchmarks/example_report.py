"""The example evaluation: every reference solution in cases/ and its degraded variants,
in the many-generations layout, through `tritonlint eval`.

    python benchmarks/example_report.py SUBS_DIR -- [tritonlint eval options...]

SUBS_DIR/<task>/<variant>.py gets `solution.py` (the reference solution) and each
`degraded/<task>_<label>.py` as `<label>.py`; then the real CLI runs on it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def build(subs: Path) -> int:
    n = 0
    for sol in sorted(ROOT.glob("cases/t*/*/*_triton_ascend_impl.py")):
        task = sol.parent.name
        (subs / task).mkdir(parents=True, exist_ok=True)
        shutil.copy(sol, subs / task / "solution.py")
        n += 1
        for bad in sorted((sol.parent / "degraded").glob("*.py")):
            shutil.copy(bad, subs / task / (bad.stem[len(task) + 1:] + ".py"))
            n += 1
    return n


def main() -> int:
    subs = Path(sys.argv[1])
    rest = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else []
    print(f"{build(subs)} submissions in {subs}", flush=True)
    return subprocess.call([sys.executable, "-m", "tritonlint", "eval", str(subs), *rest])


if __name__ == "__main__":
    sys.exit(main())
