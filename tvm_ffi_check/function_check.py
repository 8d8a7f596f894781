"""The check of one function: its signature, hypothesis, repeatability, coverage.

1. Without a schema, the signature is *discovered* first (:meth:`FunctionCheck.discover`):
   a call with no arguments (then with a few ``None``) makes a typed function
   name its signature in the TypeError it raises (:mod:`.discover`), or at
   least its argument count.
2. Hypothesis runs over argument tuples from the signature (a sweep of value
   kinds without one). Every example is one ``check`` request: a checked call
   (plus a second one when it returns an object) and, when that broke
   nothing, ``repeat`` more calls that show leaks. A broken rule fails the
   example with an exception class of its own, so hypothesis shrinks each
   rule's failure separately to a minimal argument tuple.
3. A few argument lists that passed are called twice in a row (results must
   agree: ``determinism``) and then from several threads at once
   (``thread-safety``).

Every call's outcome is counted (:func:`outcome_kind`): a function none of
whose calls reached its body is *unverified*, never passed, and the report
says why. A crash or a hang is a finding like any other; a crash in a guard
page next to a tensor is ``memory-safety``. After a hang the function's run
stops (each further one would cost the whole timeout), and after a few calls
interrupted for running long, too.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

from . import discover, schema as schemas
from .guard import signal_name
from .hints import metadata_hint
from .results import RULES, Finding, FunctionReport, Options, minimum_accepted
from .targets import EXPORT, Target
from .values import TensorArg, format_call
from .worker_client import Worker


class _RuleBroken(Exception):
    """An example broke a rule (one subclass per rule: hypothesis shrinks each on its own)."""

    def __init__(self, violations, args, answer) -> None:
        super().__init__(violations[0][0])
        self.violations = violations
        self.call_args = args
        self.answer = answer


_BROKEN = {rule: type(f"Broken_{rule.replace('-', '_')}", (_RuleBroken,), {}) for rule in RULES}


class _Stop(BaseException):
    """Ends a function's hypothesis run early (after a hang, or long calls)."""


def _size(args: Tuple[Any, ...]) -> Tuple[int, int]:
    return (len(args), len(repr(args)))


_PHASES = {"call": "calling it", "repeat": "calling it repeatedly", "threads":
           "calling it from several threads", "start": "starting"}
#: More hypothesis runs (other seeds) for a function too few of whose calls were accepted.
TOP_UP_ROUNDS = 2
#: Examples interrupted for running long after which a function's run stops.
INTERRUPTED_LIMIT = 3
#: Kinds tried for every argument of a function whose arity alone is known: (what, value, schema).
_GUESSES = (
    ("int(s)", 1, {"type": "int"}),
    ("float(s)", 0.5, {"type": "float"}),
    ("str(s)", "text", {"type": "ffi.String"}),
    ("float32 tensor(s)", TensorArg("float32", (4,)), {"type": "DLTensor*"}),
    ("list(s) of ints", [1, 2], {"type": "ffi.Array", "args": [{"type": "int"}]}),
)


def outcome_kind(answer: Dict[str, Any]) -> str:
    """The key an answer is counted under: ``returned``, ``raised ValueError``,
    ``refused TypeError`` (turned away by the argument checks), ``interrupted``..."""
    if "unmade" in answer:
        return "argument not made"
    if "crash" in answer:
        return "crashed"
    if "timeout" in answer:
        return "hung"
    outcome = answer.get("outcome") or ("?",)
    if outcome[0] == "result":
        return "returned"
    if outcome[0] == "interrupted":
        return "interrupted"
    if outcome[0] == "error":
        verb = "refused" if discover.refused(outcome[1], outcome[2]) else "raised"
        return f"{verb} {outcome[1]}"
    if outcome[0] == "broken-result":
        return "returned a broken result"
    return " ".join(map(str, outcome))


class FunctionCheck:
    """The check of one function."""

    def __init__(self, worker: Worker, target: Target, signature: Optional[schemas.Signature],
                 options: Options, progress: Optional[Callable[[int], None]] = None,
                 context: Optional[schemas.Context] = None) -> None:
        self.worker = worker
        self.target = target
        self.name = target.name
        self.signature = signature
        self.options = options
        self.progress = progress
        self.context = context or schemas.Context()
        self.found: Dict[str, Finding] = {}
        self.passing: List[Tuple[Tuple[Any, ...], Any]] = []
        self.examples = 0
        self.errors: List[str] = []
        self.notes: List[str] = []
        self.outcomes: Dict[str, int] = {}
        self.first_refusal: Optional[str] = None
        self.first_unmade: Optional[str] = None
        self.hung = False
        self.interrupted = 0
        #: Borrowed arguments the kernel kept references to: type name -> most kept by a call.
        self.kept: Dict[str, int] = {}
        #: The distinct argument lists tried (up to 64): all there are, for a small space.
        self.distinct: Set[str] = set()
        #: Library types its parameters need that nothing could make (set by the runner).
        self.missing: Set[str] = set()

    def request(self, op: str, **fields) -> Dict[str, Any]:
        return self.worker.request(dict(fields, op=op, target=self.target.ref()),
                                   self.options.timeout)

    # -- the signature, when there is no schema ----------------------------

    def discover(self) -> None:
        """Reads the signature from the errors of calls with too few (or too many) arguments.

        A typed function names its whole signature; a hand-written one often
        only how many arguments it takes, and then calls with that many values
        of one kind each (:data:`_GUESSES`) find a kind it accepts.
        """
        queue: List[Tuple[Any, ...]] = [()]
        arity: Optional[int] = None
        for _ in range(8):
            if not queue:
                break
            args = queue.pop(0)
            outcome = self._probe(args)
            if outcome is None:
                break  # it crashed or hung: hypothesis will see that
            if outcome[0] != "error":
                # Accepted. A typed function of no arguments names itself when given one.
                queue = [(None,)] if args == () else []
                continue
            found = discover.signature_from_message(outcome[2])
            if found is not None:
                self.signature = found
                self.notes.append(f"no type schema: its signature was read from the "
                                  f"{outcome[1]} it raises: `{found.text}`")
                return
            if arity is None:
                arity = discover.arity_from_message(outcome[2])
                if arity is not None and arity != len(args):
                    queue = [(None,) * arity]  # that many arguments may make it name the types
                    continue
            if arity is not None:
                break
            if args == ():
                queue = [(None,) * k for k in range(1, 5)]
        if arity is not None:
            self._guess_kinds(arity)

    def _probe(self, args: Tuple[Any, ...]):
        return self.request("probe", args=list(args)).get("outcome")

    def _guess_kinds(self, arity: int) -> None:
        for what, value, schema in _GUESSES if arity else ():
            outcome = self._probe((value,) * arity)
            if outcome is None:
                break
            if outcome[0] != "error" or not discover.refused(outcome[1], outcome[2]):
                guessed = dict(schema, guessed=True)  # mostly this kind, still every kind
                self.signature = schemas.Signature([guessed] * arity, None, source="arity")
                self.notes.append(f"no type schema: its errors say it takes {arity} "
                                  f"argument(s), and a call with {arity} {what} was accepted")
                return
        self.signature = schemas.Signature([None] * arity, None, source="arity")
        self.notes.append(f"no type schema: its errors say it takes {arity} argument(s); "
                          "values of every kind were swept for each")

    # -- one example --------------------------------------------------------

    def _declared(self, args) -> List[str]:
        """The declared type of each argument of a call (``?`` where none is known)."""
        params = self.signature.params if self.signature is not None else []
        return [schemas.describe_type(params[i]) if i < len(params) and params[i] else "?"
                for i in range(len(args or ()))]

    def _record(self, rule: str, message: str, args, answer, shrunk: bool = False) -> None:
        finding = Finding(rule, message, args, format_call(self.name, args) if args is not None
                          else "", shrunk, list(answer.get("api_calls") or []),
                          answer.get("output", ""), fault_kind(answer),
                          [tuple(f) for f in answer.get("forms") or ()],
                          self._declared(args))
        current = self.found.get(rule)
        if current is None or shrunk or (not current.shrunk and args is not None
                                         and current.args is not None
                                         and _size(args) < _size(current.args)):
            self.found[rule] = finding

    def _violations(self, answer: Dict[str, Any], during: str) -> List[Tuple[str, str]]:
        """The violations an answer reports, a crash or hang included."""
        phase = answer.get("phase", "")
        if "timeout" in answer:
            if phase == "threads":
                return [("thread-safety", f"concurrent calls stopped making progress (no call "
                                          f"returned for {answer['timeout']:g} s: a deadlock?); "
                                          "the worker was killed")]
            where = "" if phase == "call" else f" ({_PHASES.get(phase, phase)})"
            return [("timeout", f"the call did not return within {answer['timeout']:g} s"
                                f"{where} and never stopped for TVMFFIEnvCheckSignals; the "
                                "worker was killed")]
        if "crash" in answer:
            if answer.get("out_of_bounds"):
                return [("memory-safety", answer["out_of_bounds"])]
            rule = "thread-safety" if phase == "threads" else "crash"
            where = _PHASES.get(phase, phase)
            fault = answer.get("fault")
            at = ""
            if fault:
                at = (f" ({signal_name(fault['signal'])} on a {fault['access']} at address "
                      f"0x{fault['address']:x}" + (": a NULL pointer" if fault["address"] < 4096
                                                   else "") + ")")
            return [(rule, f"the worker process was {answer['crash']} while {where}{at}" +
                     (" (concurrent calls)" if phase == "threads" else "") +
                     describe_forms(answer.get("forms")))]
        if "internal_error" in answer:
            error = (f"the checker failed while {during}: "
                     f"{answer['internal_error'].strip().splitlines()[-1]}")
            if error not in self.errors:
                self.errors.append(error)
            return []
        return [tuple(v) for v in answer.get("violations", [])]

    def check_example(self, args: Tuple[Any, ...]) -> Tuple[List[Tuple[str, str]], Dict]:
        """Runs one example in the worker: its violations and the worker's answer."""
        offset = self.worker.output_offset()
        returns = self.signature.returns if self.signature is not None else None
        answer = self.request("check", args=list(args), repeat=self.options.repeat,
                              returns=returns, leaks=self.options.leaks)
        if answer.get("phase") == "make" and ("crash" in answer or "timeout" in answer):
            # The library's own constructor (or the call a pooled object came from) died
            # making an argument: that is its finding, checked on its own, not this one's.
            how = answer.get("crash") or f"stopped after {answer.get('timeout')} s"
            answer = {"unmade": f"making an argument of {format_call(self.name, args)} "
                                f"in the library ended the process ({how})"}
        violations = self._violations(answer, "checking a call")
        for kind, count in answer.get("kept") or ():
            self.kept[kind] = max(self.kept.get(kind, 0), count)
        if "crash" in answer or "timeout" in answer:
            answer["output"] = self.worker.output_since(offset)
        key = outcome_kind(answer)
        self.outcomes[key] = self.outcomes.get(key, 0) + 1
        if key.startswith("refused") and self.first_refusal is None:
            outcome = answer["outcome"]
            self.first_refusal = f"{outcome[1]}: {outcome[2]}".strip()
        elif key == "argument not made" and self.first_unmade is None:
            self.first_unmade = answer["unmade"]
        elif key == "interrupted":
            self.interrupted += 1
        return violations, answer

    # -- the run ------------------------------------------------------------

    def run(self) -> FunctionReport:
        started = time.monotonic()
        self.worker.request({"op": "reset"}, self.options.timeout)
        if self.signature is None:
            self.discover()
        self._explore()
        self._hypothesis()
        for extra in range(1, TOP_UP_ROUNDS + 1):  # too few calls reached the body: try more
            if self.found or self.hung or self._accepted() >= self._required():
                break
            self._hypothesis(self.options.seed + extra)
        if not self.hung:
            self._repeatability()
        if self.kept:
            kept = ", ".join(f"{kind} ({count} reference(s) in one call)"
                             for kind, count in sorted(self.kept.items()))
            self.notes.append(
                f"it keeps references to borrowed arguments it is given: {kept}. The ABI allows "
                "that (a registry or a cache stores what it is given); "
                + (("--leaks found no growth with the number of calls" if "leak" not in
                    self.found else "--leaks found it growing with the number of calls (the "
                    "leak above)") if self.options.leaks else "--leaks calls it repeatedly with the same arguments and reports "
                        "growth with the number of calls as a leak"))
        report = FunctionReport(self.name, kind=self.target.kind)
        if self.signature is not None:
            report.signature = self.signature.describe()
            report.schema_source = self.signature.source
        report.examples = self.examples
        order = list(RULES)
        report.findings = sorted(self.found.values(), key=lambda f: order.index(f.rule))
        report.notes = self.notes
        report.errors = self.errors
        report.outcomes = dict(sorted(self.outcomes.items(), key=lambda kv: -kv[1]))
        self._coverage(report)
        report.duration = time.monotonic() - started
        return report

    def _coverage(self, report: FunctionReport) -> None:
        counts = self.outcomes
        report.tried = sum(n for k, n in counts.items() if k != "argument not made")
        report.refused = sum(n for k, n in counts.items() if k.startswith("refused"))
        report.raised = sum(n for k, n in counts.items() if k.startswith("raised"))
        report.accepted = report.tried - report.refused
        # A pass needs a stated number of accepted calls, or every distinct call there is
        # (a function of no parameters has one).
        report.required = self._required()
        if report.findings or report.errors or report.accepted >= report.required:
            return
        if report.accepted:
            report.unverified = (
                f"only {report.accepted} of {report.tried} calls reached its body; a pass needs "
                f"{report.required} (a fifth of --examples)" + self._refusal_hint(report))
            return
        if not report.tried:
            report.unverified = (f"no call could be made: {self.first_unmade}"
                                 if self.first_unmade else "no call was made")
            report.unverified += self._refusal_hint(report) if self.missing else ""
            return
        reason = (f"no call reached its body: all {report.tried} calls were refused "
                  f"(the first with {self.first_refusal})")
        report.unverified = reason + self._refusal_hint(report)

    def _refusal_hint(self, report: FunctionReport) -> str:
        if self.missing:
            return (f"; no object of type {', '.join(sorted(self.missing))} could be made: "
                    "the type has no constructor the checker can call (__ffi_init__, a static "
                    "method returning it, or creatable fields) and no function it called "
                    "returned one")
        if self.first_refusal is None:
            return ""
        if report.schema_source in ("metadata", "registry"):
            return ("; they were made from its type schema, so the types it names may be ones "
                    "the checker cannot make")
        if self.target.kind == EXPORT:
            return "; " + metadata_hint(self.worker.language)
        return ("; it was registered without a type schema (register a typed function so that "
                "its schema is known)")

    def _one(self, args: Tuple[Any, ...]):
        """One example: checked, recorded, and its result offered to the pool."""
        if self.hung or self.interrupted >= INTERRUPTED_LIMIT:
            raise _Stop()
        self.examples += 1
        if self.progress is not None:
            self.progress(self.examples)
        if len(self.distinct) < 64:
            self.distinct.add(repr(args))
        violations, answer = self.check_example(args)
        for rule, message in violations:
            self._record(rule, message, args, answer)
        if any(rule in ("timeout",) for rule, _ in violations):
            self.hung = True
            raise _Stop()
        if not violations and answer.get("repeat_done"):
            if len(self.passing) < 64:
                self.passing.append((args, answer.get("outcome")))
            if answer.get("result_type") and self.context.pool is not None:
                self.context.pool.offer(answer["result_type"], self.target.ref(), self.name,
                                        args)
        return violations, answer

    def _explore(self) -> None:
        """Before hypothesis: the simplest call with each type of pooled object in the
        parameters that take objects without checking their type (``ffi.Object``), so that
        a constructor wanting one of the library's objects there meets it (hypothesis
        stops exploring at its first failure, and would rarely pick the right one)."""
        pool = self.context.pool
        if self.signature is None or pool is None:
            return
        from .pool import explore_calls

        try:
            for args in explore_calls(self.signature.params, pool):
                self._one(args)
        except _Stop:
            pass

    def _accepted(self) -> int:
        return sum(n for k, n in self.outcomes.items()
                   if k != "argument not made" and not k.startswith("refused"))

    def _required(self) -> int:
        return min(minimum_accepted(self.options.examples), max(1, len(self.distinct)))

    def _hypothesis(self, seed_value: Optional[int] = None) -> None:
        from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings

        strategy = schemas.arguments_for(self.signature, self.context)

        @settings(max_examples=max(1, self.options.examples), database=None, deadline=None,
                  derandomize=False, report_multiple_bugs=True, verbosity=Verbosity.quiet,
                  phases=[Phase.explicit, Phase.generate, Phase.shrink],
                  suppress_health_check=list(HealthCheck))
        @seed(self.options.seed if seed_value is None else seed_value)
        @given(strategy)
        def example(args):
            args = tuple(args)
            violations, answer = self._one(args)
            if violations:
                raise _BROKEN[violations[0][0]](violations, args, answer)

        try:
            example()
        except _Stop:
            pass
        except BaseException as exc:  # noqa: BLE001 - hypothesis' report of what broke
            if isinstance(exc, KeyboardInterrupt):
                raise
            broken = list(_rule_failures(exc))
            for failure in broken:
                for rule, message in failure.violations[:1]:
                    self._record(rule, message, failure.call_args, failure.answer, shrunk=True)
            if not broken:
                self.notes.append(f"hypothesis stopped: {type(exc).__name__}: {exc}")
        if self.interrupted and not any("soft time limit" in n for n in self.notes):
            self.notes.append(f"{self.interrupted} call(s) ran past the soft time limit and "
                              "stopped when TVMFFIEnvCheckSignals reported an interrupt, as "
                              "they should" + ("; the run stopped there"
                                               if self.interrupted >= INTERRUPTED_LIMIT else ""))

    def _chosen(self) -> List[Tuple[Any, ...]]:
        chosen: List[Tuple[Any, ...]] = []
        seen = set()
        for args, outcome in self.passing:  # different outcomes first: races show as mix-ups
            key = repr(outcome)
            if key not in seen:
                seen.add(key)
                chosen.append(args)
        for args, _ in self.passing:
            if len(chosen) >= 6:
                break
            if args not in chosen:
                chosen.append(args)
        return chosen[:6]

    def _repeatability(self) -> None:
        chosen = self._chosen()
        if not chosen:
            if not self.found and self.options.threads >= 2:
                self.notes.append("thread check skipped: no call passed")
            return
        offset = self.worker.output_offset()
        answer = self.request("threads", arglists=[list(a) for a in chosen],
                              threads=self.options.threads, rounds=self.options.thread_rounds)
        if "crash" in answer or "timeout" in answer:
            answer["output"] = self.worker.output_since(offset)
        violations = self._violations(answer, "checking repeated and concurrent calls")
        index = answer.get("mismatch_index")
        args = chosen[index] if index is not None else chosen[0]
        if answer.get("nondeterministic"):
            index, first, second = answer["nondeterministic"]
            args = chosen[index]
            violations.append((
                "determinism",
                f"two identical calls one after the other gave different results: "
                f"{format_call(self.name, args)} {first}, then {second}. A result that depends "
                "on more than the arguments comes from memory the function does not own "
                "(uninitialized or out of bounds), a global, or the clock"))
        elif index is not None:
            violations.append((
                "thread-safety",
                f"{answer['mismatches']} of {answer['calls']} calls made from "
                f"{self.options.threads} threads at once disagreed with serial calls: "
                f"{format_call(self.name, args)} {answer['threaded']} in a thread, but "
                f"{answer['serial']} whenever called alone"))
        for rule, message in violations:
            self._record(rule, message, args, answer)
        for failure in answer.get("failures") or []:
            self.errors.append(f"the thread check failed: {failure}")


def _rule_failures(exc: BaseException):
    if isinstance(exc, _RuleBroken):
        yield exc
    for inner in getattr(exc, "exceptions", ()) or ():
        yield from _rule_failures(inner)


def fault_kind(answer: Dict[str, Any]) -> str:
    """What killed a call, for grouping findings: ``SIGSEGV read at 0x18``, ``hung``, ``""``."""
    fault = answer.get("fault")
    if fault:
        return f"{signal_name(fault['signal'])} {fault['access']} at 0x{fault['address']:x}"
    if "crash" in answer:
        return answer["crash"]
    if "timeout" in answer:
        return "hung"
    return ""


def describe_forms(forms) -> str:
    """``; the arguments as the kernel got them: args[0] ffi.SmallStr (type index 11,
    inline)...``: what each argument was at the ABI level (the key to many crashes)."""
    if not forms:
        return ""
    parts = [f"args[{i}] {name} (type index {index}, {form})"
             for i, (index, name, form) in enumerate(forms)]
    return "; the arguments as the kernel got them: " + ", ".join(parts)
