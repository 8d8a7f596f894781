"""Strings, bytes and big integers: the values whose encoding depends on their size.

Its twin in C: ``tvm_ffi_fast/src/strings.c``.

* A str or bytes of at most 7 bytes travels inline: ``kTVMFFISmallStr`` /
  ``kTVMFFISmallBytes``, the length in ``small_str_len`` (where other values
  keep zero padding) and the bytes in ``v_bytes``, NUL-padded.
* Longer ones are String/Bytes objects: header, a ``TVMFFIByteArray`` cell,
  then the bytes themselves plus a NUL, all in one allocation.
* Integers that fit int64 travel as ``kTVMFFIInt``; others are BigInt objects:
  header, a ``size_t`` word count, then the int64 words, least significant
  first, two's complement, without redundant sign words.
"""

from __future__ import annotations

import ctypes

from tvm_ffi_common import abi

from . import memory
from .slots import FFIError, implements
from .type_index import TI

#: The longest str or bytes that travels inline.
SMALL_STR_MAX = 7

_BYTE_ARRAY_SIZE = ctypes.sizeof(abi.TVMFFIByteArray)
_PAYLOAD_AT = memory.HEADER_SIZE + _BYTE_ARRAY_SIZE
_WORD = 8
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1


def new_bytes_object(type_index: int, data: bytes) -> int:
    """A String (``kTVMFFIStr``) or Bytes (``kTVMFFIBytes``) object holding ``data``."""
    address = memory.new_object(type_index, _PAYLOAD_AT + len(data) + 1)
    ctypes.memmove(address + _PAYLOAD_AT, data, len(data))
    cell = abi.TVMFFIByteArray.from_address(memory.cell_address(address))
    cell.data = address + _PAYLOAD_AT
    cell.size = len(data)
    return address


def object_bytes(address: int) -> bytes:
    """The content of a String or Bytes object."""
    cell = abi.TVMFFIByteArray.from_address(memory.cell_address(address))
    size = cell.size
    # a char array's .raw copies in C; ctypes.string_at is a foreign call, about 3x dearer
    return (ctypes.c_char * size).from_address(cell.data).raw if size else b""


def store_small(out: abi.TVMFFIAny, type_index: int, data: bytes) -> None:
    """Writes an inline small str/bytes value into ``out``."""
    out.type_index = type_index
    out.small_str_len = len(data)
    out.v_uint64 = int.from_bytes(data.ljust(8, b"\0"), "little")


def small_bytes(value: abi.TVMFFIAny) -> bytes:
    """The content of an inline small str/bytes value."""
    return value.v_uint64.to_bytes(8, "little")[: value.small_str_len]


def store_str_or_bytes(out: abi.TVMFFIAny, data: bytes, is_str: bool) -> None:
    """Writes ``data`` into ``out`` as an owned str (or bytes) value, small or boxed."""
    if len(data) <= SMALL_STR_MAX:
        store_small(out, TI.kTVMFFISmallStr if is_str else TI.kTVMFFISmallBytes, data)
    else:
        kind = TI.kTVMFFIStr if is_str else TI.kTVMFFIBytes
        out.type_index = kind
        out.zero_padding = 0
        out.v_ptr = new_bytes_object(kind, data)


def view_bytes(value: abi.TVMFFIAny) -> bytes:
    """The bytes of any of the string/bytes encodings a value may use."""
    index = value.type_index
    if index in (TI.kTVMFFISmallStr, TI.kTVMFFISmallBytes):
        return small_bytes(value)
    if index in (TI.kTVMFFIStr, TI.kTVMFFIBytes):
        return object_bytes(value.v_ptr)
    if index == TI.kTVMFFIRawStr:
        return ctypes.string_at(value.v_ptr)
    if index == TI.kTVMFFIByteArrayPtr:
        array = abi.TVMFFIByteArray.from_address(value.v_ptr)
        return ctypes.string_at(array.data, array.size) if array.size else b""
    raise TypeError(f"type index {index} is not a string or bytes")


# ----------------------------------------------------------------- big ints


def int_to_words(value: int) -> bytes:
    """The minimal two's-complement int64 words of ``value``, least significant first."""
    words = []
    while True:
        word = value & ((1 << 64) - 1)
        words.append(word)
        value >>= 64
        signed = word - (1 << 64) if word >> 63 else word
        if (value == 0 and signed >= 0) or (value == -1 and signed < 0):
            break
    return b"".join(w.to_bytes(8, "little") for w in words)


def words_to_int(data: bytes) -> int:
    """The integer encoded by little-endian int64 words (empty means zero)."""
    return int.from_bytes(data, "little", signed=True) if data else 0


def new_bigint_object(value: int) -> int:
    """A BigInt object for a value outside int64."""
    words = int_to_words(value)
    address = memory.new_object(TI.kTVMFFIBigInt, memory.HEADER_SIZE + _WORD + len(words))
    ctypes.c_size_t.from_address(memory.cell_address(address)).value = len(words) // _WORD
    ctypes.memmove(memory.cell_address(address) + _WORD, words, len(words))
    return address


def bigint_words_view(address: int):
    """``(pointer, byte length)`` of a BigInt object's words."""
    count = ctypes.c_size_t.from_address(memory.cell_address(address)).value
    return memory.cell_address(address) + _WORD, count * _WORD


def bigint_words(value: abi.TVMFFIAny) -> bytes:
    """The two's-complement int64 words of an Int or BigInt value, least significant first."""
    if value.type_index == TI.kTVMFFIInt:
        return (value.v_int64 & ((1 << 64) - 1)).to_bytes(8, "little")
    pointer, size = bigint_words_view(value.v_ptr)
    return ctypes.string_at(pointer, size)


def store_int(out: abi.TVMFFIAny, value: int) -> None:
    """Writes an owned integer: ``kTVMFFIInt`` when it fits, else a BigInt object."""
    out.zero_padding = 0
    if INT64_MIN <= value <= INT64_MAX:
        out.type_index = TI.kTVMFFIInt
        out.v_int64 = value
    else:
        out.type_index = TI.kTVMFFIBigInt
        out.v_ptr = new_bigint_object(value)


# ---------------------------------------------------------------- the slots


def _array_bytes(array) -> bytes:
    view = array.contents
    return ctypes.string_at(view.data, view.size) if view.size else b""


@implements("TVMFFIStringFromByteArray")
def string_from_byte_array(data, out):
    store_str_or_bytes(out.contents, _array_bytes(data), is_str=True)


@implements("TVMFFIBytesFromByteArray")
def bytes_from_byte_array(data, out):
    store_str_or_bytes(out.contents, _array_bytes(data), is_str=False)


@implements("TVMFFIBigIntFromByteArray")
def bigint_from_byte_array(data, out):
    out.contents.type_index = TI.kTVMFFINone
    content = _array_bytes(data)
    if len(content) % _WORD:
        raise FFIError("ValueError", "BigInt content must contain whole 64-bit words")
    store_int(out.contents, words_to_int(content))


@implements("TVMFFIBigIntGetContentByteArray")
def bigint_get_content(value, out):
    # An Int's content is its own payload: the view points into the caller's TVMFFIAny.
    any_value = value.contents
    if any_value.type_index == TI.kTVMFFIInt:
        out.contents.data = ctypes.addressof(any_value) + abi.TVMFFIAny.v_int64.offset
        out.contents.size = _WORD
    elif any_value.type_index == TI.kTVMFFIBigInt:
        out.contents.data, out.contents.size = bigint_words_view(any_value.v_ptr)
    else:
        out.contents.data, out.contents.size = None, 0
        raise FFIError("TypeError", f"expected an int or BigInt value, got type index "
                                    f"{any_value.type_index}")
