"""Which files to lint, and linting many of them on several processes."""

from __future__ import annotations

import fnmatch
import os
from typing import Iterable

from tritonlint.config import Config
from tritonlint.engine import FileResult, lint_path

SKIP_DIRS = frozenset({"__pycache__", "node_modules", "venv", ".venv", "build", "dist", "site-packages"})
PARALLEL_FROM = 32  # below this many files a process pool costs more than it saves


class UsageError(Exception):
    pass


def discover(paths: Iterable[str], config: Config) -> list[str]:
    """Files named on the command line, plus `*.py` under named folders."""
    out: list[str] = []
    for p in paths:
        if os.path.isdir(p):
            found = []
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS and not _excluded(os.path.join(root, d), config))
                for f in files:
                    full = os.path.join(root, f)
                    if f.endswith(".py") and not _excluded(full, config):
                        found.append(full)
            out += sorted(found)
        elif os.path.exists(p) or os.path.islink(p):
            out.append(p)
        else:
            raise UsageError(f"{p}: no such file or directory")
    seen: set[str] = set()
    return [f for f in out if not (f in seen or seen.add(f))]


def _excluded(path: str, config: Config) -> bool:
    norm = os.path.normpath(path)
    return any(fnmatch.fnmatch(norm, pat) or fnmatch.fnmatch(os.path.basename(norm), pat) for pat in config.exclude)


FixMode = tuple[bool, bool] | None  # (unsafe, write) or no fixing


def lint_one(path: str, config: Config, fix: FixMode = None) -> FileResult:
    r = lint_path(path, config)
    if fix is not None and any(d.fix is not None for d in r.diagnostics):
        from tritonlint.fix import fix_file

        r = fix_file(r, config, unsafe=fix[0], write=fix[1])
    return r


def _lint_detached(args: tuple[str, Config, FixMode]) -> FileResult:
    r = lint_one(*args)
    r.source = r.module = None  # CST nodes stay in the worker
    for d in r.diagnostics:
        d.node, d.fix = None, None
    return r


def lint_many(files: list[str], config: Config, jobs: int, fix: FixMode = None, keep_trees: bool = True) -> list[FileResult]:
    """`keep_trees=False` drops each file's CST once it is linted (what a caller that only
    reads the findings wants: thousands of trees held at once slow everything down)."""
    if jobs <= 0:
        jobs = os.cpu_count() or 1
    if jobs == 1 or len(files) < PARALLEL_FROM:
        one = lint_one if keep_trees else (lambda f, c, x: _lint_detached((f, c, x)))
        return [one(f, config, fix) for f in files]
    from concurrent.futures import ProcessPoolExecutor  # 30 ms of imports, only when parallel

    chunk = max(1, min(64, len(files) // (jobs * 8)))
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(_lint_detached, [(f, config, fix) for f in files], chunksize=chunk))
