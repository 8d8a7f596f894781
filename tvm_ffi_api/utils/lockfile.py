"""``FileLock``: an exclusive advisory lock on a file, shared by cooperating processes.

Advisory: only processes that take the same lock are kept out. One instance
holds the lock at most once; it is not reentrant. On POSIX the lock is
``flock`` on the file (released by the kernel if the process dies); on
Windows, a byte-range lock of its first byte.
"""

from __future__ import annotations

import os
import sys
import time
from types import TracebackType
from typing import Literal, Optional, Type

if sys.platform == "win32":
    import msvcrt
else:
    import fcntl


def _lock_nonblocking(fd: int) -> None:
    # Raises OSError (BlockingIOError) when another holder has it.
    if sys.platform == "win32":
        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
    else:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


def _unlock(fd: int) -> None:
    if sys.platform == "win32":
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)


class FileLock:
    """An exclusive lock on ``lock_file_path`` (created if missing).

    ``with FileLock(path):`` waits for the lock and releases it on exit;
    :meth:`acquire` tries once, :meth:`blocking_acquire` waits (optionally
    with a timeout).
    """

    def __init__(self, lock_file_path: str) -> None:
        self.lock_file_path = lock_file_path
        #: The open descriptor while this instance holds the lock, else None.
        self._file_descriptor: Optional[int] = None

    def __enter__(self) -> "FileLock":
        self.blocking_acquire()
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]],
                 exc_value: Optional[BaseException],
                 traceback: Optional[TracebackType]) -> Literal[False]:
        self.release()
        return False  # an exception raised inside the block goes on

    def acquire(self) -> bool:
        """Takes the lock if it is free: True when taken, False when held (by anyone,
        this instance included). Unexpected failures raise ``RuntimeError``."""
        if self._file_descriptor is not None:
            return False
        flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_BINARY", 0)
        fd = None
        try:
            fd = os.open(self.lock_file_path, flags)
            _lock_nonblocking(fd)
        except OSError:  # BlockingIOError: held elsewhere; other OSErrors: cannot lock now
            if fd is not None:
                os.close(fd)
            return False
        except Exception as exc:  # noqa: BLE001 - reported as the lock's own failure
            if fd is not None:
                os.close(fd)
            raise RuntimeError(f"An unexpected error occurred: {exc}") from exc
        self._file_descriptor = fd
        return True

    def blocking_acquire(self, timeout: Optional[float] = None,
                         poll_interval: float = 0.1) -> bool:
        """Waits until the lock is taken (True); ``TimeoutError`` after ``timeout`` seconds,
        ``RuntimeError`` if this instance already holds it."""
        if self._file_descriptor is not None:
            raise RuntimeError("Lock is already held by this instance.")
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self.acquire():
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"Failed to acquire lock on '{self.lock_file_path}' after "
                                   f"{timeout} seconds.")
            time.sleep(poll_interval)
        return True

    def release(self) -> None:
        """Gives the lock up (nothing happens when this instance does not hold it)."""
        fd, self._file_descriptor = self._file_descriptor, None
        if fd is not None:
            try:
                _unlock(fd)
            finally:
                os.close(fd)
