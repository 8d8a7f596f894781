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

import re
import sys
import types
from typing import Callable, Dict, List, Optional, Tuple, Union

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

