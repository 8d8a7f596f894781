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
from .runner import FunctionReport, LibraryReport

TOOL = "tvm-ffi-check"


def _truncate(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(0, width - 3)] + "..."


def render_table(report: LibraryReport, color: bool = False) -> str:
    """The terminal report: one row per function, then each finding in full."""
    def paint(text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if color else text

    options = report.options
    lines: List[str] = []
    lines.append(f"{TOOL} {__version__}: {report.library}")
    lines.append(f"{len(report.functions)} function(s), {options.examples} examples each, "
                 f"seed {options.seed}, timeout {options.timeout:g} s per call")
    if report.unselected:
        lines.append(f"not selected by --functions: {', '.join(report.unselected)}")
    lines.append("")
    width = shutil.get_terminal_size((120, 24)).columns
    name_w = max([8] + [len(f.name) for f in report.functions])
    sig_w = min(44, max([9] + [len(f.signature or "(no schema)") for f in report.functions]))
    header = (f"{'function':<{name_w}}  {'signature':<{sig_w}}  {'examples':>8}  "
              f"{'returned/raised':>15}  result")
    lines.append(header)
    lines.append("-" * min(width, max(len(header) + 20, 60)))
    for function in report.functions:
        signature = _truncate(function.signature or "(no schema)", sig_w)
        if function.passed:
            verdict = paint("pass", "32")
        else:
            broken = function.rules_broken + (["checker-error"] if function.errors else [])
            verdict = paint("FAIL " + ", ".join(broken), "31;1")
        returned = function.outcomes.get("returned", 0)
        raised = sum(n for k, n in function.outcomes.items() if k.startswith("raised"))
        lines.append(f"{function.name:<{name_w}}  {signature:<{sig_w}}  "
                     f"{function.examples:>8}  {f'{returned}/{raised}':>15}  {verdict}")
    failed = [f for f in report.functions if not f.passed]
    if failed:
        lines.append("")
        lines.append("Findings")
        for function in failed:
            for finding in function.findings:
                lines.append("")
                lines.append(f"{paint(function.name, '1')}  [{paint(finding.rule, '31')}] "
                             f"{rules.RULES[finding.rule]}")
                lines.append(f"    {finding.message}")
                if finding.call:
                    label = "minimal failing call" if finding.shrunk else "failing call"
                    lines.append(f"    {label}: {finding.call}")
                if finding.api_calls:
                    lines.append(f"    C API calls made by the kernel: "
                                 f"{', '.join(finding.api_calls)}")
                if finding.output:
                    lines.append("    output:")
                    lines.extend("      " + line for line in finding.output.splitlines()[-12:])
            for error in function.errors:
                lines.append("")
                lines.append(f"{paint(function.name, '1')}  [checker-error] {error}")
    notes = [(f.name, n) for f in report.functions for n in f.notes]
    if notes:
        lines.append("")
        lines.append("Notes")
        for name, note in notes:
            lines.append(f"  {name}: {note}")
    lines.append("")
    n_failed = len(failed)
    n_rules = sum(len(f.findings) for f in failed)
    summary = (f"{len(report.functions)} function(s) checked in {report.duration:.1f} s: "
               f"{len(report.functions) - n_failed} passed, {n_failed} failed")
    if n_rules:
        summary += f" ({n_rules} broken rule(s))"
    lines.append(paint(summary, "32" if not n_failed else "31;1"))
    return "\n".join(lines) + "\n"


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
                    "threads": options.threads},
        "rules": dict(rules.RULES),
        "summary": {
            "functions": len(report.functions),
            "passed": sum(f.passed for f in report.functions),
            "failed": sum(not f.passed for f in report.functions),
        },
        "functions": [f.to_json() for f in report.functions],
        "unselected": report.unselected,
    }


def write_json(report: LibraryReport, stream: IO[str]) -> None:
    json.dump(to_json(report), stream, indent=2)
    stream.write("\n")


def _testcase(suite: ET.Element, function: FunctionReport, classname: str) -> None:
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
        failure.text = "\n".join(body)
    for error in function.errors:
        element = ET.SubElement(case, "error", type="checker-error", message=error)
        element.text = error
    details = [f"signature: {function.signature or '(no schema: value kinds swept)'}",
               f"examples: {function.examples}"] + function.notes
    ET.SubElement(case, "system-out").text = "\n".join(details)


def write_junit(report: LibraryReport, path: str) -> None:
    """A JUnit XML file: one test case per function, one failure per broken rule."""
    root = ET.Element("testsuites", name=TOOL)
    suite = ET.SubElement(
        root, "testsuite", name=f"{TOOL} {report.library}",
        tests=str(len(report.functions)),
        failures=str(sum(1 for f in report.functions if f.findings)),
        errors=str(sum(1 for f in report.functions if f.errors and not f.findings)),
        time=f"{report.duration:.3f}", timestamp=time.strftime("%Y-%m-%dT%H:%M:%S"))
    props = ET.SubElement(suite, "properties")
    for key, value in (("library", report.library), ("seed", report.options.seed),
                       ("examples", report.options.examples),
                       ("timeout", report.options.timeout)):
        ET.SubElement(props, "property", name=key, value=str(value))
    classname = "tvm_ffi_check." + (report.library.rsplit("/", 1)[-1].replace(".", "_"))
    for function in report.functions:
        _testcase(suite, function, classname)
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
