"""Recipes of object graphs for the structural properties, and their near twins.

A graph recipe is plain data (built in each worker by ``structural_worker``)
over the reflected types of ``tests/kernels/structural.cc``:

* a scalar recipe of ``strategies.scalars`` (ints and BigInts, floats with
  every NaN and -0.0, bools, None, str, bytes, dtypes, devices, Shapes);
* ``("Array" | "List", [items])``, ``("Map" | "Dict", [(key, value)])``
  (keys are scalars or variables);
* ``("node", a, b)`` a tree node, ``("dag", a, b)`` a DAG node (sharing
  counts), ``("const", payload)`` a constant tree, ``("unique", x)`` a unique
  instance (compared by identity), ``("custom", key, defs)`` the type with
  ``__s_equal__``/``__s_hash__`` hooks;
* ``("func", n, body)`` binds ``n`` new variables (a pattern definition
  region) and ``("let", value, body)`` one (a simple region); inside ``body``
  ``("use", i)`` is the i-th bound variable (modulo their number), or outside
  any binding the i-th free variable;
* ``("free", i)``: the i-th free variable of the side being built, and
  ``("common", i)``: the i-th free variable both sides share (one object);
* ``("typed", i, ty)``: a variable with a compared field, defined where used;
* ``("shared", i)``: the case's i-th shared subgraph (one object wherever it
  appears, on either side: sharing and identity are exercised).

A case is ``{"shared": [graphs], "lhs": graph, "rhs": graph, ...}`` (with how
``rhs`` was made, the number of free variables, and whether a unique instance
makes hashes depend on addresses); ``rhs`` is
usually ``lhs`` itself (equal after renaming: every variable is a new object
per side), or ``lhs`` with one edit: a leaf replaced, two children swapped, a
map's entries reordered (still equal), an entry or an item dropped, a map's
last key replaced.
"""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

from hypothesis import strategies as st

from . import strategies as S

#: Free variables per side (and shared ones) a case may use.
FREE_VARS = 3

#: Scalars and scalar-like leaves of the graphs.
_LEAVES = st.one_of(S.scalars, st.integers(-3, 3).map(lambda v: ("int", v)),
                    st.sampled_from([("str", "a"), ("str", "b"), ("float", 0), ("none",)]))
_var_refs = st.one_of(st.builds(lambda i: ("use", i), st.integers(0, 5)),
                      st.builds(lambda i: ("free", i), st.integers(0, FREE_VARS - 1)),
                      st.builds(lambda i: ("common", i), st.integers(0, FREE_VARS - 1)))
_shared_refs = st.builds(lambda i: ("shared", i), st.integers(0, 2))
_keys = st.one_of(S.map_keys, _var_refs)


def _extend(children):
    items = st.lists(children, max_size=4)
    return st.one_of(
        st.tuples(st.sampled_from(["Array", "List"]), items),
        st.tuples(st.sampled_from(["Map", "Dict"]), st.lists(st.tuples(_keys, children),
                                                             max_size=4)),
        st.tuples(st.sampled_from(["node", "dag"]), children, children),
        st.tuples(st.just("const"), children),
        st.tuples(st.just("custom"), children, st.lists(_var_refs, max_size=2)),
        st.tuples(st.just("func"), st.integers(1, 3), children),
        st.tuples(st.just("let"), children, children),
        st.tuples(st.just("typed"), st.integers(0, 5), children),
    )


_base = st.one_of(_LEAVES, _var_refs, _shared_refs,
                  st.builds(lambda x: ("unique", x), st.integers(0, 2)))
graphs = st.recursive(_base, _extend, max_leaves=14)
#: Shared subgraphs refer to no other shared subgraph (they are built first).
_shared_graphs = st.recursive(st.one_of(_LEAVES, _var_refs), _extend, max_leaves=6)


# ---------------------------------------------------------------- twins

def _positions(recipe: Any, path: Tuple[int, ...] = ()) -> List[Tuple[Tuple[int, ...], Any]]:
    """Every (path, subrecipe) of ``recipe`` in pre-order; a path indexes nested tuples/lists."""
    found = [(path, recipe)]
    if isinstance(recipe, tuple) and recipe and recipe[0] in _COMPOSITES:
        for i, child in enumerate(recipe):
            if i == 0:
                continue
            if isinstance(child, list):
                for j, item in enumerate(child):
                    found += _positions(item, path + (i, j))
            elif isinstance(child, tuple):
                found += _positions(child, path + (i,))
    elif _is_pair(recipe):
        for i, item in enumerate(recipe):  # a (key, value) pair
            found += _positions(item, path + (i,))
    return found


_COMPOSITES = {"Array", "List", "Map", "Dict", "node", "dag", "const", "custom", "func", "let",
               "typed"}


def _is_pair(recipe: Any) -> bool:
    """Whether a position of :func:`_positions` is a map entry's ``(key, value)`` pair."""
    return isinstance(recipe, tuple) and len(recipe) == 2 and not isinstance(recipe[0], str)


def _replace(recipe: Any, path: Tuple[int, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    items = list(recipe)
    items[head] = _replace(items[head], rest, new)
    return type(recipe)(items) if isinstance(recipe, list) else tuple(items)


def _edit(recipe: Any, choice: int, kind: str, leaf: Any) -> Any:
    """``recipe`` with one edit of ``kind`` at its ``choice``-th position (modulo)."""
    positions = _positions(recipe)
    if kind == "leaf":  # any subgraph, but not a map's (key, value) pair: it is no subgraph
        subgraphs = [(path, r) for path, r in positions if not _is_pair(r)]
        path, _ = subgraphs[choice % len(subgraphs)]
        return _replace(recipe, path, leaf)
    sequences = [(path, r) for path, r in positions
                 if isinstance(r, tuple) and r and r[0] in ("Array", "List", "Map", "Dict")
                 and len(r[1]) > 1]
    nodes = [(path, r) for path, r in positions
             if isinstance(r, tuple) and r and r[0] in ("node", "dag")]
    if kind == "swap" and nodes:
        path, (tag, a, b) = nodes[choice % len(nodes)]
        return _replace(recipe, path, (tag, b, a))
    maps = [(path, r) for path, r in positions
            if isinstance(r, tuple) and r and r[0] in ("Map", "Dict") and r[1]]
    if kind == "rekey" and maps:  # the last entry's key replaced (earlier ones still match)
        path, (tag, items) = maps[choice % len(maps)]
        return _replace(recipe, path, (tag, items[:-1] + [(leaf, items[-1][1])]))
    if kind in ("reorder", "drop") and sequences:
        path, (tag, items) = sequences[choice % len(sequences)]
        items = list(reversed(items)) if kind == "reorder" else items[1:]
        return _replace(recipe, path, (tag, items))
    return recipe


@st.composite
def cases(draw) -> Dict[str, Any]:
    """A structural case: shared subgraphs, a graph and its twin (or an unrelated graph)."""
    shared = draw(st.lists(_shared_graphs, min_size=3, max_size=3))
    lhs = draw(graphs)
    how = draw(st.sampled_from(["same", "same", "leaf", "swap", "reorder", "drop", "rekey",
                                "other"]))
    if how == "same":
        rhs = lhs
    elif how == "other":
        rhs = draw(graphs)
    else:
        rhs = _edit(lhs, draw(st.integers(0, 1 << 16)), how, draw(_LEAVES))
    by_address = any(has_unique(graph) for graph in [lhs, rhs] + shared)
    return {"shared": shared, "lhs": lhs, "rhs": rhs, "how": how, "free_vars": FREE_VARS,
            "by_address": by_address}


def has_unique(recipe: Any) -> bool:
    """Whether a graph holds a unique instance (whose hash is its address)."""
    if isinstance(recipe, tuple) and recipe and recipe[0] == "unique":
        return True
    return any(has_unique(item) for item in recipe) if isinstance(recipe, (tuple, list)) else False
