"""Where builds live, how they are named, and how processes take turns building.

Every build gets a directory of its own: ``<cache>/<name>_<hash>``, where
``<cache>`` is ``$TVM_FFI_CACHE_DIR`` (default ``~/.cache/tvm-ffi``) and the
hash covers everything that decides the result (the sources, or the source
paths for file builds, the exported functions, every flag, embedded CUBINs,
and this builder's identity, so upstream's builds in a shared cache never
collide with ours). Same inputs, same directory: that is the cache.

A directory is built under an exclusive lock on its ``lock`` file
(:class:`..utils.lockfile.FileLock`: ``flock``, released by the kernel even if
the holder dies), so processes
building the same thing at once take turns: the first builds, the others wait
and then find it up to date.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any, Iterator, Optional

from tvm_ffi_common import __version__

from ..utils.lockfile import FileLock

#: Environment variable naming the cache root.
CACHE_DIR_ENV = "TVM_FFI_CACHE_DIR"
DEFAULT_CACHE_DIR = os.path.join("~", ".cache", "tvm-ffi")

#: Part of every hash: builds of this package and upstream's never share a directory.
BUILDER_TAG = f"tvm-ffi-abi {__version__}"

#: Name of the lock file in a build directory.
LOCK_FILE = "lock"

#: Wait this long for a lock before saying so on stderr.
_QUIET_WAIT_SECONDS = 0.5


def cache_root() -> str:
    """``$TVM_FFI_CACHE_DIR`` or ``~/.cache/tvm-ffi``, user-expanded."""
    return os.path.expanduser(os.environ.get(CACHE_DIR_ENV) or DEFAULT_CACHE_DIR)


def _feed(digest: Any, value: Any) -> None:
    """Adds ``value`` to ``digest`` with a tag per kind, so different shapes never collide."""
    if value is None:
        digest.update(b"N")
    elif isinstance(value, str):
        data = value.encode("utf-8")
        digest.update(b"S%d:" % len(data) + data)
    elif isinstance(value, (bytes, bytearray)):
        digest.update(b"B%d:" % len(value) + bytes(value))
    elif isinstance(value, Mapping):
        digest.update(b"M%d:" % len(value))
        for key in sorted(value):
            _feed(digest, key)
            _feed(digest, value[key])
    elif isinstance(value, Sequence):
        digest.update(b"L%d:" % len(value))
        for item in value:
            _feed(digest, item)
    else:
        raise TypeError(f"cannot hash a build input of type {type(value).__name__}: {value!r}")


def content_hash(*parts: Any) -> str:
    """A 16-hex-digit digest of ``parts`` (str, bytes, None, sequences, mappings) and the builder."""
    import hashlib  # (OpenSSL's start-up, paid at the first build rather than at import)

    digest = hashlib.sha256()
    _feed(digest, [BUILDER_TAG, *parts])
    return digest.hexdigest()[:16]


def build_directory_for(name: str, build_directory: Optional[str], *hash_parts: Any) -> str:
    """``build_directory`` made absolute, else ``<cache>/<name>_<hash>``; created if missing."""
    if build_directory is not None:
        directory = os.path.abspath(os.path.expanduser(os.fspath(build_directory)))
    else:
        directory = os.path.join(cache_root(), f"{name}_{content_hash(*hash_parts)}")
    os.makedirs(directory, exist_ok=True)
    return directory


def write_if_changed(path: str, content: str) -> None:
    """Writes ``content`` unless the file already holds exactly it (its mtime then stays)."""
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == content:
                return
    except (OSError, UnicodeDecodeError):
        pass
    temporary = f"{path}.{os.getpid()}.tmp"
    with open(temporary, "w", encoding="utf-8") as f:
        f.write(content)
    os.replace(temporary, path)


@contextlib.contextmanager
def exclusive(directory: str, what: str) -> Iterator[None]:
    """Holds the build lock of ``directory`` for the block (waits until it is free).

    When another process holds it for more than a moment, one line on stderr
    says who is waited for, so a slow wait is never silent.
    """
    path = os.path.join(directory, LOCK_FILE)
    lock = FileLock(path)
    if not lock.acquire():
        try:
            lock.blocking_acquire(timeout=_QUIET_WAIT_SECONDS, poll_interval=0.02)
        except TimeoutError:
            sys.stderr.write(f"tvm_ffi.cpp: waiting for another process building {what} "
                             f"(lock {path})\n")
            sys.stderr.flush()
            lock.blocking_acquire()
    try:
        yield
    finally:
        lock.release()
