"""``libtvm_ffi.so`` as this package sees it, every C API signature bound.

The library is loaded once per process, globally (kernel libraries loaded
later resolve their ``TVMFFI*`` imports against it). Each package binds its
own ``ctypes.CDLL`` object to it, because the signatures name the package's
own ``abi`` struct classes (two packages in one process have two sets).
"""

from __future__ import annotations

import ctypes

from tvm_ffi_common import libinfo

from . import abi

libinfo.load_library()

#: The loaded library, every C API and runtime-management signature bound.
LIB = abi.bind_runtime(abi.bind(ctypes.CDLL(libinfo.library_path(), mode=ctypes.RTLD_GLOBAL)))
