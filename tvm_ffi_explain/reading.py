"""Reading memory, and the words the walker uses for what it reads.

The sizes the walk steps by, a C type's short spelling, the bytes at an
address, a type index's name and key, and the notes on a float, a text, a
dtype or a device. Every part of the walker (:mod:`.walk`, and the modules that
show each kind of object) uses them, so they sit below all of them.
"""

from __future__ import annotations

import ctypes
import math
from typing import Dict, Optional

from tvm_ffi_common import abi
from tvm_ffi_common.capi import LIB

from .model import shorten

TI = abi.TVMFFITypeIndex
ANY_SIZE = ctypes.sizeof(abi.TVMFFIAny)
HEADER_SIZE = ctypes.sizeof(abi.TVMFFIObject)
OBJECT_BEGIN = int(TI.kTVMFFIStaticObjectBegin)

#: One line on each inline kind, for the ``type_index`` row.
KIND_NOTES: Dict[int, str] = {
    TI.kTVMFFINone: "None: no payload (all zero)",
    TI.kTVMFFIInt: "int64 in the payload",
    TI.kTVMFFIBool: "bool, 0 or 1 in the int64 payload",
    TI.kTVMFFIFloat: "double in the payload",
    TI.kTVMFFIOpaquePtr: "a void* nobody owns or reads",
    TI.kTVMFFIDataType: "a DLDataType in the payload's first 4 bytes",
    TI.kTVMFFIDevice: "a DLDevice in the payload",
    TI.kTVMFFIDLTensorPtr: "a borrowed DLTensor* (arguments only)",
    TI.kTVMFFIRawStr: "a borrowed NUL-terminated char* (arguments only)",
    TI.kTVMFFIByteArrayPtr: "a borrowed TVMFFIByteArray* (arguments only)",
    TI.kTVMFFIObjectRValueRef: "points at the caller's object slot; the callee may take it",
    TI.kTVMFFISmallStr: "a str of at most 7 UTF-8 bytes, inline",
    TI.kTVMFFISmallBytes: "bytes of at most 7, inline",
    TI.kTVMFFIUnchanged: "marker: a structural mutation changed nothing",
}

#: The payload member a ``TVMFFIAny`` of each inline kind holds its value in (from 64 on,
#: every object kind: ``v_obj``). The walker reads these members; a test holds them together.
PAYLOAD_MEMBERS: Dict[int, str] = {
    TI.kTVMFFINone: "v_int64", TI.kTVMFFIInt: "v_int64", TI.kTVMFFIBool: "v_int64",
    TI.kTVMFFIFloat: "v_float64", TI.kTVMFFIOpaquePtr: "v_ptr", TI.kTVMFFIDataType: "v_dtype",
    TI.kTVMFFIDevice: "v_device", TI.kTVMFFIDLTensorPtr: "v_ptr", TI.kTVMFFIRawStr: "v_c_str",
    TI.kTVMFFIByteArrayPtr: "v_ptr", TI.kTVMFFIObjectRValueRef: "v_ptr",
    TI.kTVMFFISmallStr: "v_bytes", TI.kTVMFFISmallBytes: "v_bytes",
    TI.kTVMFFIUnchanged: "v_int64",
}

_INT_SIGNED = {ctypes.c_int8: True, ctypes.c_int16: True, ctypes.c_int32: True,
               ctypes.c_int64: True, ctypes.c_int: True, ctypes.c_long: True}


def short_spelling(spelling: str) -> str:
    """A C type spelling short enough for a column: function pointers lose their parameters."""
    if "(*)(" in spelling:
        return spelling.split("(*)(")[0].strip() + " (*)(...)"
    return spelling


def read(address: int, size: int) -> bytes:
    """``size`` bytes of memory at ``address``."""
    return ctypes.string_at(address, size) if size else b""


def is_pointer_type(ctype) -> bool:
    if ctype in (ctypes.c_void_p, ctypes.c_char_p):
        return True
    return isinstance(ctype, type) and issubclass(ctype, (ctypes._Pointer, ctypes._CFuncPtr))


def int_of(raw: bytes, ctype) -> int:
    signed = _INT_SIGNED.get(ctype, False)
    return int.from_bytes(raw, "little", signed=signed)


def type_key_of(type_index: int) -> Optional[str]:
    """The registered key of a type index, or None when the runtime knows none."""
    if type_index < 0:
        return None
    try:
        info = LIB.TVMFFIGetTypeInfo(type_index)
    except Exception:  # pragma: no cover - the runtime raised through ctypes
        info = None
    if not info:
        handle = ctypes.c_void_p()
        LIB.TVMFFIErrorMoveFromRaised(ctypes.byref(handle))  # GetTypeInfo raised: drop it
        if handle.value:
            LIB.TVMFFIObjectDecRef(handle)
        return None
    key = info.contents.type_key
    return ctypes.string_at(key.data, key.size).decode(errors="replace")


def kind_name(type_index: int) -> str:
    """``kTVMFFIInt`` for a static index, the type key for a registered dynamic one."""
    if type_index in TI._value2member_map_:
        return TI(type_index).name
    key = type_key_of(type_index)
    return key if key is not None else "an unregistered type index"


def float_note(value: float) -> str:
    """A double as Python prints it, with what is special about it."""
    if math.isnan(value):
        return "nan (NaN: AnyEqual compares bit patterns, so this NaN equals itself)"
    if value == 0.0 and math.copysign(1.0, value) < 0:
        return "-0.0 (only the sign bit is set; not AnyEqual to 0.0)"
    return repr(value)


def text_note(data: bytes, is_str: bool) -> str:
    """A str or bytes payload as Python would print it."""
    if is_str:
        try:
            return shorten(repr(data.decode("utf-8")))
        except UnicodeDecodeError:
            pass
    return shorten(repr(data))


def dtype_name(code: int, bits: int, lanes: int) -> str:
    try:
        from tvm_ffi_ref.runtime.dtype import format_dtype

        return format_dtype(code, bits, lanes) or "void"
    except Exception:  # noqa: BLE001 - codes without a dtype string (complex) get a made-up one
        try:
            base = abi.DLDataTypeCode(code).name[len("kDL"):].lower()
        except ValueError:
            base = f"code{code}_"
        return f"{base}{bits}" + (f"x{lanes}" if lanes != 1 else "") + " (no dtype string)"


def device_name(device_type: int, device_id: int) -> str:
    try:
        name = abi.DLDeviceType(device_type).name
    except ValueError:
        name = f"device type {device_type}"
    return f"{name}, id {device_id}"
