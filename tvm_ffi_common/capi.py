"""``libtvm_ffi.so`` bound through the ctypes mirror: :data:`LIB`.

The library is loaded once per process, globally (kernel libraries loaded
later resolve their ``TVMFFI*`` imports against it), and bound once: both
front ends and the tools call the C API through this one ``ctypes.CDLL``,
whose signatures name the struct classes of :mod:`tvm_ffi_common.abi`.
Importing this module installs no runtime.
"""

from __future__ import annotations

import ctypes

from . import abi, libinfo

#: The loaded library, every C API and runtime-management signature bound.
LIB: ctypes.CDLL = abi.bind_runtime(abi.bind(libinfo.load_library()))
