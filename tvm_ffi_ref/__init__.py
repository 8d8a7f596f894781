"""tvm_ffi_ref: the TVM FFI runtime and Python API in readable Python over ctypes.

``import tvm_ffi_ref as tvm_ffi`` gives the API of upstream's ``tvm_ffi``:
load kernel libraries, call their functions with Python values, pass
callbacks, containers and NumPy arrays (zero copy), and get exceptions back.

Layers, bottom up: ``tvm_ffi_common.abi`` mirrors the C headers in ctypes
(also reachable as ``tvm_ffi_ref.abi``); :mod:`tvm_ffi_ref.runtime`
implements the C API in Python and is installed behind ``libtvm_ffi.so`` on
import (unless another runtime already serves the process, which this front
end then shares); the core modules here (``object``, ``convert``,
``function``, ``shortcuts``) move values between Python and the ABI with
ctypes; the rest of the Python API is shared with ``tvm_ffi_fast`` and
mounted from ``tvm_ffi_api`` (its docstring says how).
"""

from __future__ import annotations

import ctypes
from typing import Optional, Tuple

import tvm_ffi_api
from tvm_ffi_common import dropin

dropin.refuse_upstream_after_ours(__name__)

from tvm_ffi_common import (  # noqa: E402
    abi,
    libinfo as _libinfo,  # noqa: E402 - ``libinfo`` is upstream's module
    pycapi,
)
from tvm_ffi_common.capi import LIB  # noqa: E402

tvm_ffi_api.mount(__path__)  # noqa: F821 - __path__ is the package's own

from . import runtime  # noqa: E402

#: How installing the reference runtime went: ``kTVMFFIRuntimeInstalled``, or
#: ``kTVMFFIRuntimeAlreadyInstalled`` when another runtime already serves the
#: process (this front end then shares it).
INSTALL_STATUS = abi.TVMFFIRuntimeInstallStatus(runtime.install())

# Kernels reach Python's signal handling through the environment API, so that
# Ctrl-C during a long kernel call becomes KeyboardInterrupt, as upstream does.
for _name in ("PyErr_CheckSignals", "PyGILState_Ensure", "PyGILState_Release"):
    LIB.TVMFFIEnvRegisterCAPI(_name.encode(), pycapi.interpreter_function(_name))
runtime.interrupts.install_sigint_handler()

from . import public  # noqa: E402 - the API needs the runtime installed
from .public import *  # noqa: E402,F401,F403

# As upstream's tvm_ffi (the drop-in), load its testing library at import as
# upstream's core does: its tests call testing.* functions without importing it.
if dropin.serves(__name__):
    _libinfo.load_testing_library()


def abi_version() -> Tuple[int, int, int]:
    """The ABI version ``(major, minor, patch)`` reported by ``TVMFFIGetVersion``."""
    version = abi.TVMFFIVersion()
    LIB.TVMFFIGetVersion(ctypes.byref(version))
    return (version.major, version.minor, version.patch)


def runtime_name() -> Optional[str]:
    """The name of the runtime serving the C API in this process."""
    name = LIB.tvm_ffi_runtime_name()
    return None if name is None else name.decode()


__all__ = public.__all__ + ["abi_version", "runtime_name"]
