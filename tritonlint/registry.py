"""Finds the rules: every Rule subclass in the modules of `tritonlint.rules`."""

from __future__ import annotations

import functools
import importlib
import pkgutil

from tritonlint.rule import Rule


@functools.lru_cache(maxsize=None)
def all_rules() -> tuple[type[Rule], ...]:
    import tritonlint.rules as pkg

    found: dict[str, type[Rule]] = {}
    for info in pkgutil.iter_modules(pkg.__path__):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{pkg.__name__}.{info.name}")
        for obj in vars(mod).values():
            if isinstance(obj, type) and issubclass(obj, Rule) and obj is not Rule and obj.__module__ == mod.__name__:
                if obj.code in found:
                    raise RuntimeError(f"rule code {obj.code} defined twice")
                found[obj.code] = obj
    return tuple(found[c] for c in sorted(found))


def rule_by_code(code: str) -> type[Rule] | None:
    for r in all_rules():
        if r.code == code.upper() or r.name == code:
            return r
    return None
