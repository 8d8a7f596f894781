"""Deep structures are released without recursion, under both runtimes.

A chain of objects each holding the next dies link by link when its head goes: every
deleter releases the next link, whose deleter releases the one after... Nested, that is
one C stack frame (and, in the reference runtime, Python frames) per link, and the
process dies somewhere past a few hundred thousand links. libtvm_ffi.so queues an object
whose last reference goes while another deleter runs (c_api/src/release.c), so the
depth of a chain costs no stack. Each case runs in a fresh interpreter (a crash must fail
the test, not the session) with a deadline.

Sizes: 1e6 links under fast; the reference builds its objects in Python (about a quarter of a
millisecond each), so CI gives it 50,000 links, still 50 times Python's recursion limit;
``TVM_FFI_DEEP_FULL=1`` runs 1e6 under both.
"""

from __future__ import annotations

import os
import time

import pytest

from subprocess_utils import run_python

FULL = os.environ.get("TVM_FFI_DEEP_FULL") == "1"
SIZES = {"fast": 1_000_000, "ref": 1_000_000 if FULL else 50_000}
MODULES = {"fast": "tvm_ffi_fast", "ref": "tvm_ffi_ref"}
#: Seconds a case may take: the 1e6 ones run in about 10-30 s on a loaded two-core machine.
DEADLINE = 900 if FULL else 300


def _run(frontend: str, body: str) -> str:
    code = f"import sys, time\nimport {MODULES[frontend]} as api\nN = {SIZES[frontend]}\n" + body
    return run_python(code, timeout=DEADLINE)


@pytest.mark.parametrize("frontend", ["fast", "ref"])
def test_py_class_chain_is_released(frontend):
    """A chain of py_class objects, each holding the next, dies when its head goes, and every
    link is freed (an Array holding the tail sees the last link's reference go)."""
    out = _run(frontend, """
from typing import Optional

@api.dataclasses.py_class("deep.ChainLink")
class Link(api.Object):
    next: Optional[api.Object]

import ctypes

tail = Link(None)
head = tail
for _ in range(N - 1):
    head = Link(head)
probe = api.Array([tail])  # holds the tail, to watch the chain's reference to it go
handle = tail.__chandle__()
del tail

def strong():
    return ctypes.c_uint64.from_address(handle).value & 0xFFFFFFFF

before = strong()
start = time.perf_counter()
del head
print("released", N, round(time.perf_counter() - start, 3))
print("tail's strong count", before, "->", strong())
""")
    assert f"released {SIZES[frontend]}" in out, out
    before, after = out.split("tail's strong count ")[1].split(" -> ")
    assert int(after) == int(before) - 1, out  # the last link (and so every link) died


@pytest.mark.parametrize("frontend", ["fast", "ref"])
def test_nested_arrays_are_released(frontend):
    """An Array holding an Array ... N deep (built by the runtime, one level per call) dies
    when its outermost reference goes."""
    out = _run(frontend, """
inner = api.Array([])
for _ in range(N):
    inner = api.Array([inner])
start = time.perf_counter()
del inner
print("released", round(time.perf_counter() - start, 3))
""")
    assert "released" in out, out


@pytest.mark.parametrize("frontend", ["fast", "ref"])
def test_deep_access_path_is_built_and_released(frontend):
    """An access path 100,000 steps deep (each path holds its parent) is built and freed."""
    out = _run(frontend, """
path = api.access_path.AccessPath.root()
for i in range(100_000):
    path = path.array_item(i)
steps = path.to_steps()
print("steps", len(steps))
del path, steps
print("released")
""")
    assert "steps 100000" in out and "released" in out, out


def test_release_of_a_million_links_is_quick_under_fast():
    """The queued release costs about what the nested one did: 1e6 links in seconds."""
    out = _run("fast", """
from typing import Optional

@api.dataclasses.py_class("deep.TimedLink")
class Link(api.Object):
    next: Optional[api.Object]

head = None
for _ in range(N):
    head = Link(head)
start = time.perf_counter()
del head
print("seconds", time.perf_counter() - start)
""")
    seconds = float(out.split("seconds")[1])
    assert seconds < 10, out
