"""State the runtime keeps per OS thread: the raised error, streams, the allocator.

"Per thread" in the ABI means per OS thread, for the thread's whole life.
Python's ``threading.local`` is not that: a C thread that calls in through a
ctypes callback gets a fresh Python thread state for every call, so whatever
one call stored would be gone in the next. A pthread key is: each OS thread
gets a token on first use that stays with it until it exits, and a new thread
(even one reusing a dead thread's id) starts without one.
"""

from __future__ import annotations

import ctypes
import threading
from typing import Dict, Optional, Tuple

_libc = ctypes.CDLL(None)
_libc.pthread_key_create.argtypes = [ctypes.POINTER(ctypes.c_ulong), ctypes.c_void_p]
_libc.pthread_getspecific.argtypes = [ctypes.c_ulong]
_libc.pthread_getspecific.restype = ctypes.c_void_p
_libc.pthread_setspecific.argtypes = [ctypes.c_ulong, ctypes.c_void_p]
_thread_key = ctypes.c_ulong(0)  # pthread_key_t is 32 bits on Linux, 64 on macOS
if _libc.pthread_key_create(ctypes.byref(_thread_key), None) != 0:
    raise OSError("tvm_ffi_ref: pthread_key_create failed")


class ThreadState:
    """Everything one OS thread has of its own."""

    def __init__(self) -> None:
        #: The owned Error handle in the raised-error slot, or None.
        self.raised_error: Optional[int] = None
        #: (device type, device id) -> stream handle.
        self.streams: Dict[Tuple[int, int], int] = {}
        #: This thread's DLPack allocator (a function address), or None.
        self.allocator: Optional[int] = None
        #: A Python exception a signal check left for the front end.
        self.pending_signal_error: Optional[BaseException] = None


_lock = threading.Lock()
_states: Dict[int, ThreadState] = {}
_last_token = 0


def this_thread() -> ThreadState:
    """The calling OS thread's state, made on its first use."""
    global _last_token
    token = _libc.pthread_getspecific(_thread_key)
    if not token:
        with _lock:
            _last_token += 1
            token = _last_token
        _libc.pthread_setspecific(_thread_key, token)
    with _lock:
        state = _states.get(token)
        if state is None:
            state = _states[token] = ThreadState()
        return state
