"""How Python functions become the C API: the slot table and its install.

Its twin in C: ``tvm_ffi_fast/src/slots.c``.

Each runtime module marks its implementations with ``@implements("TVMFFI...")``.
:func:`install` wraps every one in the ``CFUNCTYPE`` of its slot
(``abi.slot_prototype``), fills a ``TVMFFIRuntimeTable`` and hands it to
``tvm_ffi_runtime_install``; slots without an implementation stay NULL and are
served by ``libtvm_ffi.so``'s built-ins.

The wrapper enforces the one rule a Python slot must never break: no
exception may cross into C (ctypes would return garbage). An exception becomes
a raised TVM FFI error of the same kind, and the slot returns its failure
value: -1, or NULL for pointer results. That holds from the slot's first
bytecode on: Python runs a pending signal handler there, before the wrapper's
``try``, so C calls the wrapper through ``pycapi.entry_guard``, which hands what
escapes it to the slot's ``on_entry_error`` (by default: reported as above).

It also refuses a NULL for a pointer the function must be given
(:data:`REQUIRED_POINTERS`): upstream dereferences those unchecked and the
process crashes; both runtimes of this project raise ``ValueError("<function>:
<parameter> must not be NULL")`` instead, naming the first such parameter.
"""

from __future__ import annotations

import atexit
import ctypes
import sys
import traceback
from typing import Callable, Dict, List, Optional, Tuple

from tvm_ffi_common import abi, pycapi
from tvm_ffi_common.capi import LIB

from . import interrupts, memory

#: The name this runtime installs under.
RUNTIME_NAME = "tvm_ffi_ref"

_implementations: Dict[str, Callable] = {}
#: Slot name -> what a signal handler's exception raised at the slot's entry makes the slot
#: return (see :func:`implements`).
_entry_errors: Dict[str, Callable[[BaseException], object]] = {}

#: The pointer parameters a runtime's functions must not be given as NULL, by
#: function, as the header names them. (Optional ones -- an ``opt_out_*``, a
#: ``deleter``, a Function's ``self`` -- and the built-ins' are not listed.)
REQUIRED_POINTERS: Dict[str, Tuple[str, ...]] = {
    "TVMFFIObjectCreateOpaque": ("out",),
    "TVMFFITypeKeyToIndex": ("type_key", "out_tindex"),
    "TVMFFIFunctionGetGlobal": ("name", "out"),
    "TVMFFIFunctionSetGlobal": ("name", "f"),
    "TVMFFIFunctionSetGlobalFromMethodInfo": ("method_info",),
    "TVMFFIAnyViewToOwnedAny": ("any_view", "out"),
    "TVMFFIErrorCreate": ("out",),
    "TVMFFIErrorCreateWithCauseAndExtraContext": ("out",),
    "TVMFFITensorFromDLPack": ("from", "out"),
    "TVMFFITensorToDLPack": ("from", "out"),
    "TVMFFITensorFromDLPackVersioned": ("from", "out"),
    "TVMFFITensorToDLPackVersioned": ("from", "out"),
    "TVMFFITensorCreateUnsafeView": ("source", "prototype", "out"),
    "TVMFFIStringFromByteArray": ("input", "out"),
    "TVMFFIBytesFromByteArray": ("input", "out"),
    "TVMFFIBigIntFromByteArray": ("input", "out"),
    "TVMFFIBigIntGetContentByteArray": ("value",),
    "TVMFFIDataTypeFromString": ("str", "out"),
    "TVMFFIDataTypeToString": ("dtype", "out"),
    "TVMFFITypeRegisterField": ("info",),
    "TVMFFITypeRegisterMethod": ("info",),
    "TVMFFITypeRegisterMetadata": ("metadata",),
    "TVMFFITypeRegisterAttr": ("attr_name",),  # attr_value: see registry.type_register_attr
    "TVMFFIGetTypeAttrColumn": ("attr_name",),
    "TVMFFITypeGetOrAllocIndex": ("type_key",),
    "TVMFFIEnvTensorAlloc": ("prototype", "out"),
    "TVMFFIEnvRegisterCAPI": ("name",),
    "TVMFFIEnvModLookupFromImports": ("library_ctx", "func_name", "out"),
    "TVMFFIEnvModRegisterContextSymbol": ("name",),
    "TVMFFIEnvModRegisterSystemLibSymbol": ("name",),
}
#: Observers called as ``observer(slot_name, args)`` before each slot runs (the checker's hook).
observers: List[Callable] = []
#: Observers called as ``observer(slot_name)`` after each slot ran, however it ended
#: (``tvm-ffi-explain --trace`` reads reference counts on both sides of a call).
returned_observers: List[Callable] = []


class FFIError(Exception):
    """Raised inside a slot to report a TVM FFI error with an explicit kind.

    Any other exception is reported with its class name as the kind
    (``ValueError`` -> ``"ValueError"``), which is how upstream names kinds.
    """

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind
        self.message = message


class ErrorAlreadyRaised(Exception):
    """Raised inside a slot when a callee failed and already left its error in the raised slot.

    The slot then fails with that error as it is (same object, same backtrace),
    as C code returning a callee's -1 would.
    """


def implements(name: str, on_entry_error: Optional[Callable[[BaseException], object]] = None
               ) -> Callable[[Callable], Callable]:
    """Registers the decorated function as the implementation of C API function ``name``.

    ``on_entry_error(exception)``: what the slot returns when a signal handler raises
    ``exception`` as the slot is entered, before the function runs (by default the
    exception is the slot's raised error, as if the function had raised it).
    """
    if name not in abi.C_API_BY_NAME:
        raise ValueError(f"{name} is not a C API function")

    def register(fn: Callable) -> Callable:
        _implementations[name] = fn
        if on_entry_error is not None:
            _entry_errors[name] = on_entry_error
        return fn

    return register


def _failure_value(slot: abi.CFunction):
    if slot.restype == "void":
        return None
    if slot.restype in ("int", "int32_t"):
        return -1
    return 0  # NULL pointer


def _report(kind: str, message: str) -> None:
    # Imported here: errors.py itself registers slots through this module.
    from . import errors

    errors.raise_error(kind, message)


def _report_exception(name: str, error: BaseException) -> None:
    if isinstance(error, ErrorAlreadyRaised):
        return
    if isinstance(error, FFIError):
        _report(error.kind, f"{error.message}")
    elif isinstance(error, Exception):
        _report(type(error).__name__, str(error))
    else:  # KeyboardInterrupt and the like: still never cross into C
        traceback.print_exception(type(error), error, error.__traceback__, file=sys.stderr)
        _report("RuntimeError", f"{name}: interrupted")


def _wrap(slot: abi.CFunction, fn: Callable):
    failure = _failure_value(slot)
    returns_status = slot.restype in ("int", "int32_t")
    # None is NULL; PyPy's ctypes takes only an int for a pointer a callback returns
    returns_pointer = slot.restype != "void" and not returns_status
    name = slot.name
    required = [(i, param) for i, (_, param) in enumerate(slot.params)
                if param in REQUIRED_POINTERS.get(name, ())]

    @interrupts.callback_entry
    def call(*args):
        try:
            if memory.released:
                memory.drain_released()
            for observer in observers:
                observer(name, args)
            for i, param in required:
                # a NULL pointer arrives as None or a false pointer object; an empty C
                # string (b"") is no NULL
                if args[i] is None or (not args[i] and not isinstance(args[i], bytes)):
                    raise FFIError("ValueError", f"{name}: {param} must not be NULL")
            result = fn(*args)
            if result is None and (returns_status or returns_pointer):
                return 0
            return result
        except BaseException as error:  # noqa: BLE001 - every error must become a raised one
            _report_exception(name, error)
        finally:
            for observer in returned_observers:
                observer(name)
        return failure

    def entry_error(error: BaseException):
        # A signal handler raised at call's first bytecode: call never ran.
        _report_exception(name, error)
        return failure

    call.__name__ = f"slot_{name}"
    return abi.slot_prototype(slot)(pycapi.entry_guard(call, _entry_errors.get(name, entry_error)))


_table: Optional[abi.TVMFFIRuntimeTable] = None
_callbacks: List[object] = []


def install() -> int:
    """Installs every registered implementation; returns the install status.

    ``kTVMFFIRuntimeAlreadyInstalled`` means another runtime serves the
    process; nothing of ours is then used on the server side.
    """
    global _table
    table = abi.TVMFFIRuntimeTable()
    table.struct_size = ctypes.sizeof(abi.TVMFFIRuntimeTable)
    table.name = RUNTIME_NAME.encode()
    for slot in abi.RUNTIME_SLOTS:
        fn = _implementations.get(slot.name)
        if fn is not None:
            callback = _wrap(slot, fn)
            _callbacks.append(callback)
            setattr(table, slot.name, callback)
    status = LIB.tvm_ffi_runtime_install(ctypes.byref(table))
    if status == abi.TVMFFIRuntimeInstallStatus.kTVMFFIRuntimeInstalled:
        _table = table
        # Our callbacks die with the interpreter: from its exit on, nothing of ours calls
        # into Python, and C++ static destructors that run later find the built-ins.
        from .interpreter_exit import at_interpreter_exit

        atexit.register(at_interpreter_exit)
    return status


def uninstall() -> None:
    """Returns ``libtvm_ffi.so`` to its built-ins (at interpreter exit: see
    ``interpreter_exit.py``)."""
    if _table is not None:
        LIB.tvm_ffi_runtime_uninstall(RUNTIME_NAME.encode())


def installed() -> bool:
    """Whether this runtime serves the C API in this process."""
    name = LIB.tvm_ffi_runtime_name()
    return name is not None and name.decode() == RUNTIME_NAME
