"""Stopping a long call the way Ctrl-C stops it: through ``TVMFFIEnvCheckSignals``.

A kernel that runs long is supposed to call ``TVMFFIEnvCheckSignals`` now and
then and stop when it returns -1 (upstream's ``testing.run_check_signal(n)``
sleeps ``n`` seconds that way). Such a function is doing its job, so killing
it at the time limit and calling that a hang would be a false finding. The
worker therefore registers its own ``PyErr_CheckSignals`` with the runtime:
it reports a signal once the current call has run past a soft limit, well
inside the hard one. The kernel then returns (-2 for upstream's
``EnvErrorAlreadySet``), and the call counts as *interrupted*: it reached the
body. Only a call that ignores the check runs into the hard limit and is a
``timeout``.
"""

from __future__ import annotations

import ctypes
import threading
import time
from contextlib import contextmanager
from typing import Iterator

from tvm_ffi_common.capi import LIB

_local = threading.local()


def _check_signals() -> int:
    deadline = getattr(_local, "deadline", None)
    if deadline is not None and time.monotonic() > deadline:
        _local.interrupted = True
        return -1
    return 0


# Called by the runtime through a pointer, with the GIL held (PyErr_CheckSignals' contract).
_CALLBACK = ctypes.PYFUNCTYPE(ctypes.c_int)(_check_signals)


def install() -> None:
    """Makes ``TVMFFIEnvCheckSignals`` report calls that ran past their soft limit."""
    address = ctypes.cast(_CALLBACK, ctypes.c_void_p)
    if LIB.TVMFFIEnvRegisterCAPI(b"PyErr_CheckSignals", address) != 0:
        raise RuntimeError("registering the checker's PyErr_CheckSignals failed")


@contextmanager
def soft_limit(seconds: float) -> Iterator[None]:
    """Within the block, this thread's kernel calls are interrupted after ``seconds``."""
    _local.deadline = time.monotonic() + seconds
    _local.interrupted = False
    try:
        yield
    finally:
        _local.deadline = None


def interrupted() -> bool:
    """Whether this thread's last call under :func:`soft_limit` was interrupted."""
    return bool(getattr(_local, "interrupted", False))


#: The soft limit of the current request (set by the worker from its time limit).
LIMIT = [1.0]
