"""Driving a check: the worker process, hypothesis, and the findings per function.

:func:`check_library` is the whole job: validate the path, start a
:class:`Worker` (the library is loaded there, never here), list the
functions and their type schemas, then for each function

1. run hypothesis over argument tuples from its schema (or a sweep of value
   kinds). Every example is one ``check`` request: a checked call (plus a
   second one when it returns an object) and, when that broke nothing,
   ``repeat`` more calls that show leaks. A broken rule fails the example
   with an exception class of its own, so hypothesis shrinks each rule's
   failure separately to a minimal argument tuple;
2. call it from several threads at once with arguments that passed, and
   compare with serial calls.

A crash or a hang is a finding like any other: the worker reports it and
starts a fresh child. After a hang the function's run stops (each further
one would cost the whole timeout).
"""

from __future__ import annotations

import fnmatch
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from tvm_ffi_ref import rules
from tvm_ffi_ref.elf_symbols import read_dynamic_symbols
from . import schema as schemas
from ._worker import read_message, write_message
from .values import format_call

RULES = rules.RULES


class CheckError(Exception):
    """The library cannot be checked at all (bad path, not a TVM FFI library, ...)."""


@dataclass
class Options:
    """What a check does; the command line's options."""

    examples: int = 50
    seed: int = 0
    timeout: float = 5.0
    functions: Sequence[str] = ()
    threads: int = 4
    thread_rounds: int = 6
    repeat: int = 8


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

    def to_json(self) -> Dict[str, Any]:
        return {"rule": self.rule, "meaning": RULES[self.rule], "message": self.message,
                "call": self.call, "args": None if self.args is None else [repr(a)
                                                                           for a in self.args],
                "shrunk": self.shrunk, "api_calls": self.api_calls, "output": self.output}


@dataclass
class FunctionReport:
    """What the check found for one function."""

    name: str
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

    @property
    def passed(self) -> bool:
        return not self.findings and not self.errors

    @property
    def rules_broken(self) -> List[str]:
        return [f.rule for f in self.findings]

    def to_json(self) -> Dict[str, Any]:
        return {"name": self.name, "passed": self.passed, "signature": self.signature,
                "schema": self.schema_source, "examples": self.examples,
                "duration_s": round(self.duration, 3), "rules_broken": self.rules_broken,
                "outcomes": self.outcomes,
                "findings": [f.to_json() for f in self.findings], "notes": self.notes,
                "errors": self.errors}


@dataclass
class LibraryReport:
    """The whole check."""

    library: str
    options: Options
    functions: List[FunctionReport] = field(default_factory=list)
    unselected: List[str] = field(default_factory=list)
    duration: float = 0.0

    @property
    def passed(self) -> bool:
        return all(f.passed for f in self.functions)


# ------------------------------------------------------------------- worker


class Worker:
    """The worker process (:mod:`tvm_ffi_check._worker`) for one library."""

    def __init__(self, library: str, load_timeout: float = 60.0) -> None:
        self.library = library
        self.load_timeout = load_timeout
        self.output = tempfile.TemporaryFile()
        self.process: Optional[subprocess.Popen] = None
        self.start()

    def start(self) -> None:
        env = dict(os.environ)
        package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH"))
                                            if p)
        offset = self.output_offset()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tvm_ffi_check._worker", self.library],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.output, env=env)
        try:
            hello = read_message(self.process.stdout.fileno(),
                                 time.monotonic() + self.load_timeout)
        except TimeoutError:
            self.close()
            raise CheckError(f"{self.library}: loading the library did not finish within "
                             f"{self.load_timeout:.0f} s") from None
        if hello is None:
            status = self.process.wait()
            detail = _exit_detail(status)
            tail = self.output_since(offset)
            self.process = None
            raise CheckError(f"{self.library}: the library crashed the process loading it "
                             f"({detail})" + (f":\n{tail}" if tail else ""))
        if not hello.get("ok"):
            self.close()
            raise CheckError(f"{self.library}: cannot be loaded as a TVM FFI library: "
                             f"{hello.get('error')}")

    def output_offset(self) -> int:
        self.output.seek(0, os.SEEK_END)
        return self.output.tell()

    def output_since(self, offset: int, limit: int = 2000) -> str:
        """What the worker (and the kernel) printed since ``offset``: the last ``limit`` chars."""
        self.output.seek(offset)
        text = self.output.read().decode("utf-8", "replace").strip()
        return text if len(text) <= limit else "..." + text[-limit:]

    def request(self, message: Dict[str, Any], timeout: float) -> Dict[str, Any]:
        """Sends one request and waits for its answer (restarting a dead worker)."""
        if self.process is None or self.process.poll() is not None:
            self.start()
        message = dict(message, timeout=timeout)
        try:
            write_message(self.process.stdin.fileno(), message)
            # The worker enforces ``timeout`` between progress messages; this is a backstop.
            answer = read_message(self.process.stdout.fileno(),
                                  time.monotonic() + timeout * 20 + 60)
        except (TimeoutError, BrokenPipeError):
            answer = None
        if answer is None:
            self.close()
            return {"done": True, "crash": "the worker process died", "phase": "?"}
        return answer

    def close(self) -> None:
        if self.process is not None:
            try:
                if self.process.poll() is None:
                    write_message(self.process.stdin.fileno(), {"op": "exit"})
                    self.process.wait(timeout=5)
            except Exception:  # noqa: BLE001 - it is going away anyway
                pass
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
            for stream in (self.process.stdin, self.process.stdout):
                try:
                    stream.close()
                except OSError:
                    pass
            self.process = None


def _exit_detail(status: int) -> str:
    if status < 0:
        import signal

        try:
            return f"killed by {signal.Signals(-status).name}"
        except ValueError:
            return f"killed by signal {-status}"
    return f"exit status {status}"


# ------------------------------------------------------------ one function


class _RuleBroken(Exception):
    """An example broke a rule (one subclass per rule: hypothesis shrinks each on its own)."""

    def __init__(self, violations, args, answer) -> None:
        super().__init__(violations[0][0])
        self.violations = violations
        self.call_args = args
        self.answer = answer


_BROKEN = {rule: type(f"Broken_{rule.replace('-', '_')}", (_RuleBroken,), {}) for rule in RULES}


class _Stop(BaseException):
    """Ends a function's hypothesis run early (after a hang)."""


def _size(args: Tuple[Any, ...]) -> Tuple[int, int]:
    return (len(args), len(repr(args)))


_PHASES = {"call": "calling it", "repeat": "calling it repeatedly", "threads":
           "calling it from several threads", "start": "starting"}


class FunctionCheck:
    """The check of one function."""

    def __init__(self, worker: Worker, name: str, signature: Optional[schemas.Signature],
                 options: Options, progress: Optional[Callable[[int], None]] = None) -> None:
        self.worker = worker
        self.name = name
        self.signature = signature
        self.options = options
        self.progress = progress
        self.found: Dict[str, Finding] = {}
        self.passing: List[Tuple[Tuple[Any, ...], Any]] = []
        self.examples = 0
        self.errors: List[str] = []
        self.notes: List[str] = []
        self.outcomes: Dict[str, int] = {}
        self.hung = False

    # -- one example --------------------------------------------------------

    def _record(self, rule: str, message: str, args, answer, shrunk: bool = False) -> None:
        finding = Finding(rule, message, args, format_call(self.name, args) if args is not None
                          else "", shrunk, list(answer.get("api_calls") or []),
                          answer.get("output", ""))
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
                                f"{where}; the worker was killed")]
        if "crash" in answer:
            rule = "thread-safety" if phase == "threads" else "crash"
            where = _PHASES.get(phase, phase)
            return [(rule, f"the worker process was {answer['crash']} while {where}" +
                     (" (concurrent calls)" if phase == "threads" else ""))]
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
        answer = self.worker.request({"op": "check", "function": self.name, "args": list(args),
                                      "repeat": self.options.repeat}, self.options.timeout)
        violations = self._violations(answer, "checking a call")
        if "crash" in answer or "timeout" in answer:
            answer["output"] = self.worker.output_since(offset)
        key = _outcome_kind(answer)
        self.outcomes[key] = self.outcomes.get(key, 0) + 1
        return violations, answer

    # -- the run ------------------------------------------------------------

    def run(self) -> FunctionReport:
        started = time.monotonic()
        self.worker.request({"op": "reset"}, self.options.timeout)
        self._hypothesis()
        if not self.hung:
            self._threads()
        report = FunctionReport(self.name)
        if self.signature is not None:
            report.signature = self.signature.describe()
            report.schema_source = "metadata"
        report.examples = self.examples
        order = list(RULES)
        report.findings = sorted(self.found.values(), key=lambda f: order.index(f.rule))
        report.notes = self.notes
        report.errors = self.errors
        report.outcomes = dict(sorted(self.outcomes.items(), key=lambda kv: -kv[1]))
        report.duration = time.monotonic() - started
        return report

    def _hypothesis(self) -> None:
        from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings

        strategy = schemas.arguments_for(self.signature)

        @settings(max_examples=max(1, self.options.examples), database=None, deadline=None,
                  derandomize=False, report_multiple_bugs=True, verbosity=Verbosity.quiet,
                  phases=[Phase.explicit, Phase.generate, Phase.shrink],
                  suppress_health_check=list(HealthCheck))
        @seed(self.options.seed)
        @given(strategy)
        def example(args):
            if self.hung:
                raise _Stop()
            self.examples += 1
            if self.progress is not None:
                self.progress(self.examples)
            args = tuple(args)
            violations, answer = self.check_example(args)
            for rule, message in violations:
                self._record(rule, message, args, answer)
            if any(rule in ("timeout",) for rule, _ in violations):
                self.hung = True
                raise _Stop()
            if violations:
                raise _BROKEN[violations[0][0]](violations, args, answer)
            if answer.get("repeat_done") and len(self.passing) < 64:
                self.passing.append((args, answer.get("outcome")))

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

    def _threads(self) -> None:
        if self.options.threads < 2:
            return
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
        chosen = chosen[:6]
        if not chosen:
            if not self.found:
                self.notes.append("thread check skipped: no call passed")
            return
        offset = self.worker.output_offset()
        answer = self.worker.request({"op": "threads", "function": self.name,
                                      "arglists": [list(a) for a in chosen],
                                      "threads": self.options.threads,
                                      "rounds": self.options.thread_rounds},
                                     self.options.timeout)
        if "crash" in answer or "timeout" in answer:
            answer["output"] = self.worker.output_since(offset)
        violations = self._violations(answer, "checking concurrent calls")
        index = answer.get("mismatch_index")
        args = chosen[index] if index is not None else chosen[0]
        if index is not None:
            violations.append((
                "thread-safety",
                f"{answer['mismatches']} of {answer['calls']} calls made from "
                f"{self.options.threads} threads at once disagreed with serial calls: "
                f"{format_call(self.name, args)} {answer['threaded']} in a thread, but "
                f"{answer['serial']} when called alone"))
        for rule, message in violations:
            self._record(rule, message, args, answer)
        if answer.get("skipped"):
            self.notes.append(f"{answer['skipped']} argument list(s) left out of the thread "
                              "check: serial calls with them disagree with each other")
        for failure in answer.get("failures") or []:
            self.errors.append(f"the thread check failed: {failure}")


def _outcome_kind(answer: Dict[str, Any]) -> str:
    if "crash" in answer:
        return "crashed"
    if "timeout" in answer:
        return "hung"
    outcome = answer.get("outcome") or ("?",)
    if outcome[0] == "result":
        return "returned"
    if outcome[0] == "error":
        return f"raised {outcome[1]}"
    if outcome[0] == "broken-result":
        return "returned a broken result"
    return " ".join(map(str, outcome))


def _rule_failures(exc: BaseException):
    if isinstance(exc, _RuleBroken):
        yield exc
    for inner in getattr(exc, "exceptions", ()) or ():
        yield from _rule_failures(inner)


# ------------------------------------------------------------- the library


def validate_library(path: str) -> List[str]:
    """The library's TVM FFI function names; :class:`CheckError` when it cannot be checked."""
    if not os.path.exists(path):
        raise CheckError(f"{path}: no such file")
    if os.path.isdir(path):
        raise CheckError(f"{path}: is a directory, not a shared library")
    try:
        symbols = read_dynamic_symbols(path)
    except (OSError, ValueError, IndexError, Exception) as exc:  # noqa: BLE001 - any bad file
        reason = str(exc) if isinstance(exc, (OSError, ValueError)) else "unreadable ELF"
        raise CheckError(f"{path}: not a loadable shared library ({reason})") from None
    names = symbols.tvm_ffi_functions()
    if not names:
        raise CheckError(f"{path}: has no TVM FFI symbols: it exports no __tvm_ffi_<name> "
                         "functions")
    return names


def select_functions(names: Sequence[str], patterns: Sequence[str]) -> List[str]:
    """The names matching any of ``patterns`` (globs); all names without patterns."""
    if not patterns:
        return list(names)
    chosen = []
    for pattern in patterns:
        matched = [n for n in names if fnmatch.fnmatchcase(n, pattern)]
        if not matched:
            raise CheckError(f"--functions: no function matches {pattern!r} (the library "
                             f"exports: {', '.join(names)})")
        chosen.extend(n for n in matched if n not in chosen)
    return [n for n in names if n in chosen]


def list_functions(worker: Worker, names: Sequence[str], timeout: float):
    """``{name: entry}`` with metadata text (or an error) per function, and the findings of
    metadata functions that crashed or hung (those functions are then swept)."""
    skip: List[str] = []
    crashes: Dict[str, Finding] = {}
    while True:
        answer = worker.request({"op": "list", "names": list(names), "skip_metadata": skip},
                                timeout)
        phase = answer.get("phase", "")
        if ("crash" in answer or "timeout" in answer) and phase.startswith("metadata:"):
            name = phase.split(":", 1)[1]
            skip.append(name)
            if "crash" in answer:
                crashes[name] = Finding("crash", f"reading __tvm_ffi__metadata_{name}: the "
                                                 f"worker process was {answer['crash']}")
            else:
                crashes[name] = Finding("timeout", f"__tvm_ffi__metadata_{name} did not return "
                                                   f"within {answer['timeout']:g} s")
            continue
        if "functions" not in answer:
            raise CheckError(f"{worker.library}: listing its functions failed: "
                             f"{answer.get('crash') or answer.get('internal_error') or answer}")
        return {entry["name"]: entry for entry in answer["functions"]}, crashes


def check_library(path: str, options: Optional[Options] = None,
                  progress: Optional[Callable[..., None]] = None) -> LibraryReport:
    """Checks every (selected) function of the library at ``path``.

    ``progress(index, total, name, examples_done, examples_total)`` is called
    as the check goes. Raises :class:`CheckError` when the library cannot be
    checked at all.
    """
    options = options or Options()
    started = time.monotonic()
    names = validate_library(path)
    selected = select_functions(names, options.functions)
    report = LibraryReport(os.path.abspath(path), options,
                           unselected=[n for n in names if n not in selected])
    worker = Worker(os.path.abspath(path))
    try:
        entries, crashes = list_functions(worker, selected, max(options.timeout, 10.0))
        for index, name in enumerate(selected):
            entry = entries[name]
            signature, notes = None, []
            if entry.get("metadata"):
                try:
                    signature = schemas.parse_metadata(entry["metadata"])
                except schemas.SchemaError as exc:
                    notes.append(f"its metadata was not used ({exc}); values of every kind "
                                 "were swept instead")
            elif entry.get("error"):
                notes.append(f"reading its metadata failed ({entry['error']}); values of every "
                             "kind were swept instead")
            if progress is not None:
                progress(index, len(selected), name, 0, options.examples)

            def tick(done, index=index, name=name):
                if progress is not None:
                    progress(index, len(selected), name, done, options.examples)

            checker = FunctionCheck(worker, name, signature, options, tick)
            function_report = checker.run()
            function_report.doc = entry.get("doc")
            function_report.notes[:0] = notes
            if name in crashes:
                function_report.findings.insert(0, crashes[name])
            report.functions.append(function_report)
    finally:
        worker.close()
    report.duration = time.monotonic() - started
    return report
