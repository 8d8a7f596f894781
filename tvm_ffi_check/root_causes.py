"""One finding per root cause: findings of many functions that broke a rule the same way.

A library whose functions share a helper, or a pattern, breaks a rule in the
same way in all of them: 45 functions of one library crash reading address
0x18 when a parameter typed ``ffi.Object`` gets an object of another type.
A user needs that one fact, not 45 findings. Findings are grouped by

* the rule;
* how the call failed: the fault (signal, access, and the address when it is
  in the NULL page, where the offset names the field read through a NULL
  pointer), or for other rules the message with its addresses and numbers
  masked;
* the argument shape: whether a parameter whose declared type the FFI does not
  check (``ffi.Object``, ``Any``, a container of them, or none known) got an
  object (:func:`shape` lists which, ``ffi.Object <- object``); the type it
  got is left out, since any type but the one the function reads is the same
  mistake.

Each :class:`RootCause` lists its functions with one minimal call each.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Tuple

from .results import Finding, LibraryReport, rule_link

#: Declared types whose parameters take whatever they are given: the FFI checks nothing.
UNCHECKED = ("ffi.Object", "Any", "?")
_NULL_PAGE = 4096
_ADDRESS = re.compile(r"0x[0-9a-f]+")
_NUMBER = re.compile(r"\b\d+\b")


@dataclass
class RootCause:
    """Findings of one or more functions that break ``rule`` the same way."""

    rule: str
    how: str
    shape: Tuple[str, ...]
    members: List[Tuple[str, Finding]] = field(default_factory=list)

    @property
    def functions(self) -> List[str]:
        return [name for name, _ in self.members]

    def explanation(self) -> str:
        """What the functions share and what to do about it, in one sentence."""
        count = len(self.members)
        these = "this function" if count == 1 else f"these {count} functions"
        if self.rule == "crash" and self.shape:
            declared = sorted({s.split(" <- ")[0] for s in self.shape})
            got = sorted({t for _, f in self.members for t in passed_types(f)})
            return (f"{these} crash when a parameter the FFI does not check (declared "
                    f"{', '.join(f'`{d}`' for d in declared)}) gets an object of another type "
                    f"than the one the function reads (here: "
                    f"{', '.join(got[:4])}{' ...' if len(got) > 4 else ''}); declare the exact "
                    "type in the signature so that the FFI checks it and raises a TypeError "
                    "instead")
        if count == 1:
            return f"{these} breaks `{self.rule}`"
        return f"{these} break `{self.rule}` the same way"

    def to_json(self) -> Dict[str, Any]:
        return {"rule": self.rule, "how": self.how, "shape": list(self.shape),
                "explanation": self.explanation(), "link": rule_link(self.rule),
                "functions": [{"name": name, "call": finding.call}
                              for name, finding in self.members]}


def _how(finding: Finding) -> str:
    if finding.fault:
        match = re.search(r"at 0x([0-9a-f]+)$", finding.fault)
        if match and int(match.group(1), 16) >= _NULL_PAGE:
            return finding.fault[:match.start()] + "at a non-NULL address"
        return finding.fault
    return _NUMBER.sub("N", _ADDRESS.sub("0x...", finding.message))


def _unchecked(declared: str) -> bool:
    return declared in UNCHECKED or any(f"[{g}" in declared or f", {g}" in declared
                                        for g in UNCHECKED[:2])


def shape(finding: Finding) -> Tuple[str, ...]:
    """What the parameters the FFI does not (fully) check received, by ABI form:
    ``ffi.Object <- object``, ``ffi.Array[ffi.Object] <- object``. The type passed is left
    out: any type but the one the function reads is the same mistake."""
    found = []
    for i, (index, name, form) in enumerate(finding.forms):
        declared = finding.declared[i] if i < len(finding.declared) else "?"
        if _unchecked(declared) and form == "object":
            found.append(f"{declared} <- {form}")
    return tuple(sorted(set(found)))


def _shape_key(finding: Finding) -> Tuple[str, ...]:
    # Which unchecked type a parameter was declared with does not change the mistake.
    return ("an unchecked parameter <- object",) if shape(finding) else ()


def passed_types(finding: Finding) -> List[str]:
    """The types the unchecked parameters of a finding's call got."""
    return [name for i, (index, name, form) in enumerate(finding.forms)
            if form == "object" and _unchecked(finding.declared[i] if i < len(finding.declared)
                                               else "?")]


def group(report: LibraryReport) -> List[RootCause]:
    """The report's findings grouped by root cause, the largest group first."""
    causes: Dict[Tuple[str, str, Tuple[str, ...]], RootCause] = {}
    for function in report.functions:
        for finding in function.findings:
            key = (finding.rule, _how(finding), _shape_key(finding))
            cause = causes.setdefault(key, RootCause(finding.rule, key[1], ()))
            cause.members.append((function.name, finding))
            cause.shape = tuple(sorted(set(cause.shape) | set(shape(finding))))
    return sorted(causes.values(), key=lambda c: -len(c.members))
