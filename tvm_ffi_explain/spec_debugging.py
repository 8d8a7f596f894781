"""The rule-by-rule blocks of ``spec/17-debugging.md``, from the checker's own tables.

For each rule ``tvm-ffi-check`` knows (:data:`tvm_ffi_ref.rules.RULES`, the
one list the checker reports against) the page shows what the rule
requires, what a user sees when a kernel breaks it, the function of
``examples/kernels/broken_kernels.c`` that breaks it (cut from the source
itself) and the page that explains the rule. The generator writes one block
per rule; the finding the checker prints for that function follows each
block in the page, and ``tests/test_check.py`` compares it with a real run of
the checker, so neither side can drift. A rule without an entry here, or
without a broken function, fails the generation.

``python -m tvm_ffi_explain.spec_debugging --findings`` runs the checker on
the broken library (about half a minute) and prints every finding block as
the page should hold it, addresses masked.
"""

from __future__ import annotations

import os
import re
import sys
from typing import Dict, List, Optional, Sequence, Tuple

from tvm_ffi_ref.rules import RULES

#: Where the broken kernels are, relative to the project root.
BROKEN_SOURCE = os.path.join("examples", "kernels", "broken_kernels.c")

#: rule -> (what a user sees when a kernel breaks it, the page that explains the rule).
SYMPTOMS: Dict[str, Tuple[str, str]] = {
    "status": ("a call fails with a confusing error, or with none: a caller knows only 0, -1 and "
               "-2, and this project's front ends raise `ABIViolation` for anything else",
               "06-errors.md"),
    "error-raised": ("a failed call raises a stale error left by an earlier call, or an error "
                     "saying nothing was raised", "06-errors.md"),
    "error-content": ("an exception with an empty message, or of a kind nobody can catch by "
                      "name", "06-errors.md"),
    "result-type": ("the caller cannot decode the result: `ABIViolation` here, garbage or a crash "
                    "elsewhere", "04-types.md"),
    "object-header": ("the result is read as one type while it is another: wrong values, or a "
                      "crash far from the kernel", "03-objects.md"),
    "result-padding": ("equal results compare unequal or hash differently (map keys, caches): "
                       "the 4 bytes after the type index are part of the value; a None with a "
                       "payload is a value whose type index was never set", "01-any.md"),
    "result-schema": ("a caller that trusts the signature converts the result to the declared "
                      "type and fails (a TypeError in C++ or Python), or a stub's type is "
                      "wrong", "04-types.md"),
    "result-owned": ("a string result turns to garbage once the kernel's buffer is reused, or "
                     "the caller crashes releasing what it was told it owns", "05-calls.md"),
    "small-str-length": ("garbage, or a read past the value, when the caller decodes a short "
                         "string", "07-strings.md"),
    "result-live": ("a use after free: the result is freed before the caller gets it, and the "
                    "process crashes some time later", "03-objects.md"),
    "result-reference": ("a double free some time after the call: the caller releases a "
                         "reference the kernel never gave it", "05-calls.md"),
    "arg-refcount": ("the caller's object is freed while the caller still holds it: a crash or "
                     "a use after free that shows up in the caller's code", "05-calls.md"),
    "args-written": ("the caller's own values change under it after the call", "05-calls.md"),
    "memory-safety": ("memory next to a tensor is corrupted: wrong results that change from run "
                      "to run, or a crash somewhere else", "10-tensors.md"),
    "leak": ("memory grows with every call", "03-objects.md"),
    "determinism": ("identical calls return different results", "05-calls.md"),
    "thread-safety": ("wrong results only when several threads call at once (a data loader, a "
                      "server)", "18-stability.md"),
    "crash": ("the process dies (a segmentation fault) inside the call", "05-calls.md"),
    "timeout": ("the call never returns, and Ctrl-C does not stop it", "12-env.md"),
}

#: The function of the broken library shown for a rule, where it is not ``bad_<rule>``.
KERNEL_OF: Dict[str, str] = {"memory-safety": "bad_memory_read"}


def kernel_name(rule: str) -> str:
    """The broken function the page shows for ``rule``."""
    return KERNEL_OF.get(rule, "bad_" + rule.replace("-", "_"))


def kernel_source(source: str, name: str) -> str:
    """The paragraph of ``source`` that defines ``KERNEL(name)``: its comment, data and body."""
    match = re.search(r"^KERNEL\(" + re.escape(name) + r"\) \{$", source, re.M)
    if match is None:
        raise KeyError(f"{BROKEN_SOURCE} defines no KERNEL({name})")
    start = source.rfind("\n\n", 0, match.start()) + 2
    end = source.index("\n}\n", match.end()) + 3
    return source[start:end]


def rule_block(rule: str, source: str) -> List[str]:
    """The generated lines about one rule."""
    if rule not in SYMPTOMS:
        raise KeyError(f"spec_debugging.SYMPTOMS has no entry for the checker's rule {rule!r}")
    symptom, page = SYMPTOMS[rule]
    name = kernel_name(rule)
    return [f"**The rule:** {RULES[rule]}.", "", f"**What you see:** {symptom}.", "",
            f"**Where it is explained:** [{page}]({page}).", "",
            f"**A kernel that breaks it**, `{name}`:", "",
            f"<!-- excerpt: {BROKEN_SOURCE} -->", "```c", kernel_source(source, name).rstrip("\n"),
            "```"]


def render_rule(root: str, rule: str) -> List[str]:
    """The block ``<!-- generated: check-rule:RULE -->`` holds."""
    with open(os.path.join(root, BROKEN_SOURCE), encoding="utf-8") as f:
        return rule_block(rule, f.read())


def render_index(root: str) -> List[str]:
    """The table of every rule: what it requires and what breaking it looks like."""
    lines = ["| rule | requires | what you see |", "|---|---|---|"]
    for rule, meaning in RULES.items():
        symptom, _ = SYMPTOMS[rule]
        lines.append(f"| [`{rule}`](#{rule}) | {meaning} | {symptom} |")
    return lines


#: What differs from run to run in a finding, and how the page shows it (doctest's ``...``):
#: addresses, the counts and values of a race, a counter's values, and the string hypothesis
#: shrank a failing argument to (its exact code points depend on hypothesis' version).
_VOLATILE = [
    (re.compile(r"0x[0-9a-f]{6,}"), "..."),
    (re.compile(r"\b\d+ of (\d+) calls"), r"... of \1 calls"),
    (re.compile(r"returned -?\d+ in a thread, but returned -?\d+"),
     "returned ... in a thread, but returned ..."),
    (re.compile(r"\bbad_thread_safety\(-?\d+\)"), "bad_thread_safety(...)"),
    (re.compile(r"returned -?\d+, then returned -?\d+"), "returned ..., then returned ..."),
    (re.compile(r"(call: \w+)\('[^']*'\)$", re.M), r"\1('...')"),
]


def masked(text: str) -> str:
    """``text`` with what changes between runs replaced by ``...`` (doctest's ellipsis)."""
    for pattern, replacement in _VOLATILE:
        text = pattern.sub(replacement, text)
    return text


def findings_from_report(report: dict) -> Dict[str, List[str]]:
    """Each function's finding lines, as the table prints them, from a ``--json`` report."""
    from tvm_ffi_check.report import finding_lines
    from tvm_ffi_check.results import Finding

    out: Dict[str, List[str]] = {}
    for function in report["functions"]:
        for item in function["findings"]:
            finding = Finding(item["rule"], item["message"], None, item["call"], item["shrunk"],
                              list(item["api_calls"]), item["output"])
            out[function["name"]] = finding_lines(function["name"], finding)
    return out


_FINDING = re.compile(r"<!-- finding: (?P<name>[\w.]+) -->\n```text\n(?P<body>.*?)^```$", re.M | re.S)


def page_findings(text: str) -> Dict[str, str]:
    """The finding blocks of a page, by function name."""
    return {m.group("name"): m.group("body") for m in _FINDING.finditer(text)}


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``--findings``: runs the checker on the broken library and prints the finding blocks."""
    import json
    import subprocess
    import tempfile

    args = list(sys.argv[1:] if argv is None else argv)
    if args != ["--findings"]:
        print("usage: python -m tvm_ffi_explain.spec_debugging --findings", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "report.json")
        subprocess.run([sys.executable, "-m", "tvm_ffi_check", "--example", "broken", "--json",
                        path, "--timeout", "2", "--no-progress"], capture_output=True)
        with open(path, encoding="utf-8") as f:
            found = findings_from_report(json.load(f))
    for rule in RULES:
        name = kernel_name(rule)
        print(f"<!-- finding: {name} -->\n```text")
        print(masked("\n".join(found.get(name, ["(no finding)"]))))
        print("```\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
