"""The reference runtime walks deep values over an explicit work list, not by recursion.

Structural hashing, equality, the first mismatch, deep copy and JSON graphs run their frames on
``run_frames``' stack (``tvm_ffi_ref/runtime/dataclass_walk.py``): depth costs heap, not
Python's recursion limit nor the C stack, and there is no depth limit (upstream crashes far
earlier; the fast runtime's walks are pinned at 1e5 levels in ``test_deep_walks.py``).
A cycle is named as one. The values here are 17,000 levels deep, past the 16,384 levels the
walks used to stop at, and kept small enough for CI (seconds); ``bench_scaling.py`` times
1e6 levels. Each case runs in a fresh interpreter, so that a crash fails the test alone.
"""

from __future__ import annotations

from subprocess_utils import run_python

DEPTH = 17_000

_SETUP = f"""
import copy, sys
from typing import Optional
import tvm_ffi_ref as api
N = {DEPTH}
sys.setrecursionlimit(1000)  # the walks must not need more

@api.dataclasses.py_class("deep.RefWalkLink")
class Link(api.Object):
    next: Optional[api.Object]
    label: str

def chain(label_of_last):
    head = Link(None, label_of_last)
    for i in range(N - 1):
        head = Link(head, "link")
    return head

def nested(leaf):
    value = api.Array([leaf])
    for _ in range(N - 1):
        value = api.Array([value])
    return value
"""


def test_hash_and_equality_of_deep_values():
    """A chain equals itself (compared by content, link by link); a chain differing at the
    very bottom hashes differently, is unequal, and the first mismatch names a path N steps
    long. Nested Arrays built alike hash alike and compare equal."""
    out = run_python(_SETUP + """
a, c = chain("end"), chain("END")
print("chain hash equal", api.structural_hash(a) == api.structural_hash(a))
print("chain hash differs", api.structural_hash(a) != api.structural_hash(c))
print("chain equal", api.structural_equal(a, a), api.structural_equal(a, c))
mismatch = api.get_first_structural_mismatch(a, c)
print("mismatch depth", len(mismatch[0].to_steps()))
x, y, z = nested(1), nested(1), nested(2)
print("nested", api.structural_hash(x) == api.structural_hash(y),
      api.structural_hash(x) != api.structural_hash(z),
      api.structural_equal(x, y), api.structural_equal(x, z))
""", timeout=600)
    assert "chain hash equal True" in out, out
    assert "chain hash differs True" in out, out
    assert "chain equal True False" in out, out
    # N - 1 "next" steps down to the last link, then its "label"
    assert f"mismatch depth {DEPTH}" in out, out
    assert "nested True True True False" in out, out


def test_deep_copy_of_deep_values():
    """A deep copy of a deep chain and of deep nested Arrays is a new value, structurally
    equal to the original, sharing no link with it."""
    out = run_python(_SETUP + """
a = chain("end")
b = copy.deepcopy(a)
print("chain copy", not b.same_as(a), not b.next.same_as(a.next), api.structural_equal(a, b))
x = nested(1)
y = copy.deepcopy(x)
print("nested copy", api.structural_equal(x, y), api.structural_hash(x) == api.structural_hash(y))
""", timeout=600)
    assert "chain copy True True True" in out, out
    assert "nested copy True True" in out, out


def test_cycles_are_named():
    """A List holding itself: hashing and comparing name the cycle; deep copy reproduces it."""
    out = run_python("""
import copy
import tvm_ffi_ref as api
ring = api.List([1])
ring.append(ring)
for name, op in [("hash", lambda: api.structural_hash(ring)),
                 ("equal", lambda: api.structural_equal(ring, ring))]:
    try:
        op()
        print(name, "returned")
    except ValueError as error:
        print(name, "ValueError", error)
twin = copy.deepcopy(ring)
print("copy", twin[1].same_as(twin), not twin.same_as(ring))
""", timeout=300)
    assert "hash ValueError StructuralHash: the value graph has a cycle" in out, out
    assert "equal ValueError StructuralEqual: the value graph has a cycle" in out, out
    assert "copy True True" in out, out


def test_json_graph_round_trip_of_a_deep_value():
    """Nested Arrays N deep are saved to a JSON graph and loaded back, equal to the original."""
    out = run_python(_SETUP + """
x = nested("leaf")
text = api.serialization.to_json_graph_str(x)
back = api.serialization.from_json_graph_str(text)
print("nodes", text.count('"type"'), "equal", api.structural_equal(x, back))
""", timeout=600)
    # N Arrays and the leaf string, one node each
    assert f"nodes {DEPTH + 1} equal True" in out, out
