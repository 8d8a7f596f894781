"""A List's buffer is released by the allocator that made it, whoever grows the List.

C++ compiled from upstream's headers grows a List in place with ``::operator new`` and
keeps the cell's ``data_deleter``; so every List buffer, ours or C++'s, is ``operator new``'s
and every List deleter ``operator delete`` (libtvm_ffi's list buffer pair). A mismatch (a
``free`` of an ``operator new`` block) corrupts the heap when another allocator serves
``operator new`` (jemalloc, tcmalloc); tools/sanitize.sh reports it as alloc-dealloc-mismatch,
and these tests pin the deleter each side installs.
"""

from __future__ import annotations

import pytest

from subprocess_utils import run_python

KERNEL = r"""
#include <tvm/ffi/container/list.h>
#include <tvm/ffi/function.h>

namespace {
// Grows the caller's List past its capacity several times (ListObj::Reserve each time).
void Grow(tvm::ffi::List<tvm::ffi::Any> list, int64_t count) {
  for (int64_t i = 0; i < count; ++i) list.push_back(i);
}
// A List made in C++: operator new storage and upstream's own deleter.
tvm::ffi::List<tvm::ffi::Any> Make(int64_t count) {
  tvm::ffi::List<tvm::ffi::Any> list;
  for (int64_t i = 0; i < count; ++i) list.push_back(i);
  return list;
}
}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(grow, Grow);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(make, Make);
"""

CHECK = """
import ctypes
import {module} as api
from tvm_ffi_common.capi import LIB

lib = api.load_module({path!r})
FREE = ctypes.cast(LIB.tvm_ffi_runtime_list_buffer_free, ctypes.c_void_p).value

def deleter(lst):
    return ctypes.c_void_p.from_address(lst.__chandle__() + 24 + 24).value

ours = api.List([-1])
assert deleter(ours) == FREE, "a List made here must free its buffer with operator delete"
lib.grow(ours, 100)  # C++ replaces the buffer with its own, keeping our deleter
assert deleter(ours) == FREE
assert len(ours) == 101 and ours[100] == 99 and sum(ours) == 4949
ours.append(7)  # and this runtime grows a buffer C++ made
ours.extend(range(200))
assert len(ours) == 302 and ours[101] == 7
theirs = lib.make(10)
cxx_deleter = deleter(theirs)
assert cxx_deleter not in (None, FREE)  # upstream's inline operator delete wrapper
theirs.extend(range(50))  # this runtime regrows a C++ List: with operator new, as C++ would
assert deleter(theirs) in (FREE, cxx_deleter) and len(theirs) == 60 and theirs[59] == 49
del ours, theirs
print("ok")
"""


@pytest.fixture(scope="module")
def library(kernels):
    return kernels.build("list_buffer_ownership", KERNEL)


@pytest.mark.parametrize("module", ["tvm_ffi_fast", "tvm_ffi_ref"])
def test_list_buffers_share_one_allocator(library, module):
    """Both runtimes install operator delete as a List's deleter, keep it when C++ grows the
    List and when they grow a C++ List, and the List's contents survive every regrowth."""
    assert run_python(CHECK.format(module=module, path=library)).strip() == "ok"
