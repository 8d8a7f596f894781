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
def test_call_program(pool, program):
    assume(not hits_known_divergence(("program", program["init"], program["steps"])))
    (records,) = assert_agree(pool.run("program", [program]), program, "call sequences differ")
    for record in records:  # what was exercised, for --hypothesis-show-statistics
        if len(record) == 3 and isinstance(record[1], list) and record[0] not in ("release",):
            event(f"{record[0]}: {record[1][0]}{' ' + record[1][1] if record[1][0] == 'raises' else ''}")
    if records[-2][1]:
        event("a Python callback was called from C++")
