"""What a check found: per finding, per function, per library (and its options)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from tvm_ffi_ref import rules

from .sandbox import Sandbox

RULES = rules.RULES

#: The page that explains each rule, one section per rule (``### <rule>``).
DEBUGGING_PAGE = "spec/17-debugging.md"


def rule_link(rule: str) -> str:
    """``spec/17-debugging.md#crash``: the section that explains ``rule``."""
    return f"{DEBUGGING_PAGE}#{rule}"


class CheckError(Exception):
    """The library cannot be checked at all (bad path, not a TVM FFI library, ...)."""


@dataclass
class Options:
    """What a check does; the command line's options.

    ``globals``: also check the global functions and the methods of the object
    types the library registers when it loads; ``skip``: glob patterns of
    functions never to call; ``strict``: an unverified function fails the run
    (the default; ``--allow-unverified`` turns it off); ``leaks``: call each
    function repeatedly with the same arguments and report references it keeps
    to them that grow with the number of calls; ``sandbox``: the worker's limits
    (the defaults when None).
    """

    examples: int = 50
    seed: int = 0
    timeout: float = 5.0
    functions: Sequence[str] = ()
    threads: int = 4
    thread_rounds: int = 6
    repeat: int = 8
    globals: bool = True
    skip: Sequence[str] = ()
    strict: bool = True
    leaks: bool = False
    sandbox: Optional[Sandbox] = None


#: A function passes only after this fraction of ``--examples`` calls reached its body.
ACCEPTED_FRACTION = 5


def minimum_accepted(examples: int) -> int:
    """Accepted calls a pass needs: a fifth of ``--examples`` (10 of the default 50), at
    least 1."""
    return max(1, -(-examples // ACCEPTED_FRACTION))


@dataclass
class Finding:
    """One broken rule of one function."""

    rule: str
    message: str
    args: Optional[Tuple[Any, ...]] = None
    call: str = ""
    shrunk: bool = False
    api_calls: List[str] = field(default_factory=list)
    output: str = ""
    #: What killed the call (``SIGSEGV read at 0x18``), when something did.
    fault: str = ""
    #: Each argument's ABI form, ``(type index, type name, inline|pointer|object)``.
    forms: List[Tuple[int, str, str]] = field(default_factory=list)
    #: Each argument's declared type (``?`` where the signature names none).
    declared: List[str] = field(default_factory=list)

    @property
    def link(self) -> str:
        """Where the rule is explained (its section of the debugging page)."""
        return rule_link(self.rule)

    def to_json(self) -> Dict[str, Any]:
        return {"rule": self.rule, "meaning": RULES[self.rule], "message": self.message,
                "call": self.call, "args": None if self.args is None else [repr(a)
                                                                           for a in self.args],
                "shrunk": self.shrunk, "api_calls": self.api_calls, "output": self.output,
                "fault": self.fault, "forms": [list(f) for f in self.forms],
                "declared": self.declared, "link": self.link}


@dataclass
class FunctionReport:
    """What the check found for one function.

    ``kind`` is where it comes from (``export``, ``global``, ``method``);
    ``schema_source`` where its signature does (``metadata``, ``registry``,
    ``error text``, ``arity``, ``sweep``). Of the ``tried`` calls,
    ``accepted`` reached the function's body (they returned, raised from the
    body, or were interrupted), ``refused`` were turned away by its argument
    checks, and ``raised`` counts the accepted ones that raised. A function no
    call reached is ``unverified`` (the reason says why).
    """

    name: str
    kind: str = "export"
    signature: Optional[str] = None
    schema_source: str = "sweep"
    doc: Optional[str] = None
    examples: int = 0
    duration: float = 0.0
    findings: List[Finding] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)
    errors: List[str] = field(default_factory=list)
    #: How the examples' calls ended: "returned", "raised <kind>", ...
    outcomes: Dict[str, int] = field(default_factory=dict)
    tried: int = 0
    accepted: int = 0
    raised: int = 0
    refused: int = 0
    #: Accepted calls a pass needs (:func:`minimum_accepted`, or fewer when fewer distinct
    #: calls exist).
    required: int = 1
    unverified: Optional[str] = None

    @property
    def passed(self) -> bool:
        """No broken rule and no checker failure (an unverified function passes, unless strict)."""
        return not self.findings and not self.errors

    @property
    def status(self) -> str:
        """``pass``, ``fail`` or ``unverified``."""
        if not self.passed:
            return "fail"
        return "unverified" if self.unverified else "pass"

    @property
    def rules_broken(self) -> List[str]:
        return [f.rule for f in self.findings]

    def to_json(self) -> Dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "status": self.status,
                "passed": self.passed, "signature": self.signature,
                "schema": self.schema_source, "examples": self.examples,
                "tried": self.tried, "accepted": self.accepted, "raised": self.raised,
                "refused": self.refused, "required": self.required,
                "unverified": self.unverified,
                "duration_s": round(self.duration, 3), "rules_broken": self.rules_broken,
                "outcomes": self.outcomes,
                "findings": [f.to_json() for f in self.findings], "notes": self.notes,
                "errors": self.errors}


@dataclass
class LibraryReport:
    """The whole check. ``skipped``: (name, why) of functions found but never called."""

    library: str
    options: Options
    functions: List[FunctionReport] = field(default_factory=list)
    unselected: List[str] = field(default_factory=list)
    skipped: List[Tuple[str, str]] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)
    duration: float = 0.0
    #: The worker's limits that applied, one phrase each (:mod:`.sandbox`).
    sandbox: List[str] = field(default_factory=list)
    #: The library's language, ``"C"`` or ``"C++"`` (:func:`.hints.language_of`), when known.
    language: Optional[str] = None

    @property
    def unverified(self) -> List[FunctionReport]:
        return [f for f in self.functions if f.status == "unverified"]

    @property
    def broken(self) -> bool:
        """A function broke a rule (or the checker failed on one)."""
        return not all(f.passed for f in self.functions)

    @property
    def passed(self) -> bool:
        """Every function passed, and every one was reached unless unverified ones are allowed."""
        return not self.broken and not (self.options.strict and self.unverified)

    @property
    def reached(self) -> List[FunctionReport]:
        """The functions some call reached (a finding counts as reaching it)."""
        return [f for f in self.functions if f.accepted or f.findings or f.errors]

    def counts(self) -> Dict[str, int]:
        """How many functions passed, failed, were unverified and were skipped."""
        statuses = [f.status for f in self.functions]
        return {"functions": len(self.functions), "passed": statuses.count("pass"),
                "failed": statuses.count("fail"), "unverified": statuses.count("unverified"),
                "skipped": len(self.skipped)}
