"""An exception crossing nested callbacks, brought back whole in time linear in the depth.

A Python callback's exception crosses into C as an Error
(``error.exception_to_error_raised``) and, when C hands that Error back to
the Python that called it, becomes an exception again (``Error.py_error``).
Through N nested Python -> C -> Python levels the one Error goes up level by
level, its backtrace growing by the frames of each. Rebuilding the whole
traceback from the text at every level, and the whole text from the
traceback, costs O(N) per level and O(N^2) in all: seconds at a few hundred
levels, minutes at a few thousand.

So each crossing is remembered (:class:`Crossing`): the Error, how far the
exception's traceback reached then (its head entry) and how much backtrace
text the Error held (its length, and its last bytes to see it was not
replaced since). Going out again, only the traceback entries added in front
of that head become text, appended to the Error. Coming back, an Error whose
text was only appended to gives back the very exception it left with, its
traceback still whole, extended by the appended frames alone; the exception
is what ``py_error`` would have made (its class is the kind's, it came from
``py_error`` or is carried as itself), so nothing tells the two apart but
the time. Anything unexpected (text replaced, a record forgotten) takes the
full conversion, as before.

The record lives on the exception (``__tvm_ffi_crossing__``), except for the
exceptions an Error carries as themselves (``KeyboardInterrupt``, ...), whose
records a thread keeps for its last few: on the exception, the Error would
hold the exception that holds the Error, a cycle through C that Python's
collector cannot see. While an Error is in C, its thread keeps the exception
for its last few Errors.
"""

from __future__ import annotations

import ctypes
import threading
import types
from collections import OrderedDict
from typing import Any, List, Optional, Tuple

from .backtrace import traceback_text_until, with_backtrace

#: How many Errors in C (and carried exceptions) a thread remembers.
_REMEMBERED = 8
#: How many last bytes of the text show it was not replaced.
_TAIL = 32


class Crossing:
    """What an exception and its Error were at their last crossing."""

    __slots__ = ("error", "head", "length", "tail", "reusable")

    def __init__(self, error: Any, head: Optional[types.TracebackType], reusable: bool) -> None:
        self.error = error
        self.head = head
        self.length, self.tail = _text_state(error)
        self.reusable = reusable  # whether py_error may give the exception itself back

    def __reduce__(self) -> Any:
        # A pickled or deep-copied exception forgets its crossings (a traceback does
        # not pickle); its next crossing takes the full conversion.
        return (_forgotten, ())


def _forgotten() -> None:
    return None


class _ThreadState(threading.local):
    def __init__(self) -> None:
        self.in_flight: "OrderedDict[int, BaseException]" = OrderedDict()
        self.carried: List[Tuple[BaseException, Crossing]] = []


_state = _ThreadState()


def _text_state(error: Any) -> Tuple[int, bytes]:
    array = error._cell().backtrace
    start = max(0, array.size - _TAIL)
    return array.size, ctypes.string_at(array.data + start, array.size - start)


def _still_holds(record: Crossing) -> bool:
    # the text is the one recorded, or that one with more appended
    if not record.error._handle:
        return False
    array = record.error._cell().backtrace
    if array.size < record.length:
        return False
    start = record.length - len(record.tail)
    return ctypes.string_at(array.data + start, len(record.tail)) == record.tail


def record_of(exception: BaseException) -> Optional[Crossing]:
    """The last crossing of ``exception``, if remembered."""
    if isinstance(exception, Exception):
        return getattr(exception, "__tvm_ffi_crossing__", None)
    for carried, record in _state.carried:
        if carried is exception:
            return record
    return None


def _store(exception: BaseException, record: Crossing) -> None:
    if isinstance(exception, Exception):
        try:
            exception.__tvm_ffi_crossing__ = record
        except AttributeError:  # an exception type without a __dict__
            pass
        return
    carried = [entry for entry in _state.carried if entry[0] is not exception]
    carried.append((exception, record))
    _state.carried = carried[-_REMEMBERED:]


def outgoing(exception: BaseException) -> Optional[Any]:
    """The Error ``exception`` crossed as last time, its backtrace extended by the frames the
    traceback gained since; None when there is no such Error to extend."""
    record = record_of(exception)
    if record is None or not _still_holds(record):
        return None
    text, met = traceback_text_until(exception.__traceback__, record.head)
    if not met:
        return None
    if text:
        record.error.append_backtrace(text)
    return record.error


def crossed(error: Any, exception: BaseException, reusable: bool) -> None:
    """Remembers that ``exception`` now crosses into C as ``error``."""
    _store(exception, Crossing(error, exception.__traceback__, reusable))
    in_flight = _state.in_flight
    in_flight[error._handle] = exception
    in_flight.move_to_end(error._handle)
    while len(in_flight) > _REMEMBERED:
        in_flight.popitem(last=False)


def arrived(error: Any, exception: BaseException) -> None:
    """Remembers that ``exception`` was made for ``error`` coming back (by ``py_error``)."""
    _store(exception, Crossing(error, exception.__traceback__, True))


def incoming(error: Any, expected_class: Optional[type]) -> Optional[BaseException]:
    """The exception ``error`` left with, if it may come back as it is: remembered, made
    by ``py_error`` or carried, of ``expected_class`` (None: any), and the Error's text
    only appended to since, the appended frames then added to its traceback."""
    exception = _state.in_flight.pop(error._handle, None)
    if exception is None:
        return None
    record = record_of(exception)
    if (record is None or not record.reusable or record.error._handle != error._handle or
            (expected_class is not None and type(exception) is not expected_class) or
            not _still_holds(record)):
        return None
    array = error._cell().backtrace
    if array.size > record.length:  # frames C++ appended meanwhile: outer ones
        appended = ctypes.string_at(array.data + record.length, array.size - record.length)
        with_backtrace(exception, appended.decode("utf-8", "replace"))
        _store(exception, Crossing(record.error, exception.__traceback__, True))
    return exception
