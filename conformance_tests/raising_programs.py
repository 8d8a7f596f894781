"""Call programs in which an error is raised at the bottom of nested callbacks.

Each program holds objects of every kind a user hands a kernel (a Tensor, a
List, an Array, a Map, a Dict, a ``@py_class`` object, a String) and makes a
few calls, each a chain of 1 to 4 Python callbacks nested through ``calls.cc``
(``call``, ``call_twice``, ``call_each``): every level passes on what it
received and some of the held objects, and the bottom level fails: a Python
exception, an error the kernel raises, a call with one argument too many or an
object a typed argument refuses. The error travels out through every crossing
(or is caught at one level, which then returns). The programs are those of
``strategies.programs``, run by the same worker code, so the strong count of
every held object is read right after each call, with no collection between
(``child_programs.run_program``), and must equal upstream's: an error that
keeps the arguments of a callback alive past the call shows as a count too many.
"""

from __future__ import annotations

from hypothesis import strategies as st

from .strategies import EXCEPTION_NAMES, messages, ndarray_recipes, registers

_small_ints = st.lists(st.integers(-5, 5).map(lambda v: ("int", v)), max_size=3)
_keys = st.sampled_from(["a", "key", "a key longer than eight bytes"]).map(lambda k: ("str", k))

#: One held object of each kind (String: a str made a String object by ``api.convert``).
held_objects = st.one_of(
    ndarray_recipes(tag="tensor", max_dims=2),
    _small_ints.map(lambda xs: ("List", xs)),
    _small_ints.map(lambda xs: ("Array", xs)),
    st.lists(st.tuples(_keys, st.integers(0, 9).map(lambda v: ("int", v))), max_size=3).map(
        lambda kv: ("Map", kv)),
    st.lists(st.tuples(_keys, st.integers(0, 9).map(lambda v: ("int", v))), max_size=3).map(
        lambda kv: ("Dict", kv)),
    st.one_of(st.integers(0, 9).map(lambda v: ("int", v)), _small_ints.map(
        lambda xs: ("List", xs))).map(lambda v: ("pyobject", v)),
    st.text(min_size=8, max_size=20).map(lambda s: ("converted", ("str", s))),
)

#: What a callback passes on: one of its arguments, all of them, or a held object.
_passed = st.one_of(st.integers(0, 3).map(lambda i: ("arg", i)), st.just(("args",)), registers)

#: The bottom of a chain: a callback that fails.
_failures = st.one_of(
    st.builds(lambda cls, msg: ("raise", cls, msg), st.sampled_from(EXCEPTION_NAMES), messages),
    st.builds(lambda kind, msg: ("nest", "raise_error", [("str", kind), ("str", msg)]),
              st.sampled_from(EXCEPTION_NAMES + ["CustomKind"]), messages),
    # one argument too many: upstream's typed wrapper refuses the call (seed 1's program)
    st.builds(lambda a, b, c: ("nest", "pair", [a, b, c]), _passed, _passed, _passed),
    # an object where an int is wanted: the argument conversion refuses it
    st.builds(lambda a: ("nest", "add_int", [a, ("int", 1)]), _passed),
)


def _level(inner, how: str, passed):
    """A callback that calls into the kernel, which calls ``inner`` (a behaviour)."""
    callee = ("callable", inner)
    if how == "call":
        return ("call", [callee, ("list", passed)])
    if how == "call_twice":
        return ("call_twice", [callee, passed[0] if passed else ("none",)])
    return ("call_each", [("list", [("callable", ("identity",)), callee]),
                          passed[0] if passed else ("none",)])


@st.composite
def _chains(draw):
    """A callback behaviour: ``depth`` levels of nesting above a failing one; one level
    may catch what comes up from below and return."""
    behaviour = draw(_failures)
    depth = draw(st.integers(0, 3))
    catching = draw(st.integers(-1, depth - 1)) if depth else -1
    for level in range(depth):
        how = draw(st.sampled_from(["call", "call_twice", "call_each"]))
        passed = draw(st.lists(_passed, min_size=1, max_size=3))
        function, args = _level(behaviour, how, passed)
        behaviour = ("catch" if level == catching else "nest", function, args)
    return ("callable", behaviour)


def _outer_call(chain, passed, how):
    function, args = _level(chain[1], how, passed)
    return ("call", function, args)


_raising_calls = st.builds(_outer_call, _chains(), st.lists(registers, min_size=1, max_size=3),
                           st.sampled_from(["call", "call_twice", "call_each"]))

_steps = st.one_of(_raising_calls, _raising_calls, _raising_calls,
                   st.tuples(st.just("call"), st.just("hold"), st.tuples(registers).map(list)),
                   st.integers(0, 7).map(lambda i: ("drop", i)))

raising_programs = st.fixed_dictionaries({
    "init": st.lists(held_objects, min_size=1, max_size=6),
    "steps": st.lists(_steps, min_size=1, max_size=4),
})
