"""Errors crossing between Python exceptions and TVM FFI Error objects.

An error travels as an Error object whose *kind* names an exception class
("ValueError"). Going out, a Python exception becomes an Error whose kind is
the registered name of its exact class (unregistered classes travel as
"RuntimeError") and whose message is ``str(exception)``. Coming in, an Error
becomes an instance of the class registered for its kind (``RuntimeError``
when none is), raised with the error's backtrace appended to the traceback.

The backtrace text lists frames most recent first, one per line in the form
``  File "<file>", line <n>, in <function>``, which is how every runtime and
kernel library writes it, so frames from C++ and from Python interleave.
"""

from __future__ import annotations

import ctypes
import re
import sys
import types
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

from tvm_ffi_common import abi
from tvm_ffi_common.capi import LIB

from .object import Object, register_class, wrap_owned
from .object_methods import new_object

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


def kind_of(error: BaseException) -> str:
    """The kind an exception travels as: its exact class's registered name, else RuntimeError."""
    return ERROR_TYPE_TO_NAME.get(type(error), "RuntimeError")


_FRAME_LINE = re.compile(r'File "(.+?)", line (\d+), in (.+)')


def parse_backtrace(backtrace: str) -> List[Tuple[str, int, str]]:
    """``(file, line, function)`` of every frame line in a backtrace, in text order."""
    frames = []
    for line in backtrace.split("\n"):
        match = _FRAME_LINE.match(line.strip())
        if match:
            frames.append((match.group(1), int(match.group(2)), match.group(3)))
    return frames


def traceback_to_backtrace(tb: Optional[types.TracebackType]) -> str:
    """A Python traceback as backtrace text (most recent frame first)."""
    lines = []
    while tb is not None:
        code = tb.tb_frame.f_code
        lines.append(f'  File "{code.co_filename}", line {tb.tb_lineno}, in {code.co_name}\n')
        tb = tb.tb_next
    return "".join(reversed(lines))


_code_cache: Dict[Tuple[str, int, str], types.CodeType] = {}


def _fake_frame(filename: str, lineno: int, func: str) -> types.FrameType:
    # A frame whose code claims the foreign location, so Python's traceback
    # printer shows C++ frames like Python ones.
    key = (filename, lineno, func)
    code = _code_cache.get(key)
    if code is None:
        code = compile("_getframe()", filename, "eval").replace(co_name=func,
                                                              co_firstlineno=lineno)
        _code_cache[key] = code
    scope = {"_getframe": sys._getframe}
    return eval(code, scope, scope)  # noqa: S307 - evaluates our own one-liner


def with_backtrace(error: BaseException, backtrace: str) -> BaseException:
    """``error`` with the backtrace's frames appended to its traceback."""
    tb = error.__traceback__
    try:
        for filename, lineno, func in parse_backtrace(backtrace):
            frame = _fake_frame(filename, lineno, func)
            tb = types.TracebackType(tb, frame, frame.f_lasti, lineno)
        return error.with_traceback(tb)
    except (ValueError, SyntaxError):  # an unusable frame description: keep what we have
        return error
    finally:
        del tb


def make_exception(kind: str, message: str, backtrace: str) -> BaseException:
    """The Python exception for an error of ``kind`` (RuntimeError when unregistered)."""
    error_cls: Callable[[str], BaseException] = ERROR_NAME_TO_TYPE.get(kind, RuntimeError)
    return with_backtrace(error_cls(message), backtrace)


# ------------------------------------------------------------ Error objects


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

    def __reduce__(self) -> Any:
        # By value: an error is its three strings (extra_context, which may hold
        # anything, is dropped, as upstream drops it).
        if not self._handle:
            return (new_object, (Error,))
        return (Error, (self.kind, self.message, self.backtrace))

    def py_error(self) -> BaseException:
        """The Python exception this error stands for (its class chosen by kind)."""
        exception = make_exception(self.kind, self.message, self.backtrace)
        exception.__tvm_ffi_error__ = self
        return exception


register_class(TI.kTVMFFIError, Error)


def raise_taken_error(err: Optional[Error]) -> None:
    """Raises the Python exception for ``err``, an Error taken out of the raised slot (None: a
    function returned -1 and raised nothing, which breaks the call rules).

    An ``EnvErrorAlreadySet`` error stands for Python's own exception (Ctrl-C seen by
    ``TVMFFIEnvCheckSignals``): that one is raised when the core has it.
    """
    if err is None:
        from .rules import missing_error_violation

        raise missing_error_violation()
    if err.kind == "EnvErrorAlreadySet":
        from .shortcuts import take_pending_signal_error

        pending = take_pending_signal_error()
        if pending is not None:
            raise pending
    raise err.py_error()


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
    return Error(kind_of(exception), str(exception), backtrace)


def exception_to_error_raised(exception: BaseException) -> None:
    """Leaves ``exception`` as this thread's raised error (a Python callback failed)."""
    err = exception_to_error(exception)
    LIB.TVMFFIErrorSetRaised(err._handle)


# Upstream's module-private names for the helpers above, which its tests and
# some libraries reach for (``tvm_ffi.error._parse_backtrace``, ...).
_parse_backtrace = parse_backtrace
_with_append_backtrace = with_backtrace
_traceback_to_backtrace_str = traceback_to_backtrace
