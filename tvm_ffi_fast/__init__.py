"""tvm_ffi_fast: the TVM FFI runtime in C, built by cffi, with the same Python API
as ``tvm_ffi_ref``.

Importing the package installs the fast runtime behind ``libtvm_ffi.so``
unless another runtime already serves the process, in which case the fast
front end shares that one (``runtime_name()`` says which).
"""

from __future__ import annotations

from typing import Optional, Tuple

from tvm_ffi_common import __version__, libinfo

# libtvm_ffi.so must be in the process, globally visible, before _core (which
# links against it) and before any kernel library is loaded.
libinfo.load_library()

from ._core import ffi as _ffi, lib as _lib  # noqa: E402

_INSTALL_STATUS = _lib.tvm_ffi_fast_install()
if _INSTALL_STATUS not in (0, 1):
    raise ImportError(
        "tvm_ffi_fast: libtvm_ffi.so refused the fast runtime's table "
        f"(status {_INSTALL_STATUS}); the library and the extension were built apart"
    )


def abi_version() -> Tuple[int, int, int]:
    """The ABI version ``(major, minor, patch)`` reported by ``TVMFFIGetVersion``."""
    version = _ffi.new("TVMFFIVersion*")
    _lib.TVMFFIGetVersion(version)
    return (version.major, version.minor, version.patch)


def runtime_name() -> Optional[str]:
    """The name of the runtime serving the C API in this process."""
    name = _lib.tvm_ffi_runtime_name()
    return None if name == _ffi.NULL else _ffi.string(name).decode()


__all__ = ["abi_version", "runtime_name", "__version__"]
