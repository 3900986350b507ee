"""Command line: `tritonlint PATH...`, `tritonlint rules`, `tritonlint explain CODE`."""

from __future__ import annotations

import argparse
import sys
import time

from tritonlint.config import Config

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tritonlint",
        description="Check Triton kernel submissions (ModelNew.forward must do its math in Triton kernels).",
        epilog="Also: `tritonlint rules` lists the catalog, `tritonlint explain CODE` prints one rule's doc.",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="files or folders (folders: every *.py below)")
    p.add_argument("--json", action="store_true", help="same as --format json")
    p.add_argument("--format", choices=("text", "json"), default=None)
    p.add_argument("--select", default="", help="comma-separated code prefixes to check (default: all)")
    p.add_argument("--ignore", default="", help="comma-separated code prefixes to skip")
    p.add_argument("--exclude", action="append", default=[], metavar="GLOB", help="skip matching paths in folders")
    p.add_argument("--entry-class", default="ModelNew", help="class whose forward is the entry point")
    p.add_argument("-j", "--jobs", type=int, default=0, metavar="N", help="worker processes (0 = one per CPU)")
    p.add_argument("-o", "--output", metavar="FILE", help="write the report here instead of stdout")
    return p


def _codes(s: str) -> tuple[str, ...]:
    return tuple(c.strip().upper() for c in s.split(",") if c.strip())


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(sys.argv[1:] if argv is None else argv)
    except BrokenPipeError:  # `tritonlint ... | head`
        sys.stderr.close()
        return EXIT_OK
    except KeyboardInterrupt:
        print("tritonlint: interrupted", file=sys.stderr)
        return 130


def _main(argv: list[str]) -> int:
    if argv[:1] == ["rules"]:
        return _cmd_rules(argv[1:])
    if argv[:1] == ["explain"]:
        return _cmd_explain(argv[1:])
    args = _parser().parse_args(argv)  # exits 2 on usage errors
    fmt = "json" if args.json else (args.format or "text")
    config = Config(
        select=_codes(args.select),
        ignore=_codes(args.ignore),
        entry_class=args.entry_class,
        exclude=tuple(args.exclude),
    )
    from tritonlint.files import UsageError, discover, lint_many
    from tritonlint.engine import FAILED
    from tritonlint.report import build_report, use_color, write_json, write_text

    t0 = time.perf_counter()
    try:
        files = discover(args.paths, config)
    except UsageError as e:
        print(f"tritonlint: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    results = lint_many(files, config, args.jobs)
    report = build_report(results, (time.perf_counter() - t0) * 1e3)
    out = open(args.output, "w", encoding="utf-8") if args.output else sys.stdout
    try:
        if fmt == "json":
            write_json(report, out)
        else:
            write_text(results, report, out, color=not args.output and use_color(out))
    finally:
        if args.output:
            out.close()
    if any(r.status == FAILED for r in results):
        return EXIT_USAGE
    return EXIT_FINDINGS if any(r.diagnostics for r in results) else EXIT_OK


def _cmd_rules(argv: list[str]) -> int:
    from tritonlint.registry import all_rules

    for r in all_rules():
        print(f"{r.code}  {r.name:<28} {r.severity:<8} {r.message}")
    return EXIT_OK


def _cmd_explain(argv: list[str]) -> int:
    from tritonlint.registry import rule_by_code

    if len(argv) != 1:
        print("usage: tritonlint explain CODE", file=sys.stderr)
        return EXIT_USAGE
    r = rule_by_code(argv[0])
    if r is None:
        print(f"tritonlint: error: no rule {argv[0]!r} (see `tritonlint rules`)", file=sys.stderr)
        return EXIT_USAGE
    print(f"# {r.code} {r.name} ({r.severity})\n\n{r.message}\n\n{r.doc()}")
    for kind, src in r.examples():
        print(f"\n## {kind.capitalize()} example\n```python\n{src.rstrip()}\n```")
    return EXIT_OK
