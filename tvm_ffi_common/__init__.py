"""What every part of the project shares below the Python API.

* :mod:`tvm_ffi_common.libinfo`: where ``libtvm_ffi.so`` and the C headers are;
* :mod:`tvm_ffi_common.abi`: the headers mirrored in ctypes (pure description);
* :mod:`tvm_ffi_common.capi`: ``LIB``, the library loaded and bound through the mirror;
* :mod:`tvm_ffi_common.console`: upstream's console scripts (``tvm-ffi-stubgen``) on ours.

Nothing here installs a runtime; importing the package is free of side effects.
"""

from ._version import UPSTREAM_VERSION, __version__

__all__ = ["UPSTREAM_VERSION", "__version__"]
