"""JSON text: ``ffi.json.Parse(text) -> value`` and ``ffi.json.Stringify(value, indent) -> str``.

Its twin in C: ``tvm_ffi_fast/src/json_text.c``.

JSON values are ordinary FFI values: ``null`` is None, ``true``/``false``
bools, numbers int (when they fit int64 and have no ``.``/exponent) or float,
strings String, arrays Array, objects Map (keys in document order).

Parsing follows RFC 8259 with three extensions upstream has: ``NaN``,
``Infinity`` and ``-Infinity``; a number's characters are collected
(digits, ``+ - . e E``) and read with the C library's ``strtoimax`` / ``strtod``
(so ``+5`` and ``01`` are accepted, an int beyond int64 becomes a float, and a
float out of range is an error); a repeated key keeps its first position
and its last value. Errors are ``ValueError`` with Python's ``json`` wording
and position: ``Expecting value: line 1 column 5 (char 4)`` (columns and chars
count bytes).

Stringify writes compact JSON (``indent`` 0 or None), or one item per line
indented by ``indent`` spaces per level. A float that is integral and below
2**53 in magnitude prints with ``.0`` (so it parses back as a float), other
finite floats with 17 significant digits (``%.17g``); NaN and infinities as
above. Strings escape ``"`` ``\\`` ``/``, the usual control characters and
other bytes below 0x20 (and 0x7f) as ``\\u00XX``; other bytes are written as
they are. Only None, bool, int, float, str, Array, List and Map (with str
keys) can be written; anything else is ``ValueError("Unsupported type: `K`")``.
A List that contains itself is ``ValueError("Cycle detected: List contains
itself")``.
"""

from __future__ import annotations

import ctypes
import math
import re
from typing import List, Optional, Set, Tuple

from tvm_ffi_common import abi

from . import anyvalue, memory, strings
from .dataclass_walk import Frame, run_frames
from .maps import map_from_range, map_items, new_small_map
from .sequences import ARRAY_INIT_CAPACITY, array_from_anys, new_array, seq_items
from .signatures import type_key_of, typed_global
from .slots import FFIError
from .type_index import TI

_LIBC = ctypes.CDLL(None, use_errno=True)
_LIBC.strtoimax.restype = ctypes.c_int64
_LIBC.strtoimax.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_int]
_LIBC.strtod.restype = ctypes.c_double
_LIBC.strtod.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p)]

_SPACES = b" \t\n\r"
_NUMBER_CHARS = b"0123456789eE+-."
#: A run of string characters that stand for themselves (no quote, backslash or control
#: character): taken in one step rather than a byte at a time.
_PLAIN_RUN = re.compile(rb'[^"\\\x00-\x1f]+')
_ESCAPES = {ord('"'): b'"', ord("\\"): b"\\", ord("/"): b"/", ord("b"): b"\b",
            ord("f"): b"\f", ord("n"): b"\n", ord("r"): b"\r", ord("t"): b"\t"}


def _c_number(text: bytes, parse, cast) -> Optional[object]:
    """``parse`` (strtoimax/strtod) over all of ``text``; None unless it consumed it cleanly."""
    buffer = ctypes.create_string_buffer(text)
    end = ctypes.c_char_p()
    ctypes.set_errno(0)
    value = parse(buffer, ctypes.byref(end), *cast)
    consumed = ctypes.cast(end, ctypes.c_void_p).value - ctypes.addressof(buffer)
    if ctypes.get_errno() != 0 or consumed != len(text):
        return None
    return value


def _utf8(code_point: int) -> bytes:
    """A code point as UTF-8 bytes (surrogates included, as upstream writes them)."""
    if code_point < 0x80:
        return bytes([code_point])
    if code_point < 0x800:
        return bytes([0xC0 | code_point >> 6, 0x80 | code_point & 0x3F])
    if code_point < 0x10000:
        return bytes([0xE0 | code_point >> 12, 0x80 | code_point >> 6 & 0x3F,
                      0x80 | code_point & 0x3F])
    return bytes([0xF0 | code_point >> 18, 0x80 | code_point >> 12 & 0x3F,
                  0x80 | code_point >> 6 & 0x3F, 0x80 | code_point & 0x3F])


class _SyntaxError(Exception):
    """Parsing failed; the message was formed at the position of the failure."""


class JSONParser:
    """A recursive-descent JSON parser over UTF-8 bytes that keeps upstream's positions."""

    def __init__(self, text: bytes):
        self.text = text
        self.cur = 0
        self.line = 1
        self.line_begin = 0

    # ------------------------------------------------------------ positions

    def peek(self) -> int:
        return self.text[self.cur] if self.cur < len(self.text) else -1

    def fail(self, prefix: str, at: Optional[int] = None) -> _SyntaxError:
        if at is not None:
            self.cur = at
        column = self.cur - self.line_begin + 1
        return _SyntaxError(f"{prefix}: line {self.line} column {column} (char {self.cur})")

    def skip_spaces(self) -> None:
        while self.cur < len(self.text) and self.text[self.cur] in _SPACES:
            if self.text[self.cur] == ord("\n"):
                self.line += 1
                self.line_begin = self.cur + 1
            self.cur += 1

    def match(self, literal: bytes) -> bool:
        """Consumes ``literal`` if the text continues with it (stops at the first difference)."""
        for expected in literal:
            if self.cur >= len(self.text):
                return False
            if self.text[self.cur] != expected:
                return False
            self.cur += 1
        return True

    # ------------------------------------------------------------ values

    def parse(self) -> abi.TVMFFIAny:
        """The whole text as one owned value; raises :class:`_SyntaxError`."""
        value = run_frames(self.value(), "ffi.json.Parse")
        self.skip_spaces()
        if self.peek() != -1:
            anyvalue.dec_ref_any(value)
            raise self.fail("Extra data")
        return value

    def value(self) -> Frame:
        """The frame reading the next value: an array's or object's members are child frames
        (run by ``run_frames``: nesting costs heap, not Python or C stack)."""
        self.skip_spaces()
        start = self.cur
        char = self.peek()
        if char == -1:
            raise self.fail("Expecting value")
        if char == ord("{"):
            return (yield from self.object())
        if char == ord("["):
            return (yield from self.array())
        if char == ord('"'):
            return self.string()
        for literal in (b"true", b"false", b"null"):
            if char == literal[0]:
                self.cur += 1
                if not self.match(literal[1:]):
                    raise self.fail("Expecting value", start)
                value = abi.TVMFFIAny()  # None
                if literal != b"null":
                    value.type_index, value.v_int64 = TI.kTVMFFIBool, literal == b"true"
                return value
        return self.number()

    def number(self) -> abi.TVMFFIAny:
        start = self.cur
        value = abi.TVMFFIAny()
        negative = self.peek() == ord("-")
        if negative:
            self.cur += 1
        special = {ord("I"): (b"Infinity", -math.inf if negative else math.inf)}
        if not negative:
            special[ord("N")] = (b"NaN", math.nan)
        if self.peek() in special:
            literal, number = special[self.peek()]
            if not self.match(literal):
                raise self.fail("Expecting value", start)
            value.type_index, value.v_float64 = TI.kTVMFFIFloat, number
            return value
        end = self.cur
        while end < len(self.text) and self.text[end] in _NUMBER_CHARS:
            end += 1
        text, self.cur = self.text[start:end], end
        if not text:
            raise self.fail("Expecting value")
        if not any(c in text for c in b".eE"):
            integer = _c_number(text, _LIBC.strtoimax, (10,))
            if integer is not None:
                strings.store_int(value, integer)
                return value
        number = _c_number(text, _LIBC.strtod, ())
        if number is None:
            raise self.fail("Expecting value", start)
        value.type_index, value.v_float64 = TI.kTVMFFIFloat, number
        return value

    def string(self) -> abi.TVMFFIAny:
        start = self.cur
        self.cur += 1
        out = bytearray()
        while self.cur < len(self.text):
            run = _PLAIN_RUN.match(self.text, self.cur)
            if run:
                out += run.group()
                self.cur = run.end()
                continue
            char = self.text[self.cur]
            if char < 0x20:
                raise self.fail("Invalid control character at")
            if char == ord('"'):
                self.cur += 1
                value = abi.TVMFFIAny()
                strings.store_str_or_bytes(value, bytes(out), is_str=True)
                return value
            if char != ord("\\"):
                out.append(char)
                self.cur += 1
                continue
            self.cur += 1
            escape = self.peek()
            if escape in _ESCAPES:
                out += _ESCAPES[escape]
                self.cur += 1
            elif escape == ord("u"):
                out += self.unicode_escape()
            else:
                raise self.fail("Invalid \\escape")
        raise self.fail("Unterminated string starting at", start)

    def hex4(self) -> Optional[int]:
        digits = self.text[self.cur:self.cur + 4]
        if len(digits) < 4 or any(d not in b"0123456789abcdefABCDEF" for d in digits):
            return None
        self.cur += 4
        return int(digits, 16)

    def unicode_escape(self) -> bytes:
        """``\\uXXXX`` (the ``u`` at ``cur``), with a surrogate pair; its UTF-8 bytes."""
        escape_at = self.cur
        self.cur += 1
        first = self.hex4()
        if first is None:
            raise self.fail("Invalid \\uXXXX escape", escape_at)
        if not 0xD800 <= first <= 0xDFFF:
            return _utf8(first)
        if first >= 0xDC00 or not self.match(b"\\u"):
            raise self.fail("Invalid surrogate pair of \\uXXXX escapes", escape_at)
        second_at = self.cur
        second = self.hex4()
        if second is None:
            raise self.fail("Invalid \\uXXXX escape", second_at)
        if not 0xDC00 <= second <= 0xDFFF:
            raise self.fail("Invalid surrogate pair of \\uXXXX escapes", second_at)
        return _utf8(((first - 0xD800) << 10) + (second - 0xDC00) + 0x10000)

    def array(self) -> Frame:
        self.cur += 1
        self.skip_spaces()
        if self.peek() == -1:
            raise self.fail("Expecting value")
        items: List[abi.TVMFFIAny] = []
        try:
            if self.peek() == ord("]"):
                self.cur += 1
                return _owned_object(new_array(ARRAY_INIT_CAPACITY))  # C++'s Array()
            while self.peek() != -1:
                items.append((yield self.value()))
                self.skip_spaces()
                if self.peek() == ord(","):
                    self.cur += 1
                    self.skip_spaces()
                elif self.peek() == ord("]"):
                    self.cur += 1
                    return _owned_object(array_from_anys(items))
                else:
                    raise self.fail("Expecting ',' delimiter")
            raise self.fail("Syntax error near")
        finally:
            for item in items:
                anyvalue.dec_ref_any(item)

    def object(self) -> Frame:
        self.cur += 1
        self.skip_spaces()
        if self.peek() == -1:
            raise self.fail("Expecting property name enclosed in double quotes")
        if self.peek() == ord("}"):
            self.cur += 1
            return _owned_object(new_small_map(TI.kTVMFFIMap))
        pairs: List[Tuple[abi.TVMFFIAny, abi.TVMFFIAny]] = []
        try:
            while self.peek() != -1:
                if self.peek() != ord('"'):
                    raise self.fail("Expecting property name enclosed in double quotes")
                key = self.string()
                self.skip_spaces()
                if self.peek() != ord(":"):
                    anyvalue.dec_ref_any(key)
                    raise self.fail("Expecting ':' delimiter")
                self.cur += 1
                try:
                    value = yield self.value()
                except BaseException:
                    anyvalue.dec_ref_any(key)
                    raise
                pairs.append((key, value))
                self.skip_spaces()
                if self.peek() == ord("}"):
                    self.cur += 1
                    return _owned_object(map_from_range(pairs))
                if self.peek() != ord(","):
                    raise self.fail("Expecting ',' delimiter")
                self.cur += 1
                self.skip_spaces()
            raise self.fail("Syntax error near")
        finally:
            for key, value in pairs:
                anyvalue.dec_ref_any(key)
                anyvalue.dec_ref_any(value)


def _owned_object(address: int) -> abi.TVMFFIAny:
    value = abi.TVMFFIAny(type_index=memory.type_index_of(address))
    value.v_ptr = address
    return value


def parse(text: bytes) -> abi.TVMFFIAny:
    """The value of JSON ``text``, owned; ``ValueError`` with upstream's message otherwise."""
    try:
        return JSONParser(text).parse()
    except _SyntaxError as error:
        raise FFIError("ValueError", str(error)) from None


# ------------------------------------------------------------------ writing


def escape_string(data: bytes) -> bytes:
    """A string's JSON literal, quoted (upstream's ``EscapeStringJSON``)."""
    out = bytearray(b'"')
    for byte in data:
        if byte in b'"\\/':
            out += b"\\" + bytes([byte])
        elif byte in b"\b\f\n\r\t":
            out += {8: b"\\b", 12: b"\\f", 10: b"\\n", 13: b"\\r", 9: b"\\t"}[byte]
        elif byte < 0x20 or byte == 0x7F:
            out += b"\\u%04x" % byte
        else:
            out.append(byte)
    out += b'"'
    return bytes(out)


def format_float(number: float) -> bytes:
    """A float's JSON text (see the module docstring)."""
    if math.isnan(number):
        return b"NaN"
    if math.isinf(number):
        return b"-Infinity" if number < 0 else b"Infinity"
    if abs(number) < (1 << 53) and number == int(number):
        return b"%.1f" % number
    return b"%.17g" % number


class JSONWriter:
    """Writes one value as JSON text, compact or indented."""

    def __init__(self, indent: int):
        self.indent = indent
        self.level = 0
        self.out = bytearray()
        self.active_lists: Set[int] = set()

    def newline(self) -> None:
        self.out += b"\n" + b" " * max(self.level, 0)

    def write(self, value: abi.TVMFFIAny) -> Frame:
        """The frame writing ``value``: a container's items are child frames (run by
        ``run_frames``: nesting costs heap, not Python or C stack)."""
        index = value.type_index
        if index == TI.kTVMFFINone:
            self.out += b"null"
        elif index == TI.kTVMFFIBool:
            self.out += b"true" if value.v_int64 else b"false"
        elif index == TI.kTVMFFIInt:
            self.out += b"%d" % value.v_int64
        elif index == TI.kTVMFFIFloat:
            self.out += format_float(value.v_float64)
        elif index in (TI.kTVMFFISmallStr, TI.kTVMFFIStr):
            self.out += escape_string(strings.view_bytes(value))
        elif index in (TI.kTVMFFIArray, TI.kTVMFFIList, TI.kTVMFFIMap):
            yield from self.write_container(value)
        else:
            raise FFIError("ValueError", f"Unsupported type: `{type_key_of(value)}`")

    def write_container(self, value: abi.TVMFFIAny) -> Frame:
        is_map = value.type_index == TI.kTVMFFIMap
        if value.type_index == TI.kTVMFFIList:
            if value.v_ptr in self.active_lists:
                raise FFIError("ValueError", "Cycle detected: List contains itself")
            self.active_lists.add(value.v_ptr)
        self.out += b"{" if is_map else b"["
        self.level += self.indent
        for i, item in enumerate(map_items(value.v_ptr) if is_map else seq_items(value.v_ptr)):
            if i:
                self.out += b","
            if self.indent:
                self.newline()
            if is_map:
                key, item = item
                if key.type_index not in (TI.kTVMFFISmallStr, TI.kTVMFFIStr):
                    raise FFIError("ValueError",
                                   f"Expect key to be string, got `{type_key_of(key)}`")
                self.out += escape_string(strings.view_bytes(key)) + b":"
                if self.indent:
                    self.out += b" "
            yield self.write(item)
        self.level -= self.indent
        if self.indent:
            self.newline()
        self.out += b"}" if is_map else b"]"
        self.active_lists.discard(value.v_ptr)


def stringify(value: abi.TVMFFIAny, indent: int = 0) -> bytes:
    """The JSON text of ``value`` (see the module docstring)."""
    writer = JSONWriter(indent)
    run_frames(writer.write(value), "ffi.json.Stringify")
    return bytes(writer.out)


@typed_global("ffi.json.Parse", ["str"], "Any")
def _parse(result, text):
    anyvalue.copy_any(parse(strings.view_bytes(text)), result)


@typed_global("ffi.json.Stringify", ["Any", "Optional<int>"], "str")
def _stringify(result, value, indent):
    strings.store_str_or_bytes(result, stringify(value, indent or 0), is_str=True)
