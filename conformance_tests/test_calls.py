"""Calls: generated call sequences into a C++ kernel library and into Python callbacks.

A program starts with a few values in *registers*, then runs steps: calls
into ``calls.cc`` (typed functions, so upstream's inline argument
conversion and its error messages run; callbacks into Python that return,
raise, record what they received or call back into the kernel; C++ holding
references across calls), drops of registers, and reference-count probes.
Each call's result (normalized) or raised exception (class and first line
of the message) becomes a record together with the strong reference count
of every object the program still holds, so leaks and early frees show up
as differences. What the callbacks received is compared too. All of it
must equal upstream's record.
"""

from __future__ import annotations

from hypothesis import assume, event, example, given

from . import strategies as S
from .compare import assert_agree
from .known import hits_known_divergence
from .profiles import conformance
from .raising_programs import raising_programs

#: Seed 1's program: a callback called with a Tensor the program holds re-enters the kernel
#: with one argument too many; the TypeError crossed back out while the callback's frame,
#: kept by the traceback in a cycle, still held the Tensor (a count of 2 where upstream has 1).
SEED_1_PROGRAM = {"init": [],
                  "steps": [("call", "tensor_info", [("ndarray", "bool", [], [], 0)]),
                            ("call", "call", [("callable", ("reenter", "pair", ("reg", 0))),
                                              ("list", [("int", 0), ("reg", 0)])])]}


def _run_and_compare(pool, program, what):
    """Every worker's records of ``program``, which must equal upstream's."""
    assume(not hits_known_divergence(("program", program["init"], program["steps"])))
    (records,) = assert_agree(pool.run("program", [program]), program, what)
    return records


@conformance(examples=400)
@given(S.programs)
@example({"init": [("List", [("int", 1)])],
          "steps": [("call", "hold", [("reg", 0)]), ("counts",),
                    ("call", "call", [("callable", ("record", 1)), ("list", [("reg", 0), ("str", "abcdefgh")])]),
                    ("call", "raise_error", [("str", "KeyError"), ("str", "missing")]),
                    ("call", "add_int", [("str", "x"), ("int", 1)])]})
# Objects crossing both ways through callbacks and held afterwards: a callback hands C++
# back an object the program holds (alone, then inside a list), C++ keeps one, a callback
# gets one as its argument and returns it; every count is read after every step.
@example({"init": [("List", [("int", 1)]), ("Array", [("str", "x" * 9)]), ("Map", [])],
          "steps": [("call", "call", [("callable", ("return", ("reg", 0))), ("list", [])]),
                    ("call", "call", [("callable", ("return", ("list", [("reg", 1), ("reg", 0)]))),
                                      ("list", [("reg", 2)])]),
                    ("call", "hold", [("reg", 1)]),
                    ("call", "call_twice", [("callable", ("identity",)), ("reg", 2)]),
                    ("call", "call", [("callable", ("reenter", "hold", ("reg", 0))), ("list", [])]),
                    ("drop", 0), ("counts",), ("call", "held", [("int", -1)]), ("drop", 1)]})
@example(SEED_1_PROGRAM)
def test_call_program(pool, program):
    records = _run_and_compare(pool, program, "call sequences differ")
    for record in records:  # what was exercised, for --hypothesis-show-statistics
        if len(record) == 3 and isinstance(record[1], list) and record[0] not in ("release",):
            event(f"{record[0]}: {record[1][0]}{' ' + record[1][1] if record[1][0] == 'raises' else ''}")
    if records[-2][1]:
        event("a Python callback was called from C++")


@conformance(examples=60)
@given(raising_programs)
@example(SEED_1_PROGRAM)
# Every kind held, passed down four levels (call, call_twice, call_each, call) to a callback
# that re-enters with one argument too many; then the same caught two levels up.
@example({"init": [("tensor", "float32", [2], [], 1), ("List", [("int", 1)]), ("Array", [("int", 2)]),
                   ("Map", [(("str", "a"), ("int", 1))]), ("Dict", [(("str", "k"), ("int", 2))]),
                   ("pyobject", ("int", 3)), ("converted", ("str", "a String object"))],
          "steps": [("call", "call", [
                        ("callable", ("nest", "call_twice", [
                            ("callable", ("nest", "call_each", [
                                ("list", [("callable", ("identity",)), ("callable", ("nest", "call", [
                                    ("callable", ("nest", "pair", [("args",), ("reg", 4), ("reg", 5)])),
                                    ("list", [("arg", 0), ("reg", 0), ("reg", 6)])]))]),
                                ("arg", 0)])),
                            ("reg", 1)])),
                        ("list", [("reg", 0), ("reg", 1), ("reg", 2), ("reg", 3)])]),
                    ("call", "call", [
                        ("callable", ("catch", "call", [
                            ("callable", ("nest", "call", [
                                ("callable", ("raise", "ValueError", "deep")),
                                ("list", [("args",), ("reg", 5)])])),
                            ("list", [("arg", 1), ("reg", 2)])])),
                        ("list", [("reg", 5), ("reg", 0)])]),
                    ("drop", 0)]})
def test_errors_through_nested_callbacks_release_what_they_held(pool, program):
    """An error raised under nested callbacks leaves every held object's strong count where
    upstream leaves it, read right after the call (no collection in between)."""
    records = _run_and_compare(pool, program, "counts after an error through callbacks differ")
    for record in records[1:-2]:  # what was exercised, for --hypothesis-show-statistics
        if len(record) == 3 and isinstance(record[1], list):
            event(f"{record[0]}: {record[1][0]}{' ' + record[1][1] if record[1][0] == 'raises' else ''}")
