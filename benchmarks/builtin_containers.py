"""CPython's own containers doing the work of bench_scaling.py's wide rows: the baseline.

``bench_scaling.py --frontends python`` imports this module as ``api`` in place of a TVM FFI
front end, so each wide row runs the same lines with built-in types: a Map or Dict is a ``dict``
(built by inserting every pair), a List a ``list``, an Array a ``tuple``; structural hash and
equality are ``hash`` and ``==`` on those tuples, the JSON graph round trip is ``json``, and
``copy.deepcopy`` is itself.

Why: how a row's cost per element grows from 1e4 to 1e6 elements is not all the runtime's. A
hash table of a million entries and the million keys it is built from outgrow the CPU's caches,
and so do a million small tuples; every access then misses. CPython's dict and tuple are the
best-tuned structures of this kind on the machine, so their growth on the same work, in the same
run, is the floor the machine sets, and a runtime's ``flat`` is judged against it.
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Mapping


def Map(pairs: Mapping[Any, Any]) -> dict:
    """A dict built by inserting every pair (``dict(pairs)`` would clone the source's table)."""
    return dict(pairs.items())


Dict = dict
List = list


def Array(items: Iterable[Any]) -> tuple:
    """An immutable sequence, as an Array is."""
    return tuple(items)


def structural_hash(value: Any) -> int:
    """Python's hash of nested tuples: it combines every element's, as a structural hash does."""
    return hash(value)


def structural_equal(lhs: Any, rhs: Any) -> bool:
    """Python's ``==`` on nested tuples: element by element, all the way down."""
    return bool(lhs == rhs)


class serialization:  # noqa: N801 -- stands in for the front ends' module of that name
    """The JSON round trip of the wide rows, by the ``json`` module."""

    @staticmethod
    def to_json_graph_str(value: Any) -> str:
        """The value as JSON text."""
        return json.dumps(value)

    @staticmethod
    def from_json_graph_str(text: str) -> Any:
        """The value back from JSON text."""
        return json.loads(text)
