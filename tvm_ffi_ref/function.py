"""Calling TVM FFI functions from Python, and Python functions from anywhere.

A :class:`Function` wraps a Function object. Calling it packs the arguments
(:mod:`tvm_ffi_ref.convert`), calls the cell's ``safe_call`` with the
function object itself as ``handle`` (exactly what ``TVMFFIFunctionCall``
does, minus one hop), and turns the owned result into a Python value, or the
raised error into a Python exception.

When the arguments include framework tensors passed through a DLPack
exchange table, the framework's stream and tensor allocator are the
environment's during the call and its result comes back in the framework's
terms (``dlpack_exchange.py``).

The other direction: :func:`convert_to_function` makes a Function object
whose ``safe_call`` runs a Python callable, so C++ can call it. Its arguments
arrive borrowed and become Python values (through a framework's table, for
``convert_func(f, tensor_cls=...)``); its result is written back owned; an
exception becomes the raised error, kind named after its class.
"""

from __future__ import annotations

import ctypes
import threading
from typing import Any, Callable, Dict, List, Optional, Tuple

from tvm_ffi_common import abi, pycapi
from tvm_ffi_common.capi import LIB
from tvm_ffi_common.gil import release_gil_by_default

from . import dlpack_exchange, error_crossing, releases, rules, upcalls
from .convert import CallScope, _pack_call_args, borrowed_to_python, to_owned_any, to_python
from .error import Error, exception_to_error_raised, raise_taken_error
from .error_crossing import reserve_callback_headroom
from .extern_c import from_extern_c, from_mlir_packed_safe_call
from .object import CObject, register_class
from .runtime import interrupts, tensor

TI = abi.TVMFFITypeIndex
_CELL_OFFSET = ctypes.sizeof(abi.TVMFFIObject)


def take_last_error() -> Optional[Error]:
    """Moves this thread's raised error out of the runtime."""
    handle = ctypes.c_void_p()
    LIB.TVMFFIErrorMoveFromRaised(ctypes.byref(handle))
    return Error._adopt(handle.value) if handle.value else None


def raise_last_error() -> None:
    """Raises the Python exception for this thread's raised error."""
    raise_taken_error(take_last_error())


def finish_call(status: int, result: abi.TVMFFIAny, exchange_api: int = 0) -> Any:
    """The Python value of a completed call, or the exception it raised.

    ``exchange_api``: the DLPack exchange table the call's arguments brought (0: none).
    """
    try:
        return _outcome(status, result, exchange_api)
    finally:
        # Ctrl-C that landed while the runtime ran as a C callback
        if interrupts.deferred and interrupts.take_deferred():
            raise KeyboardInterrupt  # noqa: B012 - it replaces the call's own outcome, as Ctrl-C does


def _outcome(status: int, result: abi.TVMFFIAny, exchange_api: int) -> Any:
    if status == 0:
        violation = rules.result_violation(result)
        if violation is not None:
            raise violation
        if error_crossing.threads_remembering:  # an Error C caught and dropped (its module)
            error_crossing.settle()
        return to_python(result, exchange_api)
    if status == -1:
        raise_last_error()
    if status == -2:  # an error already pending in this frontend: Python's own
        raise RuntimeError("a callee reported an error already set in Python")
    raise rules.status_violation(status)


def _safe_call_address(handle: Optional[int]) -> int:
    """The address of the ``safe_call`` of the Function object at ``handle`` (0 for none)."""
    if not handle:
        return 0
    return ctypes.c_void_p.from_address(handle + _CELL_OFFSET).value or 0


# ``safe_call`` as ``Function.__call__`` calls it: declared with no argument types, since
# converting four arguments through ``argtypes`` costs more than the foreign call itself. So
# every argument goes as the ctypes value C receives: the handle a ``c_void_p``, the argument
# array (passed as its address) and ``byref(result)``; the count a Python int (a C int).
#: ... releasing the GIL during the call (ctypes does for a ``CFUNCTYPE`` pointer).
_ReleasingCall = ctypes.CFUNCTYPE(ctypes.c_int)
#: ... keeping the GIL (``PYFUNCTYPE``): ``release_gil = False``.
_HeldCall = ctypes.PYFUNCTYPE(ctypes.c_int)


class Function(CObject):
    """A TVM FFI function; calling it calls through the ABI."""

    # _safe_call: the cell's safe_call with its declared argument types (for callers that pass
    # Python ints); _releasing_call and _gil_held_call: the same pointer as __call__ calls it
    __slots__ = ("_safe_call", "_releasing_call", "_gil_held_call",
                 "__dict__")  # attributes may be set, as upstream

    @property
    def release_gil(self) -> bool:
        """Whether a call releases the GIL while the function runs (upstream's switch; new
        Functions follow ``TVM_FFI_RELEASE_GIL_BY_DEFAULT``). A call with a List or Dict
        argument releases it anyway: its container locks are never waited for with the GIL."""
        try:
            return self._gil_held_call is None
        except AttributeError:
            return release_gil_by_default()

    @release_gil.setter
    def release_gil(self, value: bool) -> None:
        if not value and self._safe_call is not None:
            self._gil_held_call = _HeldCall(_safe_call_address(self._handle))
        else:
            self._gil_held_call = None

    def _take_safe_call(self) -> None:
        """Reads the function object's ``safe_call`` into the ways it is called."""
        address = _safe_call_address(self._handle)
        self._safe_call = abi.TVMFFISafeCallType(address) if address else None
        self._releasing_call = _ReleasingCall(address) if address else None
        self.release_gil = release_gil_by_default()

    @classmethod
    def _adopt(cls, handle: int) -> "Function":
        func = super()._adopt(handle)
        func._take_safe_call()
        return func

    def __move_handle_from__(self, other: CObject) -> None:
        # A subclass instance made empty (``MyFunction(...)``) becomes callable here.
        super().__move_handle_from__(other)
        self._take_safe_call()

    def __call__(self, *args: Any) -> Any:
        if releases.pending:  # references of collected wrappers (see releases.py)
            releases.drain()
        if tensor.DEFER_EXPORT_DELETERS:  # DLPack exports released during a collection
            tensor.drain_deferred_exports()
        try:
            call = self._releasing_call
        except AttributeError:
            call = None
        if call is None:
            raise AttributeError("cannot call an empty Function: it holds no function object")
        scope = CallScope()
        containers: List[int] = []
        try:
            packed = _pack_call_args(args, scope, containers)
            result = abi.TVMFFIAny()
            held = _hold_containers(containers) if containers else ()
            if not held:  # with no container lock to wait for, the GIL may stay held
                call = self._gil_held_call or call
            handle = ctypes.c_void_p(self._handle)
            try:
                if scope.device_type == -1 and not scope.exchange_api:
                    status = call(handle, packed, len(args), ctypes.byref(result))
                else:  # the caller's framework: its stream and allocator serve the call
                    environment = dlpack_exchange.CallEnvironment(scope)
                    try:
                        environment.enter()
                        status = call(handle, packed, len(args), ctypes.byref(result))
                    finally:
                        environment.leave()
            finally:
                for container in reversed(held):
                    LIB.tvm_ffi_runtime_object_unlock(container)
        finally:
            scope.close()
        return finish_call(status, result, scope.exchange_api)


def _hold_containers(handles: List[int]) -> List[int]:
    """Holds a call's List and Dict arguments (``handles``) for the whole call, in address
    order; returns the handles held.

    Header code in a kernel may mutate or iterate its List/Dict argument in place;
    held, that is one operation among the threads sharing the container, as each
    operation of the runtime's is (``tvm_ffi_runtime.h``, container locks). ctypes
    releases the GIL while a lock is waited for.
    """
    if len(handles) > 1:  # the same container may be passed twice: held once
        handles = sorted(set(handles))
    for i, handle in enumerate(handles):
        if LIB.tvm_ffi_runtime_object_lock(handle) != 0:
            for taken in reversed(handles[:i]):
                LIB.tvm_ffi_runtime_object_unlock(taken)
            raise MemoryError("out of memory holding a call's containers")
    return handles


Function.__from_extern_c__ = staticmethod(from_extern_c)
Function.__from_mlir_packed_safe_call__ = staticmethod(from_mlir_packed_safe_call)
register_class(TI.kTVMFFIFunction, Function)


# ------------------------------------------------------ Python callables in C


#: callback id -> (the callable, the DLPack exchange table its tensor arguments go through).
_callbacks: Dict[int, Tuple[Callable, int]] = {}
_callbacks_lock = threading.Lock()
_next_callback_id = [1]


@interrupts.user_callback_entry
def _python_safe_call_body(handle, args, num_args, result):
    # ``handle`` is our callback id (the ``self`` given to TVMFFIFunctionCreate).
    try:
        # Refused near the recursion limit, while there is room to report it: there
        # converting the error would fail too, and ctypes would swallow that.
        reserve_callback_headroom()
        func, exchange_api = _callbacks[handle]
        values = [borrowed_to_python(args[i], exchange_api, strict=True)
                  for i in range(num_args)]
        to_owned_any(func(*values), result.contents)
        return 0
    except BaseException as exception:  # noqa: BLE001 - every error must cross as an Error
        exception_to_error_raised(exception)
        return -1


def _python_safe_call_entry_error(exception: BaseException) -> int:
    # What escaped the body before its try: a signal handler's exception (the callback's
    # error, as when the callable raises it), or a RecursionError at the limit, left to the
    # checked callback (0 with no result written: "could not start").
    if isinstance(exception, RecursionError):
        return 0
    exception_to_error_raised(exception)
    return -1


#: C calls the body through ``pycapi.entry_guard``: Python runs a pending signal handler at
#: the body's first bytecode, before its try (see ``runtime/slots.py``).
_python_safe_call = abi.TVMFFISafeCallType(
    pycapi.entry_guard(_python_safe_call_body, _python_safe_call_entry_error))


@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
@interrupts.callback_entry
def _python_deleter(handle):
    with _callbacks_lock:
        func = _callbacks.pop(handle, None)
    # Dropped outside the lock: the callable may itself be a callback Function
    # (convert wraps Functions anew), whose release runs this deleter again.
    del func


def convert_to_function(func: Callable) -> Function:
    """A Function object that calls the Python callable ``func``."""
    if isinstance(func, Function):
        return func
    if not callable(func):
        raise TypeError(f"expected a callable, got {type(func).__name__}")
    return wrap_callable(func)


def wrap_callable(func: Callable, exchange_api: int = 0) -> Function:
    """A new Function object whose call calls ``func``, even if ``func`` is a Function.

    (``convert`` wraps a Function anew, as upstream's does: there a Function is
    not an Object, so it is converted as any other callable.) With
    ``exchange_api`` (a DLPack exchange table's address), Tensor arguments reach
    ``func`` as that framework's tensor.
    """
    with _callbacks_lock:
        callback_id = _next_callback_id[0]
        _next_callback_id[0] += 1
        _callbacks[callback_id] = (func, exchange_api)
    handle = ctypes.c_void_p()
    # checked: a ctypes callback that cannot even start (at the recursion limit) returns 0
    # with no result, which the checked Function turns into a RecursionError
    if LIB.tvm_ffi_runtime_checked_callback_function(callback_id, _python_safe_call,
                                                     _python_deleter, ctypes.byref(handle)):
        with _callbacks_lock:
            _callbacks.pop(callback_id, None)
        raise_last_error()
    return Function._adopt(handle.value)


# ------------------------------------------------------------ global functions


def _name_array(name: str):
    data = name.encode()
    return abi.TVMFFIByteArray(ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p), len(data))


def get_global_func(name: str, allow_missing: bool = False) -> Optional[Function]:
    """The global function ``name``; raises ``ValueError`` when absent unless ``allow_missing``."""
    if not isinstance(name, str):
        raise TypeError(f"get_global_func: name must be a str, got {type(name).__name__}")
    handle = ctypes.c_void_p()
    if LIB.TVMFFIFunctionGetGlobal(ctypes.byref(_name_array(name)), ctypes.byref(handle)):
        raise_last_error()
    if not handle.value:
        if allow_missing:
            return None
        raise ValueError(f"Cannot find global function {name}")
    return Function._adopt(handle.value)

upcalls.install("function", Function=Function, get_global_func=get_global_func,
                raise_last_error=raise_last_error, take_last_error=take_last_error,
                convert_to_function=convert_to_function)
