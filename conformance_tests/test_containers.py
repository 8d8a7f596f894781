"""Containers: Map, Dict, Array and List contents and operations, from Python and from C++.

A generated program makes a container (through the Python API, or inside a
C++ kernel with upstream's inline header code), then applies generated
operations: Python-side reads and mutations (``m[k]``, ``get``, ``in``,
``items()`` order, ``d[k] = v``, ``del``, ``pop``, ``clear``, list
``append``/``insert``/slicing/...), and C++-side ones compiled from
upstream's headers that run inline on our memory (``Map::Get`` hashing and
probing, iteration, ``Dict::Set``/``erase``/``clear``, ``List::push_back``/
``insert``/``erase``/``Set``/``pop_back``/``reserve``, copy-on-write
``Map::Set``). After each ``dump`` and at the end the probe reports the
layout: form (small/dense), sizes, slots, ``fib_shift``, metadata bytes,
the implicit linked list, every key/value (recursively), capacity and where
the data lives. Every record must equal upstream's.
"""

from __future__ import annotations

from hypothesis import assume, event, example, given

from . import strategies as S
from .compare import assert_agree
from .known import container_op_divergent, hits_known_divergence
from .profiles import conformance

_LONG_KEYS = [("str", f"a-key-longer-than-one-word-{i}") for i in range(40)]
_MISSING = ("str", "a-key-that-is-in-no-container")


def _pairs(count, first=0):
    return [(k, ("int", i)) for i, k in enumerate(_LONG_KEYS[first:first + count], first)]


def _erase_each(kind, count, order):
    """A map of ``count`` entries emptied in ``order`` (positions), read after each erase."""
    ops = []
    for i in order:
        ops += [("py_del" if kind == "Dict" else "cpp_dict_erase", _LONG_KEYS[i]), ("py_items",)]
    return {"make": ("py", (kind, _pairs(count))), "ops": ops}


#: Each form and growth threshold crossed on purpose, whatever the seed: a small Dict
#: erased at its first, middle and last entry; a dense one emptied (erasures that pull
#: a chain's last link forward); a Dict grown from the small form through dense tables of
#: 8, 16 and 32 slots; a List appended past capacities 4, 8 and 16 and erased at both ends;
#: lookups of a missing key in a Map and a Dict (the error's kind).
THRESHOLD_EXAMPLES = [
    _erase_each("Dict", 4, [0, 2, 3, 1]),
    _erase_each("Dict", 4, [3, 1, 0, 2]),
    _erase_each("Dict", 20, [0, 19, 10, 5, 15, 1, 18, 2, 17, 3, 16, 4, 14, 6, 13, 7, 12, 8, 11, 9]),
    _erase_each("Dict", 33, list(range(0, 33, 2)) + list(range(1, 33, 2))),
    {"make": ("py", ("Dict", _pairs(4))),
     "ops": [("py_set", k, ("none",)) for k in _LONG_KEYS[4:34]] + [("py_items",)]},
    {"make": ("py", ("List", [("int", i) for i in range(4)])),
     "ops": [("py_append", ("int", i)) for i in range(4, 18)]
     + [("py_insert", 0, ("int", -1)), ("py_pop", ("int", 0)), ("py_pop", ("int", -1)),
        ("py_insert", 9, ("int", -2)), ("py_extend", [("int", 7)] * 9), ("py_items",)]},
    {"make": ("py", ("Map", _pairs(3))), "ops": [("py_get", _MISSING), ("py_get", _LONG_KEYS[1])]},
    {"make": ("py", ("Dict", _pairs(6))), "ops": [("py_get", _MISSING), ("py_pop", _MISSING)]},
]


@conformance(examples=300)
@given(S.container_programs())
@example({"make": ("py", ("Dict", [(k, ("int", i)) for i, k in enumerate(_LONG_KEYS)])),
          "ops": [("dump",), ("cpp_dict_lookup", _LONG_KEYS[3]), ("py_del", _LONG_KEYS[0]),
                  ("cpp_dict_set", ("str", "another-long-key-here"), ("none",)), ("py_items",)]})
@example({"make": ("py", ("Map", [(k, ("int", i)) for i, k in enumerate(_LONG_KEYS[:9])])),
          "ops": [("cpp_map_lookup", _LONG_KEYS[5]), ("cpp_map_items",)]})
@example({"make": ("cpp", "map", [x for i, k in enumerate(_LONG_KEYS[:9]) for x in (k, ("int", i))]),
          "ops": [("py_get", _LONG_KEYS[5]), ("py_items",)]})
@example(THRESHOLD_EXAMPLES[0])
@example(THRESHOLD_EXAMPLES[1])
@example(THRESHOLD_EXAMPLES[2])
@example(THRESHOLD_EXAMPLES[3])
@example(THRESHOLD_EXAMPLES[4])
@example(THRESHOLD_EXAMPLES[5])
@example(THRESHOLD_EXAMPLES[6])
@example(THRESHOLD_EXAMPLES[7])
def test_container_program(pool, program):
    make = program["make"]
    kind = make[1][0] if make[0] == "py" else make[1].capitalize()
    assume(not hits_known_divergence(make))
    assume(not any(container_op_divergent(kind, op) for op in program["ops"]))
    (records,) = assert_agree(pool.run("container", [program]), program, "containers differ")
    final = records[-1][1].get("obj", {}) if isinstance(records[-1][1], dict) else {}
    event(f"{kind} made in {'Python' if make[0] == 'py' else 'C++'}, "
          f"ends {final.get('form', '')} with {final.get('size')} items".replace("  ", " "))
