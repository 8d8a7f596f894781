"""Calling TVM FFI functions from Python, and Python functions from anywhere.

A :class:`Function` wraps a Function object. Calling it packs the arguments
(:mod:`tvm_ffi_ref.convert`), calls the cell's ``safe_call`` with the
function object itself as ``handle`` (exactly what ``TVMFFIFunctionCall``
does, minus one hop), and turns the owned result into a Python value, or the
raised error into a Python exception.

The other direction: :func:`convert_to_function` makes a Function object
whose ``safe_call`` runs a Python callable, so C++ can call it. Its arguments
arrive borrowed and become Python values; its result is written back owned;
an exception becomes the raised error, kind named after its class.
"""

from __future__ import annotations

import ctypes
import threading
from typing import Any, Callable, Dict, List, Optional

from . import abi, error, rules
from ._lib import LIB
from .runtime import interrupts
from .convert import CallScope, borrowed_to_python, pack_args, to_owned_any, to_python
from .object import Object, register_class, wrap_owned

TI = abi.TVMFFITypeIndex
_CELL_OFFSET = ctypes.sizeof(abi.TVMFFIObject)


class Error(Object):
    """An Error object: kind, message and backtrace of a failure that crossed the ABI."""

    __slots__ = ()

    def __init__(self, kind: str, message: str, backtrace: str = "") -> None:
        super().__init__()
        parts = [kind.encode(), message.encode(), backtrace.encode()]
        arrays = [abi.TVMFFIByteArray(ctypes.cast(ctypes.c_char_p(p), ctypes.c_void_p), len(p))
                  for p in parts]
        handle = ctypes.c_void_p()
        if LIB.TVMFFIErrorCreate(*(ctypes.byref(a) for a in arrays), ctypes.byref(handle)):
            raise MemoryError("could not create an Error object")
        self._handle = handle.value

    def _cell(self) -> abi.TVMFFIErrorCell:
        return abi.TVMFFIErrorCell.from_address(self._handle + _CELL_OFFSET)

    @staticmethod
    def _text(array: abi.TVMFFIByteArray) -> str:
        # Strict, as upstream: text that is not UTF-8 raises UnicodeDecodeError when read
        # (so converting such an error to an exception raises that instead).
        return ctypes.string_at(array.data, array.size).decode("utf-8")

    @property
    def kind(self) -> str:
        """The error kind, the name of an exception class."""
        return self._text(self._cell().kind)

    @property
    def message(self) -> str:
        """The error message."""
        return self._text(self._cell().message)

    @property
    def backtrace(self) -> str:
        """The backtrace text, most recent frame first."""
        return self._text(self._cell().backtrace)

    @property
    def extra_context(self) -> Any:
        """The object of extra context attached to the error, or None."""
        handle = self._cell().extra_context
        if not handle:
            return None
        LIB.TVMFFIObjectIncRef(handle)
        return wrap_owned(handle)

    def update_backtrace(self, backtrace: str) -> None:
        """Replaces the stored backtrace."""
        data = backtrace.encode()
        array = abi.TVMFFIByteArray(ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p), len(data))
        self._cell().update_backtrace(self._handle, ctypes.byref(array),
                                      abi.TVMFFIBacktraceUpdateMode.kTVMFFIBacktraceUpdateModeReplace)

    def py_error(self) -> BaseException:
        """The Python exception this error stands for (its class chosen by kind)."""
        exception = error.make_exception(self.kind, self.message, self.backtrace)
        exception.__tvm_ffi_error__ = self
        return exception


register_class(TI.kTVMFFIError, Error)


def take_last_error() -> Optional[Error]:
    """Moves this thread's raised error out of the runtime."""
    handle = ctypes.c_void_p()
    LIB.TVMFFIErrorMoveFromRaised(ctypes.byref(handle))
    return Error._adopt(handle.value) if handle.value else None


def raise_last_error() -> None:
    """Raises the Python exception for this thread's raised error."""
    err = take_last_error()
    if err is None:
        raise rules.missing_error_violation()
    if err.kind == "EnvErrorAlreadySet":  # the error is Python's own, e.g. Ctrl-C
        from .shortcuts import take_pending_signal_error

        pending = take_pending_signal_error()
        if pending is not None:
            raise pending
    raise err.py_error()


def finish_call(status: int, result: abi.TVMFFIAny) -> Any:
    """The Python value of a completed call, or the exception it raised."""
    try:
        return _outcome(status, result)
    finally:
        if interrupts.take_deferred():  # Ctrl-C that landed while the runtime ran as a C callback
            raise KeyboardInterrupt  # noqa: B012 - it replaces the call's own outcome, as Ctrl-C does


def _outcome(status: int, result: abi.TVMFFIAny) -> Any:
    if status == 0:
        violation = rules.result_violation(result)
        if violation is not None:
            raise violation
        return to_python(result)
    if status == -1:
        raise_last_error()
    if status == -2:  # an error already pending in this frontend: Python's own
        raise RuntimeError("a callee reported an error already set in Python")
    raise rules.status_violation(status)


def exception_to_error(exception: BaseException) -> Error:
    """The Error object for a Python exception (reusing the one it came from, if any)."""
    backtrace = error.traceback_to_backtrace(exception.__traceback__)
    original = getattr(exception, "__tvm_ffi_error__", None)
    if isinstance(original, Error):
        original.update_backtrace(backtrace + original.backtrace)
        return original
    return Error(error.kind_of(exception), str(exception), backtrace)


class Function(Object):
    """A TVM FFI function; calling it calls through the ABI."""

    __slots__ = ("_safe_call",)

    @classmethod
    def _adopt(cls, handle: int) -> "Function":
        func = super()._adopt(handle)
        cell = abi.TVMFFIFunctionCell.from_address(handle + _CELL_OFFSET)
        func._safe_call = cell.safe_call
        return func

    @staticmethod
    def __from_extern_c__(c_symbol: int, *, keep_alive_object: Any = None) -> "Function":
        """A Function calling the C safe-call entry at address ``c_symbol``.

        ``keep_alive_object`` (e.g. the ``ctypes.CDLL`` the symbol lives in)
        stays referenced for as long as this Python wrapper lives.
        """
        handle = ctypes.c_void_p()
        if LIB.TVMFFIFunctionCreate(None, c_symbol, None, ctypes.byref(handle)):
            raise_last_error()
        func = Function._adopt(handle.value)
        if keep_alive_object is not None:
            _keep_alive[handle.value] = keep_alive_object
        return func

    def __call__(self, *args: Any) -> Any:
        scope = CallScope()
        try:
            packed = pack_args(args, scope)
            result = abi.TVMFFIAny()
            status = self._safe_call(self._handle, packed, len(args), ctypes.byref(result))
        finally:
            scope.close()
        return finish_call(status, result)


register_class(TI.kTVMFFIFunction, Function)


#: Objects kept alive for functions made by ``__from_extern_c__``.
_keep_alive: Dict[int, Any] = {}


# ------------------------------------------------------ Python callables in C


_callbacks: Dict[int, Callable] = {}
_callbacks_lock = threading.Lock()
_next_callback_id = [1]


@abi.TVMFFISafeCallType
@interrupts.user_callback_entry
def _python_safe_call(handle, args, num_args, result):
    # ``handle`` is our callback id (the ``self`` given to TVMFFIFunctionCreate).
    try:
        func = _callbacks[handle]
        values = [borrowed_to_python(args[i]) for i in range(num_args)]
        to_owned_any(func(*values), result.contents)
        return 0
    except BaseException as exception:  # noqa: BLE001 - every error must cross as an Error
        exception_to_error_raised(exception)
        return -1


def exception_to_error_raised(exception: BaseException) -> None:
    """Leaves ``exception`` as this thread's raised error."""
    err = exception_to_error(exception)
    LIB.TVMFFIErrorSetRaised(err._handle)


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


def wrap_callable(func: Callable) -> Function:
    """A new Function object whose call calls ``func``, even if ``func`` is a Function.

    (``convert`` wraps a Function anew, as upstream's does: there a Function is
    not an Object, so it is converted as any other callable.)
    """
    with _callbacks_lock:
        callback_id = _next_callback_id[0]
        _next_callback_id[0] += 1
        _callbacks[callback_id] = func
    handle = ctypes.c_void_p()
    if LIB.TVMFFIFunctionCreate(callback_id, _python_safe_call, _python_deleter,
                                ctypes.byref(handle)):
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


def register_global_func(func_name: Any, f: Optional[Callable] = None, override: bool = False):
    """Registers a Python callable (or a Function) as a global function.

    Usable as ``register_global_func("name", f)`` or as a decorator:
    ``@register_global_func("name")`` / ``@register_global_func`` (the
    function's own name); either way the registered :class:`Function` is
    returned. Registering a taken name fails unless ``override``.
    """
    if not isinstance(func_name, str):
        f, func_name = func_name, getattr(func_name, "__name__", None)
    if not isinstance(func_name, str):
        raise ValueError("expect string function name")

    def register(target: Callable) -> Function:
        function = convert_to_function(target)
        if LIB.TVMFFIFunctionSetGlobal(ctypes.byref(_name_array(func_name)), function._handle,
                                       1 if override else 0):
            raise_last_error()
        return function

    return register if f is None else register(f)


def list_global_func_names() -> List[str]:
    """The names of every registered global function."""
    functor = get_global_func("ffi.FunctionListGlobalNamesFunctor")()
    return [str(functor(i)) for i in range(functor(-1))]


def remove_global_func(name: str) -> bool:
    """Removes a global function; returns whether it existed."""
    return bool(get_global_func("ffi.FunctionRemoveGlobal")(name))


def get_global_func_metadata(name: str) -> Any:
    """The metadata registered with a global function (parsed JSON when present)."""
    import json

    text = str(get_global_func("ffi.GetGlobalFuncMetadata")(name))
    return json.loads(text) if text else {}
