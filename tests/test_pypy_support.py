"""What lets both front ends run on PyPy, tested on CPython; the PyPy runs themselves.

* ``tvm_ffi_common.pycapi``: capsules, ``PyObject*`` references handed to C and the
  deferring deleter, through the extension module that works on both interpreters;
* ``releases``: a wrapper's reference dropped at once where collection is prompt, queued
  and drained by ordinary code elsewhere, where a loop of large tensors collects often
  enough to stay small;
* the cffi core of ``tvm_ffi_fast`` (``cffi_core/``, what PyPy runs): the whole kernel
  corpus through it on CPython (``TVM_FFI_FAST_CORE=cffi``) gives the corpus's results;
  callable arguments lent from its pool are themselves in every call, and released; its
  String and Bytes results are copies with no object behind them; on PyPy a global lookup
  hands back the Function it made for the name, and a removed function still dies;
* the PyPy job: with ``$TVM_FFI_PYPY`` (a PyPy with this project installed, as .ci/run makes)
  both front ends import under PyPy and say which core they run.
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys

import pytest

from corpus_cases import ALL_CASES, SETUP
from frontend_harness import (FRONTEND_IMPORTS, build_corpus_kernels, interpreter,
                              pypy_interpreter, run_frontend)


def test_capsule_calls_round_trip():
    from tvm_ffi_common import pycapi

    name = pycapi.static_name(b"test_capsule")
    capsule = pycapi.capsule_new(0x1234, name, None)
    assert pycapi.capsule_is_valid(capsule, b"test_capsule")
    assert not pycapi.capsule_is_valid(capsule, b"other")
    assert pycapi.capsule_get_pointer(capsule, b"test_capsule") == 0x1234
    with pytest.raises(ValueError):
        pycapi.capsule_get_pointer(capsule, b"other")
    pycapi.capsule_set_name(capsule, pycapi.static_name(b"renamed"))
    assert pycapi.capsule_is_valid(capsule, b"renamed")


def test_references_handed_to_c_keep_the_object_and_come_back():
    from tvm_ffi_common import pycapi

    value = object()
    before = sys.getrefcount(value)
    address = pycapi.new_reference(value)
    assert sys.getrefcount(value) == before + 1
    assert pycapi.object_at(address) is value
    assert sys.getrefcount(value) == before + 1  # object_at borrows C's reference
    assert pycapi.object_from_new_reference(address) is value
    assert sys.getrefcount(value) == before  # C's reference was handed back
    release = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(pycapi.RELEASE_REFERENCE)
    release(pycapi.new_reference(value))
    assert sys.getrefcount(value) == before


def test_the_deferring_deleter_only_queues():
    from tvm_ffi_common import pycapi

    pycapi.take_deferred()
    deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(pycapi.DEFERRED_DELETER)
    deleter(0x10)
    deleter(0x20)
    assert pycapi.take_deferred() == [0x10, 0x20]
    assert pycapi.take_deferred() == []


def test_interpreter_functions_are_addresses():
    from tvm_ffi_common import pycapi

    for name in ("PyErr_CheckSignals", "PyGILState_Ensure", "PyGILState_Release"):
        assert pycapi.interpreter_function(name) == ctypes.cast(
            getattr(ctypes.pythonapi, name), ctypes.c_void_p).value
    with pytest.raises(ValueError, match="no such function"):
        pycapi.interpreter_function("Py_Exit")


def test_releases_are_queued_where_collection_is_not_prompt(monkeypatch):
    from tvm_ffi_ref import releases

    dropped = []
    saved = list(releases._decref)
    try:
        releases.configure(dropped.append)
        monkeypatch.setattr(releases, "PROMPT", True)
        releases.release(1)
        assert dropped == [1] and not releases.pending
        monkeypatch.setattr(releases, "PROMPT", False)
        releases.release(2)
        releases.release(3)
        assert dropped == [1] and releases.pending == [2, 3]
        releases.drain()
        assert sorted(dropped) == [1, 2, 3] and not releases.pending
    finally:
        releases._decref[:] = saved


_TENSOR_LOOP = """
import resource, numpy as np
import {package} as api
start = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
for _ in range(200):
    tensor = api.from_dlpack(np.ones(1 << 20))  # 8 MB, held by the Tensor object
    del tensor
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - start) // 1024)
"""


@pytest.mark.parametrize("package", ["tvm_ffi_fast", "tvm_ffi_ref"])
def test_dropped_tensors_are_released_in_a_loop_under_pypy(package):
    """Under PyPy a loop that imports and drops 200 tensors of 8 MB stays far below their
    1.6 GB: each Tensor's memory is reported to the collector, which then collects often
    enough, and the import releases what was collected. (Without, the few small wrappers
    never filled the nursery: nothing was collected, nothing released.)"""
    pypy = pypy_interpreter()
    if pypy is None:
        pytest.skip("needs $TVM_FFI_PYPY (a PyPy with this project): the PyPy job runs this")
    done = subprocess.run([pypy, "-c", _TENSOR_LOOP.format(package=package)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    grown_mb = int(done.stdout.split()[-1])
    assert grown_mb < 400, f"peak memory grew by {grown_mb} MB"


_LOOKUPS = """
import gc, json, weakref
import tvm_ffi_fast as api
class Payload: pass
def closure(value): return lambda: value  # the function keeps ``value`` alive
payload = Payload()
alive = weakref.ref(payload)
api.register_global_func("test.lookups", closure(payload))
first, second = api.get_global_func("test.lookups"), api.get_global_func("test.lookups")
shared = first is second and first() is payload
first.note = 1  # a wrapper with attributes set is not handed out again
fresh = api.get_global_func("test.lookups") is not first  # and is kept for the name
api.register_global_func("test.lookups.other", lambda: 1)
api.get_global_func("test.lookups.other")
api.register_global_func("test.lookups.other", lambda: 2, override=True)
replaced = api.get_global_func("test.lookups.other")() == 2
del first, second, payload
api.remove_global_func("test.lookups")
for _ in range(3):
    gc.collect()
    api.get_global_func("ffi.Array")  # a call: queued releases are dropped
print(json.dumps([shared, fresh, replaced, alive() is None]))
"""


def _run_under_cffi_core(frontend: str, script: str):
    """What ``script``'s last line prints as JSON, run by ``frontend``'s interpreter with
    tvm_ffi_fast on its cffi core; skips a PyPy front end where no PyPy is given."""
    if frontend.startswith("pypy-") and pypy_interpreter() is None:
        pytest.skip("needs $TVM_FFI_PYPY (a PyPy with this project): the PyPy job runs this")
    env = dict(os.environ, TVM_FFI_FAST_CORE="cffi")
    done = subprocess.run([interpreter(frontend), "-c", script], capture_output=True,
                          text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize("frontend", ["fast-cffi", "pypy-fast"])
def test_global_lookups_share_a_live_wrapper_only_under_pypy(frontend):
    """The cffi core on PyPy hands back the Function it made for a name while the name finds
    the same function and no attribute was set on it (a wrapper per lookup cost its collector
    more than the lookup); on CPython each lookup makes a wrapper, as upstream. Either way a
    removed function is released."""
    shared, fresh, replaced, released = _run_under_cffi_core(frontend, _LOOKUPS)
    assert shared == frontend.startswith("pypy-")
    assert fresh and replaced and released


_HOT_TABLES = r"""
import functools, json, sys
import tvm_ffi_fast as api
api.Array([1, "two"])  # wraps registered and first-seen classes
wrappers = sys.modules["tvm_ffi_fast.object"]._WRAPPERS
getter = sys.modules["tvm_ffi_fast.type_records"].FieldGetter(0, 0)
print(json.dumps([all(type(k) is int for k in wrappers),
                  isinstance(getter._call, functools.partial)]))
"""


@pytest.mark.parametrize("frontend", ["fast-cffi", "pypy-fast"])
def test_the_cffi_core_keeps_its_hot_paths_plain_for_pypy(frontend):
    """What PyPy's JIT needs on every call, held: the table a result's wrapper class is found
    in has plain int keys (one IntEnum key makes PyPy store it as objects, boxing each lookup),
    and a field's accessor is a closure where ``functools.partial`` is Python code building a
    dict per call (PyPy's), the compiled partial where it is compiled (CPython's)."""
    int_keys, partial = _run_under_cffi_core(frontend, _HOT_TABLES)
    assert int_keys
    assert partial == (not frontend.startswith("pypy-"))


@pytest.fixture(scope="module")
def corpus_libs(kernels):
    return build_corpus_kernels(kernels)


def test_the_cffi_core_passes_the_corpus_on_cpython(corpus_libs):
    results = run_frontend("fast-cffi", [(case.id, case.code) for case in ALL_CASES], setup=SETUP,
                           libs=corpus_libs, introspect="introspect")
    differing = [(case.id, results[case.id], case.expect) for case in ALL_CASES
                 if results[case.id] != case.expect]
    assert not differing, differing[:5]


def test_the_cffi_core_is_the_one_imported():
    code = ("import os; os.environ['TVM_FFI_FAST_CORE'] = 'cffi'\n"
            "import tvm_ffi_fast, tvm_ffi_fast.object as o\n"
            "print(tvm_ffi_fast._CORE, os.path.basename(os.path.dirname(o.__file__)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.split() == ["cffi", "cffi_core"], done.stderr


@pytest.mark.skipif(pypy_interpreter() is None,
                    reason="no PyPy given: .ci/run's PyPy job sets TVM_FFI_PYPY and runs the "
                           "corpus and conformance properties under PyPy")
def test_both_front_ends_import_under_pypy():
    code = ("import sys, tvm_ffi_fast, tvm_ffi_ref\n"
            "print(sys.implementation.name, tvm_ffi_fast._CORE, tvm_ffi_ref.runtime_name())")
    done = subprocess.run([pypy_interpreter(), "-c", code], capture_output=True, text=True)
    assert done.stdout.split() == ["pypy", "cffi", "tvm_ffi_fast"], done.stderr


def test_the_cffi_core_carries_scalable_vector_dtypes():
    """A scalable vector's lanes are negative in Python and a uint16 in ``DLDataType``: the cffi
    core (whose struct fields refuse out-of-range values, unlike ctypes') converts both ways."""
    code = ("import os; os.environ['TVM_FFI_FAST_CORE'] = 'cffi'\n"
            "import tvm_ffi_fast as api, tvm_ffi_fast.testing\n"
            "echo = api.get_global_func('testing.echo')\n"
            "for text in ('float32xvscalex4', 'int8xvscalex32768'):\n"
            "    d = echo(api.dtype(text))\n"
            "    print(d, d.lanes)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.split() == ["float32xvscalex4", "-4", "int8xvscalex32768", "-32768"], \
        done.stderr


def _dltensor_fields(address: int) -> tuple:
    from tvm_ffi_common import abi

    t = abi.DLManagedTensor.from_address(address).dl_tensor
    return (t.data, t.device.device_type, t.device.device_id, t.ndim, t.dtype.code, t.dtype.bits,
            t.dtype.lanes, bool(t.shape), bool(t.strides), [t.shape[i] for i in range(t.ndim)],
            [t.strides[i] for i in range(t.ndim)], t.byte_offset)


def _array_views():
    """NumPy arrays in the forms a kernel argument takes: every DLPack dtype and some it lacks,
    other byte orders, 0-d and empty arrays, sliced, reversed, transposed, read-only, and
    size-1 dimensions with strides no layout would give them."""
    import numpy as np
    from numpy.lib.stride_tricks import as_strided

    base = np.arange(24, dtype="int64")
    yield base.reshape(2, 3, 4)
    yield base.reshape(2, 3, 4)[:, ::2, ::-1]
    yield base.reshape(4, 6).T
    yield base[::5]
    yield base[:0]
    yield np.zeros(())
    yield as_strided(base, shape=(1, 3), strides=(8 * 7, 8))
    yield as_strided(base, shape=(3, 1), strides=(8, 3))  # a stride no multiple of 8
    yield base.view("int32")[1::2]
    yield np.broadcast_to(base[:1], (3, 4))  # read-only, strides 0
    read_only = base.copy()
    read_only.flags.writeable = False
    yield read_only
    for dtype in ("?", "i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f2", "f4", "f8", "c8",
                  "c16", "g", "G", ">f4", ">i8", "O", "M8[s]", "U3", "V4"):
        yield np.zeros((2, 3), dtype=dtype)


def test_ndarray_managed_tensors_describe_arrays_as_dlpack_does():
    """What the cffi core passes for an exact NumPy array without calling ``__dlpack__`` is the
    tensor ``__dlpack__`` gives, field for field, or nothing (it then asks ``__dlpack__``); its
    deleter hands the array back."""
    import numpy as np
    from tvm_ffi_common import abi, pycapi

    convention = pycapi.ndarray_tensor_convention(np)
    assert convention is not None, np.__version__  # 2.0 and 2.4 each have one
    built = 0
    for array in _array_views():
        before = sys.getrefcount(array)
        managed = pycapi.ndarray_managed_tensor(array, convention)
        try:
            capsule = array.__dlpack__()
        except (BufferError, TypeError):
            assert managed is None, array.dtype
            continue
        expected = _dltensor_fields(pycapi.capsule_pointer(capsule, b"dltensor"))
        del capsule
        if managed is None:  # only where the fast path is not promised
            assert (not array.flags.writeable or not array.dtype.isnative or array.ndim == 0 or
                    array.dtype.kind not in "biufc" or array.dtype.itemsize > 16 or
                    array.dtype in (np.longdouble, np.clongdouble) or
                    any(stride % array.itemsize for stride in array.strides)), array.dtype
            continue
        built += 1
        assert _dltensor_fields(managed) == expected, (array.dtype, array.shape, array.strides)
        assert sys.getrefcount(array) == before + 1  # the managed tensor holds the array
        deleter = abi.DLManagedTensor.from_address(managed).deleter
        deleter(ctypes.cast(managed, ctypes.POINTER(abi.DLManagedTensor)))
        assert sys.getrefcount(array) == before
    assert built >= 20
    assert pycapi.ndarray_managed_tensor(memoryview(bytearray(8)), False) is None  # no NumPy array
    subclass = type("Sub", (np.ndarray,), {})
    assert pycapi.ndarray_managed_tensor(np.zeros(2).view(subclass), False) is None


def _facts_under(frontend: str, kernels, program: str):
    """What ``program`` prints (JSON) under ``frontend`` with ``LIB``, the corpus's callback
    kernels; skipped for a PyPy front end when no PyPy is given."""
    if frontend.startswith("pypy") and pypy_interpreter() is None:
        pytest.skip("no PyPy given: .ci/run's PyPy job sets TVM_FFI_PYPY and runs this there")
    lib = build_corpus_kernels(kernels, ["callbacks"])["callbacks"]
    code = FRONTEND_IMPORTS[frontend] + f"\nLIB = {lib!r}\n" + program
    done = subprocess.run([interpreter(frontend), "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


#: What a callable argument's Function must do, whatever the core does with it between calls
#: (the cffi core lends it from a pool and takes it back when C has not kept it).
CALLABLE_LOANS = """
import gc, json, threading, weakref
k = api.load_module(LIB)

class Add:
    def __init__(self, n):
        self.n = n
    def __call__(self, x):
        return x + self.n

facts = {}
# C keeps f and g in the Function it returns; loans made meanwhile must not disturb them
kept_f, kept_g = Add(1), Add(10)
composed = k.compose(kept_f, kept_g)
facts["plain"] = [k.call1(Add(n), 100) for n in range(40)]
facts["composed"] = composed(5)
# two loans in one call, the second called through the first
facts["two"] = [k.call1(lambda fn: fn(3), Add(n)) for n in range(5)]
# a callable C did not keep is released by the call's end (gc: PyPy collects late)
gone = Add(7)
seen = weakref.ref(gone)
facts["called"] = k.call1(gone, 1)
del gone
for _ in range(3):  # (no callable passed meanwhile: its loan might take gone's place)
    gc.collect()
    api.Array([0])  # where releases are queued, a call drains them
facts["released"] = seen() is None
kept = weakref.ref(kept_f)
del kept_f
gc.collect()
facts["kept_alive"] = kept() is not None and composed(5) == 16
del composed
for _ in range(3):
    gc.collect()
    api.Array([0])
facts["kept_released"] = kept() is None
# callables of several threads at once each reach their own callable
wrong = []
def work(n):
    for i in range(300):
        got = k.call1(Add(n), i)
        if got != i + n:
            wrong.append((n, i, got))
threads = [threading.Thread(target=work, args=(1000 * t,)) for t in range(4)]
for t in threads: t.start()
for t in threads: t.join()
facts["threads_wrong"] = wrong
print(json.dumps(facts))
"""


@pytest.mark.parametrize("frontend", ["fast", "ref", "fast-cffi", "pypy-fast"])
def test_callable_arguments_are_called_kept_and_released(kernels, frontend):
    """A Python callable passed to C is called as itself in every call, stays alive while C
    keeps it, and is released once neither C nor the caller holds it (the cffi core reuses
    the Functions of callables C did not keep: this is what makes that safe)."""
    facts = _facts_under(frontend, kernels, CALLABLE_LOANS)
    assert facts == {"plain": [100 + n for n in range(40)], "composed": 16,
                     "two": [3, 4, 5, 6, 7], "called": 8,
                     "released": True, "kept_alive": True, "kept_released": True,
                     "threads_wrong": []}, facts


STRING_RESULTS = """
import json
import os
from tvm_ffi_fast._core import ffi
k = api.load_module(LIB)
text, data = "a string longer than seven bytes", b"bytes longer than seven"
arr = api.Array([text, data])
items = ffi.cast("TVMFFIAny*", ffi.cast("TVMFFISeqCell*", arr._handle + 24).data)

def strong_counts():
    return [ffi.cast("TVMFFIObject*", items[i].v_ptr).combined_ref_count & 0xFFFFFFFF
            for i in range(2)]

before = strong_counts()
s, b = arr[0], arr[1]
echoed = k.call1(lambda x: x, s)
print(json.dumps({"counts": [before, strong_counts()],
                  "kinds": [type(v).__name__ for v in (s, b, echoed)],
                  "equal": [s == text, b == data, echoed == text],
                  "objects": [s._tvm_ffi_cached_object is None, b._tvm_ffi_cached_object is None]}))
"""


@pytest.mark.parametrize("frontend", ["fast-cffi", "pypy-fast"])
def test_the_cffi_core_copies_string_and_bytes_results(kernels, frontend):
    """A String or Bytes result of the cffi core is its content, copied, with no object
    behind it (a finalizer per value costs PyPy's GC more than the copy): the object's
    reference is dropped as the value is made, and the value passes back as any str."""
    facts = _facts_under(frontend, kernels, STRING_RESULTS)
    assert facts == {"counts": [[1, 1], [1, 1]],
                                       "kinds": ["String", "Bytes", "String"],
                                       "equal": [True, True, True],
                                       "objects": [True, True]}, facts
