"""Names for the code addresses objects hold: deleters, trampolines, callbacks.

``dladdr`` names code in a shared library; the reference runtime's ctypes
callbacks and ``libtvm_ffi.so``'s private functions it cannot, so
:func:`known_code` collects their addresses once (making one probe Function of
each kind in the library) for the address book to name them. Apart from the
walk because it reads no object: it asks the runtime and the library where
their code is.
"""

from __future__ import annotations

import ctypes
from typing import Dict, Optional, Tuple

from tvm_ffi_common import abi
from tvm_ffi_common.capi import LIB

from .reading import HEADER_SIZE

_KNOWN_CODE: Optional[Dict[int, str]] = None


def known_code() -> Dict[int, str]:
    """Names of the code addresses the reference runtime and ``libtvm_ffi.so`` put in objects.

    Code in a shared library is named by ``dladdr``; these are ctypes callbacks
    (which live in anonymous memory) and ``libtvm_ffi.so``'s private functions,
    found by making one probe Function.
    """
    global _KNOWN_CODE
    if _KNOWN_CODE is not None:
        return _KNOWN_CODE
    from tvm_ffi_ref import function, pyobject
    from tvm_ffi_ref.runtime import container_common, errors, map_storage, memory, tensor

    def address(callback) -> int:
        return ctypes.cast(callback, ctypes.c_void_p).value

    known = {
        memory.OBJECT_DELETER_ADDRESS: "tvm_ffi_ref.runtime.memory.OBJECT_DELETER",
        memory.FREE_OBJECT_ADDRESS: "tvm_ffi_runtime_free_object in libtvm_ffi.so "
                                    "(frees the block; nothing else to release)",
        memory.FREE_SEQUENCE_ADDRESS: "tvm_ffi_runtime_free_sequence in libtvm_ffi.so "
                                      "(releases the elements, then the block)",
        container_common.FREE_ADDRESS: "free in libc",
        container_common.LIST_BUFFER_FREE_ADDRESS: "tvm_ffi_runtime_list_buffer_free in libtvm_ffi.so "
                                             "(operator delete, as C++ frees List buffers)",
        map_storage.ADOPTED_SMALL_DELETER: "tvm_ffi_ref.runtime.map_storage."
                                           "_release_adopted_small_map",
        address(errors._update_backtrace): "tvm_ffi_ref.runtime.errors._update_backtrace",
        address(function._python_safe_call): "tvm_ffi_ref.function._python_safe_call "
                                             "(runs the Python callable)",
        address(function._python_deleter): "tvm_ffi_ref.function._python_deleter",
        address(pyobject.release_pyobject): "tvm_ffi_ref.pyobject.release_pyobject "
                                            "(Py_DecRef)",
        tensor._EXPORTED_DELETER[False]: "tvm_ffi_runtime_host_dlpack_deleter in "
                                          "libtvm_ffi.so (tvm_ffi_ref.runtime.tensor."
                                          "_exported_deleter)",
        tensor._EXPORTED_DELETER[True]: "tvm_ffi_runtime_host_dlpack_versioned_deleter in "
                                         "libtvm_ffi.so (tvm_ffi_ref.runtime.tensor."
                                         "_exported_deleter)",
    }
    known.update(_library_function_code())
    _KNOWN_CODE = known
    return known


@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def _probe_release(_self):
    pass


@abi.TVMFFISafeCallType
def _probe_call(handle, args, num_args, result):  # pragma: no cover - never called
    return 0


def _probe_function(make) -> Optional[Tuple[int, int]]:
    """(trampoline, deleter) of a Function ``make(out)`` builds in ``libtvm_ffi.so``."""
    out = ctypes.c_void_p()
    if make(ctypes.byref(out)):
        handle = ctypes.c_void_p()
        LIB.TVMFFIErrorMoveFromRaised(ctypes.byref(handle))
        if handle.value:
            LIB.TVMFFIObjectDecRef(handle)
        return None
    try:
        cell = abi.TVMFFIFunctionCell.from_address(out.value + HEADER_SIZE)
        header = abi.TVMFFIObject.from_address(out.value)
        return (ctypes.cast(cell.safe_call, ctypes.c_void_p).value,
                ctypes.cast(header.deleter, ctypes.c_void_p).value)
    finally:
        LIB.TVMFFIObjectDecRef(out.value)


def _library_function_code() -> Dict[int, str]:
    """Addresses of ``libtvm_ffi.so``'s Function trampolines and deleters, from probe Functions."""
    known: Dict[int, str] = {}
    closure = _probe_function(lambda out: LIB.TVMFFIFunctionCreate(1, _probe_call, _probe_release,
                                                                   out))
    if closure:
        known[closure[0]] = CLOSURE_TRAMPOLINE
        known[closure[1]] = "libtvm_ffi.so's Function deleter: calls release(self), frees the object"
    owned = _probe_function(lambda out: LIB.tvm_ffi_runtime_function_with_owner(_probe_call, None,
                                                                               out))
    if owned:
        known[owned[0]] = OWNED_TRAMPOLINE
        known[owned[1]] = ("libtvm_ffi.so's kernel-function deleter: releases the owning module, "
                           "frees the object")
    return known


CLOSURE_TRAMPOLINE = "libtvm_ffi.so's trampoline: calls target(self, args, num_args, result)"
OWNED_TRAMPOLINE = "libtvm_ffi.so's kernel trampoline: calls target(NULL, args, num_args, result)"


def library_function_trampoline(kind: str = CLOSURE_TRAMPOLINE) -> Optional[int]:
    """The ``safe_call`` ``libtvm_ffi.so`` puts in the cell of Functions it makes.

    ``kind`` is :data:`CLOSURE_TRAMPOLINE` (``TVMFFIFunctionCreate`` closures)
    or :data:`OWNED_TRAMPOLINE` (a module's kernel functions).
    """
    for address, name in known_code().items():
        if name == kind:
            return address
    return None
