"""spec/15's first kernel, shipped as a wheel: ``scale_into``, ``scale``, ``current_stream``.

Loading checks the version floor first: the ``libtvm_ffi.so`` the process has
(the one ``import tvm_ffi`` loaded) must be at least as new as the headers the
kernel was compiled against, within the same 0.X (spec/18-stability.md, "What a
version promises").
"""

import ctypes
import os

import tvm_ffi

from ._built_with import HEADER_VERSION

_LIBRARY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "libfirst_kernel.so")


def _library_version():
    class Version(ctypes.Structure):
        _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32),
                    ("patch", ctypes.c_uint32)]

    version = Version()
    ctypes.CDLL(_LIBRARY).TVMFFIGetVersion(ctypes.byref(version))
    return version.major, version.minor, version.patch


LIBRARY_VERSION = _library_version()
if LIBRARY_VERSION[:2] != HEADER_VERSION[:2] or LIBRARY_VERSION < HEADER_VERSION:
    raise ImportError(f"first_kernel was built against TVM FFI headers {HEADER_VERSION}; the "
                      f"loaded libtvm_ffi.so is {LIBRARY_VERSION}: install a runtime at least "
                      "that new, within the same minor version")

_module = tvm_ffi.load_module(_LIBRARY)
scale_into = _module.scale_into
scale = _module.scale
current_stream = _module.current_stream
