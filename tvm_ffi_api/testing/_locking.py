"""One machine-wide lock for tests that use the GPU.

Parallel test workers (``pytest -n``) that each drive the one GPU of a machine
run out of device memory or disturb each other; :func:`run_with_gpu_lock`
serialises them through an advisory lock on a file every worker agrees on:
``gpu.lock`` in ``$TVM_FFI_TEST_LOCK_DIR``, else in ``tvm-ffi-test-locks-<user>``
under the temporary directory (per user, so users sharing a host do not
fight over permissions).
"""

from __future__ import annotations

import getpass
import os
import tempfile
from pathlib import Path
from typing import Any, Callable, Optional, TypeVar

from ..utils import FileLock

LOCK_DIR_ENV = "TVM_FFI_TEST_LOCK_DIR"

_R = TypeVar("_R")

# Found on the first call (making the directory), not at import.
_lock_path: Optional[Path] = None


def _user_tag() -> str:
    try:
        return getpass.getuser()
    except Exception:  # noqa: BLE001 - no login name: the uid, or nothing better
        getuid = getattr(os, "getuid", None)
        return str(getuid()) if getuid is not None else "unknown"


def gpu_lock_path() -> Path:
    """The lock file's path; its directory is created if missing."""
    global _lock_path
    if _lock_path is None:
        override = os.environ.get(LOCK_DIR_ENV)
        directory = (Path(override).expanduser() if override
                     else Path(tempfile.gettempdir()) / f"tvm-ffi-test-locks-{_user_tag()}")
        directory.mkdir(parents=True, exist_ok=True)
        _lock_path = directory / "gpu.lock"
    return _lock_path


def run_with_gpu_lock(func: Callable[..., _R], /, *args: Any, **kwargs: Any) -> _R:
    """Calls ``func(*args, **kwargs)`` holding the machine-wide GPU lock; returns its result.

    Put the whole life of the device work inside ``func`` (allocation, launch,
    synchronisation, checks) and keep the rest, such as compiling, outside.
    """
    with FileLock(str(gpu_lock_path())):
        return func(*args, **kwargs)
