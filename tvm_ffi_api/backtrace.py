"""Backtrace text and Python traceback frames, each turned into the other.

An Error object's backtrace is text listing frames most recent first, one per
line in the form ``  File "<file>", line <n>, in <function>``, which is how
every runtime and kernel library writes it, so frames from C++ and from
Python interleave. Going out, a Python traceback becomes such text; coming
in, each frame line becomes a traceback entry whose frame claims that
location, so Python's traceback printer shows C++ frames like its own.
"""

from __future__ import annotations

import re
import sys
import threading
import types
from typing import Dict, Generator, List, Optional, Tuple

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
    return traceback_text_until(tb, None)[0]


def traceback_text_until(tb: Optional[types.TracebackType],
                         stop: Optional[types.TracebackType]) -> Tuple[str, bool]:
    """The backtrace text of the entries of ``tb`` before ``stop``, and whether ``stop``
    was met (a traceback that grew in front of ``stop`` is turned into text from its
    new entries alone)."""
    lines = []
    while tb is not None and tb is not stop:
        code = tb.tb_frame.f_code
        lines.append(f'  File "{code.co_filename}", line {tb.tb_lineno}, in {code.co_name}\n')
        tb = tb.tb_next
    return "".join(reversed(lines)), tb is stop


_code_cache: Dict[Tuple[str, int, str], types.CodeType] = {}


def _frames_without_callers() -> Generator[Optional[types.FrameType], types.CodeType, None]:
    # Runs each code sent to it and yields the frame that code made. A finished frame
    # keeps the frame that called it (f_back), and that one its own caller, locals and
    # all: made directly, a fake frame would keep alive the whole stack of the exception
    # it is put in (the callbacks' arguments, and the exception itself from the frame
    # that builds the traceback: a cycle only the collector breaks). Made here, its
    # caller is this generator's frame, which, suspended, has no caller.
    code = yield None
    while True:
        code = yield eval(code, {"_getframe": sys._getframe})  # noqa: S307 - our one-liner


class _FrameMaker(threading.local):
    def __init__(self) -> None:
        self.frames = _frames_without_callers()
        next(self.frames)


_maker = _FrameMaker()


def _fake_frame(filename: str, lineno: int, func: str) -> types.FrameType:
    # A frame whose code claims the foreign location, and keeps no caller alive.
    key = (filename, lineno, func)
    code = _code_cache.get(key)
    if code is None:
        code = compile("_getframe()", filename, "eval").replace(co_name=func,
                                                              co_firstlineno=lineno)
        _code_cache[key] = code
    if _maker.frames.gi_running:  # re-entered (a signal handler): made here, as a last resort
        return eval(code, {"_getframe": sys._getframe})  # noqa: S307 - our one-liner
    try:
        return _maker.frames.send(code)
    except BaseException:  # the generator is finished: the next frame gets a new one
        _maker.__init__()
        raise


def with_backtrace(error: BaseException, backtrace: str) -> BaseException:
    """``error`` with the backtrace's frames added to its traceback, as its outer frames."""
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
