"""Errors crossing between Python exceptions and TVM FFI Error objects.

An error travels as an Error object whose *kind* names an exception class
("ValueError"). Going out, a Python exception becomes an Error whose kind is
the registered name of its exact class (unregistered classes travel as
"RuntimeError") and whose message is ``str(exception)``. Coming in, an Error
becomes an instance of the class registered for its kind (``RuntimeError``
when none is), raised with the error's backtrace appended to the traceback.
A ``BaseException`` that is no ``Exception`` (``KeyboardInterrupt``,
``SystemExit``, ...) travels as upstream's ``RuntimeError`` but carries the
exception itself (an OpaquePyObject as the error's extra context), and comes
back to Python as itself; upstream turns it into a ``RuntimeError``.

The backtrace text and the traceback frames it becomes are ``backtrace.py``'s;
an exception crossing many nested callbacks keeps its traceback from one
crossing to the next (``error_crossing.py``), so that raising through N levels
takes time linear in N.
"""

from __future__ import annotations

import ctypes
from typing import Any, Callable, Dict, Optional, Union

from tvm_ffi_common import abi
from tvm_ffi_common.capi import LIB

from . import error_crossing, releases, upcalls
from .backtrace import parse_backtrace, traceback_to_backtrace, with_backtrace  # noqa: F401 - re-exported
from .object import CObject, Object, register_class, type_index_of, wrap_owned
from .object_methods import new_object
from .pyobject import unwrap_pyobject, wrap_pyobject
from .rules import missing_error_violation

TI = abi.TVMFFITypeIndex
_CELL_OFFSET = ctypes.sizeof(abi.TVMFFIObject)

#: Exception class by error kind, and kind by exact exception class.
ERROR_NAME_TO_TYPE: Dict[str, type] = {}
ERROR_TYPE_TO_NAME: Dict[type, str] = {}


def register_error(name_or_cls: Union[str, type, None] = None, cls: Optional[type] = None):
    """Registers an exception class for an error kind.

    ``register_error(MyError)`` or ``@register_error`` use the class name as
    the kind; ``register_error("Kind", MyError)`` or ``@register_error("Kind")``
    name it explicitly. Errors of that kind from a kernel then raise
    ``MyError``, and ``MyError`` raised in a Python callback reaches the
    kernel with that kind.
    """
    if isinstance(name_or_cls, type):
        cls, name_or_cls = name_or_cls, name_or_cls.__name__

    def register(error_cls: type) -> type:
        if not (isinstance(error_cls, type) and issubclass(error_cls, BaseException)):
            raise TypeError(f"register_error expects an exception class, got {error_cls!r}")
        kind = name_or_cls if isinstance(name_or_cls, str) else error_cls.__name__
        ERROR_NAME_TO_TYPE[kind] = error_cls
        ERROR_TYPE_TO_NAME[error_cls] = kind
        return error_cls

    return register if cls is None else register(cls)


for _builtin in (RuntimeError, ValueError, TypeError, AttributeError, KeyError, IndexError,
                 AssertionError, MemoryError):
    register_error(_builtin.__name__, _builtin)
# Not upstream's: a callback nested too deep (recursion limit, C stack) must come back as
# what it is, and RecursionError is a RuntimeError, so code catching upstream's still does.
register_error("RecursionError", RecursionError)


def kind_of(error: BaseException) -> str:
    """The kind an exception travels as: its exact class's registered name, else RuntimeError."""
    return ERROR_TYPE_TO_NAME.get(type(error), "RuntimeError")


def make_exception(kind: str, message: str, backtrace: str) -> BaseException:
    """The Python exception for an error of ``kind`` (RuntimeError when unregistered)."""
    error_cls: Callable[[str], BaseException] = ERROR_NAME_TO_TYPE.get(kind, RuntimeError)
    return with_backtrace(error_cls(message), backtrace)


# ------------------------------------------------------------ Error objects


class Error(CObject):
    """An Error object: kind, message and backtrace of a failure that crossed the ABI."""

    __slots__ = ()

    def __init__(self, kind: str, message: str, backtrace: str = "",
                 _extra_context: Optional[Object] = None) -> None:
        super().__init__()
        parts = [kind.encode(), message.encode(), backtrace.encode()]
        arrays = [abi.TVMFFIByteArray(ctypes.cast(ctypes.c_char_p(p), ctypes.c_void_p), len(p))
                  for p in parts]
        handle = ctypes.c_void_p()
        if _extra_context is None:
            status = LIB.TVMFFIErrorCreate(*(ctypes.byref(a) for a in arrays), ctypes.byref(handle))
        else:
            status = LIB.TVMFFIErrorCreateWithCauseAndExtraContext(
                *(ctypes.byref(a) for a in arrays), None, _extra_context._handle,
                ctypes.byref(handle))
        if status:
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
        self._update_backtrace(backtrace, abi.TVMFFIBacktraceUpdateMode.kTVMFFIBacktraceUpdateModeReplace)

    def append_backtrace(self, backtrace: str) -> None:
        """Appends to the stored backtrace (outer frames: the text lists the most recent first)."""
        self._update_backtrace(backtrace, abi.TVMFFIBacktraceUpdateMode.kTVMFFIBacktraceUpdateModeAppend)

    def _update_backtrace(self, backtrace: str, mode: int) -> None:
        data = backtrace.encode()
        array = abi.TVMFFIByteArray(ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p), len(data))
        self._cell().update_backtrace(self._handle, ctypes.byref(array), mode)

    def __reduce__(self) -> Any:
        # By value: an error is its three strings (extra_context, which may hold
        # anything, is dropped, as upstream drops it).
        if not self._handle:
            return (new_object, (Error,))
        return (Error, (self.kind, self.message, self.backtrace))

    def py_error(self) -> BaseException:
        """The Python exception this error stands for (its class chosen by kind).

        An error that carries the very exception a Python callback raised
        (:func:`exception_to_error`, for ``KeyboardInterrupt``, ``SystemExit``
        and other ``BaseException`` subclasses) gives that exception back.
        """
        carried = self._carried_exception()
        if carried is not None:
            return carried
        kind = self.kind
        expected = ERROR_NAME_TO_TYPE.get(kind, RuntimeError)
        back = error_crossing.incoming(self, expected)  # it crossed from here: as it left
        if back is None:
            back = make_exception(kind, self.message, self.backtrace)
            error_crossing.arrived(self, back)
        back.__tvm_ffi_error__ = self
        if error_crossing.threads_remembering:  # others C dropped meanwhile (a call's end)
            error_crossing.settle()
        return back

    def _carried_exception(self) -> Optional[BaseException]:
        handle = self._cell().extra_context
        if not handle or type_index_of(handle) != TI.kTVMFFIOpaquePyObject:
            return None
        value = unwrap_pyobject(handle)
        return value if isinstance(value, BaseException) else None


register_class(TI.kTVMFFIError, Error)


def raise_taken_error(err: Optional[Error]) -> None:
    """Raises the Python exception for ``err``, an Error taken out of the raised slot (None: a
    function returned -1 and raised nothing, which breaks the call rules).

    An ``EnvErrorAlreadySet`` error stands for Python's own exception (Ctrl-C seen by
    ``TVMFFIEnvCheckSignals``): that one is raised when the core has it.
    """
    if err is None:

        raise missing_error_violation()
    if err.kind == "EnvErrorAlreadySet":
        pending = upcalls.take_pending_signal_error()
        if pending is not None:
            raise pending
    raise _exception_of(err)  # made by a function: no local of this frame holds it (a cycle)


def _exception_of(err: Error) -> BaseException:
    try:
        return err.py_error()
    except ctypes.ArgumentError as failure:
        # At the recursion limit, building the exception can fail inside a ctypes call, which
        # hides the RecursionError in an ArgumentError: the one to raise is still that.
        if "RecursionError" not in str(failure):
            raise
        return RecursionError(f"maximum recursion depth exceeded while raising {err.kind}: "
                              f"{err.message}")


def exception_to_error(exception: BaseException) -> Error:
    """The Error object for a Python exception (reusing the one it came from, if any).

    An exception that came from an Error already carries that Error's
    backtrace as frames of its traceback (:func:`with_backtrace`), so the
    reused Error's backtrace is *replaced* by the traceback's text: appending
    would repeat every frame once per Python -> C -> Python crossing.
    """
    backtrace = traceback_to_backtrace(exception.__traceback__)
    original = getattr(exception, "__tvm_ffi_error__", None)
    if isinstance(original, Error) and original._handle:
        original.update_backtrace(backtrace)
        return original
    if not isinstance(exception, Exception):
        return _carrying_error(exception, backtrace)
    return Error(kind_of(exception), str(exception), backtrace)


def _carrying_error(exception: BaseException, backtrace: str) -> Error:
    # KeyboardInterrupt, SystemExit, GeneratorExit, a BaseException of the user's: C++ sees
    # upstream's RuntimeError, but the error carries the exception itself, which Python gets
    # back (Error.py_error). Not recorded on the exception: that would make a reference
    # cycle through C.
    return Error(kind_of(exception), str(exception), backtrace, wrap_pyobject(exception))


def exception_to_error_raised(exception: BaseException) -> None:
    """Leaves ``exception`` as this thread's raised error (a Python callback failed).

    An exception that crossed before (it came back from C and goes out again, one
    level up) extends the Error it crossed as by its new frames alone
    (``error_crossing.py``).
    """
    err = error_crossing.outgoing(exception, lambda text: _carrying_error(exception, text))
    if err is None:
        err = exception_to_error(exception)
    # remembered only when it may come back as it is: made by py_error for this Error
    # (which it holds anyway), or carried by it
    came_as = getattr(exception, "__tvm_ffi_error__", None)
    if (isinstance(came_as, Error) and came_as._handle == err._handle or
            not isinstance(exception, Exception)):
        error_crossing.crossed(err, exception)
    # The kernel frames that called this callback, named (native_frames.c): outer frames,
    # appended after the crossing is remembered, as C++ appends its own on the way out.
    # One stretch of interpreter frames (this Python code) lies between here and the entry.
    caller_frames = LIB.tvm_ffi_runtime_callback_caller_frames(1)
    if caller_frames:
        err.append_backtrace(caller_frames.decode("utf-8", "replace"))
    LIB.TVMFFIErrorSetRaised(err._handle)
    if not releases.PROMPT and _made_for_this_crossing(err, exception):
        # The raised slot holds the Error now, and nothing of Python's may: a wrapper left
        # to a collector that is not prompt (PyPy's) would still hold it when C++ catches
        # and drops it, and error_crossing.settle() would take it for one C still holds.
        handle = err._handle
        object.__setattr__(err, "_handle", None)  # the slot of a Python core's wrapper
        releases.decref_now(handle)


def _made_for_this_crossing(err: Error, exception: BaseException) -> bool:
    """Whether ``err`` is a wrapper nothing but this crossing holds (made for it, and neither
    the exception's own Error nor its crossing record's)."""
    if err is getattr(exception, "__tvm_ffi_error__", None):
        return False
    record = error_crossing.record_of(exception)
    return record is None or record.error is not err


# Upstream's module-private names for the helpers above, which its tests and
# some libraries reach for (``tvm_ffi.error._parse_backtrace``, ...).
_parse_backtrace = parse_backtrace
_with_append_backtrace = with_backtrace
_traceback_to_backtrace_str = traceback_to_backtrace
