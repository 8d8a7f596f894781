"""Structural equality and hashing, JSON graphs, deep copy and walks on random object graphs.

Each case (``structural_graphs.cases``) is a random graph of the reflected
types of ``tests/kernels/structural.cc`` (free variables, functions and lets
that define variables, tree, DAG and constant nodes, unique instances, custom
``__s_equal__``/``__s_hash__`` hooks) with containers and every scalar kind,
plus a twin: the same recipe built again (equal up to renaming), or with one
edit (a leaf replaced, children swapped, a map reordered, an entry dropped),
or an unrelated graph, sharing some subgraphs and free variables with it.
Every front end must report exactly upstream's: ``structural_equal`` and
``get_first_structural_mismatch`` with and without ``map_free_vars``, the
hash numbers (where no address enters them) and whether the sides hash
alike, ``StructuralKey`` equality, the JSON graph text and its round trip, a
deep copy's repr and equality, a post-order ``structural_walk`` with the
definition region of each value, and a ``structural_map``.
"""

from __future__ import annotations

from hypothesis import event, example, given
from hypothesis import strategies as st

from . import structural_graphs as G
from .compare import assert_agree
from .profiles import conformance


def _case(lhs, rhs, how="same", shared=(("int", 0),) * 3):
    return {"shared": list(shared), "lhs": lhs, "rhs": rhs, "how": how,
            "free_vars": G.FREE_VARS, "by_address": False}


_FUNC = ("func", 2, ("Array", [("use", 0), ("use", 1), ("node", ("int", 1), ("shared", 0))]))
_MAP = ("Map", [(("str", "k"), ("free", 0)), (("int", 1), ("Array", [("use", 0)]))])


@conformance(examples=120)
@given(G.cases())
@example(_case(_FUNC, _FUNC))
@example(_case(_FUNC, ("func", 2, ("Array", [("use", 1), ("use", 0),
                                             ("node", ("int", 1), ("shared", 0))])), "swap"))
@example(_case(_MAP, ("Map", list(reversed(_MAP[1]))), "reorder"))
@example(_case(_MAP, ("Map", _MAP[1][1:]), "drop"))
@example(_case(("Map", [(("int", 1), ("str", "a")), (("int", 2), ("str", "b"))]),
               ("Map", [(("int", 1), ("str", "a")), (("int", 3), ("str", "b"))]), "leaf"))
@example(_case(("dag", ("shared", 1), ("shared", 1)), ("dag", ("shared", 1), ("shared", 2)),
               "leaf", shared=[("int", 0), ("node", ("int", 5), ("none",)),
                               ("node", ("int", 5), ("none",))]))
def test_structural_operations_agree(pool, case):
    (report,) = assert_agree(pool.run("structural", [case]), case, "structural results differ")
    equal = report["equal"] if isinstance(report, dict) else None
    event(f"{case['how']}: equal={equal[0][1] if equal and equal[0][0] == 'bool' else equal}")


def _well_formed(recipe) -> bool:
    """Whether every map of a graph recipe holds (key, value) pairs, at any depth."""
    if not isinstance(recipe, tuple) or not recipe or not isinstance(recipe[0], str):
        return True
    if recipe[0] in ("Map", "Dict"):
        return all(G._is_pair(item) and _well_formed(item[0]) and _well_formed(item[1])
                   for item in recipe[1])
    return all(_well_formed(child) for part in recipe[1:]
               for child in (part if isinstance(part, list) else [part]))


@conformance(examples=300)
@given(G.cases())
def test_edited_twins_are_well_formed_graphs(case):
    """The twin edits keep every map's entries pairs (a leaf that replaced a whole entry made a
    malformed map, which every worker refused as a fault of the suite)."""
    assert _well_formed(case["lhs"]) and _well_formed(case["rhs"]), case


def _holds_long_text(recipe) -> bool:
    """Whether a graph recipe holds a str/bytes leaf of more than 7 bytes (cffi core copies)."""
    if isinstance(recipe, tuple) and len(recipe) == 2 and recipe[0] in ("str", "bytes",
                                                                        "bytearray"):
        text = recipe[1].encode() if isinstance(recipe[1], str) else recipe[1]
        if isinstance(text, bytes) and len(text) > 7:
            return True
    return isinstance(recipe, (tuple, list)) and any(_holds_long_text(r) for r in recipe)


#: The region: one kind for every with_def_region_kind call, or kinds taken in turn by nested
#: calls (1, Pattern, first then another kind: Pattern must stay in force inside it).
_REGIONS = st.one_of(st.sampled_from([0, 1, 2]),
                     st.lists(st.sampled_from([0, 1, 2]), min_size=2, max_size=3),
                     st.sampled_from([[1, 0], [1, 2], [0, 1, 2]]))
_VISIT = st.tuples(st.sampled_from(["default", "prune", "region", "region", "children"]),
                   st.integers(0, 12), _REGIONS)
_REMAP = st.lists(st.tuples(st.integers(0, G.FREE_VARS - 1),
                            st.one_of(st.none(), st.integers(-2, 2), st.just("text"))),
                  max_size=3)


@conformance(examples=40)
@given(G.cases(), _VISIT, _REMAP)
@example(_case(_FUNC, _FUNC), ("children", 4, 1), [(0, None), (1, 7)])
@example(_case(_MAP, _MAP), ("region", 0, 2), [(0, -1), (0, "text")])
@example(_case(_FUNC, _FUNC), ("region", 0, [1, 2]), [(0, None)])
@example(_case(_MAP, _MAP), ("region", 0, [1, 0]), [])
def test_structural_visitors_and_mutators(pool, case, visit, remap):
    """``structural_visit`` with callbacks that descend through ``visit``/``default_visit``, prune,
    change the definition region or stop with a ``VisitInterrupt`` at the n-th value; and
    ``structural_mutate`` with callbacks that remap free variables (``var_remap_set``/
    ``_get``), read the in-place mode and descend through ``default_mutate``."""
    # Where the graph holds long text, only the mutated value's text is compared for the
    # mutator (known.py, "cffi-long-text-identity"); the visitor is compared in full.
    identity = not any(_holds_long_text(part) for part in [case["lhs"]] + list(case["shared"]))
    case = dict(case, visit=visit, remap=remap, identity=identity)
    assert_agree(pool.run("visitors", [case]), case, "visitors or mutators differ")
