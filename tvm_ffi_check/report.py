"""Writing a check's results: the terminal table, JSON, JUnit XML, the progress bar."""

from __future__ import annotations

import json
import shutil
import sys
import time
import xml.etree.ElementTree as ET
from typing import IO, Any, Dict, List, Optional

from tvm_ffi_common import __version__
from tvm_ffi_ref import rules

from . import hints, root_causes
from .results import Finding, FunctionReport, LibraryReport

TOOL = "tvm-ffi-check"


def _truncate(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(0, width - 3)] + "..."


def render_header(report: LibraryReport, count: int) -> str:
    """The lines a report starts with: the tool, the library and what will be checked.

    The command line prints them as soon as the functions are known, before
    the (long) check itself.
    """
    options = report.options
    lines = [f"{TOOL} {__version__}: {report.library}",
             f"{count} function(s), {options.examples} examples each, seed {options.seed}, "
             f"timeout {options.timeout:g} s per call"]
    if report.sandbox:
        lines.append(f"sandbox: {', '.join(report.sandbox)}")
    if report.unselected:
        lines.append(f"not selected by --functions: {_names(report.unselected)}")
    for name, why in report.skipped:
        lines.append(f"skipped {name}: {why}")
    return "\n".join(lines) + "\n"


def _names(names: List[str], limit: int = 12) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


#: How a signature the checker discovered (not read from a schema) is marked in the table.
_DISCOVERED = {"error text": "~", "arity": "~"}


def render_table(report: LibraryReport, color: bool = False, header: bool = True) -> str:
    """The terminal report: one row per function, then each finding in full.

    ``header``: start with :func:`render_header`'s lines (the command line
    printed them already when False).
    """
    def paint(text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if color else text

    lines: List[str] = []
    if header:
        lines.append(render_header(report, len(report.functions)).rstrip("\n"))
    lines.append("")
    width = shutil.get_terminal_size((120, 24)).columns
    name_w = max([8] + [len(f.name) for f in report.functions])
    sig_w = min(44, max([9] + [len(_signature(f)) for f in report.functions]))
    header_row = (f"{'function':<{name_w}}  {'signature':<{sig_w}}  {'tried':>5}  "
                  f"{'accepted':>8}  {'raised':>6}  result")
    lines.append(header_row)
    lines.append("-" * min(width, max(len(header_row) + 20, 60)))
    for function in report.functions:
        if function.status == "pass":
            verdict = paint("pass", "32")
        elif function.status == "unverified":
            verdict = paint("UNVERIFIED" if report.options.strict else "unverified", "33")
        else:
            broken = function.rules_broken + (["checker-error"] if function.errors else [])
            verdict = paint("FAIL " + ", ".join(broken), "31;1")
        lines.append(f"{function.name:<{name_w}}  {_truncate(_signature(function), sig_w):<{sig_w}}"
                     f"  {function.tried:>5}  {function.accepted:>8}  {function.raised:>6}  "
                     f"{verdict}")
    failed = [f for f in report.functions if not f.passed]
    causes = root_causes.group(report)
    if failed:
        lines.append("")
        lines.append(f"Findings: {_causes_count(causes)}")
        for cause in causes:
            lines.append("")
            lines += cause_lines(cause, paint)
        for function in failed:
            for error in function.errors:
                lines.append("")
                lines.append(f"{paint(function.name, '1')}  [checker-error] {error}")
    unverified = report.unverified
    if unverified:
        lines.append("")
        lines.append("Unverified (too few calls reached the function's body to check it)")
        for function in unverified:
            lines.append(f"  {function.name}: {function.unverified}")
    notes = [("", n) for n in report.notes] + [(f.name, n) for f in report.functions
                                                for n in f.notes]
    if notes:
        lines.append("")
        lines.append("Notes")
        for name, note in notes:
            lines.append(f"  {name}: {note}" if name else f"  {note}")
    if any(f.schema_source in _DISCOVERED for f in report.functions):
        lines.append("  ~: a signature discovered from the function's errors (it has no "
                     "type schema)")
    lines.append("")
    lines.append(paint(summary_line(report), "32" if report.passed else "31;1"))
    if unverified:
        lines.append(hints.unverified_closing_line(
            [f.name for f in unverified], allowed=not report.options.strict,
            without_schema=sum(1 for f in unverified if f.schema_source not in
                               ("metadata", "registry")), language=report.language))
    return "\n".join(lines) + "\n"


def finding_lines(name: str, finding: Finding, paint=lambda text, code: text) -> List[str]:
    """How the table shows one finding of function ``name`` (``spec/17-debugging.md`` too)."""
    lines = [f"{paint(name, '1')}  [{paint(finding.rule, '31')}] {rules.RULES[finding.rule]}",
             f"    {finding.message}"]
    if finding.call:
        label = "minimal failing call" if finding.shrunk else "failing call"
        lines.append(f"    {label}: {finding.call}")
    if finding.api_calls:
        lines.append(f"    C API calls made by the kernel: {', '.join(finding.api_calls)}")
    if finding.output:
        lines.append("    output:")
        lines.extend("      " + line for line in finding.output.splitlines()[-12:])
    lines.append(f"    the rule, and how to fix it: {finding.link}")
    return lines


def cause_lines(cause: root_causes.RootCause, paint=lambda text, code: text) -> List[str]:
    """One root cause: in full when one function has it, else what the functions share,
    each function with its minimal call, and the first finding in full."""
    name, first = cause.members[0]
    if len(cause.members) == 1:
        return finding_lines(name, first, paint)
    lines = [f"[{paint(cause.rule, '31')}] {len(cause.members)} functions, one root cause: "
             f"{cause.explanation()}"]
    if cause.shape:
        lines.append(f"    what the unchecked parameters got: {', '.join(cause.shape)}")
    width = max(len(n) for n in cause.functions)
    for member, finding in cause.members:
        lines.append(f"    {paint(member, '1'):<{width}}  {finding.call or '(no call)'}")
    lines.append("    the first in full:")
    lines += ["  " + line for line in finding_lines(name, first, paint)]
    return lines


def _causes_count(causes: List[root_causes.RootCause]) -> str:
    functions = len({name for cause in causes for name in cause.functions})
    return f"{len(causes)} root cause(s) in {functions} function(s)"


def _signature(function: FunctionReport) -> str:
    return _DISCOVERED.get(function.schema_source, "") + (function.signature or "(no schema)")


def summary_line(report: LibraryReport) -> str:
    """``12 function(s) checked in 3.1 s, 11 reached: 2 root cause(s) in 3 function(s); 8
    passed, 3 failed, 1 unverified``."""
    counts = report.counts()
    causes = root_causes.group(report)
    text = (f"{counts['functions']} function(s) checked in {report.duration:.1f} s, "
            f"{len(report.reached)} reached: ")
    if causes:
        text += f"{_causes_count(causes)}; "
    text += f"{counts['passed']} passed, {counts['failed']} failed"
    text += f", {counts['unverified']} unverified"
    if counts["unverified"]:
        text += " (they fail the run)" if report.options.strict else " (allowed)"
    if counts["skipped"]:
        text += f", {counts['skipped']} skipped"
    return text


def to_json(report: LibraryReport) -> Dict[str, Any]:
    """The report as JSON-ready data."""
    options = report.options
    return {
        "tool": TOOL,
        "version": __version__,
        "library": report.library,
        "passed": report.passed,
        "duration_s": round(report.duration, 3),
        "options": {"examples": options.examples, "seed": options.seed,
                    "timeout": options.timeout, "functions": list(options.functions),
                    "threads": options.threads, "globals": options.globals,
                    "skip": list(options.skip), "strict": options.strict,
                    "leaks": options.leaks,
                    "sandbox": (options.sandbox.to_json() if options.sandbox else None)},
        "sandbox": report.sandbox,
        "rules": dict(rules.RULES),
        "summary": dict(report.counts(), reached=len(report.reached),
                        root_causes=len(root_causes.group(report))),
        "root_causes": [cause.to_json() for cause in root_causes.group(report)],
        "functions": [f.to_json() for f in report.functions],
        "unselected": report.unselected,
        "skipped": [{"name": name, "why": why} for name, why in report.skipped],
        "notes": report.notes,
    }


def write_json(report: LibraryReport, stream: IO[str]) -> None:
    json.dump(to_json(report), stream, indent=2)
    stream.write("\n")


def _testcase(suite: ET.Element, function: FunctionReport, classname: str,
              report_strict: bool = False) -> None:
    case = ET.SubElement(suite, "testcase", name=function.name, classname=classname,
                         time=f"{function.duration:.3f}")
    for finding in function.findings:
        failure = ET.SubElement(case, "failure", type=finding.rule,
                                message=f"[{finding.rule}] {finding.message}")
        body = [rules.RULES[finding.rule], finding.message]
        if finding.call:
            body.append(("minimal failing call: " if finding.shrunk else "failing call: ")
                        + finding.call)
        if finding.api_calls:
            body.append("C API calls: " + ", ".join(finding.api_calls))
        if finding.output:
            body.append("output:\n" + finding.output)
        body.append(f"the rule, and how to fix it: {finding.link}")
        failure.text = "\n".join(body)
    for error in function.errors:
        element = ET.SubElement(case, "error", type="checker-error", message=error)
        element.text = error
    details = [f"signature: {function.signature or '(no schema: value kinds swept)'} "
               f"({function.schema_source})",
               f"calls: {function.tried} tried, {function.accepted} accepted, "
               f"{function.raised} raised"] + function.notes
    if function.unverified:
        details.append(f"unverified: {function.unverified}")
        if report_strict:
            failure = ET.SubElement(case, "failure", type="unverified",
                                    message=f"[unverified] {function.unverified}")
            failure.text = function.unverified
        else:
            ET.SubElement(case, "skipped", message=f"unverified: {function.unverified}")
    ET.SubElement(case, "system-out").text = "\n".join(details)


def write_junit(report: LibraryReport, path: str) -> None:
    """A JUnit XML file: one test case per function, one failure per broken rule."""
    root = ET.Element("testsuites", name=TOOL)
    suite = ET.SubElement(
        root, "testsuite", name=f"{TOOL} {report.library}",
        tests=str(len(report.functions)),
        failures=str(sum(1 for f in report.functions if f.findings or
                         (report.options.strict and f.status == "unverified"))),
        skipped=str(0 if report.options.strict else len(report.unverified)),
        errors=str(sum(1 for f in report.functions if f.errors and not f.findings)),
        time=f"{report.duration:.3f}", timestamp=time.strftime("%Y-%m-%dT%H:%M:%S"))
    props = ET.SubElement(suite, "properties")
    for key, value in (("library", report.library), ("seed", report.options.seed),
                       ("examples", report.options.examples),
                       ("timeout", report.options.timeout),
                       ("sandbox", "; ".join(report.sandbox) or "none")):
        ET.SubElement(props, "property", name=key, value=str(value))
    classname = "tvm_ffi_check." + (report.library.rsplit("/", 1)[-1].replace(".", "_"))
    for function in report.functions:
        _testcase(suite, function, classname, report.options.strict)
    tree = ET.ElementTree(root)
    tree.write(path, encoding="utf-8", xml_declaration=True)


class ProgressBar:
    """A one-line progress bar on a terminal (nothing when ``stream`` is not one)."""

    def __init__(self, stream: IO[str] = sys.stderr, enabled: Optional[bool] = None) -> None:
        self.stream = stream
        self.enabled = stream.isatty() if enabled is None else enabled
        self.last = 0.0
        self.shown = False

    def __call__(self, index: int, total: int, name: str, done: int, examples: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.last < 0.1 and done not in (0, examples):
            return
        self.last = now
        width = 24
        fraction = (index + min(done, examples) / max(examples, 1)) / max(total, 1)
        filled = int(fraction * width)
        bar = "#" * filled + "-" * (width - filled)
        columns = shutil.get_terminal_size((80, 24)).columns
        step = (f"example {done}/{examples}" if done <= examples else
                f"shrinking a failure ({done - examples} more calls)")
        text = f"[{bar}] {index + 1}/{total} {name}: {step}"
        self.stream.write("\r" + _truncate(text, columns - 1).ljust(columns - 1))
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            columns = shutil.get_terminal_size((80, 24)).columns
            self.stream.write("\r" + " " * (columns - 1) + "\r")
            self.stream.flush()
            self.shown = False
