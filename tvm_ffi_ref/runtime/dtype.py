"""dtype strings: the names of ``DLDataType`` values, both ways.

Its twin in C: ``tvm_ffi_fast/src/dtype.c``.

A ``DLDataType`` is four bytes: ``code`` (uint8, a ``DLDataTypeCode``),
``bits`` per lane (uint8) and ``lanes`` (uint16). ``float32`` is
``(kDLFloat, 32, 1)`` and ``int8x4`` is ``(kDLInt, 8, 4)``.
``TVMFFIDataTypeFromString`` parses a name, ``TVMFFIDataTypeToString``
prints one as a String object (always boxed, even when short).

The grammar, as upstream parses it (``src/ffi/dtype.cc``):

* ``""`` and ``"void"`` are ``(handle, 0, 0)``, the one dtype with no lanes.
* Short spellings are first rewritten to long ones, and the rewritten text is
  what error messages quote: ``i8`` -> ``int8``, ``u8`` -> ``uint8``,
  ``bf16`` -> ``bfloat16``, ``f32`` -> ``float32``, ``fp8_`` -> ``float8_``,
  ``fp6_`` -> ``float6_``, ``fp4_`` -> ``float4_``.
* A base name, then optional decimal bits, then optional lanes:
  ``int`` (default 32 bits), ``uint`` (32), ``float`` (32), ``bfloat`` (16),
  ``bool`` (8), ``handle`` (64), ``custom[NAME]`` (32). Bits ``0`` keep the
  default. Lanes are ``x<N>`` (N from 1 to 65535), or ``xvscalex<N>`` for a
  scalable vector, stored as the uint16 of ``-N``.
* The low-precision floats have fixed bits and no bits digits:
  ``float8_e3m4 e4m3 e4m3b11fnuz e4m3fn e4m3fnuz e5m2 e5m2fnuz e8m0fnu``,
  ``float6_e2m3fn e3m2fn``, ``float4_e2m1fn``; lanes ``x<N>`` may follow
  (for float4 also after an ``_``, as in ``float4_e2m1fn_x2``).
* Numbers are read as upstream reads them: digits accumulate in a uint64
  that wraps, then anything above 2**32-1 is rejected.
* ``custom[NAME]`` asks the global function ``dtype.get_custom_type_code``
  for the code (NAME passed as a ``const char*``); printing a code of 129 or
  more asks ``dtype.get_custom_type_name``. Like upstream, the function is
  looked up until it is first found and then kept.

Printing: ``bool`` for ``(bool, 8, 1)``, ``""`` for ``(handle, 0, 0)``,
``handle`` for any other handle, else the code's name, then the bits for
codes below ``kDLFloat8_e3m4`` (except 8-bit bool), then ``x<lanes>`` when
lanes (as int16) exceed 1 or ``xvscalex<-lanes>`` when they are below -1.
Codes 5 (complex) and 18..128 have no name: printing them is a ValueError.

:func:`parse_dtype` and :func:`format_dtype` are the same rules for the
front end, on Python values.
"""

from __future__ import annotations

import ctypes
import threading
from typing import Dict, Optional, Tuple, Union

from tvm_ffi_common import abi

from . import errors, functions, memory, strings
from .slots import FFIError, implements

TI = abi.TVMFFITypeIndex
CODE = abi.DLDataTypeCode

#: The first code of a user-registered ("custom") data type (``kDLExtCustomBegin``).
CUSTOM_CODE_BEGIN = 129

#: The name printed for each code that has one.
CODE_NAMES: Dict[int, str] = {
    CODE.kDLInt: "int",
    CODE.kDLUInt: "uint",
    CODE.kDLFloat: "float",
    CODE.kDLOpaqueHandle: "handle",
    CODE.kDLBfloat: "bfloat",
    CODE.kDLBool: "bool",
    CODE.kDLFloat8_e3m4: "float8_e3m4",
    CODE.kDLFloat8_e4m3: "float8_e4m3",
    CODE.kDLFloat8_e4m3b11fnuz: "float8_e4m3b11fnuz",
    CODE.kDLFloat8_e4m3fn: "float8_e4m3fn",
    CODE.kDLFloat8_e4m3fnuz: "float8_e4m3fnuz",
    CODE.kDLFloat8_e5m2: "float8_e5m2",
    CODE.kDLFloat8_e5m2fnuz: "float8_e5m2fnuz",
    CODE.kDLFloat8_e8m0fnu: "float8_e8m0fnu",
    CODE.kDLFloat6_e2m3fn: "float6_e2m3fn",
    CODE.kDLFloat6_e3m2fn: "float6_e3m2fn",
    CODE.kDLFloat4_e2m1fn: "float4_e2m1fn",
}

# The low-precision float families: suffix -> code, in the order upstream
# tries them (longer suffixes before their prefixes: e4m3fnuz before e4m3fn
# before e4m3).
_FLOAT8 = [
    (b"e4m3b11fnuz", CODE.kDLFloat8_e4m3b11fnuz),
    (b"e4m3fnuz", CODE.kDLFloat8_e4m3fnuz),
    (b"e4m3fn", CODE.kDLFloat8_e4m3fn),
    (b"e5m2fnuz", CODE.kDLFloat8_e5m2fnuz),
    (b"e8m0fnu", CODE.kDLFloat8_e8m0fnu),
    (b"e3m4", CODE.kDLFloat8_e3m4),
    (b"e4m3", CODE.kDLFloat8_e4m3),
    (b"e5m2", CODE.kDLFloat8_e5m2),
]
_FLOAT6 = [(b"e2m3fn", CODE.kDLFloat6_e2m3fn), (b"e3m2fn", CODE.kDLFloat6_e3m2fn)]
_FLOAT4 = [(b"e2m1fn", CODE.kDLFloat4_e2m1fn)]
#: family prefix -> (bits, variants, whether "_" may separate the lanes)
_FLOAT_FAMILIES = {
    b"float8_": (8, _FLOAT8, False),
    b"float6_": (6, _FLOAT6, False),
    b"float4_": (4, _FLOAT4, True),
}

# Short spellings and their long forms; a one-letter prefix needs a digit after it.
_ALIASES = [
    (b"i", b"int", True),
    (b"u", b"uint", True),
    (b"bf", b"bfloat", True),
    (b"fp8_", b"float8_", False),
    (b"fp6_", b"float6_", False),
    (b"fp4_", b"float4_", False),
    (b"f", b"float", True),
]

# Base names with bits digits: name -> (code, default bits), tried in this order.
_BASES = [
    (b"int", CODE.kDLInt, 32),
    (b"uint", CODE.kDLUInt, 32),
    (b"bool", CODE.kDLBool, 8),
    (b"float", CODE.kDLFloat, 32),
    (b"handle", CODE.kDLOpaqueHandle, 64),
    (b"bfloat", CODE.kDLBfloat, 16),
]

_UINT32_MAX = 0xFFFFFFFF
_UINT64_MASK = (1 << 64) - 1


class DTypeError(FFIError):
    """A dtype string or value upstream rejects, with upstream's error kind and message.

    ``kind`` and ``message`` (str) are as for any :class:`FFIError`;
    ``raw_message`` holds the message's exact bytes (a rejected string need
    not be UTF-8). ``error`` is set when the error is an Error object raised
    by a custom-type function (an owned reference, re-raised as is).
    """

    def __init__(self, kind: str, raw_message: bytes, error: Optional[int] = None):
        super().__init__(kind, raw_message.decode("utf-8", "replace"))
        self.raw_message = raw_message
        self.error = error

    def reraise(self) -> None:
        """Puts this error into the calling thread's raised slot (consumes ``error``)."""
        if self.error is not None:
            errors.set_raised_owned(self.error)
            self.error = None
        else:
            errors.set_raised_owned(errors.new_error(self.kind.encode(), self.raw_message))

    def __del__(self) -> None:
        if self.error is not None:
            try:
                memory.dec_ref_later(self.error)
            except Exception:  # noqa: BLE001 - the library may be gone at exit
                pass


def _value_error(*parts: Union[bytes, str]) -> DTypeError:
    return DTypeError("ValueError", b"".join(p.encode() if isinstance(p, str) else p
                                             for p in parts))


# ------------------------------------------------------------ custom types

_custom_lock = threading.Lock()
_custom_functions: Dict[str, int] = {}  # name -> owned Function handle, once found


def _custom_function(name: str) -> int:
    with _custom_lock:
        func = _custom_functions.get(name)
        if func is None:
            func = functions.GLOBALS.new_ref(name.encode())
            if func is None:
                raise _value_error(f"Function {name} not found")
            _custom_functions[name] = func
        return func


def _type_key(index: int) -> str:
    from .registry import TYPES  # imported late: the registry imports much of the runtime

    try:
        return TYPES.type_key(index)
    except Exception:  # noqa: BLE001 - an unknown index still deserves a message
        return f"type_index={index}"


def _call_custom(name: str, arg: abi.TVMFFIAny) -> abi.TVMFFIAny:
    """Calls a custom-type global with one argument; returns the owned result."""
    result = abi.TVMFFIAny()
    if functions.call_function(_custom_function(name), ctypes.byref(arg), 1,
                               ctypes.byref(result)) != 0:
        error = errors.take_raised()
        if error is None:
            raise DTypeError("RuntimeError", f"{name} failed without raising an error".encode())
        kind, message, _ = errors.error_parts(error)
        raise DTypeError(kind, message.encode(), error=error)
    return result


def custom_type_code(name: bytes) -> int:
    """The code ``dtype.get_custom_type_code`` assigns to the custom type ``name``."""
    text = ctypes.create_string_buffer(name)
    arg = abi.TVMFFIAny()
    arg.type_index = TI.kTVMFFIRawStr
    arg.v_ptr = ctypes.addressof(text)
    result = _call_custom("dtype.get_custom_type_code", arg)
    if result.type_index not in (TI.kTVMFFIInt, TI.kTVMFFIBool):
        from .anyvalue import dec_ref_any

        dec_ref_any(result)
        raise DTypeError("TypeError", f"Cannot convert from type `{_type_key(result.type_index)}` "
                                      "to `int`".encode())
    return result.v_int64 & 0xFF  # the code is a uint8


def custom_type_name(code: int) -> bytes:
    """The name ``dtype.get_custom_type_name`` gives the custom type ``code``."""
    arg = abi.TVMFFIAny()
    arg.type_index = TI.kTVMFFIInt
    arg.v_int64 = code
    result = _call_custom("dtype.get_custom_type_name", arg)
    try:
        if result.type_index not in (TI.kTVMFFISmallStr, TI.kTVMFFIStr, TI.kTVMFFIRawStr):
            raise DTypeError("TypeError", f"Cannot convert from type "
                                          f"`{_type_key(result.type_index)}` to `str`".encode())
        return strings.view_bytes(result)
    finally:
        from .anyvalue import dec_ref_any

        dec_ref_any(result)


# ----------------------------------------------------------------- parsing


def _digits(text: bytes, pos: int) -> Tuple[int, int]:
    """Reads decimal digits at ``pos`` as upstream does; returns (value, position after)."""
    start, value = pos, 0
    while pos < len(text) and 48 <= text[pos] <= 57:
        value = (value * 10 + text[pos] - 48) & _UINT64_MASK  # a wrapping uint64
        pos += 1
    if value > _UINT32_MAX:
        raise _value_error(b"Integer value in dtype string '", text[start:pos],
                           b"' is out of range for uint32_t")
    return value, pos


def _lanes(text: bytes, pos: int, allow_scalable: bool) -> Tuple[int, int]:
    """Reads ``x<N>`` (or ``xvscalex<N>``) at ``pos``; returns (uint16 lanes, position after)."""
    negate = False
    if allow_scalable and text.startswith(b"xvscale", pos):
        negate, pos = True, pos + 7
    if pos >= len(text) or text[pos] != ord("x"):
        return 1, pos  # upstream drops a bare "xvscale" suffix the same way
    value, end = _digits(text, pos + 1)
    if end == pos + 1 or value == 0:
        raise _value_error(b"Invalid lanes specification in dtype '", text,
                           b"'. Lanes must be a positive integer.")
    if value > 0xFFFF:
        raise _value_error(f"Lanes value {value} is out of range for uint16_t in dtype '", text,
                           b"'")
    return (-value if negate else value) & 0xFFFF, end


def _normalize(text: bytes) -> bytes:
    for alias, canonical, needs_digit in _ALIASES:
        if text.startswith(alias):
            rest = text[len(alias):]
            if not needs_digit or (rest and 48 <= rest[0] <= 57):
                return canonical + rest
    return text


def _parse_low_precision_float(text: bytes, family: bytes) -> Tuple[int, int, int]:
    bits, variants, underscore_lanes = _FLOAT_FAMILIES[family]
    offset = len(family)
    for suffix, code in variants:
        end = offset + len(suffix)
        if not text.startswith(suffix, offset):
            continue
        if end != len(text) and text[end] != ord("x") and not (
                underscore_lanes and text[end] == ord("_")):
            continue
        pos = end + 1 if underscore_lanes and text[end:end + 1] == b"_" else end
        lanes, pos = _lanes(text, pos, allow_scalable=False)
        if pos != len(text):
            raise _value_error(b"unknown dtype `", text, b"`")
        return code, bits, lanes
    raise _value_error(f"unknown {family[:-1].decode()} type `", text, b"`")


def _parse_custom(text: bytes) -> Tuple[int, int]:
    """``custom[NAME]``: returns (code, position after the ``]``)."""
    # Upstream peeks one byte past the view (the terminating NUL of a C string).
    if text[6:7] != b"[":
        raise _value_error(b"expected opening brace after 'custom' type in", text)
    close = text.find(b"]", 7)
    if close < 0:
        raise _value_error(b"expected closing brace after 'custom' type in", text)
    return custom_type_code(text[7:close]), close + 1


def parse_dtype_bytes(text: bytes) -> Tuple[int, int, int]:
    """:func:`parse_dtype` on raw bytes; raises :class:`DTypeError` with upstream's message."""
    code, bits, lanes = _parse(text)
    return int(code), bits, lanes


def _parse(text: bytes) -> Tuple[int, int, int]:
    if text in (b"", b"void"):
        return CODE.kDLOpaqueHandle, 0, 0
    text = _normalize(text)
    for family in _FLOAT_FAMILIES:
        if text.startswith(family):
            return _parse_low_precision_float(text, family)
    for name, base_code, default_bits in _BASES:
        if text.startswith(name):
            code, bits, pos = base_code, default_bits, len(name)
            break
    else:
        if not text.startswith(b"custom"):
            raise _value_error(b"unknown dtype `", text, b"`")
        bits = 32
        code, pos = _parse_custom(text)
    value, pos = _digits(text, pos)
    if value > 0xFF:
        raise _value_error(f"Bits value {value} is out of range for uint8_t in dtype '", text,
                           b"'")
    if value != 0:
        bits = value
    lanes, pos = _lanes(text, pos, allow_scalable=True)
    if pos != len(text):
        raise _value_error(b"unknown dtype `", text, b"`")
    return code, bits, lanes


def parse_dtype(text: Union[str, bytes]) -> Tuple[int, int, int]:
    """Parses a dtype name into ``(code, bits, lanes)`` exactly as upstream does.

    Raises :class:`DTypeError` (``kind`` "ValueError" for a malformed name;
    a custom type's function may raise other kinds) with upstream's message.
    """
    return parse_dtype_bytes(text.encode() if isinstance(text, str) else bytes(text))


# ---------------------------------------------------------------- printing


def format_dtype_bytes(code: int, bits: int, lanes: int) -> bytes:
    """:func:`format_dtype` as bytes (a custom type's name may not be UTF-8)."""
    if code == CODE.kDLBool and bits == 8 and lanes == 1:
        return b"bool"
    if code == CODE.kDLOpaqueHandle and bits == 0 and lanes == 0:
        return b""
    if code >= CUSTOM_CODE_BEGIN:
        text = b"custom[" + custom_type_name(code) + b"]"
    elif code in CODE_NAMES:
        text = CODE_NAMES[code].encode()
    else:
        raise _value_error(f"DLDataType contains unknown type_code={code}")
    if code == CODE.kDLOpaqueHandle:
        return text  # a handle prints without bits or lanes
    if code < CODE.kDLFloat8_e3m4 and not (code == CODE.kDLBool and bits == 8):
        text += str(bits).encode()
    signed_lanes = lanes - 0x10000 if lanes >= 0x8000 else lanes  # lanes read as int16
    if signed_lanes > 1:
        text += f"x{signed_lanes}".encode()
    elif signed_lanes < -1:
        text += f"xvscalex{-signed_lanes}".encode()
    return text


def format_dtype(code: int, bits: int, lanes: int) -> str:
    """The name of ``(code, bits, lanes)`` exactly as upstream prints it.

    ``(kDLOpaqueHandle, 0, 0)`` is ``""`` (void). Raises :class:`DTypeError`
    for codes without a name (5 and 18..128).
    """
    return format_dtype_bytes(code, bits, lanes).decode("utf-8", "replace")


# ---------------------------------------------------------------- the slots


@implements("TVMFFIDataTypeFromString")
def data_type_from_string(text, out):
    array = text.contents
    data = ctypes.string_at(array.data, array.size) if array.size else b""
    try:
        code, bits, lanes = parse_dtype_bytes(data)
    except DTypeError as error:
        error.reraise()
        return -1
    out.contents.code, out.contents.bits, out.contents.lanes = code, bits, lanes
    return 0


@implements("TVMFFIDataTypeToString")
def data_type_to_string(dtype, out):
    value = dtype.contents
    try:
        text = format_dtype_bytes(value.code, value.bits, value.lanes)
    except DTypeError as error:
        error.reraise()
        return -1
    # Upstream hands back a String object even for names of seven bytes or fewer.
    result = out.contents
    result.type_index = TI.kTVMFFIStr
    result.zero_padding = 0
    result.v_ptr = strings.new_bytes_object(TI.kTVMFFIStr, text)
    return 0
