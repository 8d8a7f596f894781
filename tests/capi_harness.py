"""Runs the same C API code under each runtime, each in its own interpreter.

A snippet of Python sees three names:

* ``abi``  -- ``tvm_ffi_common/abi.py``, loaded from its file so that importing it
  does not import the ``tvm_ffi_ref`` package (which installs a runtime);
* ``lib``  -- a ``libtvm_ffi.so`` with every C API signature bound;
* ``TI``   -- ``abi.TVMFFITypeIndex``;

plus the helpers defined in ``PRELUDE`` (``byte_array``, ``take_error``,
``decref_any``). Which library and runtime ``lib`` is depends on ``runtime``:

* ``"bare"``     -- our library with no runtime installed (built-ins only);
* ``"ref"``      -- our library with ``tvm_ffi_ref``'s runtime installed;
* ``"fast"``     -- our library with ``tvm_ffi_fast``'s runtime installed;
* ``"upstream"`` -- upstream's ``libtvm_ffi.so`` from ``apache-tvm-ffi``.

Comparing a snippet's output across runtimes is the runtime-level half of the
conformance claim (the Python-API half lives in ``conformance_tests/``).
"""

from __future__ import annotations

import os
import textwrap
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Dict, Iterable

from conftest import upstream_package_dir
from subprocess_utils import run_python
from tvm_ffi_common import libinfo

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ABI_PATH = os.path.join(ROOT, "tvm_ffi_common", "abi.py")

RUNTIMES = ("bare", "ref", "fast", "upstream")

# A front end registers Python's signal functions with the environment when it
# is imported; a runtime test starts from the bare state upstream's library has.
_BARE_ENV = ("for _name in (b'PyErr_CheckSignals', b'PyGILState_Ensure', b'PyGILState_Release'):\n"
             "    lib.TVMFFIEnvRegisterCAPI(_name, None)")

_LOADERS = {
    "bare": f"lib = ctypes.CDLL({libinfo.library_path()!r}, mode=ctypes.RTLD_GLOBAL)",
    "ref": "import tvm_ffi_ref\nlib = tvm_ffi_ref.LIB\n" + _BARE_ENV,
    "fast": "import tvm_ffi_fast\nfrom tvm_ffi_common import libinfo\nlib = libinfo.load_library()\n"
            + _BARE_ENV,
    "upstream": (
        "lib = ctypes.CDLL({path!r}, mode=ctypes.RTLD_GLOBAL)"
    ),
}

PRELUDE = """
import ctypes, importlib.util, sys
_spec = importlib.util.spec_from_file_location("capi_abi", {abi_path!r})
abi = importlib.util.module_from_spec(_spec)
sys.modules["capi_abi"] = abi
_spec.loader.exec_module(abi)
{loader}
abi.bind(lib)
if hasattr(lib, "tvm_ffi_runtime_install"):  # ours only
    abi.bind_runtime(lib)
TI = abi.TVMFFITypeIndex

_keep = []

def byte_array(data):
    '''A TVMFFIByteArray viewing ``data`` (bytes or str), kept alive for the process.'''
    if isinstance(data, str):
        data = data.encode()
    buffer = ctypes.create_string_buffer(data, len(data) + 1)
    _keep.append(buffer)
    return abi.TVMFFIByteArray(ctypes.addressof(buffer), len(data))

def take_error():
    '''Moves the raised error out of the slot: (kind, message), or None.'''
    handle = ctypes.c_void_p()
    lib.TVMFFIErrorMoveFromRaised(ctypes.byref(handle))
    if not handle.value:
        return None
    cell = abi.TVMFFIErrorCell.from_address(handle.value + ctypes.sizeof(abi.TVMFFIObject))
    text = (ctypes.string_at(cell.kind.data, cell.kind.size).decode(),
            ctypes.string_at(cell.message.data, cell.message.size).decode())
    lib.TVMFFIObjectDecRef(handle)
    return text

def decref_any(value):
    '''Releases the reference an owned TVMFFIAny holds, if any.'''
    if value.type_index >= TI.kTVMFFIStaticObjectBegin:
        lib.TVMFFIObjectDecRef(value.v_ptr)
"""


def prelude(runtime: str) -> str:
    """The code that sets up ``abi``, ``lib`` and the helpers for ``runtime``."""
    if runtime not in RUNTIMES:
        raise ValueError(f"runtime must be one of {RUNTIMES}, got {runtime!r}")
    loader = _LOADERS[runtime]
    if runtime == "upstream":
        loader = loader.format(path=os.path.join(upstream_package_dir(), "lib", "libtvm_ffi.so"))
    return PRELUDE.format(abi_path=ABI_PATH, loader=loader)


def each_runtime(runtimes: Iterable[str], run: Callable[[str], str]) -> Dict[str, str]:
    """``run(runtime)`` for every runtime, two at a time (each starts its own interpreter)."""
    runtimes = list(runtimes)
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {runtime: pool.submit(run, runtime) for runtime in runtimes}
        return {runtime: future.result() for runtime, future in futures.items()}


def run_capi(runtime: str, body: str, timeout: float = 120, **variables) -> str:
    """Runs ``body`` (dedented) under ``runtime`` in a fresh interpreter; returns stdout.

    Each keyword becomes a variable of the snippet (its ``repr`` must evaluate);
    ``RUNTIME`` is always set to the runtime's name.
    """
    variables["RUNTIME"] = runtime
    assignments = "".join(f"{name} = {value!r}\n" for name, value in variables.items())
    return run_python(prelude(runtime) + assignments + textwrap.dedent(body), timeout=timeout)
