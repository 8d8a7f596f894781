"""Container operations beyond ``test_containers``: steps, the rest of the dict methods, copies.

A List has slices deleted and assigned with every step (``None``, 1, 2, 3, -1, -2 and 0,
which must raise), bounds anywhere around its length, assignments of the right and of
the wrong length; a Dict or Map has ``keys``/``values``/``iter``, ``popitem``,
``setdefault`` (present and missing keys) and ``update``; every kind is tested for truth,
equality (with itself and another container) and deep copies that must keep the sharing
of items that are one object. After each step the container's layout is compared, as in
``test_containers``.
"""

from __future__ import annotations

from hypothesis import assume, example, given
from hypothesis import strategies as st

from . import strategies as S
from .compare import assert_agree
from .known import container_op_divergent, hits_known_divergence
from .profiles import conformance

_bounds = st.one_of(st.none(), st.integers(-12, 12))
_steps = st.sampled_from([None, 1, 2, 3, -1, -2, 0])
#: Registers 0-3: an Array, a Map, a List and a Dict that items share (mutable ones too: a deep
#: copy must copy each once and share the copy).
_SHARED = [("Array", [("int", 1), ("str", "shared item")]), ("Map", [(("str", "k"), ("int", 2))]),
           ("List", [("int", 3), ("str", "shared list")]), ("Dict", [(("str", "d"), ("int", 4))])]
_shared = ("reg", 0)


@st.composite
def edge_programs(draw):
    kind = draw(st.sampled_from(["List", "List", "Array", "Dict", "Map"]))
    size = draw(st.one_of(st.integers(0, 12), st.sampled_from(S.LIST_THRESHOLD_SIZES)))
    # Items that are one object (``_shared`` twice) next to plain ones: a deep copy must keep it.
    item = st.one_of(S.plain_values, st.just(("shared",)), st.just(("reg", 1)),
                     st.sampled_from([("reg", 2), ("reg", 3)]))
    if kind in ("List", "Array"):
        items = draw(st.lists(item, min_size=size, max_size=size))
        items = [_shared if x == ("shared",) else x for x in items]
        make = ("py", (kind, items))
        keys = st.sampled_from(items) if items else S.plain_values
    else:
        pairs = draw(st.lists(st.tuples(S.map_keys, item), min_size=min(size, 6),
                              max_size=min(size, 6)))
        pairs = [(k, _shared if v == ("shared",) else v) for k, v in pairs]
        make = ("py", (kind, pairs))
        keys = st.one_of(st.sampled_from([k for k, _ in pairs]), S.map_keys) if pairs \
            else S.map_keys
    ops = [st.just(("py_bool",)), st.just(("py_iter",)), st.just(("py_deepcopy",)),
           st.tuples(st.just("py_eq"), st.just(make[1]))]
    if kind == "List":
        ops += [st.tuples(st.just("py_del_slice"), _bounds, _bounds, _steps),
                st.tuples(st.just("py_del_slice"), _bounds, _bounds, _steps),
                # unit steps whose stop may lie before the start: an empty range to erase
                st.tuples(st.just("py_del_slice"), _bounds, _bounds, st.sampled_from([None, 1])),
                st.builds(lambda a, b, c, v: ("py_set_slice", a, b, c, *v), _bounds, _bounds,
                          _steps, st.lists(S.plain_values, max_size=6)),
                st.tuples(st.just("py_remove"), keys), st.just(("py_items",))]
    elif kind == "Array":
        ops += [st.tuples(st.just("py_slice"), _bounds, _bounds, _steps)]
    else:
        ops += [st.just(("py_keys",)), st.just(("py_values",)), st.just(("py_items",))]
        if kind == "Dict":
            ops += [st.just(("py_popitem",)), st.tuples(st.just("py_setdefault"), keys, S.plain_values),
                    st.builds(lambda kv: ("py_update", *[x for p in kv for x in p]),
                              st.lists(st.tuples(keys, S.plain_values), max_size=4))]
    return {"make": make, "shared": _SHARED,
            "ops": draw(st.lists(st.one_of(*ops), min_size=1, max_size=8))}


_LIST = ("py", ("List", [("int", i) for i in range(10)]))
_EXAMPLES = [
    {"make": _LIST, "ops": [("py_del_slice", None, None, 2), ("py_items",),
                            ("py_del_slice", None, None, -2), ("py_items",)]},
    {"make": _LIST, "ops": [("py_del_slice", 8, 1, -3), ("py_del_slice", 1, None, 0),
                            ("py_set_slice", None, None, 3, ("int", 7)),
                            ("py_set_slice", 1, 9, 3, ("int", 1), ("int", 2), ("int", 3))]},
    {"make": ("py", ("List", [("reg", 2), ("reg", 3), ("reg", 2), ("int", 0), ("reg", 3)])),
     "ops": [("py_deepcopy",), ("py_del_slice", None, None, 2), ("py_deepcopy",)]},
    {"make": _LIST, "ops": [("py_del_slice", 5, 2, None), ("py_del_slice", -1, -4, 1),
                            ("py_del_slice", 3, 3, None), ("py_items",)]},
    {"make": ("py", ("Dict", [(("str", "k"), _shared), (("int", 2), _shared)])),
     "ops": [("py_deepcopy",), ("py_setdefault", ("str", "new"), ("int", 1)),
             ("py_popitem",), ("py_keys",)]},
]


@conformance(examples=120)
@given(edge_programs())
@example(dict(_EXAMPLES[0], shared=_SHARED))
@example(dict(_EXAMPLES[1], shared=_SHARED))
@example(dict(_EXAMPLES[2], shared=_SHARED))
@example(dict(_EXAMPLES[3], shared=_SHARED))
@example(dict(_EXAMPLES[4], shared=_SHARED))
def test_container_edges(pool, program):
    kind = program["make"][1][0]
    assume(not hits_known_divergence(program["make"]))
    assume(not any(container_op_divergent(kind, op) for op in program["ops"]))
    assert_agree(pool.run("container", [program]), program, "container edge operations differ")
