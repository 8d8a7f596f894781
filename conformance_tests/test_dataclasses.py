"""Dataclasses: generated ``@py_class`` definitions and instances, as upstream's.

Each example defines a class (fields of generated annotations, defaults and
keyword-only flags; ``eq``, ``order``, ``unsafe_hash``, ``frozen``,
``kw_only``) in every worker, then constructs instances from generated
positional and keyword values and reads, writes, compares, hashes, copies
and prints them. Every result -- the values stored after conversion, the
conversion errors and their messages, ``repr``, equality, order, hash
equality -- must be upstream's.
"""

from __future__ import annotations

from hypothesis import given

from .compare import assert_agree
from .dataclass_strategies import programs
from .profiles import conformance


@conformance(examples=60)
@given(programs())
def test_dataclass_programs(pool, program):
    assert_agree(pool.run("dataclass", [program]), program, "a dataclass behaves differently")
