"""Command line: `tritonlint PATH...`, `tritonlint rules`, `tritonlint explain CODE`, `tritonlint eval DIR`."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time

import tritonlint

from tritonlint.runtime_check.options import BACKENDS, BASELINES, DEFAULTS, POLICIES, GateOptions  # torch-free: linting never imports the gate

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2
FAIL_ON = ("error", "warning", "never")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tritonlint",
        description="Check Triton kernel submissions (ModelNew.forward must do its math in Triton kernels).",
        epilog="Also: `tritonlint rules` lists the catalog, `tritonlint explain CODE` prints one rule's doc, "
               "`tritonlint eval DIR` evaluates many submissions (see `tritonlint eval --help`).",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="files or folders (folders: every *.py below); - reads standard input")
    p.add_argument("--version", action="version", version=f"tritonlint {tritonlint.__version__}")
    p.add_argument("--stdin-filename", metavar="PATH", help="the name of the file read from standard input (-)")
    p.add_argument("--json", action="store_true", help="same as --format json")
    p.add_argument("--format", choices=("text", "json", "sarif", "github"), default=None)
    p.add_argument("--fix", action="store_true", help="apply safe fixes in place")
    p.add_argument("--unsafe-fixes", action="store_true", help="apply unsafe fixes too (implies --fix unless --diff)")
    p.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; write nothing")
    p.add_argument("--config", metavar="PYPROJECT", help="pyproject.toml to read [tool.tritonlint] from (default: nearest)")
    p.add_argument("--isolated", action="store_true", help="ignore every pyproject.toml")
    p.add_argument("--select", default="", help="comma-separated code prefixes to check (default: all)")
    p.add_argument("--ignore", default="", help="comma-separated code prefixes to skip")
    p.add_argument("--exclude", action="append", default=[], metavar="GLOB", help="skip matching paths in folders")
    p.add_argument("--force-exclude", action="store_true", help="apply the excludes to files named on the command line too")
    p.add_argument("--entry-class", default=None, help="class whose forward is the entry point (default ModelNew)")
    p.add_argument("-j", "--jobs", type=int, default=0, metavar="N", help="worker processes (0 = one per CPU)")
    p.add_argument("-o", "--output", metavar="FILE", help="write the report here instead of stdout")
    p.add_argument("--fail-on", choices=FAIL_ON, default=None,
                   help="exit 1 for invalid files and findings of this severity or worse (default: error; never: always 0)")
    p.add_argument("--exit-zero", action="store_true", help="exit 0 whatever is found (= --fail-on never)")
    p.add_argument("-q", "--quiet", action="store_true", help="print the findings and nothing else")
    p.add_argument("--statistics", action="store_true", help="print how many findings each code has, instead of each finding")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                   help="colour the text output (auto: on a terminal; NO_COLOR and FORCE_COLOR are honoured)")
    run = p.add_argument_group("runtime gate (lint-clean files only; needs the [runtime] extra)")
    run.add_argument("--run", action="store_true", help="verify against the reference task, then benchmark")
    run.add_argument("--run-npu", action="store_true", help="same as --run --backend npu")
    run.add_argument("--backend", default=BACKENDS[0], choices=BACKENDS)
    run.add_argument("--reference", metavar="TASK.py", help="the reference task (default: {op}_torch.py beside the file, or cases/)")
    run.add_argument("--timeout", type=float, default=DEFAULTS.timeout,
                     help=f"seconds per case in a child process (seed 002's default {DEFAULTS.timeout:g})")
    run.add_argument("--tolerance", default=DEFAULTS.policy, choices=POLICIES)
    run.add_argument("--non-compute", action="store_true", help="data-movement op: outputs must be bit-identical (= --tolerance exact)")
    run.add_argument("--seeds", type=int, default=DEFAULTS.seeds, help="input seeds per case")
    run.add_argument("--probe-state", action="store_true", help="Model's parameters and buffers must be reproduced bit-exactly")
    run.add_argument("--fresh-cache", action="store_true", help="compile in a private, empty Triton cache")
    run.add_argument("--operators", action="store_true", help="per-operator device time from the torch profiler")
    run.add_argument("--baseline", default=DEFAULTS.baseline, choices=BASELINES,
                     help="time the reference as written (eager, the default) or through torch.compile (compile)")
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


def entry() -> None:
    """The `tritonlint` command: main(), then quick_exit."""
    quick_exit(main())


def quick_exit(code: int) -> None:
    """Where torch was imported (the gate ran), the exit handlers (the fork servers' close), the
    streams flushed, and an immediate exit: the interpreter's own teardown of torch, Triton and a
    device's context writes nothing of ours and costs 0.6 s on the H100 machine (0.05 s this way,
    `benchmarks/device_speed.sh exit`). Otherwise a plain exit."""
    if "torch" not in sys.modules:
        sys.exit(code)
    import atexit
    import logging

    atexit._run_exitfuncs()
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (`| head`) or a closed stream
            pass
    os._exit(code)


def _main(argv: list[str]) -> int:
    if argv[:1] == ["eval"]:
        from tritonlint.evaluate.cli import main as eval_main

        return eval_main(argv[1:])
    if argv[:1] == ["rules"]:
        return _cmd_rules(argv[1:])
    if argv[:1] == ["explain"]:
        return _cmd_explain(argv[1:])
    if argv[:1] == ["server"]:
        try:
            from tritonlint.server import main as serve
        except ImportError as e:
            return _usage("server", f"needs the lsp extra (pip install 'tritonlint[lsp]'): {e.name} is missing")
        return serve()
    args = _parser().parse_args(argv)  # exits 2 on usage errors
    fmt = "json" if args.json else (args.format or "text")
    if args.exit_zero and args.fail_on not in (None, "never"):
        return _usage("--exit-zero and --fail-on", f"--exit-zero says never fail, --fail-on {args.fail_on} says otherwise")
    args.fail_on = "never" if args.exit_zero else (args.fail_on or "error")
    stdin = args.paths == ["-"]
    if "-" in args.paths and not stdin:
        return _usage("-", "standard input is linted alone")
    if stdin and (args.fix or args.unsafe_fixes) and not args.diff:
        return _usage("--fix", "standard input cannot be fixed in place; use --diff")
    if args.run or args.run_npu:  # the children's fork server starts now: its imports overlap the lint and ours
        _prestart(args)
    from tritonlint import config as cfg
    from tritonlint.files import UsageError, discover, lint_many
    from tritonlint.report import build_report, use_color, write_json, write_text

    try:
        select = cfg.check_codes(_codes(args.select), "--select") if args.select else None
        ignore = cfg.check_codes(_codes(args.ignore), "--ignore")

        def on_top(base: cfg.Config) -> cfg.Config:  # the command line's flags over a file's config
            return dataclasses.replace(base, select=select if select is not None else base.select, ignore=base.ignore + ignore,
                                       entry_class=args.entry_class or base.entry_class, exclude=base.exclude + tuple(args.exclude))

        config_for = cfg.PerFile(args.config, args.isolated, on_top)
        fix_mode = (args.unsafe_fixes, not args.diff) if (args.fix or args.unsafe_fixes or args.diff) else None
        t0 = time.perf_counter()
        if stdin:
            name = args.stdin_filename or "-"
            results = [_lint_stdin(name, config_for(name if args.stdin_filename else "."), fix_mode)]
        else:
            results = lint_many(discover(args.paths, config_for, args.force_exclude), config_for, args.jobs, fix_mode)
    except (cfg.ConfigError, UsageError) as e:
        print(f"tritonlint: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    if args.entry_class and results and not any(r.has_entry for r in results):
        print(f"tritonlint: error: --entry-class {args.entry_class}: no checked file defines class {args.entry_class}", file=sys.stderr)
        return EXIT_USAGE
    if args.run or args.run_npu:
        failed_gate = _run_gate(results, args)
        if failed_gate is None:
            return EXIT_USAGE
    report = build_report(results, (time.perf_counter() - t0) * 1e3)
    try:
        out = _open_output(args.output)
    except OSError as e:
        return _usage(f"-o {args.output}", f"cannot write: {e.strerror or e}")
    try:
        if args.diff and fmt == "text":  # the diff alone on stdout, so that it pipes into `git apply`
            from tritonlint.report import write_diff_summary

            for r in results:
                if r.diff:
                    out.write(r.diff)
            write_diff_summary(results, sys.stderr)
        elif fmt == "json":
            write_json(report, out)
        elif fmt == "sarif":
            from tritonlint.sarif import write_sarif

            write_sarif(results, out)
        elif fmt == "github":
            from tritonlint.report import write_github

            write_github(results, out)
        elif args.statistics:
            from tritonlint.report import write_statistics

            write_statistics(results, out)
        else:
            write_text(results, report, out, color=use_color(out, args.color) if not args.output else args.color == "always",
                       quiet=args.quiet)
    finally:
        if args.output:
            out.close()
    return exit_code(results, args.fail_on, bool(args.diff))


def _usage(what: str, why: str) -> int:
    print(f"tritonlint: error: {what}: {why}", file=sys.stderr)
    return EXIT_USAGE


def _open_output(path: str | None):
    if not path:
        return sys.stdout
    folder = os.path.dirname(path)
    if folder:
        os.makedirs(folder, exist_ok=True)
    return open(path, "w", encoding="utf-8")


def _lint_stdin(name: str, config, fix_mode):
    from tritonlint.engine import lint_source

    result = lint_source(sys.stdin.buffer.read(), name, config)
    if fix_mode is not None:
        from tritonlint.fix import fix_file

        result = fix_file(result, config, unsafe=fix_mode[0], write=False)
    return result


def exit_code(results, fail_on: str, diff: bool = False) -> int:
    """2 when a file could not be read or parsed; else 1 for an invalid file (lint or gate) or a
    finding at the `--fail-on` severity, and for a --diff that would change something; else 0."""
    from tritonlint.engine import FAILED
    from tritonlint.rule import ERROR, WARNING

    if any(r.status == FAILED for r in results):
        return EXIT_USAGE
    if fail_on == "never":
        return EXIT_OK
    failing = (ERROR,) if fail_on == "error" else (ERROR, WARNING)
    if any(not r.valid or any(d.severity in failing for d in r.diagnostics) for r in results):
        return EXIT_FINDINGS
    return EXIT_FINDINGS if diff and any(r.diff for r in results) else EXIT_OK


def _prestart(args) -> None:
    try:
        from tritonlint.runtime_check.backends import Backend
        from tritonlint.runtime_check.protocol import prestart
    except ImportError:  # no runtime extra: _run_gate says so
        return
    # an accelerator's children (npu or cuda) share one environment; only cpu's adds the interpreter
    prestart(Backend("cpu" if args.backend == "cpu" and not args.run_npu else "cuda", True).child_env())


def _run_gate(results, args) -> bool | None:
    """Fill files[].runtime; None (after one clear line on stderr) when the gate cannot run:
    no runtime extra, no usable backend, or a missing or broken reference task."""
    from tritonlint.engine import OK, SKIPPED

    try:
        from tritonlint.runtime_check.backends import BackendUnavailable, get_backend
        from tritonlint.runtime_check.gate import GateError, reference_for, run_gate
    except ImportError as e:
        print(f"tritonlint: error: --run needs the runtime extra (pip install 'tritonlint[runtime]'): {e.name} is missing", file=sys.stderr)
        return None
    opts = GateOptions(reference=args.reference, timeout=args.timeout, seeds=args.seeds,
                       policy="exact" if args.non_compute else args.tolerance, probe_state=args.probe_state,
                       fresh_cache=args.fresh_cache, operators=args.operators, baseline=args.baseline)
    try:
        for r in results:  # every reference is checked before anything runs
            if r.status == OK and r.valid:
                reference_for(r.path, opts)
        backend = get_backend("npu" if args.run_npu else args.backend)
        from tritonlint.runtime_check.reference import References

        references = References()  # one reference run per task for the files of this command
        try:
            for r in results:
                if r.status != "error":
                    r.runtime = run_gate(r.path, r.valid, r.status == SKIPPED, backend, opts, references)
        finally:
            references.close()
    except (GateError, BackendUnavailable) as e:
        print(f"tritonlint: error: {e}", file=sys.stderr)
        return None
    return True


def _cmd_rules(argv: list[str]) -> int:
    from tritonlint.registry import all_rules

    if argv == ["--markdown"]:
        from tritonlint.docs import rules_markdown

        sys.stdout.write(rules_markdown())
        return EXIT_OK
    if argv:
        print("usage: tritonlint rules [--markdown]", file=sys.stderr)
        return EXIT_USAGE
    for r in all_rules():
        print(f"{r.code}  {r.name:<28} {r.severity:<8} {r.message}")
    from tritonlint.codes import ENGINE_CODES

    for c in ENGINE_CODES:
        print(f"{c.code}  {c.name:<28} {c.severity:<8} {c.summary}")
    return EXIT_OK


def _cmd_explain(argv: list[str]) -> int:
    from tritonlint.registry import rule_by_code

    if len(argv) != 1:
        print("usage: tritonlint explain CODE", file=sys.stderr)
        return EXIT_USAGE
    r = rule_by_code(argv[0]) or rule_by_code(argv[0].upper())
    if r is None:
        from tritonlint.codes import ENGINE_CODES

        engine = next((c for c in ENGINE_CODES if c.code == argv[0].upper()), None)
        if engine is not None:
            print(f"# {engine.code} {engine.name} ({engine.severity})\n\n{engine.summary}\n\n"
                  "Reported by the engine itself, not by a rule: it has no examples and no fix.")
            return EXIT_OK
        print(f"tritonlint: error: no rule {argv[0]!r} (see `tritonlint rules`)", file=sys.stderr)
        return EXIT_USAGE
    print(f"# {r.code} {r.name} ({r.severity})\n\n{r.message}\n\n{r.doc()}")
    for kind, src in r.examples():
        print(f"\n## {kind.capitalize()} example\n```python\n{src.rstrip()}\n```")
    return EXIT_OK
