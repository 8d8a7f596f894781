"""Ctrl-C while Python code runs as a C callback.

Python raises ``KeyboardInterrupt`` from its SIGINT handler at whatever
bytecode the main thread is executing. Most of this runtime runs as ctypes
callbacks (every exported slot, Python-made functions, deleters): an
exception that escapes one of them cannot cross into C, so ctypes prints
"Exception ignored" and returns zero, and the interrupt is lost, or worse,
lands between a callback's entry and its ``try`` and turns a successful call
into a fabricated failure.

So the front end replaces Python's default SIGINT handler (only that one: a
handler the program installed itself is left alone) with one that looks at
where the signal landed:

* no callback on the stack, or inside user code called from a front-end
  callback (whose ``try`` turns any exception into an Error that crosses C
  and becomes the same exception again on the far side): raise
  ``KeyboardInterrupt`` at once, as Python's handler would;
* anywhere else inside a callback: remember it. The next
  ``TVMFFIEnvCheckSignals`` reports it (the kernel then stops with
  ``EnvErrorAlreadySet``), and otherwise the front end raises it when the
  outermost call returns.
"""

from __future__ import annotations

import signal
import threading
from types import CodeType, FrameType
from typing import Callable, Dict, Optional, TypeVar

F = TypeVar("F", bound=Callable)

# code object -> whether exceptions raised by user code it calls are caught by it
_callback_codes: Dict[CodeType, bool] = {}
#: Whether a Ctrl-C was deferred and not yet taken (a call tests it before taking it).
deferred = False


def callback_entry(fn: F) -> F:
    """Marks ``fn`` as a body that runs as a C callback and must not be interrupted."""
    _callback_codes[fn.__code__] = False
    return fn


def user_callback_entry(fn: F) -> F:
    """Marks ``fn`` as a C callback body that calls user code and catches what it raises."""
    _callback_codes[fn.__code__] = True
    return fn


def _must_defer(frame: Optional[FrameType]) -> bool:
    top = frame
    while frame is not None:
        catches_user_errors = _callback_codes.get(frame.f_code)
        if catches_user_errors is not None:
            # Inside a user callback's try (something above its entry frame): safe to raise.
            return not (catches_user_errors and frame is not top)
        frame = frame.f_back
    return False


def _handle_sigint(signum: int, frame: Optional[FrameType]) -> None:
    global deferred
    if _must_defer(frame):
        deferred = True
        return
    raise KeyboardInterrupt


def install_sigint_handler() -> bool:
    """Installs the deferring SIGINT handler if Python's default one is in place.

    Returns whether it is installed. Only the main thread may set handlers; a
    program's own handler is kept.
    """
    if threading.current_thread() is not threading.main_thread():
        return False
    current = signal.getsignal(signal.SIGINT)
    if current is _handle_sigint:
        return True
    if current is not signal.default_int_handler:
        return False
    signal.signal(signal.SIGINT, _handle_sigint)
    return True


def take_deferred() -> bool:
    """Whether an interrupt was deferred since the last call; clears it."""
    global deferred
    taken, deferred = deferred, False
    return taken
