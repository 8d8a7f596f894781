"""Eight threads call through tvm_ffi_fast at once, objects crossing both ways.

The packed call releases the GIL around the kernel and Python callbacks take
it back from C++, so calls from eight threads interleave for real. Each
thread makes 10^5 calls (Arrays shared by all threads and Arrays of its own,
Map lookups, long strings, BigInts, Python callbacks called from C++, Python
callables made into Functions per call) and checks every result; afterwards
no thread failed, the process did not crash, and the strong counts of the
shared objects (read through the ABI) and the Python reference counts of the
shared Python objects are what they were.
"""

from __future__ import annotations

import json

import pytest

from frontend_harness import build_corpus_kernels
from subprocess_utils import run_python

THREADS = 8
CALLS_PER_THREAD = 100_000
CALLS_PER_ITERATION = 8

SCRIPT = r'''
import json, sys, threading
import tvm_ffi_fast as api

values = api.load_module({values!r})
containers = api.load_module({containers!r})
callbacks = api.load_module({callbacks!r})
introspect = api.load_module({introspect!r})

shared = api.convert([1, "a long shared element", 2.5])
table = api.convert({{"k": shared, "a long key of the table": "a long value of the table"}})


def callback(x):
    return x


failures = []
done = [0] * {threads}


def work(t):
    mine = api.convert([t, "a long string of thread %d" % t])
    text = "another long string, of thread %d" % t
    big = 2**70 + t
    try:
        for i in range({iterations}):
            assert values.echo(mine).same_as(mine)
            assert containers.map_get(table, "k").same_as(shared)
            assert callbacks.call1(callback, mine).same_as(mine)
            assert callbacks.call1(lambda x: x + i, t) == t + i
            assert values.echo(text) == text
            assert values.echo(big) == big
            assert values.echo([i, text])[1] == text
            assert values.echo(shared).same_as(shared)
            done[t] += 1
    except BaseException as error:  # noqa: BLE001 - reported below
        failures.append(f"thread {{t}}: {{type(error).__name__}}: {{error}}")


def counts():
    return [introspect.arg_strong_count(shared), introspect.arg_strong_count(table),
            sys.getrefcount(callback)]


before = counts()
threads = [threading.Thread(target=work, args=(t,)) for t in range({threads})]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(json.dumps({{"failures": failures, "done": done, "before": before, "after": counts()}}))
'''


def test_eight_threads_calling_at_once(kernels):
    libs = build_corpus_kernels(kernels, ["values", "containers", "callbacks", "introspect"])
    iterations = CALLS_PER_THREAD // CALLS_PER_ITERATION
    out = run_python(SCRIPT.format(threads=THREADS, iterations=iterations, **libs), timeout=600)
    report = json.loads(out)
    assert report["failures"] == []
    assert report["done"] == [iterations] * THREADS
    assert report["after"] == report["before"]
    assert report["before"][:2] == [2, 1]  # shared: its wrapper and the table; table: its wrapper


DEADLOCK_SCRIPT = r'''
import ctypes, threading
import {package} as api
from {package} import LIB, abi

# Thread A replaces a global again and again without the GIL (ctypes.CDLL releases
# it); each replaced Function is a Python callback whose deleter needs the GIL.
# Thread B looks globals up through ctypes.PyDLL, which keeps the GIL. If the
# runtime dropped the replaced Function under its table lock, A would wait for
# the GIL while B, holding it, waits for the lock.
text = ctypes.create_string_buffer(b"testing.replaced_again_and_again")
name = abi.TVMFFIByteArray(ctypes.addressof(text), len(text.value))
held = ctypes.PyDLL(LIB._name)
held.TVMFFIFunctionGetGlobal.argtypes = [ctypes.POINTER(abi.TVMFFIByteArray),
                                         ctypes.POINTER(ctypes.c_void_p)]
stop = threading.Event()

def replace():
    for i in range({rounds}):
        f = api.convert(lambda i=i: i)
        handle = f._handle
        LIB.TVMFFIObjectIncRef(ctypes.c_void_p(handle))
        del f  # the table's reference is now the last one after the next replacement
        assert LIB.TVMFFIFunctionSetGlobal(ctypes.byref(name), ctypes.c_void_p(handle), 1) == 0
        LIB.TVMFFIObjectDecRef(ctypes.c_void_p(handle))
    stop.set()

def look_up():
    out = ctypes.c_void_p()
    while not stop.is_set():
        assert held.TVMFFIFunctionGetGlobal(ctypes.byref(name), ctypes.byref(out)) == 0
        if out.value:
            LIB.TVMFFIObjectDecRef(out)

threads = [threading.Thread(target=replace), threading.Thread(target=look_up)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("done", api.get_global_func("testing.replaced_again_and_again")())
'''


@pytest.mark.parametrize("package", ["tvm_ffi_fast", "tvm_ffi_ref"])
def test_replacing_a_python_global_while_another_thread_holds_the_gil_does_not_deadlock(package):
    rounds = 20_000 if package == "tvm_ffi_fast" else 2_000
    out = run_python(DEADLOCK_SCRIPT.format(rounds=rounds, package=package), timeout=60)
    assert out.split() == ["done", str(rounds - 1)]
