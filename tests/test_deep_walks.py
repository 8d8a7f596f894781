"""Deep values are walked without recursion on the C stack (nor Python's), in both runtimes.

Upstream recurses once per level in each of these walks and its process dies (stack overflow)
somewhere between 3,000 and 30,000 levels (``ffi.DeepCopy`` gets further); ours keep each
walk's frames in heap memory (the fast runtime's C frame stacks; the reference's generator
frames on ``run_frames``, ``tvm_ffi_ref/runtime/dataclass_walk.py``), so the depth of a value
costs no stack and there is no depth limit: a cycle, which a limit used to stop, is found and
named instead. Each case runs in a fresh interpreter (a crash must fail the test, not the
session) whose recursion limit is 1,000 (the walks must not need more). Shapes: Arrays nested
in Arrays, Maps in Maps, Dicts in Dicts, Lists in Lists, a chain of py_class objects each
holding the next, and a DAG whose every level holds the level below twice (2**depth paths:
sharing must be kept by deep copy and JSON, and memoized by hashing, or the walk never ends).

Depths: the fast runtime runs 1e5 levels; the reference runtime, far slower per level, runs
17,000 -- past the 16,384 levels the walks used to stop at -- on the Array and chain shapes,
to keep CI short. ``benchmarks/bench_scaling.py`` and ``benchmarks/bench_deep_traversals.py`` time 1e6.
"""

from __future__ import annotations

import ctypes
import os

import pytest

from subprocess_utils import IMPORTS, run_python

#: Runtimes the depth cases run under.
FRONTENDS = ["fast", "ref"]
#: Levels for containers and for the py_class chain, by runtime (see the module docstring).
DEPTHS = {"fast": 100_000, "ref": 17_000}
CHAIN_DEPTHS = {"fast": 100_000, "ref": 17_000}
#: The shapes each runtime's hash / equal / copy / JSON case runs (CI time).
SHAPES = {"fast": ["arrays", "maps", "dicts", "lists", "chain"], "ref": ["arrays", "chain"]}

BUILDERS = """
import copy, sys
from typing import Optional
sys.setrecursionlimit(1000)  # the walks must not need more
HASH = api.get_global_func("ffi.StructuralHash")
EQUAL = api.get_global_func("ffi.StructuralEqual")
COPY = api.get_global_func("ffi.DeepCopy")
SAVE = api.get_global_func("ffi.ToJSONGraphString")
LOAD = api.get_global_func("ffi.FromJSONGraphString")
MISMATCH = api.get_global_func("ffi.GetFirstStructuralMismatch")

@api.dataclasses.py_class("deep_walks.Link")
class Link(api.Object):
    next: Optional[api.Object]
    v: int = 0

@api.dataclasses.py_class("deep_walks.Pair")
class Pair(api.Object):
    a: Optional[api.Object]
    b: Optional[api.Object]

def build(shape, depth, bottom=0):
    # `depth` levels around a bottom value; the bottom differs between calls given another one
    if shape == "chain":
        value = Link(None, bottom)
        for i in range(depth):
            value = Link(value, i % 7)
        return value
    value = None if shape == "dag" else bottom
    for i in range(depth):
        if shape == "arrays":
            value = api.Array([value, i % 7])
        elif shape == "maps":
            value = api.Map({"k": value, "i": i % 7})
        elif shape == "dicts":
            value = api.Dict({"k": value, "i": i % 7})
        elif shape == "lists":
            value = api.List([value, i % 7])
        elif shape == "dag":
            value = Pair(value, value)
    return value

def first(value):
    # the next level down
    if isinstance(value, Link):
        return value.next
    if isinstance(value, Pair):
        return value.a
    if isinstance(value, (api.Map, api.Dict)):
        return value["k"]
    return value[0]

def bottom_of(value, depth):
    for _ in range(depth):
        value = first(value)
    return value.v if isinstance(value, Link) else value
"""


def _run(frontend: str, body: str, timeout: float = 600, env=None) -> str:
    return run_python(IMPORTS[frontend] + "\n" + BUILDERS + body, timeout=timeout, env=env)


def _depth(frontend: str, shape: str) -> int:
    return (CHAIN_DEPTHS if shape == "chain" else DEPTHS)[frontend]


@pytest.mark.parametrize("frontend, shape",
                         [(frontend, shape) for frontend in FRONTENDS for shape in SHAPES[frontend]])
def test_deep_values_hash_compare_copy_and_round_trip(frontend, shape):
    depth = _depth(frontend, shape)
    out = _run(frontend, f"""
N = {depth}
a, b, other = build({shape!r}, N), build({shape!r}, N), build({shape!r}, N, bottom=1)
print("hash equal", HASH(a, False, False) == HASH(b, False, False))
print("hash differs", HASH(a, False, False) != HASH(other, False, False))
print("equal", EQUAL(a, b, False, False), EQUAL(a, other, False, False))
print("mismatch steps", len(MISMATCH(a, other, False, False)[0].to_steps()))
print("deepcopy", EQUAL(copy.deepcopy(a), a, False, False))
copied = COPY(a)
print("copy equal", EQUAL(copied, a, False, False), copied.same_as(a))
# immutable levels may be kept when nothing below them changed; mutable ones must not be
print("copy bottom", bottom_of(copied, N) == 0,
      {shape!r} not in ("dicts", "lists", "chain") or not first(copied).same_as(first(a)))
text = SAVE(a, None)
back = LOAD(text)
print("json round trip", EQUAL(back, a, False, False), SAVE(back, None) == text)
""")
    # the mismatch is at the bottom: one step a level, and the last Link's ``v``
    steps = depth + (shape == "chain")
    assert out.splitlines() == [
        "hash equal True", "hash differs True", "equal True False", f"mismatch steps {steps}",
        "deepcopy True", "copy equal True False", "copy bottom True True",
        "json round trip True True"], out


@pytest.mark.parametrize("frontend", FRONTENDS)
def test_deep_dag_keeps_its_sharing(frontend):
    # every level (a py_class Pair) holds the level below twice: 2**N paths over N objects,
    # so the hash must be memoized and deep copy and JSON must keep the sharing, or they would
    # never end. (Structural equality of two such DAGs is exponential upstream as well: objects
    # of the default kind are trees, so it is not asked for.)
    depth = DEPTHS[frontend]
    out = _run(frontend, f"""
N = {depth}
dag = build("dag", N)
print("hash", HASH(dag, False, False) == HASH(build("dag", N), False, False))
copied = COPY(dag)
level, shared = copied, True
for _ in range(N - 1):
    shared = shared and level.a.same_as(level.b) and not level.a.same_as(dag.a)
    level = level.a
print("copy shares", shared, level.a is None)
import json
text = SAVE(dag, None)
print("json nodes", len(json.loads(text)["nodes"]))
back = LOAD(text)
print("loaded shares", back.a.same_as(back.b), SAVE(back, None) == text)
""")
    # the nodes: N Pairs and one None
    assert out.splitlines() == ["hash True", "copy shares True True", f"json nodes {depth + 1}",
                                "loaded shares True True"], out


@pytest.mark.parametrize("frontend", FRONTENDS)
def test_cycles_below_the_old_limit_are_named(frontend):
    # a List holding itself 20,000 levels down: the walks that would go round it forever
    # (upstream: until its stack overflows) say so, checked when their stack (visit and
    # mutate: the path of objects being descended) reaches a power of two from 16,384; deep
    # copy keeps the cycle
    out = _run(frontend, """
ring = api.List([])
value = ring
for _ in range(20000):
    value = api.List([value])
ring.append(value)
for name, call in [
        ("hash", lambda: HASH(value, False, False)),
        ("equal", lambda: EQUAL(value, value, False, False)),
        ("json", lambda: SAVE(value, None)),
        ("visit", lambda: api.structural_visit(value, [(int, lambda x, visitor: None)])),
        ("walk", lambda: api.structural_walk(value, [(int, lambda x: None)])),
        ("mutate", lambda: api.structural_mutate(value, [(int, lambda x, mutator: x)])),
        ("map", lambda: api.structural_map(value, [(int, lambda x: x)]))]:
    try:
        call()
        print(name, "returned")
    except ValueError as err:
        print(name, str(err))
copied = COPY(value)
print("copy keeps the cycle", bottom_of(copied, 20001).same_as(copied))
ring.pop()  # break the cycle so the values can be freed
""")
    cycle = "the value graph has a cycle (a value contains itself)"
    assert out.splitlines() == [
        f"hash StructuralHash: {cycle}", f"equal StructuralEqual: {cycle}",
        "json Cycle detected during serialization: a List contains itself",
        f"visit StructuralVisit: {cycle}", f"walk StructuralVisit: {cycle}",
        f"mutate StructuralMutate: {cycle}", f"map StructuralMutate: {cycle}",
        "copy keeps the cycle True"], out


@pytest.mark.parametrize("frontend", FRONTENDS)
def test_a_json_graph_with_a_cycle_is_refused(frontend):
    # node 0's Array holds node 0: upstream recurses until its stack overflows
    out = _run(frontend, """
text = '{"root_index": 0, "nodes": [{"type": "ffi.Array", "data": [0]}]}'
try:
    LOAD(text)
except ValueError as err:
    print(err)
""")
    assert out.strip() == "Invalid JSON Object Graph: node 0 contains itself (a cycle)", out


SHALLOW = """
REPR = api.get_global_func("ffi.ReprPrint")
digest = lambda text: __import__("hashlib").sha256(text.encode()).hexdigest()[:16]
for shape in ["arrays", "maps", "dicts", "lists", "chain", "dag"]:
    value = build(shape, 300)
    text = SAVE(value, None)
    print(shape, HASH(value, False, False), HASH(value, True, False), len(text), digest(text),
          SAVE(LOAD(text), None) == text, SAVE(COPY(value), None) == text,
          shape == "dag" or EQUAL(COPY(value), value, False, False))
    # a DAG's text prints each shared level again at every path: 2**12 leaves
    shown = REPR(build(shape, 12) if shape == "dag" else value)
    print(shape, "repr", len(shown), digest(shown))
"""


def test_moderately_deep_values_match_upstream_bit_for_bit():
    # 300 levels: deep enough to cross many frames, shallow enough for upstream's recursion
    expected = run_python(IMPORTS["upstream"] + "\n" + BUILDERS + SHALLOW)
    for frontend in FRONTENDS:
        assert _run(frontend, SHALLOW) == expected, frontend


DEEP_REPR = """
import resource
REPR = api.get_global_func("ffi.ReprPrint")
N = {depth}
arrays, chain = build("arrays", N), build("chain", N)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
shown = [REPR(arrays), REPR(chain)]
grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak) / 1024
sevens = [i % 7 for i in range(N)]
print(shown[0] == "(" * N + "0" + "".join(", %d)" % v for v in sevens))
print(shown[1] == "deep_walks.Link(next=" * N + "deep_walks.Link(next=None, v=0)"
      + "".join(", v=%d)" % v for v in sevens))
print("grew under 64 MiB", grown_mib < 64, round(grown_mib))
"""


@pytest.mark.parametrize("frontend", FRONTENDS)
def test_deep_repr_is_linear(frontend):
    # ffi.ReprPrint remembers each finished object's text (a repeated one prints it again).
    # Remembered as copies, a chain n deep held O(n^2) bytes: ~15 GB at 1e5 levels (fast;
    # killed at 1e6), ~4 GB at ref's 17,000. The fast runtime's frames now write into their
    # parent's buffer and remember a span of it; ref's texts are Ropes holding their children's.
    # Under ASan (tools/sanitize.sh) freed blocks wait in a quarantine (256 MB) before reuse,
    # which the resident set would count: off for this process, as in test_fast_memory.py.
    env = None
    if hasattr(ctypes.CDLL(None), "__asan_init"):  # later options win
        env = {"ASAN_OPTIONS": os.environ.get("ASAN_OPTIONS", "")
               + ":quarantine_size_mb=0:thread_local_quarantine_size_kb=0"}
    out = _run(frontend, DEEP_REPR.format(depth=DEPTHS[frontend]), env=env)
    lines = out.splitlines()
    assert lines[:2] == ["True", "True"], out
    assert lines[2].startswith("grew under 64 MiB True"), out


# ---------------------------------------------------------------- traversals and JSON text
#
# Structural walk / visit and JSON text used to stop at 16,384 levels (a ValueError) in both
# runtimes; they now run over work lists too. 20,000 levels is past that limit and small
# enough for the reference runtime in CI; ``benchmarks/bench_deep_traversals.py`` times 1e6.
#: Levels for the traversal cases (just past the old 16,384 limit).
TRAVERSAL_DEPTH = 20_000

WALKS = """
from typing import Optional
N = {depth}
def count_ints(order, skip_links=False):
    seen = []
    def on_int(x):
        seen.append(x)
    def on_link(x):
        return api.WalkResult.SKIP if skip_links else None
    api.structural_walk(value, [(Link, on_link), (int, on_int)], order=order)
    return len(seen), seen[:1]
for shape in ["chain", "arrays"]:
    value = build(shape, N, bottom=99)
    print(shape, "post", count_ints("post"))
    print(shape, "pre", count_ints("pre"))
    stop = api.structural_walk(value, [(int, lambda x: api.VisitInterrupt(x) if x == 99 else None)])
    print(shape, "interrupt", stop.value)
    def boom(x):
        if x == 99:
            raise KeyError("bottom")
    try:
        api.structural_walk(value, [(int, boom)])
        print(shape, "error", "none")
    except KeyError as err:
        print(shape, "error", err)
    visited = []
    api.structural_visit(value, [(int, lambda x, visitor: visited.append(x))])
    print(shape, "visit", len(visited), visited[-1] if shape == "chain" else visited[0])
value = build("chain", N, bottom=99)
print("chain skip", count_ints("pre", skip_links=True))
"""


@pytest.mark.parametrize("frontend", FRONTENDS)
def test_structural_walk_and_visit_past_the_old_limit(frontend):
    # a py_class chain and nested Arrays 20,000 deep: every int is met (post and pre order),
    # an interrupt and an error at the bottom come back out, a skip stops the descent
    out = _run(frontend, WALKS.format(depth=TRAVERSAL_DEPTH), timeout=600)
    n = TRAVERSAL_DEPTH
    # the ints: each Link's v (n + 1 Links), or n levels' i % 7 and the bottom; the level below
    # comes first in each value, so the bottom is met first in either order; the chain's
    # visit ends at the root's v
    assert out.splitlines() == [
        f"chain post ({n + 1}, [99])", f"chain pre ({n + 1}, [99])",
        "chain interrupt 99", "chain error \"'bottom'\"", f"chain visit {n + 1} {(n - 1) % 7}",
        f"arrays post ({n + 1}, [99])", f"arrays pre ({n + 1}, [99])",
        "arrays interrupt 99", "arrays error \"'bottom'\"", f"arrays visit {n + 1} 99",
        "chain skip (0, [])"], out


@pytest.mark.parametrize("frontend", FRONTENDS)
def test_json_text_past_the_old_limit(frontend):
    # Parse and Stringify of arrays and objects 20,000 deep round-trip exactly; a syntax
    # error at the bottom is reported where it is
    out = _run(frontend, f"""
PARSE = api.get_global_func("ffi.json.Parse")
STRINGIFY = api.get_global_func("ffi.json.Stringify")
N = {TRAVERSAL_DEPTH}
for text in ["[" * N + "1" + "]" * N, '{{"a":' * N + '[true,null,"x"]' + "}}" * N]:
    value = PARSE(text)
    print(STRINGIFY(value, None) == text)
try:
    PARSE("[" * N + "1,]" + "]" * (N - 1))
except ValueError as err:
    print(err)
deep = api.List([])
for _ in range(N):
    deep = api.List([deep])
print(len(STRINGIFY(deep, None)) == 2 * (N + 1))
""")
    assert out.splitlines() == ["True", "True",
                                f"Expecting value: line 1 column {TRAVERSAL_DEPTH + 3} "
                                f"(char {TRAVERSAL_DEPTH + 2})", "True"], out


@pytest.mark.parametrize("frontend", FRONTENDS)
def test_structural_map_and_mutate_past_the_old_limit(frontend):
    # every int of a chain and of nested Arrays 20,000 deep rebuilt (+1), pre and post order;
    # a mutate callback owning the ints (the Links get the default mutation, as frames); an
    # error at the bottom comes back out (a callback that itself descends, through
    # mutator.default_mutate, nests calls as upstream's does: not asked for here)
    out = _run(frontend, f"""
N = {TRAVERSAL_DEPTH}
for shape in ["chain", "arrays"]:
    value = build(shape, N, bottom=99)
    for order in ["post", "pre"]:
        mapped = api.structural_map(value, [(int, lambda x: x + 1)], order=order)
        print(shape, order, bottom_of(mapped, N), not first(mapped).same_as(first(value)))
    def fail_at_bottom(x):
        if x == 99:
            raise ValueError("bottom")
        return x
    try:
        api.structural_map(value, [(int, fail_at_bottom)])
    except ValueError as err:
        print(shape, "error", err)
value = build("chain", N, bottom=99)
mutated = api.structural_mutate(value, [(int, lambda x, mutator: x - 94)])
print("mutate", bottom_of(mutated, N))
""", timeout=600)
    assert out.splitlines() == [
        "chain post 100 True", "chain pre 100 True", "chain error bottom",
        "arrays post 100 True", "arrays pre 100 True", "arrays error bottom",
        "mutate 5"], out
