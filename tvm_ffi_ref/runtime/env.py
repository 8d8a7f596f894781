"""The environment API: what a kernel may ask of the program that runs it.

Its twin in C: ``tvm_ffi_fast/src/env.c``.

A kernel library is written once and called from Python, C++ or anything
else, so the things that depend on the caller's environment live behind
``extra/c_env_api.h`` and are set by the caller (the front end):

* **Streams.** Each (OS) thread keeps a table (device type, device id) -> stream
  handle. ``TVMFFIEnvSetStream`` records one (optionally returning the
  previous), ``TVMFFIEnvGetStream`` reads it, NULL when never set. The table
  only records; it never creates or destroys streams. A new thread starts
  with an empty table.
* **The DLPack tensor allocator.** A ``DLPackManagedTensorAllocator`` the
  caller installs so that kernels can allocate tensors the caller's
  framework owns (``TVMFFIEnvTensorAlloc``, in ``tensor.py``). Each thread
  has its own; ``write_to_global_context`` also sets a process-wide one that
  threads without their own fall back to. Setting returns the thread's
  previous allocator, never the global one.
* **Signal checks.** A long-running kernel calls ``TVMFFIEnvCheckSignals``
  now and then; under Python it runs the function registered as
  ``PyErr_CheckSignals`` (wrapped in the registered ``PyGILState_Ensure`` /
  ``PyGILState_Release``), so that Ctrl-C interrupts the kernel. Nonzero
  means "the environment has set an error": the kernel should stop and raise
  ``EnvErrorAlreadySet``. With nothing registered it returns 0.
* **Symbols for modules.** ``TVMFFIEnvModRegisterContextSymbol`` records a
  pointer to write into every library loaded later that defines a symbol of
  that name; ``TVMFFIEnvModRegisterSystemLibSymbol`` fills the table the
  system library looks symbols up in. Module loading reads both through
  :func:`context_symbols` and :func:`system_lib_symbol`.

In this runtime every slot runs in Python, with the GIL held: the functions
registered through ``TVMFFIEnvRegisterCAPI`` are therefore called the way
a ``PyDLL`` function is called, without releasing it (``PyGILState_Ensure`` then
finds the GIL already held). When ``PyErr_CheckSignals`` reports a Python
exception (say ``KeyboardInterrupt``), it is kept for the front end, which
takes it with :func:`take_pending_signal_error` when the kernel's error of
kind ``EnvErrorAlreadySet`` reaches it.
"""

from __future__ import annotations

import ctypes
import sys
import threading
from typing import Dict, List, Optional, Tuple

from tvm_ffi_common import pycapi

from . import interrupts
from .slots import FFIError, implements
from .threads import this_thread

_lock = threading.Lock()
_global_allocator: Optional[int] = None


# ------------------------------------------------------------------- streams


def set_stream(device_type: int, device_id: int, stream: Optional[int]) -> Optional[int]:
    """Records this thread's stream for a device; returns the previous one (None for NULL)."""
    if device_type < 0 or device_id < 0:
        # Upstream indexes a vector with these: a negative value is out of bounds there.
        raise FFIError("ValueError", "TVMFFIEnvSetStream: device_type and device_id must be "
                                     f"non-negative, got ({device_type}, {device_id})")
    streams = this_thread().streams
    previous = streams.get((device_type, device_id))
    streams[(device_type, device_id)] = stream or None
    return previous


def get_stream(device_type: int, device_id: int) -> Optional[int]:
    """This thread's stream for a device, or None when none was set."""
    return this_thread().streams.get((device_type, device_id))


@implements("TVMFFIEnvSetStream")
def env_set_stream(device_type, device_id, stream, opt_out_original_stream):
    previous = set_stream(device_type, device_id, stream)
    if opt_out_original_stream:
        opt_out_original_stream[0] = previous


@implements("TVMFFIEnvGetStream")
def env_get_stream(device_type, device_id):
    return get_stream(device_type, device_id)


# ----------------------------------------------------- the DLPack allocator


def set_allocator(allocator: Optional[int], write_to_global_context: bool = False) -> Optional[int]:
    """Installs a ``DLPackManagedTensorAllocator`` (by address) for this thread.

    With ``write_to_global_context`` it also becomes the process-wide
    fallback. Returns this thread's previous allocator (not the global one).
    """
    global _global_allocator
    state = this_thread()
    previous = state.allocator
    if write_to_global_context:
        with _lock:
            _global_allocator = allocator or None
    state.allocator = allocator or None
    return previous


def get_allocator() -> Optional[int]:
    """The allocator ``TVMFFIEnvTensorAlloc`` uses: this thread's, else the global one."""
    allocator = this_thread().allocator
    if allocator is not None:
        return allocator
    with _lock:
        return _global_allocator


@implements("TVMFFIEnvSetDLPackManagedTensorAllocator")
def env_set_allocator(allocator, write_to_global_context, opt_out_original_allocator):
    previous = set_allocator(allocator, bool(write_to_global_context))
    if opt_out_original_allocator:
        opt_out_original_allocator[0] = previous


@implements("TVMFFIEnvGetDLPackManagedTensorAllocator")
def env_get_allocator():
    return get_allocator()


# ------------------------------------------- environment C API and signals

#: The names ``TVMFFIEnvRegisterCAPI`` accepts.
ENV_CAPI_NAMES = ("PyErr_CheckSignals", "PyGILState_Ensure", "PyGILState_Release")
_env_capi: Dict[str, Optional[int]] = dict.fromkeys(ENV_CAPI_NAMES)

# Called without releasing the GIL (see the module docstring).
_CheckSignals = ctypes.PYFUNCTYPE(ctypes.c_int)
_GILEnsure = ctypes.PYFUNCTYPE(ctypes.c_void_p)
_GILRelease = ctypes.PYFUNCTYPE(None, ctypes.c_void_p)


#: This interpreter's own GIL functions. A slot already holds the GIL, where
#: PyGILState_Ensure returns PyGILState_LOCKED (0), and a zero state is never
#: released (upstream's rule), which would leave CPython's per-thread GIL
#: counter one higher per check. So when these are what is registered, the
#: check runs without them: holding the GIL is what they would ensure.
_INTERPRETER_GIL_FUNCTIONS = (pycapi.interpreter_function("PyGILState_Ensure"),
                              pycapi.interpreter_function("PyGILState_Release"))
#: This interpreter's own signal check, run through ``pycapi`` (which raises what a signal
#: handler raised): on PyPy no ctypes prototype can call it.
_INTERPRETER_CHECK = pycapi.interpreter_function("PyErr_CheckSignals")


def _run_check(check: int) -> int:
    if check == _INTERPRETER_CHECK:
        pycapi.check_signals()
        return 0
    return _CheckSignals(check)()


def register_env_capi(name: str, symbol: Optional[int]) -> None:
    """Records an environment function (one of :data:`ENV_CAPI_NAMES`) by address."""
    if name not in _env_capi:
        raise FFIError("ValueError", f"Unknown env API {name}")
    with _lock:
        _env_capi[name] = symbol or None


def check_signals() -> int:
    """``TVMFFIEnvCheckSignals``: 0, or -1 when the registered check reports a signal."""
    with _lock:
        check = _env_capi["PyErr_CheckSignals"]
        ensure = _env_capi["PyGILState_Ensure"]
        release = _env_capi["PyGILState_Release"]
    if interrupts.take_deferred():  # Ctrl-C arrived while the runtime itself was running
        this_thread().pending_signal_error = KeyboardInterrupt()
        return -1
    if check is None:
        return 0
    if ensure is None or release is None:
        # Upstream aborts the process here (a failed check escaping a C function).
        raise FFIError("InternalError", "TVMFFIEnvCheckSignals: PyErr_CheckSignals is registered "
                                        "but PyGILState_Ensure/PyGILState_Release are not")
    if (ensure, release) == _INTERPRETER_GIL_FUNCTIONS:
        ensure = release = None
    state = _GILEnsure(ensure)() if ensure else None
    try:
        status = _run_check(check)
    except BaseException as error:  # noqa: BLE001 - the environment's error, kept for it
        this_thread().pending_signal_error = error
        status = -1
    finally:
        if state:
            _GILRelease(release)(state)
    if status == 0 and interrupts.take_deferred():  # the check ran our deferring handler
        this_thread().pending_signal_error = KeyboardInterrupt()
        status = -1
    return -1 if status != 0 else 0


def take_pending_signal_error() -> Optional[BaseException]:
    """The Python exception the last failed signal check on this thread reported, taken out.

    The front end re-raises it when a call fails with ``EnvErrorAlreadySet``.
    """
    state = this_thread()
    error, state.pending_signal_error = state.pending_signal_error, None
    return error


def keep_signal_error(error: BaseException) -> int:
    """The failed check's status, -1, with ``error`` (a signal handler's) kept for the front end.

    Also what the slot returns when the handler of a signal the kernel raised before the check
    runs as the slot is entered (the first bytecode Python runs after the signal), before
    :func:`env_check_signals` does: the same error the check would have found.
    """
    this_thread().pending_signal_error = error
    return -1


@implements("TVMFFIEnvCheckSignals", on_entry_error=keep_signal_error)
def env_check_signals():
    try:
        return check_signals()
    except Exception:
        raise  # a broken rule: reported as a raised error by the slot wrapper
    except BaseException as error:  # noqa: BLE001 - a signal's exception, raised by a Python
        # handler anywhere in this slot's Python code: the environment's error all the same.
        return keep_signal_error(error)


def _name(raw: Optional[bytes], function: str) -> str:
    if raw is None:
        raise FFIError("ValueError", f"{function}: name must not be NULL")
    return raw.decode("utf-8", "replace")


@implements("TVMFFIEnvRegisterCAPI")
def env_register_capi(name, symbol):
    register_env_capi(_name(name, "TVMFFIEnvRegisterCAPI"), symbol)


# ------------------------------------------------------- module symbols

_context_symbols: List[Tuple[str, int]] = []
_system_lib_symbols: Dict[str, int] = {}


def register_context_symbol(name: str, symbol: Optional[int]) -> None:
    """Records a pointer to write into each library loaded later that defines ``name``."""
    with _lock:
        _context_symbols.append((name, symbol or 0))


def context_symbols() -> List[Tuple[str, int]]:
    """Every ``(name, address)`` registered as a context symbol, in order (repeats kept).

    A module loader writes ``address`` into the ``void*`` variable ``name`` of
    each library it loads, when the library has one.
    """
    with _lock:
        return list(_context_symbols)


def _c_pointer(address: int) -> str:
    return hex(address) if address else "0"  # as a C++ stream prints a void*


def register_system_lib_symbol(name: str, symbol: Optional[int]) -> None:
    """Adds ``name`` to the system library's symbol table (a later address replaces it)."""
    symbol = symbol or 0
    with _lock:
        old = _system_lib_symbols.get(name)
        _system_lib_symbols[name] = symbol
    if old is not None and old != symbol:
        # Upstream's warning, with its wording and the order of its two addresses.
        print(f"Warning:SystemLib symbol {name} get overriden to a different address "
              f"{_c_pointer(symbol)}->{_c_pointer(old)}", file=sys.stderr)


def system_lib_symbol(name: str) -> Optional[int]:
    """The address registered for ``name`` in the system library, or None."""
    with _lock:
        return _system_lib_symbols.get(name) or None


def system_lib_symbols() -> Dict[str, int]:
    """A copy of the system library's symbol table, name -> address, in registration order."""
    with _lock:
        return dict(_system_lib_symbols)


@implements("TVMFFIEnvModRegisterContextSymbol")
def env_mod_register_context_symbol(name, symbol):
    register_context_symbol(_name(name, "TVMFFIEnvModRegisterContextSymbol"), symbol)


@implements("TVMFFIEnvModRegisterSystemLibSymbol")
def env_mod_register_system_lib_symbol(name, symbol):
    register_system_lib_symbol(_name(name, "TVMFFIEnvModRegisterSystemLibSymbol"), symbol)
