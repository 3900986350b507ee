"""Which file is a submission for which task, in the three layouts kernel teams use.

- Bench Lite's official layout: `SUBMISSIONS/<team>/<tier>/<task>.py`, with an
  optional `SUBMISSIONS/<team>/meta.json`. The set is the team.
- Many generations per task: `SUBMISSIONS[/<set>]/<task>/<anything>.py`; the round is
  the number in the file name when there is one, else the sorted position.
- Seed 002's naming: `{task}_{impl}.py` anywhere (`gelu_triton_ascend_impl.py`).
Reference files (`*_torch.py`) are not submissions. A `.py` file that fits no
layout is reported as unmatched, never dropped in silence.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

from tritonlint.runtime_check.tasks import Case

TEAM, GENERATIONS, SEED002 = "team", "generations", "seed002"
DEFAULT_SET = "default"


@dataclasses.dataclass(frozen=True)
class Submission:
    path: Path
    key: str  # path relative to the submissions root, "/"-separated: stable across runs
    case: Case
    set: str  # the team, or "default"
    round: int
    layout: str


@dataclasses.dataclass
class Found:
    submissions: list[Submission]
    unmatched: list[str]
    meta: dict[str, dict]  # team -> meta.json contents
    meta_errors: list[str]


def discover_submissions(root: Path, cases: list[Case]) -> Found:
    root = Path(root)
    by_name = {c.name: c for c in cases}
    by_tier_name = {(c.tier, c.name): c for c in cases}
    files = sorted(p for p in root.rglob("*.py") if not any(part.startswith(".") or part == "__pycache__"
                                                            for part in p.relative_to(root).parts))
    subs, unmatched, per_task_dir = [], [], {}
    for path in files:
        rel = path.relative_to(root)
        if path.name.endswith("_torch.py"):
            continue
        parts = rel.parts
        if len(parts) >= 3 and (parts[-2], path.stem) in by_tier_name:
            subs.append(Submission(path, rel.as_posix(), by_tier_name[(parts[-2], path.stem)], parts[-3], 0, TEAM))
        elif len(parts) >= 2 and parts[-2] in by_name:
            per_task_dir.setdefault(path.parent, []).append(path)
        elif (case := _seed002_case(path.stem, by_name)) is not None:
            subs.append(Submission(path, rel.as_posix(), case, parts[0] if len(parts) >= 2 else DEFAULT_SET, 0, SEED002))
        else:
            unmatched.append(rel.as_posix())
    for folder, paths in per_task_dir.items():
        case = by_name[folder.name]
        numbered = [_number(p.stem) for p in paths]
        use_numbers = all(n is not None for n in numbered) and len(set(numbered)) == len(numbered)
        for pos, (p, n) in enumerate(sorted(zip(paths, numbered), key=lambda t: (t[1] if use_numbers else 0, t[0].name))):
            rel = p.relative_to(root)
            team = rel.parts[-3] if len(rel.parts) >= 3 else DEFAULT_SET
            subs.append(Submission(p, rel.as_posix(), case, team, n if use_numbers else pos, GENERATIONS))
    meta, errors = {}, []
    for team in sorted({s.set for s in subs if s.layout == TEAM}):
        f = root / team / "meta.json"
        if f.exists():
            try:
                meta[team] = json.loads(f.read_text(encoding="utf-8"))
            except (OSError, ValueError) as e:
                errors.append(f"{f}: {e}")
    subs.sort(key=lambda s: (s.case.tier, s.case.name, s.set, s.round, s.key))
    return Found(subs, unmatched, meta, errors)


def _seed002_case(stem: str, by_name: dict[str, Case]) -> Case | None:
    best = None
    for name, case in by_name.items():  # the longest task name that prefixes the file name
        if stem.startswith(name + "_") and (best is None or len(name) > len(best.name)):
            best = case
    return best


def _number(stem: str) -> int | None:
    m = re.search(r"(\d+)(?!.*\d)", stem)
    return int(m.group(1)) if m else None
