"""Print everything the linter says about the repository's own corpus, in every format.

Run it before and after a change that must not change behaviour, and compare:

    python scripts/lint_output_digest.py > /tmp/before.txt   # on the old commit
    python scripts/lint_output_digest.py > /tmp/after.txt    # on the new one
    cmp /tmp/before.txt /tmp/after.txt

The corpus is every `*.py` under cases/, examples/ and tests/fixtures/. Each
format (text, json, sarif, github, and the unsafe-fix diff) is one CLI run over
all files; timings, the only thing that may differ between runs, are removed.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ("cases", "examples", "tests/fixtures")
RUNS = (
    ("text", ["--format", "text"]),
    ("json", ["--format", "json"]),
    ("sarif", ["--format", "sarif"]),
    ("github", ["--format", "github"]),
    ("diff", ["--diff", "--unsafe-fixes"]),
)
_TIMING = re.compile(r'("elapsed_ms": )[0-9.e+-]+|( in )[0-9.]+ ?m?s\b')


def corpus() -> list[str]:
    return sorted(str(p.relative_to(ROOT)) for d in CORPUS for p in (ROOT / d).rglob("*.py"))


def main() -> int:
    files = corpus()
    for name, flags in RUNS:
        cmd = [sys.executable, "-m", "tritonlint", *files, *flags, "--isolated", "-j", "1"]
        r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env={"NO_COLOR": "1", "PATH": "/usr/bin:/bin"})
        print(f"===== {name}: exit {r.returncode}, {len(files)} files")
        print(_TIMING.sub(lambda m: (m.group(1) or m.group(2)) + "<t>", r.stdout))
        print(f"----- {name} stderr")
        print(r.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
