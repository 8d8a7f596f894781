"""tvm_ffi_ref: the TVM FFI runtime and Python API in readable Python over ctypes.

``tvm_ffi_ref.abi`` mirrors the C headers; the rest of the package implements
the runtime behind ``libtvm_ffi.so`` and the Python API on top of it.
"""

from __future__ import annotations

import ctypes
from typing import Tuple

from tvm_ffi_common import __version__, libinfo

from . import abi

#: ``libtvm_ffi.so``, loaded globally, with every C API signature bound.
LIB = abi.bind_runtime(abi.bind(libinfo.load_library()))


def abi_version() -> Tuple[int, int, int]:
    """The ABI version ``(major, minor, patch)`` reported by ``TVMFFIGetVersion``."""
    version = abi.TVMFFIVersion()
    LIB.TVMFFIGetVersion(ctypes.byref(version))
    return (version.major, version.minor, version.patch)


__all__ = ["LIB", "abi", "abi_version", "__version__"]
