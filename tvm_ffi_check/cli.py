"""``tvm-ffi-check``: the command line.

Exit status: 0 when every function was checked and obeys every rule, 1 when a
rule is broken (or the checker itself failed on a function), 2 when the library
cannot be checked at all (no such file, not a shared library, no TVM FFI
functions, it cannot be loaded) or the command line is wrong, 3 when no rule is
broken but some function is *unverified* (too few calls reached its body to
check anything).

Unverified functions fail the run by default, as a test a CI run could not
execute should not pass silently: a library whose functions the checker
cannot call has not been checked, and exit status 0 would say it was.
``--allow-unverified`` accepts them (exit 0 when nothing is broken).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import List, Optional

from tvm_ffi_common.cli_args import (
    OneLineParser,
    integer,
    output_problem,
    positive_integer,
    positive_number,
    write_problem,
)
from tvm_ffi_ref import rules

from . import sandbox

EXIT_PASS, EXIT_FINDINGS, EXIT_UNUSABLE, EXIT_UNVERIFIED = 0, 1, 2, 3


def _limit(convert):
    """A sandbox limit's converter: ``convert``'s value, or None for 'none'."""
    def parse(text: str):
        if text.strip().lower() in sandbox.UNLIMITED:
            return None
        try:
            return convert(text)
        except (ValueError, argparse.ArgumentTypeError) as exc:
            text = str(exc)
            raise argparse.ArgumentTypeError(text if "'none'" in text else
                                             f"{text}, or 'none'") from None
    return parse


def _size(text: str) -> int:
    try:
        value = sandbox.parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    assert value is not None  # 'none' is handled by _limit
    return value


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``tvm-ffi-check``."""
    rule_lines = "\n".join(f"  {rule:<17} {meaning}" for rule, meaning in rules.RULES.items())
    parser = OneLineParser(
        prog="tvm-ffi-check",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Check that a kernel library obeys the TVM FFI stable C ABI: call each "
                    "exported __tvm_ffi_<name> function with arguments generated from its "
                    "type schema (hypothesis) and report every broken rule, with a minimal "
                    "failing call.",
        epilog=f"rules:\n{rule_lines}\n\nverdicts: a function passes once at least a fifth "
               "of --examples calls (10 of the default 50; fewer when fewer distinct calls "
               "exist) reached its body and no rule broke; with fewer it is unverified.\n\n"
               "exit status: 0 every function checked and every rule holds, 1 a rule is "
               "broken, 2 the library cannot be checked or a report cannot be written, 3 no "
               "rule broken but a function is unverified (--allow-unverified: 0)",
    )
    parser.add_argument("library", nargs="?",
                        help="the shared library to check (default: the example kernel "
                             "library this project ships)")
    parser.add_argument("--example", choices=("example", "broken"), default=None,
                        help="check a shipped example library instead: 'example' (obeys every "
                             "rule) or 'broken' (breaks each rule in one function)")
    parser.add_argument("--functions", action="append", default=[], metavar="NAMES",
                        help="check only these functions (comma-separated names or glob "
                             "patterns; repeatable)")
    parser.add_argument("--skip", action="append", default=[], metavar="PATTERN",
                        help="never call these functions (comma-separated names or glob "
                             "patterns; repeatable): ones that take raw addresses, say")
    parser.add_argument("--globals", dest="globals", action="store_true", default=True,
                        help="also check the global functions and object-type methods the "
                             "library registers when it loads (the default)")
    parser.add_argument("--no-globals", dest="globals", action="store_false",
                        help="check only the exported __tvm_ffi_<name> functions")
    parser.add_argument("--allow-unverified", dest="strict", action="store_false",
                        default=True,
                        help="functions too few calls reached (unverified) do not fail the "
                             "run; by default they do, with exit status 3")
    parser.add_argument("--strict", dest="strict", action="store_true",
                        help="unverified functions fail the run (the default)")
    parser.add_argument("--leaks", action="store_true",
                        help="also call each function repeatedly with the same arguments: a "
                             "reference it keeps to an argument on every call (growing with "
                             "the number of calls) is a leak; one kept reference is allowed")
    parser.add_argument("--examples", type=positive_integer, default=50, metavar="N",
                        help="hypothesis examples per function (default 50)")
    parser.add_argument("--seed", type=integer, default=0,
                        help="hypothesis seed; the same seed gives the same calls (default 0)")
    parser.add_argument("--timeout", type=positive_number, default=5.0, metavar="SECONDS",
                        help="longest a single call may take before it counts as hung "
                             "(default 5)")
    parser.add_argument("--threads", type=integer, default=4, metavar="N",
                        help="threads for the concurrent-call check; below 2 skips it "
                             "(default 4)")
    parser.add_argument("--json", metavar="PATH",
                        help="write the report as JSON to PATH ('-' for stdout, which then "
                             "gets no table)")
    parser.add_argument("--junit-xml", metavar="PATH", help="write a JUnit XML report to PATH")
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bar (it shows only on a terminal anyway)")
    parser.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                        help="color the table (default: on a terminal)")
    default = sandbox.Sandbox.default()
    limits = parser.add_argument_group(
        "sandbox", "limits of the worker process that loads and calls the library (the report "
                   "says which applied); 'none' lifts one")
    limits.add_argument("--limit-memory", type=_limit(_size), default=default.memory,
                        metavar="SIZE",
                        help="address space, e.g. 16G (default: this machine's memory + 8 GiB; "
                             "not applied under AddressSanitizer or to a CUDA library)")
    limits.add_argument("--limit-cpu", type=_limit(positive_integer), default=default.cpu,
                        metavar="SECONDS", help=f"CPU seconds per function (default {default.cpu})")
    limits.add_argument("--limit-file-size", type=_limit(_size), default=default.file_size,
                        metavar="SIZE", help="largest file the library may write (default "
                                             f"{sandbox.format_size(default.file_size)})")
    limits.add_argument("--allow-network", action="store_true",
                        help="keep the network (by default the worker gets a network "
                             "namespace of its own where the machine allows it)")
    limits.add_argument("--allow-core-dumps", action="store_true",
                        help="let a crash leave a core dump (off by default)")
    limits.add_argument("--no-sandbox", action="store_true",
                        help="no limit at all")
    return parser


def sandbox_of(args: argparse.Namespace) -> sandbox.Sandbox:
    """The worker's limits the parsed command line asks for."""
    if args.no_sandbox:
        return sandbox.Sandbox.off()
    return sandbox.Sandbox(memory=args.limit_memory, cpu=args.limit_cpu,
                           file_size=args.limit_file_size, core_dumps=args.allow_core_dumps,
                           network=args.allow_network)


def _patterns(items: List[str]) -> List[str]:
    return [p.strip() for item in items for p in item.split(",") if p.strip()]


def main(argv: Optional[List[str]] = None) -> int:
    """Runs ``tvm-ffi-check``; returns the exit status."""
    from . import examples, report
    from .runner import CheckError, Options, check_library

    parser = build_parser()
    args = parser.parse_args(argv)
    options = Options(examples=args.examples, seed=args.seed, timeout=args.timeout,
                      functions=_patterns(args.functions), threads=args.threads,
                      globals=args.globals, skip=_patterns(args.skip), strict=args.strict,
                      sandbox=sandbox_of(args), leaks=args.leaks)
    table_stream = sys.stderr if args.json == "-" else sys.stdout
    color = args.color == "always" or (args.color == "auto" and table_stream.isatty()
                                       and not os.environ.get("NO_COLOR"))
    if args.library is not None and args.example:
        parser.error("give a library or --example, not both")
    for problem in (output_problem(args.json, "--json"),
                    output_problem(args.junit_xml, "--junit-xml")):
        if problem:
            print(f"tvm-ffi-check: error: {problem}", file=sys.stderr)
            return EXIT_UNUSABLE

    def announce(library_report, count):  # the library line, before the long run
        table_stream.write(report.render_header(library_report, count))
        table_stream.flush()

    try:
        path = args.library if args.library is not None else \
            examples.library_path(args.example or "example")
        progress = report.ProgressBar(sys.stderr, enabled=None if not args.no_progress else False)
        try:
            result = check_library(path, options, progress, announce)
        finally:
            progress.close()
    except CheckError as exc:
        print(f"tvm-ffi-check: error: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    except KeyboardInterrupt:
        print("tvm-ffi-check: interrupted", file=sys.stderr)
        return 130
    table_stream.write(report.render_table(result, color=color, header=False))
    table_stream.flush()
    for option, path, write in (("--json", args.json, _write_json),
                                ("--junit-xml", args.junit_xml, report.write_junit)):
        if not path:
            continue
        try:
            write(result, path)
        except OSError as exc:
            print(f"tvm-ffi-check: error: {write_problem(path, option, exc)}", file=sys.stderr)
            return EXIT_UNUSABLE
    return exit_status(result)


def exit_status(result) -> int:
    """0 all checked and passed, 1 a rule broken, 3 only unverified functions (unless allowed)."""
    if result.broken:
        return EXIT_FINDINGS
    return EXIT_PASS if result.passed else EXIT_UNVERIFIED


def _write_json(result, path: str) -> None:
    from . import report

    if path == "-":
        report.write_json(result, sys.stdout)
        return
    with open(path, "w") as f:
        report.write_json(result, f)
