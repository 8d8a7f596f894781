"""Dropping the reference a collected wrapper held, without calling the runtime from a finalizer.

An ``Object`` wrapper owns one strong reference, dropped when Python collects
it. CPython collects a wrapper the moment its last reference goes, at a
point the program chose. PyPy (and CPython's cycle collector) runs
finalizers whenever its GC runs: at any allocation, possibly while this
very thread is inside the runtime holding one of its locks, or inside a C
callback. A finalizer that called ``TVMFFIObjectDecRef`` there could
deadlock or re-enter the runtime halfway through an operation.

So where collection is not prompt (:data:`PROMPT` is False), a finalizer only
queues the handle (``list.append`` is atomic), and ordinary code drops the
queued references (:func:`drain`) where the front end calls the runtime
anyway: before every call and every conversion that may make or read
objects. A program that counts references after dropping a wrapper collects
garbage first (``gc.collect()``), and its next call sees the count drop.
Each core configures the queue with its own ``TVMFFIObjectDecRef``.

Memory a tensor holds outside the collector's heap is reported to it where
collection is not prompt (:func:`external_memory`): otherwise a loop that
drops large tensors behind small wrappers would not collect, nor release.
"""

from __future__ import annotations

import sys
from typing import Callable, List

#: Whether a wrapper's finalizer may drop its reference at once: on CPython, where
#: finalizers run when the last reference goes (the reference counting does it).
PROMPT = sys.implementation.name == "cpython"

#: Handles whose wrappers were collected, waiting for :func:`drain`.
pending: List[int] = []

_decref: List[Callable[[int], object]] = []


def configure(decref: Callable[[int], object]) -> None:
    """Sets the function that drops a reference (the core's ``TVMFFIObjectDecRef``)."""
    _decref[:] = [decref]


def release(handle: int) -> None:
    """Drops the reference a collected wrapper held: now where that is safe, else later."""
    if PROMPT:
        _decref[0](handle)
    else:
        pending.append(handle)


def decref_now(handle: int) -> None:
    """Drops a reference at once (ordinary code, not a finalizer)."""
    _decref[0](handle)


def external_memory(nbytes: int) -> None:
    """Tells a collector that does not count it (PyPy's) that a new wrapper holds ``nbytes``
    of memory outside its heap: a loop dropping large tensors then collects (and so releases)
    as often as their size asks, not only as often as its small wrappers would."""
    if not PROMPT and nbytes > 0:
        _add_memory_pressure(nbytes)


def drain() -> None:
    """Drops every queued reference (called by ordinary code, never by a finalizer)."""
    decref = _decref[0]
    while pending:
        decref(pending.pop())


if not PROMPT:
    from __pypy__ import add_memory_pressure as _add_memory_pressure
