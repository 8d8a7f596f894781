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

from hypothesis import example, given

from .compare import assert_agree
from .dataclass_strategies import programs
from .profiles import conformance


def _spec(key, fields, order=False, kw_only=False):
    options = {"eq": True, "order": order, "unsafe_hash": False, "frozen": False,
               "kw_only": kw_only}
    return {"key": f"conformance.dc.{key}", "options": options, "fields": fields}


@conformance(examples=60)
@given(programs())
# Order by text whose first differing byte is past ASCII (upstream compares signed chars),
# then by a second field; a keyword-only field given positionally and by keyword.
@example({"spec": _spec("OrderByText", [("f0", "str", None, False), ("f1", "int", None, False)],
                        order=True),
          "steps": [["construct", [("str", "a\u00e9"), ("int", 1)], []],
                    ["construct", [("str", "\u00e9a"), ("int", 1)], []],
                    ["construct", [("str", "a\u00e9"), ("int", 2)], []],
                    ["lt", 0, 1], ["lt", 1, 0], ["lt", 0, 2], ["eq", 0, 2], ["hash", 0, 2]]})
@example({"spec": _spec("KeywordOnly", [("f0", "int", None, False), ("f1", "int", ("int", 5), True),
                                        ("f2", "str", ("str", "x"), False)]),
          "steps": [["construct", [("int", 1), ("int", 2)], []],
                    ["construct", [("int", 1), ("str", "y")], [("f1", ("int", 3))]],
                    ["construct", [], [("f0", ("int", 4))]], ["read", 0, "f1"], ["repr", 1]]})
def test_dataclass_programs(pool, program):
    assert_agree(pool.run("dataclass", [program]), program, "a dataclass behaves differently")
