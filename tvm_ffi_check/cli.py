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

from tvm_ffi_ref import rules

EXIT_PASS, EXIT_FINDINGS, EXIT_UNUSABLE, EXIT_UNVERIFIED = 0, 1, 2, 3


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``tvm-ffi-check``."""
    rule_lines = "\n".join(f"  {rule:<17} {meaning}" for rule, meaning in rules.RULES.items())
    parser = argparse.ArgumentParser(
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
    parser.add_argument("--examples", type=_positive_int, default=50, metavar="N",
                        help="hypothesis examples per function (default 50)")
    parser.add_argument("--seed", type=int, default=0,
                        help="hypothesis seed; the same seed gives the same calls (default 0)")
    parser.add_argument("--timeout", type=_positive_float, default=5.0, metavar="SECONDS",
                        help="longest a single call may take before it counts as hung "
                             "(default 5)")
    parser.add_argument("--threads", type=int, default=4, metavar="N",
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
    return parser


def _patterns(items: List[str]) -> List[str]:
    return [p.strip() for item in items for p in item.split(",") if p.strip()]


def _writable(path: Optional[str], option: str) -> Optional[str]:
    """Why a report cannot be written to ``path`` (checked before the long run), or None."""
    if not path or path == "-":
        return None
    if os.path.isdir(path):
        return f"{option} {path}: is a directory"
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        return f"{option} {path}: the directory {directory} does not exist"
    if not os.access(directory, os.W_OK) or (os.path.exists(path) and
                                             not os.access(path, os.W_OK)):
        return f"{option} {path}: not writable"
    return None


def main(argv: Optional[List[str]] = None) -> int:
    """Runs ``tvm-ffi-check``; returns the exit status."""
    from . import examples, report
    from .runner import CheckError, Options, check_library

    parser = build_parser()
    args = parser.parse_args(argv)
    options = Options(examples=args.examples, seed=args.seed, timeout=args.timeout,
                      functions=_patterns(args.functions), threads=args.threads,
                      globals=args.globals, skip=_patterns(args.skip), strict=args.strict,
                      leaks=args.leaks)
    table_stream = sys.stderr if args.json == "-" else sys.stdout
    color = args.color == "always" or (args.color == "auto" and table_stream.isatty()
                                       and not os.environ.get("NO_COLOR"))
    if args.library is not None and args.example:
        parser.error("give a library or --example, not both")
    for problem in (_writable(args.json, "--json"), _writable(args.junit_xml, "--junit-xml")):
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
    try:
        if args.json == "-":
            report.write_json(result, sys.stdout)
        elif args.json:
            with open(args.json, "w") as f:
                report.write_json(result, f)
        if args.junit_xml:
            report.write_junit(result, args.junit_xml)
    except OSError as exc:
        print(f"tvm-ffi-check: error: writing the report failed: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    return exit_status(result)


def exit_status(result) -> int:
    """0 all checked and passed, 1 a rule broken, 3 only unverified functions (unless allowed)."""
    if result.broken:
        return EXIT_FINDINGS
    return EXIT_PASS if result.passed else EXIT_UNVERIFIED
