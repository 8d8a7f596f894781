"""What lets both front ends run on PyPy, tested on CPython; the PyPy runs themselves.

* ``tvm_ffi_common.pycapi``: capsules, ``PyObject*`` references handed to C and the
  deferring deleter, through the extension module that works on both interpreters;
* ``releases``: a wrapper's reference dropped at once where collection is prompt, queued
  and drained by ordinary code elsewhere;
* the cffi core of ``tvm_ffi_fast`` (``cffi_front/``, what PyPy runs): the whole kernel
  corpus through it on CPython (``TVM_FFI_FAST_CORE=cffi``) gives the corpus's results;
* the PyPy job: with ``$TVM_FFI_PYPY`` (a PyPy with this project installed, as .ci/run makes)
  both front ends import under PyPy and say which core they run.
"""

from __future__ import annotations

import ctypes
import subprocess
import sys

import pytest

from corpus_cases import ALL_CASES, SETUP
from frontend_harness import build_corpus_kernels, pypy_interpreter, run_frontend


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
    assert done.stdout.split() == ["cffi", "cffi_front"], done.stderr


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
