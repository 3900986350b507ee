"""Finding and loading reference tasks and solutions (seed-002 naming)."""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

IMPL = "triton_ascend_impl"  # seed 002's default --triton_impl_name
CASES = Path(__file__).resolve().parent.parent / "cases"  # the bundled reference tasks (a source checkout)
TIER_WEIGHTS = {"t1": 1.0, "t2": 1.5, "t3": 2.0, "t4": 2.5, "t5": 3.0}


@dataclasses.dataclass(frozen=True)
class Case:
    tier: str
    name: str
    folder: Path

    @property
    def reference(self) -> Path:
        return self.folder / f"{self.name}_torch.py"

    def solution(self, impl: str = IMPL) -> Path:
        return self.folder / f"{self.name}_{impl}.py"

    @property
    def key(self) -> str:
        return f"{self.tier}/{self.name}"


def discover_cases(root: Path) -> list[Case]:
    out = []
    for ref in sorted(Path(root).glob("t*/*/*_torch.py")):
        name = ref.name[: -len("_torch.py")]
        if ref.parent.name == name:
            out.append(Case(ref.parent.parent.name, name, ref.parent))
    return out


def load_module(path: Path, name: str | None = None) -> ModuleType:
    """Import a file as a module under a private name (never `Model`'s own package)."""
    mod_name = name or f"_tritonlint_{Path(path).stem}_{abs(hash(str(path)))}"
    spec = importlib.util.spec_from_file_location(mod_name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module
    spec.loader.exec_module(module)
    return module
