"""Functions made from C entry points: ``Function.__from_extern_c__`` and
``Function.__from_mlir_packed_safe_call__``.

Each core's ``Function`` gets both as static methods. A ``keep_alive_object``
(the JIT engine or ``ctypes.CDLL`` the code lives in) is held by the Function
object itself, through one Python reference released by the Function's
deleter: it lives exactly as long as the Function does, whoever holds it last.
"""

from __future__ import annotations

import ctypes
from typing import Any

from tvm_ffi_common import pycapi
from tvm_ffi_common.capi import LIB

from . import upcalls


def _adopt_function(status: int, handle: ctypes.c_void_p) -> Any:
    if status:
        upcalls.raise_last_error()
    return upcalls.Function._adopt(handle.value)


def _entry_address(value: Any, what: str) -> int:
    address = int(value.value if isinstance(value, ctypes.c_void_p) else value)
    if not address:
        raise ValueError(f"{what} must be a non-NULL function address")
    return address


def from_extern_c(c_symbol: int, *, keep_alive_object: Any = None) -> Any:
    """A Function calling the C safe-call entry at address ``c_symbol``.

    The entry must ignore its first argument (the handle): it receives the
    ``keep_alive_object``'s address, or NULL without one.
    """
    safe_call = _entry_address(c_symbol, "c_symbol")
    handle = ctypes.c_void_p()
    if keep_alive_object is None:
        return _adopt_function(LIB.TVMFFIFunctionCreate(None, safe_call, None,
                                                        ctypes.byref(handle)), handle)
    keep_alive = pycapi.new_reference(keep_alive_object)
    status = LIB.TVMFFIFunctionCreate(keep_alive, safe_call, pycapi.RELEASE_REFERENCE,
                                      ctypes.byref(handle))
    if status:
        pycapi.py_decref(keep_alive)  # no Function was made to hold it
    return _adopt_function(status, handle)


def from_mlir_packed_safe_call(mlir_packed_symbol: int, *,
                               keep_alive_object: Any = None) -> Any:
    """A Function calling an MLIR packed entry ``void fn(void** args)`` at ``mlir_packed_symbol``.

    MLIR's execution engine exposes a C function as a "packed" one taking the
    addresses of its arguments; here those are the safe-call arguments and the
    status to return (``tvm_ffi_runtime_mlir_packed_function`` adapts them in C).
    """
    packed = _entry_address(mlir_packed_symbol, "mlir_packed_symbol")
    handle = ctypes.c_void_p()
    if keep_alive_object is None:
        return _adopt_function(LIB.tvm_ffi_runtime_mlir_packed_function(
            packed, None, None, ctypes.byref(handle)), handle)
    keep_alive = pycapi.new_reference(keep_alive_object)
    status = LIB.tvm_ffi_runtime_mlir_packed_function(packed, keep_alive,
                                                      pycapi.RELEASE_REFERENCE, ctypes.byref(handle))
    if status:
        pycapi.py_decref(keep_alive)
    return _adopt_function(status, handle)
