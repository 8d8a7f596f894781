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

2. **The core.** On CPython, ``_core`` also builds ``tvm_ffi_fast._frontend``,
   an extension module (``src/frontend/``) holding the ``Object`` and
   ``Function`` types, the packed call, argument and result conversion, the
   call-rule checks, errors and Python callbacks, all in C. Four small Python
   modules in ``compiled_core/`` present it under the names the shared API
   expects: ``object.py``, ``convert.py``, ``function.py`` and ``shortcuts.py``
   (``tvm_ffi_api/*.pyi`` declare what they provide).
   On PyPy, whose emulation of the CPython API is slow and partial, the core
   is ``cffi_core/`` instead: the same four modules written in Python over
   the cffi module, for PyPy's JIT (:data:`_CORE` says which core runs;
   ``TVM_FFI_FAST_CORE=cffi`` picks the cffi core on CPython too). Either
   folder is mounted first on the package path by :func:`tvm_ffi_api.mount`,
   so ``tvm_ffi_fast.convert`` is that core's ``convert.py``.

3. **The API, shared with tvm_ffi_ref.** Everything else (containers,
   tensors, dtype, device, errors, modules, reflection, registry, streams,
   strings, ...) is written once in ``tvm_ffi_api`` and mounted into this
   package (``tvm_ffi_api``'s docstring says how): ``tvm_ffi_fast.container``
   is ``tvm_ffi_api/container.py`` run as a module of this package, whose
   relative imports find the four core modules above.
"""

from __future__ import annotations

import os
import platform
from typing import Optional, Tuple

import tvm_ffi_api
from tvm_ffi_common import dropin

dropin.refuse_upstream_after_ours(__name__)

# (``libinfo`` is also upstream's module name, hence the alias)
from tvm_ffi_common import abi, libinfo as _libinfo  # noqa: E402

#: The core under the API: "compiled" (``compiled_core/`` over ``src/frontend``, the CPython
#: API) or "cffi" (``cffi_core/``, Python over cffi: the one PyPy runs).
_CORE = ("compiled" if platform.python_implementation() == "CPython"
        and os.environ.get("TVM_FFI_FAST_CORE", "compiled") != "cffi" else "cffi")
#: The folder of each core, beside this file.
_CORE_FOLDERS = {"compiled": "compiled_core", "cffi": "cffi_core"}
tvm_ffi_api.mount(__path__, os.path.join(__path__[0], _CORE_FOLDERS[_CORE]))  # noqa: F821

# libtvm_ffi.so must be in the process, globally visible, before _core (which
# links against it) and before any kernel library is loaded.
_libinfo.load_library()

from ._core import ffi as _cffi, lib as _clib  # noqa: E402

_INSTALL_STATUS = _clib.tvm_ffi_fast_install()
if _INSTALL_STATUS not in (0, 1):
    raise ImportError(
        "tvm_ffi_fast: libtvm_ffi.so refused the fast runtime's table "
        f"(status {_INSTALL_STATUS}); the library and the extension were built apart"
    )
if _CORE == "compiled" and _clib.tvm_ffi_fast_frontend_init() != 0:
    raise ImportError("tvm_ffi_fast: the compiled front end could not be initialised "
                      "(the Python error was printed above)")
if _CORE == "cffi":  # kernels check for Ctrl-C through the interpreter (the compiled core's
    from tvm_ffi_common import pycapi as _pycapi  # module init does the same)

    for _name in ("PyErr_CheckSignals", "PyGILState_Ensure", "PyGILState_Release"):
        _clib.TVMFFIEnvRegisterCAPI(_name.encode(),
                                    _cffi.cast("void*", _pycapi.interpreter_function(_name)))

#: How installing the fast runtime went: ``kTVMFFIRuntimeInstalled``, or
#: ``kTVMFFIRuntimeAlreadyInstalled`` when another runtime already serves the
#: process (this front end then shares it).
INSTALL_STATUS = abi.TVMFFIRuntimeInstallStatus(_INSTALL_STATUS)

from . import public  # noqa: E402 - the API needs the runtime installed
from .public import *  # noqa: E402,F401,F403

# As upstream's tvm_ffi (the drop-in), load its testing library at import as
# upstream's core does: its tests call testing.* functions without importing it.
if dropin.serves(__name__):
    _libinfo.load_testing_library()


def abi_version() -> Tuple[int, int, int]:
    """The ABI version ``(major, minor, patch)`` reported by ``TVMFFIGetVersion``."""
    version = _cffi.new("TVMFFIVersion*")
    _clib.TVMFFIGetVersion(version)
    return (version.major, version.minor, version.patch)


def runtime_name() -> Optional[str]:
    """The name of the runtime serving the C API in this process."""
    name = _clib.tvm_ffi_runtime_name()
    return None if name == _cffi.NULL else _cffi.string(name).decode()


__all__ = public.__all__ + ["abi_version", "runtime_name"]
