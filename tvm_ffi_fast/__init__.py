"""tvm_ffi_fast: the TVM FFI runtime in C, built by cffi, with the same Python API
as ``tvm_ffi_ref``.

``import tvm_ffi_fast as tvm_ffi`` gives the API of upstream's ``tvm_ffi``,
exactly as ``tvm_ffi_ref`` does, at compiled speed.

How the package is put together
-------------------------------

1. **The runtime.** Importing the package loads ``libtvm_ffi.so`` and installs
   the fast runtime (C, in the cffi module ``tvm_ffi_fast._core``) behind it,
   unless another runtime already serves the process; then the fast front end
   shares that one through the C ABI (:func:`runtime_name` says which).

2. **The core.** ``_core`` also builds ``tvm_ffi_fast._frontend``, an
   extension module (``src/frontend/``) holding the ``Object`` and
   ``Function`` types, the packed call, argument and result conversion, the
   call-rule checks, errors and Python callbacks, all in C. Four small Python
   modules of this package present it under the names the shared API expects:
   ``object.py``, ``convert.py``, ``function.py`` and ``shortcuts.py``.

3. **The API, shared with tvm_ffi_ref.** Everything else (containers,
   tensors, dtype, device, errors, modules, reflection, registry, streams,
   strings, ...) is tvm_ffi_ref's pure-Python modules, written once. This
   package appends tvm_ffi_ref's directory to its own ``__path__``, so that
   ``tvm_ffi_fast.container`` is ``tvm_ffi_ref/container.py`` executed as a
   module *of this package*: its relative imports (``from .object import
   Object``, ``from .convert import ...``) find the four core modules above,
   not the reference's. tvm_ffi_ref itself is never imported (its
   ``__init__`` would install the reference runtime), and neither is its
   ``runtime`` subpackage: ``tvm_ffi_fast/runtime.py`` shadows it and refuses
   to import.
"""

from __future__ import annotations

import importlib.util
import os
from typing import Optional, Tuple

from tvm_ffi_common import __version__, libinfo

# libtvm_ffi.so must be in the process, globally visible, before _core (which
# links against it) and before any kernel library is loaded.
libinfo.load_library()

from ._core import ffi as _cffi, lib as _clib  # noqa: E402

_INSTALL_STATUS = _clib.tvm_ffi_fast_install()
if _INSTALL_STATUS not in (0, 1):
    raise ImportError(
        "tvm_ffi_fast: libtvm_ffi.so refused the fast runtime's table "
        f"(status {_INSTALL_STATUS}); the library and the extension were built apart"
    )
if _clib.tvm_ffi_fast_frontend_init() != 0:
    raise ImportError("tvm_ffi_fast: the compiled front end could not be initialised "
                      "(the Python error was printed above)")


def _shared_api_dir() -> str:
    """tvm_ffi_ref's package directory, found without importing tvm_ffi_ref."""
    spec = importlib.util.find_spec("tvm_ffi_ref")
    if spec is not None and spec.submodule_search_locations:
        return list(spec.submodule_search_locations)[0]
    import tvm_ffi_common

    return os.path.join(os.path.dirname(os.path.dirname(tvm_ffi_common.__file__)), "tvm_ffi_ref")


__path__.append(_shared_api_dir())  # noqa: F821 - __path__ is the package's own

from . import abi  # noqa: E402 - shared, from tvm_ffi_ref
from ._lib import LIB  # noqa: E402

#: How installing the fast runtime went: ``kTVMFFIRuntimeInstalled``, or
#: ``kTVMFFIRuntimeAlreadyInstalled`` when another runtime already serves the
#: process (this front end then shares it).
INSTALL_STATUS = abi.TVMFFIRuntimeInstallStatus(_INSTALL_STATUS)

from . import dtype as _dtype_module  # noqa: E402
from .container import Array, Dict, List, Map  # noqa: E402
from . import convert as _encoding  # noqa: E402,F401 - loaded before the next line binds
# the package name ``convert`` to the function (loading the module later would rebind it)
from .api_convert import convert  # noqa: E402
from .device import Device, DLDeviceType, device  # noqa: E402
from .dtype import dtype  # noqa: E402
from .error import register_error  # noqa: E402
from .function import (  # noqa: E402
    Error,
    Function,
    get_global_func,
    get_global_func_metadata,
    list_global_func_names,
    register_global_func,
    remove_global_func,
)
from .module import Module, load_module, system_lib  # noqa: E402
from .object import Object, ObjectConvertible, ObjectRValueRef  # noqa: E402
from .pyobject import OpaquePyObject  # noqa: E402
from .registry import register_object  # noqa: E402
from .stream import StreamContext, get_raw_stream, use_raw_stream, use_torch_stream  # noqa: E402
from .string import Bytes, String  # noqa: E402
from .tensor import Shape, Tensor, from_dlpack  # noqa: E402


def __getattr__(name: str):
    # The dtype constants (``tvm_ffi_fast.float32``, ...) are made on first use.
    if name in _dtype_module.DTYPE_NAMES:
        value = globals()[name] = dtype(name)
        return value
    raise AttributeError(f"module 'tvm_ffi_fast' has no attribute '{name}'")


def abi_version() -> Tuple[int, int, int]:
    """The ABI version ``(major, minor, patch)`` reported by ``TVMFFIGetVersion``."""
    version = _cffi.new("TVMFFIVersion*")
    _clib.TVMFFIGetVersion(version)
    return (version.major, version.minor, version.patch)


def runtime_name() -> Optional[str]:
    """The name of the runtime serving the C API in this process."""
    name = _clib.tvm_ffi_runtime_name()
    return None if name == _cffi.NULL else _cffi.string(name).decode()


__all__ = [
    "LIB", "abi", "abi_version", "runtime_name", "__version__",
    "Array", "Bytes", "DLDeviceType", "Device", "Dict", "Error", "Function", "List", "Map",
    "Module", "Object", "ObjectConvertible", "ObjectRValueRef", "OpaquePyObject", "Shape",
    "StreamContext", "String", "Tensor",
    "convert", "device", "dtype", "from_dlpack", "get_global_func", "get_global_func_metadata",
    "get_raw_stream", "list_global_func_names", "load_module", "register_error",
    "register_global_func", "register_object", "remove_global_func", "system_lib",
    "use_raw_stream", "use_torch_stream",
] + list(_dtype_module.DTYPE_NAMES)
