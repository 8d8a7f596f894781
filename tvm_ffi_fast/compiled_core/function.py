"""Calling TVM FFI functions from Python, and Python functions from anywhere.

The fast core's side of the interface the shared modules use (the reference's
is ``tvm_ffi_ref/function.py``). :class:`Function` is an extension type:
calling it does the whole packed call in C (arguments encoded, the cell's
``safe_call`` run with the GIL released, the calling convention checked, the
result decoded or the raised error turned into the Python exception of its
kind). :func:`get_global_func`, :func:`convert_to_function` and
:func:`wrap_callable` are the core's too; a Function made from a Python
callable has a C ``safe_call`` that takes the GIL, converts the arguments and
the result in C, and turns an exception into the raised error
(``error.exception_to_error_raised``).
"""

from __future__ import annotations

import ctypes
from typing import Any, Optional

from tvm_ffi_common import abi

from . import _frontend, error_crossing, upcalls
from ._frontend import Function, convert_to_function, get_global_func, wrap_callable
from .error import Error
from .extern_c import from_extern_c, from_mlir_packed_safe_call
from .object import register_class

TI = abi.TVMFFITypeIndex

__all__ = ["Function", "convert_to_function", "finish_call", "get_global_func",
           "raise_last_error", "take_last_error", "wrap_callable"]


def take_last_error() -> Optional[Error]:
    """Moves this thread's raised error out of the runtime."""
    return _frontend.take_last_error()


def raise_last_error() -> None:
    """Raises the Python exception for this thread's raised error."""
    _frontend.raise_last_error()


def finish_call(status: int, result: abi.TVMFFIAny, exchange_api: int = 0) -> Any:
    """The Python value of a completed call, or the exception it raised (``exchange_api``: the
    DLPack exchange table the call's arguments brought, 0 for none)."""
    return _frontend.finish_call(status, ctypes.addressof(result), exchange_api)


Function.__from_extern_c__ = staticmethod(from_extern_c)
Function.__from_mlir_packed_safe_call__ = staticmethod(from_mlir_packed_safe_call)
register_class(TI.kTVMFFIFunction, Function)
_frontend.watch_crossings(error_crossing.threads_remembering, error_crossing.settle)

upcalls.install("function", Function=Function, get_global_func=get_global_func,
                raise_last_error=raise_last_error, take_last_error=take_last_error,
                convert_to_function=convert_to_function)
