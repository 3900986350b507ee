"""Which files to lint, and linting many of them on several processes."""

from __future__ import annotations

import fnmatch
import os
import subprocess
from typing import Callable, Iterable

from tritonlint.config import Config
from tritonlint.engine import FileResult, lint_path

SKIP_DIRS = frozenset({"__pycache__", "node_modules", "venv", ".venv", "build", "dist", "site-packages"})
PARALLEL_FROM = 32  # below this many files a process pool costs more than it saves


class UsageError(Exception):
    pass


ConfigFor = Callable[[str], Config]  # each file's config (config.PerFile), or one Config for all


def _config_for(config: Config | ConfigFor) -> ConfigFor:
    return config if callable(config) else (lambda _path: config)


def discover(paths: Iterable[str], config: Config | ConfigFor, force_exclude: bool = False) -> list[str]:
    """Files named on the command line, plus `*.py` under named folders. A folder walk skips
    excluded paths (each file's own config says which) and what git ignores; a named file is
    linted as named, unless `force_exclude` (what the pre-commit hook passes)."""
    per = _config_for(config)
    out: list[str] = []
    for p in paths:
        if os.path.isdir(p):
            found = []
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS and not _excluded(os.path.join(root, d), per))
                for f in files:
                    full = os.path.join(root, f)
                    if f.endswith(".py") and not _excluded(full, per):
                        found.append(full)
            ignored = _git_ignored(p, found)
            out += sorted(f for f in found if f not in ignored)
        elif os.path.exists(p) or os.path.islink(p):
            if not (force_exclude and _excluded(p, per)):
                out.append(p)
        else:
            raise UsageError(f"{p}: no such file or directory")
    seen: set[str] = set()
    return [f for f in out if not (f in seen or seen.add(f))]


def _excluded(path: str, per: ConfigFor) -> bool:
    config = per(path)
    norm = os.path.normpath(path)
    rel = os.path.relpath(os.path.abspath(path), os.path.abspath(config.root)).replace(os.sep, "/")
    return any(fnmatch.fnmatch(norm, pat) or fnmatch.fnmatch(rel, pat) or fnmatch.fnmatch(os.path.basename(norm), pat)
               for pat in config.exclude)


def _git_ignored(folder: str, files: list[str]) -> set[str]:
    """The files below a named folder that git ignores (.gitignore and friends); nothing when git or a
    repository is absent, or when the named folder is itself ignored (naming it asks for it anyway)."""
    if not files:
        return set()
    try:
        run = subprocess.run(["git", "-C", folder, "check-ignore", "--stdin", "-z"],
                             input="\0".join([".", *(os.path.relpath(f, folder) for f in files)]) + "\0",
                             capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return set()
    ignored = [rel for rel in run.stdout.split("\0") if rel]
    if run.returncode not in (0, 1) or "." in ignored:  # 128: not a work tree
        return set()
    return {os.path.join(folder, rel) for rel in ignored}


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


def lint_many(files: list[str], config: Config | ConfigFor, jobs: int, fix: FixMode = None, keep_trees: bool = True,
              start: str | None = None) -> list[FileResult]:
    """`config`: one for all files, or each file's (config.PerFile). `keep_trees=False` drops each
    file's CST once it is linted (what a caller that only reads the findings wants: thousands of
    trees held at once slow everything down). `start`: how the pool's processes start
    (multiprocessing's start method; the platform's default when None)."""
    per = _config_for(config)
    if jobs <= 0:
        jobs = os.cpu_count() or 1
    if jobs == 1 or len(files) < PARALLEL_FROM:
        one = lint_one if keep_trees else (lambda f, c, x: _lint_detached((f, c, x)))
        return [one(f, per(f), fix) for f in files]
    from concurrent.futures import ProcessPoolExecutor  # 30 ms of imports, only when parallel

    chunk = max(1, min(64, len(files) // (jobs * 8)))
    import multiprocessing

    with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context(start) if start else None) as pool:
        return list(pool.map(_lint_detached, [(f, per(f), fix) for f in files], chunksize=chunk))
