"""Error objects and the thread-local raised-error slot.

An Error object is ``TVMFFIObject`` + ``TVMFFIErrorCell`` (kind, message,
backtrace, ``update_backtrace``, cause chain, extra context). Here the kind and
message live in the same allocation right after the cell; the backtrace has a
separate block because ``update_backtrace`` may replace it.

A failing function returns -1 and leaves its error in the calling thread's
raised slot; the caller takes it out with ``TVMFFIErrorMoveFromRaised``. The
slot holds one owned reference.
"""

from __future__ import annotations

import ctypes
from typing import Dict, Optional

from tvm_ffi_common import abi

from . import memory
from .slots import implements
from .threads import this_thread

CELL_SIZE = ctypes.sizeof(abi.TVMFFIErrorCell)
_BACKTRACE_OFFSET = abi.TVMFFIErrorCell.backtrace.offset
TI = abi.TVMFFITypeIndex
MODE = abi.TVMFFIBacktraceUpdateMode


def _cell(address: int) -> abi.TVMFFIErrorCell:
    return abi.TVMFFIErrorCell.from_address(memory.cell_address(address))


#: Backtrace block address -> the bytes it has room for (NUL excluded).
_capacity: Dict[int, int] = {}


def _set_backtrace(address: int, text: bytes, keep: int = 0) -> None:
    """The backtrace becomes its first ``keep`` bytes followed by ``text``.

    Appending grows the block geometrically: an error crossing N nested
    callbacks gets a few frames appended at each, and copying the whole text
    every time would take O(N^2).
    """
    cell = _cell(address)
    old = cell.backtrace.data
    size = keep + len(text)
    block = old
    if not old or keep == 0 or size > _capacity.get(old, 0):
        capacity = size * 2 if keep else size
        block = memory.malloc(capacity + 1)
        _capacity[block] = capacity
        if keep:
            ctypes.memmove(block, old, keep)
    ctypes.memmove(block + keep, text, len(text))
    ctypes.memset(block + size, 0, 1)
    cell.backtrace.data = block
    cell.backtrace.size = size
    if old and old != block:
        _capacity.pop(old, None)
        memory.free(old)


@abi.TVMFFIErrorUpdateBacktrace
def _update_backtrace(address, backtrace, mode):
    new = ctypes.string_at(backtrace.contents.data, backtrace.contents.size)
    keep = _cell(address).backtrace.size if mode == MODE.kTVMFFIBacktraceUpdateModeAppend else 0
    _set_backtrace(address, new, keep)


def _destroy_error(address: int) -> None:
    cell = _cell(address)
    for owned in (cell.cause_chain, cell.extra_context):
        if owned:
            memory.dec_ref(owned)
    if cell.backtrace.data:
        _capacity.pop(cell.backtrace.data, None)
        memory.free(cell.backtrace.data)


def new_error(kind: bytes, message: bytes, backtrace: bytes = b"",
              cause_chain: Optional[int] = None, extra_context: Optional[int] = None) -> int:
    """Creates an Error object; it takes its own references to cause and context."""
    text_at = memory.HEADER_SIZE + CELL_SIZE
    address = memory.new_object(TI.kTVMFFIError, text_at + len(kind) + len(message) + 2,
                                _destroy_error)
    ctypes.memmove(address + text_at, kind, len(kind))
    ctypes.memmove(address + text_at + len(kind) + 1, message, len(message))
    cell = _cell(address)
    cell.kind.data, cell.kind.size = address + text_at, len(kind)
    cell.message.data, cell.message.size = address + text_at + len(kind) + 1, len(message)
    cell.update_backtrace = _update_backtrace
    _set_backtrace(address, backtrace)
    for field, owned in (("cause_chain", cause_chain), ("extra_context", extra_context)):
        if owned:
            memory.inc_ref(owned)
            setattr(cell, field, owned)
    return address


def error_parts(address: int):
    """``(kind, message, backtrace)`` of an Error object, as str."""
    cell = _cell(address)
    return tuple(
        ctypes.string_at(part.data, part.size).decode("utf-8", "replace")
        for part in (cell.kind, cell.message, cell.backtrace)
    )


def error_raw_message(address: int) -> bytes:
    """The exact bytes of an Error object's message (they need not be UTF-8)."""
    message = _cell(address).message
    return ctypes.string_at(message.data, message.size)


# ---------------------------------------------------------------- raised slot

def set_raised_owned(error: int) -> None:
    """Puts an owned reference to ``error`` in this thread's slot, dropping any previous one."""
    state = this_thread()
    previous, state.raised_error = state.raised_error, error
    if previous:
        memory.dec_ref(previous)


def raise_error(kind: str, message: str) -> None:
    """Creates an error of ``kind`` and leaves it in this thread's raised slot."""
    set_raised_owned(new_error(kind.encode(), message.encode()))


def raised() -> bool:
    """Whether this thread's raised slot holds an error."""
    return bool(this_thread().raised_error)


def take_raised() -> Optional[int]:
    """Moves this thread's raised error out (an owned reference), or None."""
    state = this_thread()
    error, state.raised_error = state.raised_error, None
    return error


@implements("TVMFFIErrorSetRaised")
def error_set_raised(error):
    if error:
        memory.inc_ref(error)
    set_raised_owned(error)


@implements("TVMFFIErrorMoveFromRaised")
def error_move_from_raised(result):
    result[0] = take_raised()


@implements("TVMFFIErrorSetRaisedFromCStr")
def error_set_raised_from_cstr(kind, message):
    # NULL (None) is what falls back; an empty kind stays empty, as upstream keeps it
    set_raised_owned(new_error(b"RuntimeError" if kind is None else kind, message or b""))


@implements("TVMFFIErrorSetRaisedFromCStrParts")
def error_set_raised_from_cstr_parts(kind, parts, num_parts):
    message = b"".join(parts[i] for i in range(num_parts) if parts[i] is not None)
    set_raised_owned(new_error(b"RuntimeError" if kind is None else kind, message))


def _bytes(array) -> bytes:
    if not array:
        return b""
    view = array.contents
    return ctypes.string_at(view.data, view.size) if view.size else b""


@implements("TVMFFIErrorCreate")
def error_create(kind, message, backtrace, out):
    out[0] = new_error(_bytes(kind), _bytes(message), _bytes(backtrace))


@implements("TVMFFIErrorCreateWithCauseAndExtraContext")
def error_create_with_cause(kind, message, backtrace, cause_chain, extra_context, out):
    out[0] = new_error(_bytes(kind), _bytes(message), _bytes(backtrace), cause_chain, extra_context)
