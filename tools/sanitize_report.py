"""Reads the AddressSanitizer and UndefinedBehaviorSanitizer logs of a sanitizer run
(tools/sanitize.sh) and sorts the reports by where their top frame is.

The top frame is the first stack frame outside the sanitizer runtimes (their interceptors of
``free``, ``memcpy``, ... are where a report is raised, not where the fault is). A report whose
top frame is in an object or source file under ``--project`` (the instrumented copy of the tree
and the test kernels compiled there) is the project's: it fails the run. Any other report fails
it too unless a line of ``--suppressions`` names its kind and top frame (CPython, NumPy, torch,
upstream's library in the oracle's processes). The one exception in the project's code: a line
of ``--expected`` names a fault made on purpose (a function of the broken example kernels, which
exist so that tvm-ffi-check has rules broken to find), by exact function name and kind.

Exit status: 0 when no report is left unsuppressed, 1 otherwise.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import sys

#: "#3 0x7f... in func /path/file.c:12:3" or "#3 0x7f... in func (/path/lib.so+0x12)" or
#: "#3 0x7f...  (/path/lib.so+0x12)".
FRAME = re.compile(r"^\s*#\d+ 0x[0-9a-f]+ (?:in (?P<func>.+?) )?\s*"
                   r"(?:\((?P<module>[^()]+?)\+0x[0-9a-f]+\)|(?P<file>\S+?)(?::\d+)*)$")
ASAN_HEADER = re.compile(r"(?:ERROR: AddressSanitizer: (?P<kind>[\w-]+)(?P<detail> \([^)]*\))?"
                         r"|AddressSanitizer: (?P<check>CHECK failed): (?P<where>\S+))")
UBSAN_HEADER = re.compile(r"^(?P<file>[^\s:]+):(?P<line>\d+)(?::\d+)?: runtime error: "
                          r"(?P<message>.*)$")
#: An ASan report's last line names its kind even where the first does not ("requested
#: allocation size ... exceeds ..." is an allocation-size-too-big).
ASAN_SUMMARY = re.compile(r"^SUMMARY: AddressSanitizer: (?P<kind>[\w-]+)")
#: A UBSan report's first line anywhere in a line of text (a test's output may quote it).
STRAY_UBSAN = re.compile(r"\S+:\d+(?::\d+)?: runtime error: (?P<message>[^'\"\\]*)")
#: Frames of the sanitizer runtimes themselves.
RUNTIME_FRAME = re.compile(r"libasan|libubsan|libsanitizer|__interceptor_|__asan_|__ubsan_")


def ubsan_kind(message: str) -> str:
    """A UBSan message without its values: the kind of undefined behaviour."""
    kind = re.split(r"[0-9'\"]", message, maxsplit=1)[0]
    return "ubsan: " + kind.strip().rstrip(",").strip()


def parse_frames(lines):
    """The (function, location) of each stack frame in ``lines``, in order."""
    frames = []
    for line in lines:
        match = FRAME.match(line.rstrip())
        if match:
            frames.append((match["func"] or "?", match["module"] or match["file"] or "?"))
    return frames


def reports_of(path: str):
    """Each report in one log file: (kind, frames), frames top first."""
    with open(path, errors="replace") as f:
        lines = f.read().splitlines()
    reports, current = [], None
    for line in lines:
        asan = ASAN_HEADER.search(line)
        ubsan = UBSAN_HEADER.match(line)
        if asan or ubsan:
            if current:
                reports.append(current)
            if asan and asan["check"]:  # the sanitizer's own assertion: the run is not valid
                kind = f"{asan['check']} ({asan['where']})"
                current = (kind, [], None)
            elif asan:
                kind = asan["kind"] + (asan["detail"] or "")
                current = (kind, [], None)
            else:
                current = (ubsan_kind(ubsan["message"]), [], f"{ubsan['file']}:{ubsan['line']}")
        elif current is not None:
            summary = ASAN_SUMMARY.match(line)
            if summary and current[2] is None and not current[0].startswith(summary["kind"]):
                current = (summary["kind"], current[1], None)
            current[1].append(line)
    if current:
        reports.append(current)
    out = []
    for kind, body, location in reports:
        frames = parse_frames(body)
        if location is not None:  # UBSan names the faulting line before any frame
            frames.insert(0, (frames[0][0] if frames else "?", location))
        out.append((kind, frames))
    return out


def top_frame(frames):
    """The first frame outside the sanitizer runtimes, or None."""
    for func, where in frames:
        if not RUNTIME_FRAME.search(func + " " + where):
            return func, where
    return None


def load_rules(path: str):
    """(first word, the rest, reason) of each rule line of a suppressions or expected-faults
    file: the rule before any '#', the reason after it."""
    rules = []
    if path and os.path.exists(path):
        with open(path) as f:
            for line in f:
                text, _, reason = line.partition("#")
                parts = text.split(None, 1)
                if len(parts) == 2:
                    rules.append((parts[0], parts[1].strip(), reason.strip()))
    return rules


def suppressed_by(rules, kind, func, where):
    """The rule that suppresses a report, or None."""
    for rule_kind, needle, reason in rules:
        if rule_kind in ("*", kind, kind.split(" ")[0]) and (
                needle in func or needle in os.path.basename(where)):
            return f"{rule_kind} {needle}"
    return None


def stray_reports(path: str):
    """Report headers printed into ``path`` (the tests' output) rather than a log file: a process
    whose sanitizer wrote to stderr (its environment lost the log path), which a test that
    failed then showed. Each is (kind, the line)."""
    found = []
    if path and os.path.exists(path):
        with open(path, errors="replace") as f:
            for line in f:
                asan = ASAN_HEADER.search(line)
                ubsan = STRAY_UBSAN.search(line)
                if asan:
                    found.append((asan["kind"] or asan["check"], line.strip()[:200]))
                elif ubsan:
                    found.append((ubsan_kind(ubsan["message"]), line.strip()[:200]))
    return found


def expected_by(rules, kind, func, where):
    """The rule that names a deliberate fault of the project's (exact function name, the kind
    or its start), or None. A rule may name ``FILE:LINE`` instead of the function, for a UBSan
    report whose stack was cut off (a process killed while it printed): FILE is the source's
    name without the ``-<digest>`` of a kernel compiled at test time."""
    place = re.sub(r"-[0-9a-f]{8,}(\.\w+:)", r"\1", os.path.basename(where))
    for name, rule_kind, _ in rules:
        if name in (func, place) and (rule_kind == "*" or kind.startswith(rule_kind)):
            return f"{name} {rule_kind}"
    return None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("logs", help="the directory of asan.<pid> and ubsan.<pid> logs")
    parser.add_argument("--project", required=True,
                        help="the directory whose objects and sources are the project's")
    parser.add_argument("--suppressions", default="")
    parser.add_argument("--expected",
                        default=os.path.join(os.path.dirname(__file__), "sanitize_expected.txt"),
                        help="deliberate faults in the project's code: FUNCTION KIND # why")
    parser.add_argument("--json", default="", help="write the summary here too")
    parser.add_argument("--stray", default="",
                        help="the tests' output: a report printed there, not logged, fails too")
    args = parser.parse_args(argv)
    project = os.path.realpath(args.project) + os.sep
    rules = load_rules(args.suppressions)
    deliberate = load_rules(args.expected)
    groups = {"project": collections.Counter(), "expected": collections.Counter(),
              "suppressed": collections.Counter(), "unsuppressed": collections.Counter()}
    examples = {}
    logs = sorted(os.listdir(args.logs)) if os.path.isdir(args.logs) else []
    for name in logs:
        for kind, frames in reports_of(os.path.join(args.logs, name)):
            top = top_frame(frames) or ("?", "?")
            func, where = top
            if os.path.realpath(where).startswith(project):
                group = "expected" if expected_by(deliberate, kind, func, where) else "project"
                key = (kind, func, os.path.relpath(where, project))
            else:
                rule = suppressed_by(rules, kind, func, where)
                group = "suppressed" if rule else "unsuppressed"
                key = (kind, func, os.path.basename(where))
            groups[group][key] += 1
            examples.setdefault(key, name)
    print(f"sanitize: {len(logs)} log file(s) in {args.logs}")
    for group, title in (("project", "reports in the project's code (FAIL)"),
                         ("expected", "reports in the project's code made on purpose "
                                      "(the broken example kernels; --expected)"),
                         ("unsuppressed", "reports elsewhere, not suppressed (FAIL)"),
                         ("suppressed", "reports elsewhere, suppressed by name")):
        counter = groups[group]
        print(f"{title}: {sum(counter.values())}")
        for (kind, func, where), count in counter.most_common():
            print(f"  {count:5d}  {kind}  at {func} ({where})  e.g. {examples[(kind, func, where)]}")
    stray = stray_reports(args.stray)
    print(f"reports printed into the tests' output instead of a log file (FAIL): {len(stray)}")
    for kind, line in stray[:20]:
        print(f"  {kind}: {line}")
    by_kind = {}
    for group, counter in groups.items():
        kinds = collections.Counter()
        for (kind, _, _), n in counter.items():
            kinds[kind] += n
        by_kind[group] = dict(kinds)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"log_files": len(logs), "by_kind": by_kind, "stray": stray,
                       "reports": {g: [[*k, n] for k, n in c.items()] for g, c in groups.items()}},
                      f, indent=1)
    return 1 if groups["project"] or groups["unsuppressed"] or stray else 0


if __name__ == "__main__":
    sys.exit(main())
