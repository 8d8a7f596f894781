"""The checks that need more than one call: leaks, determinism, threads.

* :func:`repeat_calls` calls again and again with one argument list and
  reports what stays behind (``leak``);
* :func:`consistency` calls each of a few argument lists twice in a row
  (results that differ are ``determinism``), then from several threads at
  once: a result that differs only under threads is ``thread-safety``. A
  mismatch under threads is first checked again serially, so that a function
  whose results differ anyway (reading memory it does not own, say) is never
  sent looking for a race.
"""

from __future__ import annotations

import ctypes
import gc
import threading
from collections import Counter
from typing import TYPE_CHECKING, Any, Dict, List, Sequence, Tuple

from tvm_ffi_common.capi import LIB
from tvm_ffi_ref import rules

from .probe import (
    LIVE,
    OBJECT_BEGIN,
    Packed,
    Violation,
    _Call,
    _describe,
    _result_outcome,
    _type_name,
    clear_raised,
    display,
    error_parts,
    invoke,
    strong_count,
    take_raised,
)

if TYPE_CHECKING:  # the core contract's Function (tvm_ffi_api/function.pyi)
    from tvm_ffi_api.function import Function


def repeat_calls(func: Function, values: Sequence[Any], count: int) -> List[Violation]:
    """Calls ``count`` more times and reports what stays behind (the ``leak`` rule).

    Two things show a leak: objects the reference runtime allocated during
    the calls and never freed (after every result, error and argument is
    released), and result objects that stay referenced by someone other than
    the caller. For the latter the checker keeps its own reference to each
    result until the end: a new object per call, each still referenced from
    elsewhere at the end, or one object whose count grows with every call,
    is a leak (a cache keeps one object, or replaces its entry).
    """
    live_before = set(LIVE)
    arguments: set = set()  # what the calls were given: a kernel may keep those (--leaks)
    probes: List[int] = []
    growth: Dict[int, List[int]] = {}
    violations: List[Violation] = []
    for _ in range(count):
        call = _Call(func, values)
        handle = call.result_object()
        problems = call.result_problems() if handle else []
        if handle and not problems and handle not in call.before:
            LIB.TVMFFIObjectIncRef(handle)  # the checker's probe
            probes.append(handle)
            LIB.TVMFFIObjectDecRef(handle)  # the caller's release
            growth.setdefault(handle, []).append(strong_count(handle) - probes.count(handle))
        elif not problems:  # no result object, or an argument handed back: dies with the call
            problems = call.finish()
        call.settle(handle if problems else None, results_held=True)
        arguments.update(h for h in call.watched if h in LIVE)  # alive: the kernel kept it
        found = problems + call.violations
        if found:  # a rule broken only on a later call: report it, stop repeating
            violations.extend(v for v in found if v not in violations)
            return violations
    distinct = list(growth)
    if count >= 2 and len(distinct) >= max(2, count // 2):
        held = [h for h in distinct if strong_count(h) - probes.count(h) >= 1]
        if len(held) == len(distinct):
            violations.append((
                "leak", f"each of {len(distinct)} calls returned a new "
                        f"{_type_name(ctypes.c_int32.from_address(distinct[0] + 8).value)} that "
                        "still has another reference after the caller released it: results "
                        "are never freed (an extra IncRef, or kept by the kernel)"))
    for handle, series in growth.items():
        if len(series) >= max(2, count // 2) and all(b > a for a, b in zip(series, series[1:])):
            violations.append((
                "leak", f"the kernel returns the same {_describe(handle)} every call and its "
                        f"reference count grows by one each time ({series[0]} -> {series[-1]} "
                        "references besides the caller's): it adds a reference nobody releases"))
    for handle in probes:
        LIB.TVMFFIObjectDecRef(handle)
    left = [address for address in LIVE if address not in live_before | arguments]
    if left:  # Python-side cycles may still hold some: collect only when it matters
        gc.collect()
        left = [address for address in LIVE if address not in live_before | arguments]
    if count >= 2 and len(left) >= max(2, count // 2):
        kinds = Counter(_type_name(LIVE.get(a, -1)) for a in left)
        what = ", ".join(f"{n} {k}" for k, n in kinds.most_common())
        violations.append(("leak", f"{len(left)} objects the runtime allocated during {count} "
                                   f"calls are still alive after everything was released "
                                   f"({what})"))
    return violations


def kept_growth(func: Function, values: Sequence[Any], count: int) -> List[Violation]:
    """``--leaks``: calls ``count`` times with the *same* argument objects; a reference the
    kernel keeps to one of them on every call, so that what it holds grows with the number
    of calls, is a ``leak``.

    One kept reference is how a registry or a cache holds what it is given (allowed); a
    registry that replaces its entry keeps the count flat. Only growth proportional to
    the calls is reported.
    """
    clear_raised()
    packed = Packed(values)
    watched = packed.objects()
    for handle in watched:  # the guard, as for a checked call
        LIB.TVMFFIObjectIncRef(handle)
    before = {h: strong_count(h) for h in watched}
    series: Dict[int, List[int]] = {h: [] for h in watched}
    try:
        for _ in range(count):
            status, result = invoke(func, packed)
            if status != 0 or packed.interrupted:
                clear_raised()
                return []  # it stopped accepting the call: nothing to measure
            if result.type_index >= OBJECT_BEGIN and result.v_ptr and \
                    not rules.result_violations(result):
                LIB.TVMFFIObjectDecRef(result.v_ptr)
            for handle in watched:
                series[handle].append(strong_count(handle) - before[handle])
    finally:
        for handle in watched:
            LIB.TVMFFIObjectDecRef(handle)
        packed.close()
    found: List[Violation] = []
    for handle, kept in series.items():
        if len(kept) >= 2 and kept[-1] >= count and all(b > a for a, b in zip(kept, kept[1:])):
            found.append((
                "leak", f"the kernel keeps one more reference to borrowed argument "
                        f"{_describe(handle)} on every call ({kept[0]} after 1 call, "
                        f"{kept[-1]} after {count}): what it holds grows with the number of "
                        "calls and is never released"))
    return found


def plain_outcome(func: Function, values: Sequence[Any]) -> Any:
    """The canonical outcome of one call (no rule checks; the result released)."""
    clear_raised()
    packed = Packed(values)
    try:
        status, result = invoke(func, packed)
        if packed.interrupted:
            clear_raised()
            return ("interrupted",)
        if status == 0:
            broken = [v.rule for v in rules.result_violations(result)]
            if not broken and result.type_index >= OBJECT_BEGIN:
                live = rules.object_liveness_violation(result.v_ptr)
                broken += [live.rule] if live is not None else []
            if broken:  # never released: it is not a reference we can trust
                return ("broken-result", tuple(broken))
            return _result_outcome(result)
        if status == -1:
            handle = take_raised()
            if handle is None:
                return ("error", "?", "(nothing raised)")
            try:
                return ("error",) + tuple(error_parts(handle))
            finally:
                LIB.TVMFFIObjectDecRef(handle)
        clear_raised()
        return ("status", status)
    finally:
        packed.close()


#: Serial calls made again after a mismatch under threads, before blaming the threads.
CONFIRM_CALLS = 6


def consistency(func: Function, arglists: Sequence[Sequence[Any]], threads: int,
                rounds: int) -> Dict[str, Any]:
    """Determinism (two serial calls per list), then calls from ``threads`` threads at once.

    Every thread, started together, calls the serially consistent lists in
    turn (thread ``t`` starts at list ``t``, so different arguments run side
    by side). A result under threads other than the serial one is confirmed
    serially first: if serial calls now disagree too, it is ``determinism``.
    """
    serial: List[Tuple[int, Sequence[Any], Any]] = []
    answer: Dict[str, Any] = {"violations": [], "calls": 0, "failures": [], "mismatches": 0}
    for original, values in enumerate(arglists):
        first, second = plain_outcome(func, values), plain_outcome(func, values)
        if ("interrupted",) in (first, second):
            continue  # it ran too long to compare
        if first != second:
            answer.setdefault("nondeterministic", (original, display(first), display(second)))
        else:
            serial.append((original, values, first))
    if threads < 2 or not serial:
        return answer
    mismatches = _threaded(func, serial, threads, rounds, answer["failures"])
    answer.update(calls=threads * rounds, mismatches=len(mismatches))
    if mismatches:
        original, expected, got = mismatches[0]
        values = next(v for i, v, _ in serial if i == original)
        for _ in range(CONFIRM_CALLS):
            again = plain_outcome(func, values)
            if again != expected and again != ("interrupted",):
                answer.setdefault("nondeterministic", (original, display(expected),
                                                       display(again)))
                return answer
        answer.update(mismatch_index=original, serial=display(expected), threaded=display(got))
    return answer


def _threaded(func: Function, serial, threads: int, rounds: int, failures: List[str]):
    barrier = threading.Barrier(threads)
    mismatches: List[Tuple[int, Any, Any]] = []
    lock = threading.Lock()

    def worker(t: int) -> None:
        try:
            barrier.wait(timeout=30)
            for k in range(rounds):
                original, values, expected = serial[(t + k) % len(serial)]
                got = plain_outcome(func, values)
                if got != expected and got != ("interrupted",):
                    with lock:
                        mismatches.append((original, expected, got))
        except Exception as exc:  # noqa: BLE001 - a checker failure, reported as such
            with lock:
                failures.append(f"{type(exc).__name__}: {exc}")

    pool = [threading.Thread(target=worker, args=(t,), daemon=True) for t in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    return mismatches
