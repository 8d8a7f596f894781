"""``libtvm_ffi.so`` as the reference runtime and front end see it.

Loaded once, globally (kernel libraries loaded later resolve their
``TVMFFI*`` imports against it), with every C API signature bound from
:mod:`tvm_ffi_ref.abi`.
"""

from __future__ import annotations

from tvm_ffi_common import libinfo

from . import abi

#: The loaded library, every C API and runtime-management signature bound.
LIB = abi.bind_runtime(abi.bind(libinfo.load_library()))
