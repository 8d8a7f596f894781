"""The framing of the worker pipes: an 8-byte little-endian length, then a pickle.

Used by both ends: :mod:`workers` (the pytest process) and ``child.py`` (each worker).
"""

from __future__ import annotations

import pickle
import struct
from typing import Any


def _read_exact(stream, size: int) -> bytes:
    chunks, got = [], 0
    while got < size:
        chunk = stream.read(size - got)
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def read_message(stream) -> Any:
    """The next message, or None at end of stream."""
    header = _read_exact(stream, 8)
    if len(header) < 8:
        return None
    (size,) = struct.unpack("<Q", header)
    data = _read_exact(stream, size)
    if len(data) < size:
        return None
    return pickle.loads(data)


def write_message(stream, message: Any) -> None:
    data = pickle.dumps(message, protocol=4)
    stream.write(struct.pack("<Q", len(data)) + data)
    stream.flush()

