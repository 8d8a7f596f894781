"""10^6 calls through tvm_ffi_fast leave memory flat and reference counts unchanged.

Every kind of value the compiled core makes or unwraps crosses: Arrays, Maps,
Strings and Bytes both ways, lists converted per call, NumPy arrays imported
per call, BigInts, Shapes, Python callables made into Functions per call and
Python callbacks invoked from C++. After a warm-up, a million calls may grow
the resident set by less than 1 MB (a leak of one byte per call fails), and
the strong counts of long-lived objects (read through the ABI) and the Python
reference counts of long-lived Python objects must be what they were.

Under AddressSanitizer (tools/sanitize.sh) freed blocks wait in a quarantine before reuse, so
the resident set would grow with every free (143 MB here); the run then turns the quarantine
off (its 1 MB slack is smaller than any useful one), which makes the resident set the measure
again. Use after free in these paths is what the rest of the sanitizer run checks.
"""

from __future__ import annotations

import ctypes
import json
import os

from frontend_harness import build_corpus_kernels
from subprocess_utils import run_python

CALLS = 1_000_000
CALLS_PER_ITERATION = 10
RSS_SLACK_BYTES = 1024 * 1024

SCRIPT = r'''
import gc, json, os, sys
import numpy as np
import tvm_ffi_fast as api

values = api.load_module({values!r})
containers = api.load_module({containers!r})
callbacks = api.load_module({callbacks!r})
introspect = api.load_module({introspect!r})


def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


array = api.convert([1, "a long string value", 2.5, None])
table = api.convert({{"k": array, "a long key for the map": "a long value for the map"}})
text = api.convert("a long string, longer than seven bytes")
tensor = np.arange(16.0)


def callback(x):
    return x


def run(iterations):
    for _ in range(iterations):
        assert values.echo(array).same_as(array)           # Array in and out
        assert containers.map_get(table, "k").same_as(array)  # Map in, its element out
        assert callbacks.call1(callback, text) == text     # String to a callback via C++, back
        values.echo("another long string, made per call")  # str -> String, String -> str
        values.echo([1, 2, "three"])                       # list -> Array per call
        values.echo(tensor)                                # NumPy -> Tensor per call
        values.echo(2**70)                                 # BigInt both ways
        callbacks.call1(lambda x: x, b"bytes longer than seven")  # a Function per call
        values.echo(api.Shape((2, 3)))                     # Shape made and returned
        values.echo({{"k": None}})                          # dict -> Map per call


def counts():
    return [introspect.arg_strong_count(array), introspect.arg_strong_count(table),
            introspect.arg_strong_count(text), sys.getrefcount(callback), sys.getrefcount(tensor)]


run(20000)
gc.collect()
before = (rss(), counts())
run({iterations})
gc.collect()
after = (rss(), counts())
print(json.dumps({{"growth": after[0] - before[0], "before": before[1], "after": after[1]}}))
'''


def test_a_million_calls_leave_memory_flat_and_counts_unchanged(kernels, monkeypatch):
    libs = build_corpus_kernels(kernels, ["values", "containers", "callbacks", "introspect"])
    if hasattr(ctypes.CDLL(None), "__asan_init"):  # under ASan: later options win
        monkeypatch.setenv("ASAN_OPTIONS", os.environ.get("ASAN_OPTIONS", "")
                           + ":quarantine_size_mb=0:thread_local_quarantine_size_kb=0")
    out = run_python(SCRIPT.format(iterations=CALLS // CALLS_PER_ITERATION, **libs), timeout=600)
    report = json.loads(out)
    assert report["after"] == report["before"]
    assert report["before"][:3] == [2, 1, 1]  # array: wrapper + map; table, text: wrapper only
    assert report["growth"] < RSS_SLACK_BYTES, report
