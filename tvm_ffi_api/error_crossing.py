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

Only exceptions ``py_error`` made (or carried ones) are remembered: an
exception a callback raised itself crosses the first time as upstream's does,
and nothing of it is kept. The record lives on the exception
(``__tvm_ffi_crossing__``), which holds its Error anyway (``__tvm_ffi_error__``).
An exception an Error carries as itself (``KeyboardInterrupt``, ...) must not
hold that Error (the Error holds it: a cycle through C that Python's collector
cannot see), so its record keeps the text instead, and each crossing makes a
new Error of the text grown by the new frames. While an Error is in C, its
thread keeps the exception that crossed as it, for its last two Errors.

C++ code may catch such an Error and drop it; the exception, its traceback's
frames and the callback's arguments in them must then go at once, as
upstream (which keeps nothing) lets them go. No runtime sees a drop done by
inline header code, so the cores ask after each call into C returns, and
whenever an Error comes back (:func:`settle`): an Error only its Python
wrapper still holds (strong count 1) is in no C code's hands and can never
come back; its exception is forgotten. The question costs one look at
:data:`threads_remembering` when nothing is remembered. The count must hold no
garbage: where collection is not prompt (PyPy), a wrapper made for one crossing
alone gives its reference up as soon as the raised slot holds the Error
(``error.exception_to_error_raised``), or it would hold the Error until the next
collection and the exception would outlive the drop by one.
"""

from __future__ import annotations

import ctypes
import sys
import threading
import types
from collections import OrderedDict
from typing import Any, Callable, Optional, Tuple

from tvm_ffi_common import abi

from .backtrace import traceback_text_until, with_backtrace

#: How many Errors in C a thread remembers the exceptions of: one is enough for an
#: error on its way up; two let C++ code that handles one meanwhile raise another.
_REMEMBERED = 2
#: How many last bytes of the text show it was not replaced.
_TAIL = 32


class Crossing:
    """What an exception and its Error were at their last crossing."""

    __slots__ = ("error", "head", "length", "tail", "text")

    def __init__(self, error: Any, head: Optional[types.TracebackType], carried: bool) -> None:
        self.head = head
        self.length, self.tail = _text_state(error)
        if carried:  # the text, not the Error (see the module's text)
            self.error, self.text = None, _text(error)
        else:
            self.error, self.text = error, None

    def __reduce__(self) -> Any:
        # A pickled or deep-copied exception forgets its crossings (a traceback does
        # not pickle); its next crossing takes the full conversion.
        return (_forgotten, ())


def _forgotten() -> None:
    return None


class _ThreadState(threading.local):
    def __init__(self) -> None:
        self.in_flight: "OrderedDict[int, BaseException]" = OrderedDict()


_state = _ThreadState()

#: The threads that remember an exception in C (their ``threading.get_ident()``): a core
#: calls :func:`settle` after a call into C only when this is not empty.
threads_remembering: set = set()


def settle() -> None:
    """Forgets this thread's exceptions whose Errors no C code holds any more (see the
    module's text); called by the cores after a call into C, and by ``py_error``."""
    in_flight = _state.in_flight
    for handle in [h for h, exception in in_flight.items() if _dropped_by_c(h, exception)]:
        del in_flight[handle]
    if not in_flight:
        threads_remembering.discard(threading.get_ident())


def _dropped_by_c(handle: int, exception: BaseException) -> bool:
    # the strong references of Python's own wrappers of it (the record's, the exception's)
    # are all it has: nothing in C can hand it back
    record = record_of(exception)
    wrappers = {id(w): w for w in (record.error if record is not None else None,
                                   getattr(exception, "__tvm_ffi_error__", None))
                if w is not None and getattr(w, "_handle", None) == handle}
    if not wrappers:
        return True
    strong = abi.TVMFFIObject.from_address(handle).combined_ref_count & 0xFFFFFFFF
    return strong <= len(wrappers)


def _text(error: Any) -> str:
    array = error._cell().backtrace
    return ctypes.string_at(array.data, array.size).decode("utf-8", "replace")


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
    return getattr(exception, "__tvm_ffi_crossing__", None)


def _store(exception: BaseException, record: Crossing) -> None:
    try:
        exception.__tvm_ffi_crossing__ = record
    except AttributeError:  # an exception type without a __dict__
        pass


def outgoing(exception: BaseException, make_carrying: Callable[[str], Any]) -> Optional[Any]:
    """The Error ``exception`` crosses as again: the one it crossed as last time, its
    backtrace extended by the frames the traceback gained since (for a carried exception,
    ``make_carrying(text)`` makes a new one of the grown text); None when there is none."""
    record = record_of(exception)
    if record is None or (record.error is not None and not _still_holds(record)):
        return None
    text, met = traceback_text_until(exception.__traceback__, record.head)
    if not met:
        return None
    if record.error is None:
        return make_carrying(record.text + text)
    if text:
        record.error.append_backtrace(text)
    return record.error


def crossed(error: Any, exception: BaseException) -> None:
    """Remembers that ``exception`` (one ``py_error`` made for ``error``, or carried by
    it) now crosses into C as ``error``."""
    carried = not isinstance(exception, Exception)
    _store(exception, Crossing(error, exception.__traceback__, carried))
    if carried:  # py_error finds it in the Error itself
        return
    in_flight = _state.in_flight
    in_flight[error._handle] = exception
    in_flight.move_to_end(error._handle)
    while len(in_flight) > _REMEMBERED:
        in_flight.popitem(last=False)
    threads_remembering.add(threading.get_ident())


def arrived(error: Any, exception: BaseException) -> None:
    """Remembers that ``exception`` was made for ``error`` coming back (by ``py_error``)."""
    _store(exception, Crossing(error, exception.__traceback__, False))


def incoming(error: Any, expected_class: type) -> Optional[BaseException]:
    """The exception ``error`` left with, if it may come back as it is: remembered, of
    ``expected_class``, and the Error's text only appended to since (the appended frames
    then added to its traceback)."""
    in_flight = _state.in_flight
    exception = in_flight.pop(error._handle, None)
    if exception is None:
        return None
    if not in_flight:
        threads_remembering.discard(threading.get_ident())
    record = record_of(exception)
    if (record is None or record.error._handle != error._handle or
            type(exception) is not expected_class or
            not _still_holds(record)):
        return None
    array = error._cell().backtrace
    if array.size > record.length:  # frames C++ appended meanwhile: outer ones
        appended = ctypes.string_at(array.data + record.length, array.size - record.length)
        with_backtrace(exception, appended.decode("utf-8", "replace"))
        _store(exception, Crossing(record.error, exception.__traceback__, False))
    return exception


#: Python frames a callback keeps free to convert its arguments, its result or its error.
CALLBACK_HEADROOM = 48


def reserve_callback_headroom(frames: int = CALLBACK_HEADROOM) -> int:
    """Raises ``RecursionError`` unless ``frames`` more Python frames fit under the limit.

    A callback entered this close to the recursion limit is refused at once,
    while there is still room to turn the ``RecursionError`` into an Error: a
    conversion that fails deeper down fails again while being reported, and the
    FFI layer (ctypes, cffi) swallows what it cannot report.
    """
    if _far_below_limit(frames):
        return frames
    return _descend(frames)


def _descend(frames: int) -> int:
    # the proof: ``frames`` more calls, each a frame (RecursionError where they do not fit)
    return frames if frames <= 0 else _descend(frames - 1)


#: The stack depth (Python frames) under which a callback spares the descent, when that is
#: also under half the recursion limit less the headroom: a walk of at most this many frames.
_SHALLOW_STACK = 100


def _far_below_limit(frames: int) -> bool:
    """One cheap test that spares the descent where it cannot fail: fewer Python frames on
    the stack than ``_SHALLOW_STACK`` and than half the recursion limit less ``frames``,
    counted by walking them. The interpreter's count also includes C code's own recursion,
    which has no frames: the other half of the limit is left for it."""
    room = min(_SHALLOW_STACK, sys.getrecursionlimit() // 2 - frames)
    frame = sys._getframe(1)
    while frame is not None:
        room -= 1
        if room <= 0:
            return False
        frame = frame.f_back
    return True
