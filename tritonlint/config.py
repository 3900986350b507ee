"""Run settings: `[tool.tritonlint]` in pyproject.toml, then CLI flags on top."""

from __future__ import annotations

import dataclasses
import fnmatch
import os

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]


class ConfigError(Exception):
    pass


@dataclasses.dataclass(frozen=True)
class Config:
    select: tuple[str, ...] = ()  # code prefixes; empty = all rules
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (glob, code prefixes)
    entry_class: str = "ModelNew"
    entry_method: str = "forward"
    allow_glue: frozenset[str] = frozenset()  # extra torch.* names / Tensor.methods TL003 lets through
    exclude: tuple[str, ...] = ()  # glob patterns for folder walks
    root: str = "."  # folder the globs are relative to

    def enabled(self, code: str) -> bool:
        if self.select and not any(code.startswith(s) for s in self.select):
            return False
        return not any(code.startswith(s) for s in self.ignore)

    def ignored_in(self, path: str) -> tuple[str, ...]:
        """Codes the repository's config ignores for this file (may include TL001-TL004)."""
        rel = os.path.relpath(os.path.abspath(path), os.path.abspath(self.root)).replace(os.sep, "/")
        out: list[str] = []
        for pattern, codes in self.per_file_ignores:
            if fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(os.path.basename(rel), pattern):
                out += codes
        return tuple(out)


_KEYS = {
    "select": "select",
    "ignore": "ignore",
    "per-file-ignores": "per_file_ignores",
    "entry-class": "entry_class",
    "entry-method": "entry_method",
    "allow-glue": "allow_glue",
    "exclude": "exclude",
}


def find_pyproject(start: str) -> str | None:
    """The nearest pyproject.toml at or above `start` that has a [tool.tritonlint] table (as ruff
    finds its own): a monorepo's other pyproject.toml files do not hide the project's settings."""
    d = os.path.abspath(start)
    while True:
        candidate = os.path.join(d, "pyproject.toml")
        if os.path.isfile(candidate) and _has_table(candidate):
            return candidate
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def _has_table(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return "tritonlint" in tomllib.load(f).get("tool", {})
    except (OSError, tomllib.TOMLDecodeError):
        return True  # let load() report it, with the file's name


class PerFile:
    """Each file's config: `--config` for all, nothing with `--isolated`, else the nearest
    pyproject.toml with a [tool.tritonlint] table above the file; then the CLI's flags on top."""

    def __init__(self, explicit: str | None, isolated: bool, overrides) -> None:
        self._fixed = Config() if isolated else (load(explicit) if explicit else None)
        self._overrides = overrides  # Config -> Config: the command line's select/ignore/exclude/...
        self._by_dir: dict[str, Config] = {}

    def __call__(self, path: str) -> Config:
        if self._fixed is not None:
            return self._overrides(self._fixed)
        folder = os.path.dirname(os.path.abspath(path)) if not os.path.isdir(path) else os.path.abspath(path)
        hit = self._by_dir.get(folder)
        if hit is None:
            hit = self._by_dir[folder] = self._overrides(load(find_pyproject(folder)))
        return hit


def known_codes() -> tuple[str, ...]:
    from tritonlint.codes import ENGINE_CODES
    from tritonlint.registry import all_rules

    return tuple(r.code for r in all_rules()) + tuple(c.code for c in ENGINE_CODES)


def check_codes(codes: tuple[str, ...], where: str) -> tuple[str, ...]:
    """Codes or code prefixes (`TL1`, `TL20`); one that matches nothing would silently check nothing."""
    known = known_codes()
    unknown = [c for c in codes if not any(k.startswith(c) for k in known)]
    if unknown:
        raise ConfigError(f"{where}: unknown code{'s' * (len(unknown) > 1)} {', '.join(unknown)} (see `tritonlint rules`)")
    return codes


def _codes(value, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where} must be a list of strings")
    return check_codes(tuple(v.strip().upper() for v in value), where)


def load(path: str | None) -> Config:
    """The config of one pyproject.toml (defaults when path is None or it has no table)."""
    if path is None:
        return Config()
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror}") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: {e}") from None
    table = data.get("tool", {}).get("tritonlint")
    if table is None:
        return Config(root=os.path.dirname(os.path.abspath(path)))
    where = f"{path}: [tool.tritonlint]"
    if not isinstance(table, dict):
        raise ConfigError(f"{where} must be a table")
    unknown = sorted(set(table) - set(_KEYS))
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)} (known: {', '.join(_KEYS)})")
    kw: dict = {"root": os.path.dirname(os.path.abspath(path))}
    for key, value in table.items():
        field = _KEYS[key]
        if key in ("select", "ignore"):
            kw[field] = _codes(value, f"{where} {key}")
        elif key in ("exclude",):
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{where} {key} must be a list of strings")
            kw[field] = tuple(value)
        elif key == "allow-glue":
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{where} {key} must be a list of strings")
            kw[field] = frozenset(value)
        elif key == "per-file-ignores":
            if not isinstance(value, dict):
                raise ConfigError(f"{where} per-file-ignores must be a table of glob = [codes]")
            kw[field] = tuple((g, _codes(c, f"{where} per-file-ignores.{g}")) for g, c in value.items())
        else:
            if not isinstance(value, str) or not value.isidentifier():
                raise ConfigError(f"{where} {key} must be a Python identifier")
            kw[field] = value
    return Config(**kw)
