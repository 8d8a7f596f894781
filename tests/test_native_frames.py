"""A failing Python callback's error names the C++ frames that called it, in every core.

When a kernel calls a Python function that raises, the error's backtrace lists
the callback's Python frames and then the kernel's own frames that made the
call, each with its function name (``c_api/src/native_frames.c``), as
upstream's libbacktrace does; when Python itself called the callback there
are no kernel frames to add. A kernel that raises (``TVMFFIBacktrace``) gets
the frames of its callers after the location it gives. ``testing.apply`` (``libtvm_ffi_testing.so``)
is the kernel: its ``TestApply`` is a function of an anonymous namespace, so
naming it takes the library's full symbol table, not only its exports.
"""

from __future__ import annotations

import json

import pytest

from subprocess_utils import run_python

CORES = {
    "ref": "import tvm_ffi_ref as api",
    "fast": "import tvm_ffi_fast as api",
    "fast-cffi": "import os\nos.environ['TVM_FFI_FAST_CORE'] = 'cffi'\nimport tvm_ffi_fast as api",
}

PROGRAM = """
import json
import {package}.testing  # loads libtvm_ffi_testing.so

raise_error = api.get_global_func("testing.test_raise_error")
apply = api.get_global_func("testing.apply")
fapply = api.convert(lambda f, *args: f(*args))
direct = []

def failing_callback():
    try:
        fapply(raise_error, "ValueError", "inner")   # Python calls the callback: no kernel frames
    except ValueError as error:
        direct.append(error.__tvm_ffi_error__.backtrace)
        raise

try:
    apply(failing_callback)                           # the kernel calls the callback
except ValueError as error:
    nested = error.__tvm_ffi_error__.backtrace

def native(text):
    return [line.strip() for line in text.splitlines() if line.strip().startswith('File "<lib')]

print(json.dumps({{"direct": native(direct[0]), "nested": native(nested), "text": nested}}))
"""


def _run(core: str) -> dict:
    package = "tvm_ffi_ref" if core == "ref" else "tvm_ffi_fast"
    out = run_python(CORES[core] + "\n" + PROGRAM.format(package=package))
    return json.loads(out.strip().splitlines()[-1])


@pytest.mark.parametrize("core", sorted(CORES))
def test_kernel_frames_are_named_after_the_python_frames(core):
    result = _run(core)
    text, nested = result["text"], result["nested"]
    # Python called the first callback: the only kernel frames are those of the raising C++
    # function's callers (TVMFFIBacktrace), up to the front end that called the kernel
    assert result["direct"] and all("<libtvm_ffi_testing.so>" in line for line in result["direct"])
    assert not any("TestApply" in line for line in result["direct"])
    # the kernel that called the failing callback, named from its symbol table
    apply_frames = [line for line in nested if "TestApply(" in line]
    assert len(apply_frames) == 1, text
    assert apply_frames[0].startswith('File "<libtvm_ffi_testing.so>", line 0, in ')
    assert "(anonymous namespace)::TestApply(TVMFFIAny const*, int)" in apply_frames[0]
    # innermost first: the raising C++ function, the callbacks' Python frames, then the kernel
    assert text.count("TestRaiseError") == 1 and text.count("TestApply") == 1
    assert text.find("TestRaiseError") < text.find("failing_callback") < text.find("TestApply")
    # only kernel frames: none of libtvm_ffi.so, the front ends' modules or the interpreter
    assert all("<libtvm_ffi_testing.so>" in line for line in nested), nested
