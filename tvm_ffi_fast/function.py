"""Calling TVM FFI functions from Python, and Python functions from anywhere.

The same interface as ``tvm_ffi_ref.function``. :class:`Function` is the fast
core's extension type: calling it does the whole packed call in C (arguments
encoded, the cell's ``safe_call`` run with the GIL released, the calling
convention checked, the result decoded or the raised error turned into the
Python exception of its kind). :func:`get_global_func` and
:func:`convert_to_function` are the core's too; a Function made from a
Python callable has a C ``safe_call`` that takes the GIL, converts the
arguments and the result in C, and turns an exception into the raised error
(:func:`exception_to_error_raised`, below, names it).
"""

from __future__ import annotations

import ctypes
from typing import Any, Callable, Dict, List, Optional

from . import _frontend, abi, error
from ._frontend import Function, convert_to_function, get_global_func, wrap_callable
from ._lib import LIB
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
        _frontend.incref(handle)
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
    return _frontend.take_last_error()


def raise_last_error() -> None:
    """Raises the Python exception for this thread's raised error."""
    _frontend.raise_last_error()


def finish_call(status: int, result: abi.TVMFFIAny) -> Any:
    """The Python value of a completed call, or the exception it raised."""
    return _frontend.finish_call(status, ctypes.addressof(result))


def exception_to_error(exception: BaseException) -> Error:
    """The Error object for a Python exception (reusing the one it came from, if any)."""
    backtrace = error.traceback_to_backtrace(exception.__traceback__)
    original = getattr(exception, "__tvm_ffi_error__", None)
    if isinstance(original, Error):
        original.update_backtrace(backtrace + original.backtrace)
        return original
    return Error(error.kind_of(exception), str(exception), backtrace)


def exception_to_error_raised(exception: BaseException) -> None:
    """Leaves ``exception`` as this thread's raised error (a Python callback failed)."""
    err = exception_to_error(exception)
    LIB.TVMFFIErrorSetRaised(err._handle)


#: Objects kept alive for functions made by ``__from_extern_c__``.
_keep_alive: Dict[int, Any] = {}


def _from_extern_c(c_symbol: int, *, keep_alive_object: Any = None) -> Function:
    """A Function calling the C safe-call entry at address ``c_symbol``.

    ``keep_alive_object`` (e.g. the ``ctypes.CDLL`` the symbol lives in)
    stays referenced for as long as the process runs.
    """
    handle = ctypes.c_void_p()
    if LIB.TVMFFIFunctionCreate(None, c_symbol, None, ctypes.byref(handle)):
        raise_last_error()
    func = Function._adopt(handle.value)
    if keep_alive_object is not None:
        _keep_alive[handle.value] = keep_alive_object
    return func


Function.__from_extern_c__ = staticmethod(_from_extern_c)
register_class(TI.kTVMFFIFunction, Function)


# ------------------------------------------------------------ global functions


def _name_array(name: str):
    data = name.encode()
    return abi.TVMFFIByteArray(ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p), len(data))


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
