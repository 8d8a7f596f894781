"""``tvm-ffi-check``: the command line.

Exit status: 0 when every function obeys every rule, 1 when a rule is broken
(or the checker itself failed on a function), 2 when the library cannot be
checked at all (no such file, not a shared library, no TVM FFI functions, it
cannot be loaded) or the command line is wrong.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import List, Optional

from tvm_ffi_ref import rules

EXIT_PASS, EXIT_FINDINGS, EXIT_UNUSABLE = 0, 1, 2


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
        epilog=f"rules:\n{rule_lines}\n\nexit status: 0 all rules hold, 1 a rule is broken, "
               "2 the library cannot be checked",
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


def main(argv: Optional[List[str]] = None) -> int:
    """Runs ``tvm-ffi-check``; returns the exit status."""
    from . import examples, report
    from .runner import CheckError, Options, check_library

    parser = build_parser()
    args = parser.parse_args(argv)
    patterns = [p.strip() for item in args.functions for p in item.split(",") if p.strip()]
    options = Options(examples=args.examples, seed=args.seed, timeout=args.timeout,
                      functions=patterns, threads=args.threads)
    table_stream = sys.stderr if args.json == "-" else sys.stdout
    try:
        if args.library and args.example:
            parser.error("give a library or --example, not both")
        path = args.library or examples.library_path(args.example or "example")
        progress = report.ProgressBar(sys.stderr, enabled=None if not args.no_progress else False)
        try:
            result = check_library(path, options, progress)
        finally:
            progress.close()
    except CheckError as exc:
        print(f"tvm-ffi-check: error: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    except KeyboardInterrupt:
        print("tvm-ffi-check: interrupted", file=sys.stderr)
        return 130
    color = args.color == "always" or (args.color == "auto" and table_stream.isatty()
                                       and not os.environ.get("NO_COLOR"))
    table_stream.write(report.render_table(result, color=color))
    table_stream.flush()
    if args.json:
        if args.json == "-":
            report.write_json(result, sys.stdout)
        else:
            with open(args.json, "w") as f:
                report.write_json(result, f)
    if args.junit_xml:
        report.write_junit(result, args.junit_xml)
    return EXIT_PASS if result.passed else EXIT_FINDINGS
