"""Functions made from a C safe-call entry point: ``Function.__from_extern_c__``.

Each core's ``Function`` gets :func:`from_extern_c` as its static method.
"""

from __future__ import annotations

import ctypes
from typing import Any, Dict

from tvm_ffi_common.capi import LIB

#: Objects kept alive for functions made by ``__from_extern_c__``.
_keep_alive: Dict[int, Any] = {}


def from_extern_c(c_symbol: int, *, keep_alive_object: Any = None) -> Any:
    """A Function calling the C safe-call entry at address ``c_symbol``.

    ``keep_alive_object`` (e.g. the ``ctypes.CDLL`` the symbol lives in)
    stays referenced for as long as the process runs.
    """
    from .function import Function, raise_last_error

    handle = ctypes.c_void_p()
    if LIB.TVMFFIFunctionCreate(None, c_symbol, None, ctypes.byref(handle)):
        raise_last_error()
    func = Function._adopt(handle.value)
    if keep_alive_object is not None:
        _keep_alive[handle.value] = keep_alive_object
    return func
