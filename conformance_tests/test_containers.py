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

_LONG_KEYS = [("str", f"a-key-longer-than-one-word-{i}") for i in range(20)]


@conformance(examples=300)
@given(S.container_programs())
@example({"make": ("py", ("Dict", [(k, ("int", i)) for i, k in enumerate(_LONG_KEYS)])),
          "ops": [("dump",), ("cpp_dict_lookup", _LONG_KEYS[3]), ("py_del", _LONG_KEYS[0]),
                  ("cpp_dict_set", ("str", "another-long-key-here"), ("none",)), ("py_items",)]})
@example({"make": ("py", ("Map", [(k, ("int", i)) for i, k in enumerate(_LONG_KEYS[:9])])),
          "ops": [("cpp_map_lookup", _LONG_KEYS[5]), ("cpp_map_items",)]})
@example({"make": ("cpp", "map", [x for i, k in enumerate(_LONG_KEYS[:9]) for x in (k, ("int", i))]),
          "ops": [("py_get", _LONG_KEYS[5]), ("py_items",)]})
def test_container_program(pool, program):
    make = program["make"]
    kind = make[1][0] if make[0] == "py" else make[1].capitalize()
    assume(not hits_known_divergence(make))
    assume(not any(container_op_divergent(kind, op) for op in program["ops"]))
    (records,) = assert_agree(pool.run("container", [program]), program, "containers differ")
    final = records[-1][1].get("obj", {}) if isinstance(records[-1][1], dict) else {}
    event(f"{kind} made in {'Python' if make[0] == 'py' else 'C++'}, "
          f"ends {final.get('form', '')} with {final.get('size')} items".replace("  ", " "))
