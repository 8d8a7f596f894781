"""100,000 calls leave reference counts unchanged and memory flat.

Long-lived objects (an Array, a Map holding it, a String, a wrapped Python
callable, a plain Python callback and a NumPy array) cross the boundary
100,000 times in both directions: as arguments, as results, and as arguments
of Python callbacks invoked from C++. Afterwards every object's strong count
(read through the ABI by the introspection kernel) and every Python
reference count must be what it was, and the resident set must not have grown
by more than ``RSS_SLACK_BYTES`` (about 40 bytes per call: any per-call leak
of an object, a wrapper or a buffer exceeds it).

A control run under upstream keeps every result alive on purpose and must be
caught by the same checks, so the checks are known to be able to fail.

Under AddressSanitizer (tools/sanitize.sh) freed blocks wait in a quarantine (256 MB by
default) before they are reused, so the resident set grows with every free and says nothing
about leaks. There the runs bound the quarantine to ``ASAN_QUARANTINE_MB`` (the most recently
freed blocks are still checked for use after free), which makes the resident set meaningful
again, and also compare ASan's own count of live heap bytes
(``__sanitizer_get_current_allocated_bytes``, which leaves quarantined blocks out).
"""

from __future__ import annotations

import ctypes
import json
import os
from concurrent.futures import ThreadPoolExecutor

import pytest

from frontend_harness import FRONTENDS_UNDER_TEST, build_corpus_kernels, run_frontend

#: Calls in the measured phase (five calls per iteration).
CALLS = 100_000
CALLS_PER_ITERATION = 5
#: Allowed growth of the resident set over the measured phase.
RSS_SLACK_BYTES = 4 * 1024 * 1024
#: The quarantine of freed blocks under AddressSanitizer, bounded well below ``RSS_SLACK_BYTES``.
ASAN_QUARANTINE_MB = 1


def under_asan() -> bool:
    """Whether AddressSanitizer's runtime is in this process (and so in the runs it starts)."""
    return hasattr(ctypes.CDLL(None), "__asan_init")

LOOP = r'''
import gc
import json
import os
import sys

KEEP_RESULTS = {keep}
kept = []


def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def heap():
    """ASan's live heap bytes (quarantined blocks left out), or None without ASan."""
    import ctypes
    process = ctypes.CDLL(None)
    if not hasattr(process, "__sanitizer_get_current_allocated_bytes"):
        return None
    process.__sanitizer_get_current_allocated_bytes.restype = ctypes.c_size_t
    return process.__sanitizer_get_current_allocated_bytes()


array = api.convert([1, "a long string value", 2.5, None])
table = api.convert({{"k": array, "n": 1, "a long key for the map": "a long value for the map"}})
text = api.convert("a long string, longer than seven bytes")
wrapped = api.convert(lambda x: x)


def callback(x):
    return x


tensor = np.arange(16.0)
named = {{"array": array, "table": table, "text": text, "wrapped": wrapped}}
python_named = dict(named, callback=callback, tensor=tensor)


def ffi_counts():
    return {{name: introspect.arg_strong_count(obj) for name, obj in named.items()}}


def python_counts():
    return {{name: sys.getrefcount(obj) for name, obj in python_named.items()}}


def run(iterations):
    for _ in range(iterations):
        a = values.echo(array)                        # Array out and back
        b = containers.map_get(table, "k")            # Map in, its element back
        c = callbacks.call1(wrapped, text)            # String to a wrapped callable via C++
        d = callbacks.call1(callback, array)          # Array to a plain callback via C++
        e = tensors.tensor_values(tensor)             # NumPy array in, new Array out
        if KEEP_RESULTS:  # the control: leak results and references to the inputs
            kept.extend((a, b, c, d, e, callback, tensor))


run(2000)
gc.collect()
before = (ffi_counts(), python_counts(), rss(), heap())
run({iterations})
gc.collect()
after = (ffi_counts(), python_counts(), rss(), heap())
result = json.dumps({{
    "ffi_before": before[0], "ffi_after": after[0],
    "python_before": before[1], "python_after": after[1],
    "rss_growth": after[2] - before[2],
    "heap_growth": None if after[3] is None else after[3] - before[3],
    "last_values": [str(x) for x in tensors.tensor_values(tensor)][:3],
}})
'''

KERNELS = ["introspect", "values", "containers", "callbacks", "tensors"]


def _loop(keep: bool) -> str:
    return LOOP.format(keep=keep, iterations=CALLS // CALLS_PER_ITERATION)


@pytest.fixture(scope="module")
def refcount_reports(kernels):
    """run name -> the measurements of one 100,000-call run."""
    libs = build_corpus_kernels(kernels, KERNELS)
    runs = {"control (leaks on purpose)": ("upstream", True), "upstream": ("upstream", False)}
    runs.update({frontend: (frontend, False) for frontend in FRONTENDS_UNDER_TEST if frontend != "upstream"})

    def run(spec):
        frontend, keep = spec
        result = run_frontend(frontend, [("loop", _loop(keep))], libs=libs, introspect="introspect")["loop"]
        return json.loads(result[1]) if result[0] == "str" else result

    with pytest.MonkeyPatch.context() as patch:
        if under_asan():  # later options override earlier ones
            patch.setenv("ASAN_OPTIONS", os.environ.get("ASAN_OPTIONS", "")
                         + f":quarantine_size_mb={ASAN_QUARANTINE_MB}:thread_local_quarantine_size_kb=64")
        with ThreadPoolExecutor(max_workers=2) as pool:
            return dict(zip(runs, pool.map(run, runs.values())))


def _problems(report):
    """What is wrong with a run's measurements (empty when the run is clean)."""
    if not isinstance(report, dict):
        return [f"the run did not complete: {report}"]
    problems = []
    if report["ffi_after"] != report["ffi_before"]:
        problems.append(f"strong counts changed: {report['ffi_before']} -> {report['ffi_after']}")
    if report["python_after"] != report["python_before"]:
        problems.append(f"Python refcounts changed: {report['python_before']} -> {report['python_after']}")
    if report["rss_growth"] > RSS_SLACK_BYTES:
        problems.append(f"resident set grew by {report['rss_growth']} bytes over {CALLS} calls")
    if (report["heap_growth"] or 0) > RSS_SLACK_BYTES:
        problems.append(f"live heap (ASan's count) grew by {report['heap_growth']} bytes over {CALLS} calls")
    return problems


def test_control_run_is_caught(refcount_reports):
    """Keeping results alive must trip the checks (so they can fail)."""
    problems = _problems(refcount_reports["control (leaks on purpose)"])
    assert any("strong counts changed" in p for p in problems), problems
    assert any("Python refcounts changed" in p for p in problems), problems
    assert any("resident set grew" in p for p in problems), problems
    if under_asan():
        assert any("live heap" in p for p in problems), problems


@pytest.mark.parametrize("frontend", ["upstream"] + [f for f in FRONTENDS_UNDER_TEST if f != "upstream"])
def test_counts_unchanged_and_memory_flat(refcount_reports, frontend):
    report = refcount_reports[frontend]
    assert _problems(report) == []
    # The objects were live and readable throughout.
    assert report["ffi_before"]["array"] == 2  # the Python wrapper and the Map
    assert report["last_values"] == ["0.0", "1.0", "2.0"]
