"""``ffi.ReprPrint``'s text: the formatting of each leaf and the walk's repr frames.

Its twin in C: ``tvm_ffi_fast/src/dataclass_repr.c``.

How a None, a number, a dtype, a device, a str or bytes prints (as upstream's
C++ prints them), :class:`ReprPrinter` (one call's frames, its cache of
finished objects and the ``...`` of an object met again), and the
``__ffi_repr__`` hooks upstream registers for access paths. The rules are in
:mod:`.dataclass_ops`; this module holds the repr side of them alone.
"""

from __future__ import annotations

import ctypes
import math
from typing import Dict, List, Optional, Set, Union

from tvm_ffi_common import abi

from . import anyvalue, memory, strings
from .dataclass_walk import (
    CONTAINERS,
    REPR_ATTR,
    STRS,
    Children,
    Frame,
    call_hook,
    find_hook,
    make_callback,
    object_view,
    run_frames,
)
from .dtype import format_dtype
from .global_functions import kwargs_object
from .maps import missing_object
from .registry import TYPES
from .shapes import shape_dims
from .slots import FFIError
from .strings import bigint_words
from .tensor import tensor_dltensor

TI = abi.TVMFFITypeIndex
FLAGS = abi.TVMFFIFieldFlagBitMask

#: Environment variable that adds ``@0x<address>`` to the repr of objects.
REPR_WITH_ADDR_ENV = b"TVM_FFI_REPR_WITH_ADDR"

_libc = ctypes.CDLL(None)
_libc.getenv.restype = ctypes.c_char_p
_libc.getenv.argtypes = [ctypes.c_char_p]


def store_str(result: abi.TVMFFIAny, text: str) -> None:
    strings.store_str_or_bytes(result, text.encode("utf-8", "surrogateescape"), is_str=True)


def _text(data: bytes) -> str:
    """Bytes of a name or hook result as text (invalid UTF-8 survives the round trip)."""
    return data.decode("utf-8", "surrogateescape")


def _text_result(result: abi.TVMFFIAny) -> str:
    """The text a repr hook or ``fn_repr`` returned (a str or a C string); consumes ``result``."""
    try:
        if result.type_index not in STRS + (TI.kTVMFFIRawStr,):
            raise FFIError("TypeError", "Cannot convert from type "
                                        f"`{TYPES.type_key(result.type_index)}` to `str`")
        return _text(strings.view_bytes(result))
    finally:
        anyvalue.dec_ref_any(result)


def _is_enum(type_index: int) -> bool:
    enum_index = TYPES.by_key.get(b"ffi.Enum")
    return enum_index is not None and TYPES.is_instance(type_index, enum_index)


#: Where ``EnumObj::_str_index`` (a String, i.e. a TVMFFIAny) sits in an enum object.
ENUM_STR_INDEX_OFFSET = memory.HEADER_SIZE + 8


#: Short names of DLPack device types, as upstream prints devices.
DEVICE_NAMES: Dict[int, str] = {
    abi.DLDeviceType.kDLCPU: "cpu",
    abi.DLDeviceType.kDLCUDA: "cuda",
    abi.DLDeviceType.kDLCUDAHost: "cuda_host",
    abi.DLDeviceType.kDLOpenCL: "opencl",
    abi.DLDeviceType.kDLVulkan: "vulkan",
    abi.DLDeviceType.kDLMetal: "metal",
    abi.DLDeviceType.kDLVPI: "vpi",
    abi.DLDeviceType.kDLROCM: "rocm",
    abi.DLDeviceType.kDLROCMHost: "rocm_host",
    abi.DLDeviceType.kDLExtDev: "ext_dev",
    abi.DLDeviceType.kDLCUDAManaged: "cuda_managed",
    abi.DLDeviceType.kDLOneAPI: "oneapi",
    abi.DLDeviceType.kDLWebGPU: "webgpu",
    abi.DLDeviceType.kDLHexagon: "hexagon",
    abi.DLDeviceType.kDLMAIA: "maia",
    abi.DLDeviceType.kDLTrn: "trn",
}


def format_device(device_type: int, device_id: int) -> str:
    """``cpu:0``, ``cuda:1``; an unknown type is ``unknown``."""
    return f"{DEVICE_NAMES.get(device_type, 'unknown')}:{device_id}"


def format_float(value: float) -> str:
    """A double as ``std::ostream << double`` prints it: ``%g``, NaN and infinities as glibc.

    Six significant digits, trailing zeros dropped, exponent form below 1e-4
    or from 1e6 (``1.23457e+08``); ``-0``, ``inf``, ``-inf``, ``nan``, and
    ``-nan`` for a NaN with its sign bit set.
    """
    if math.isnan(value):
        return "-nan" if math.copysign(1.0, value) < 0 else "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return "%g" % value


_STR_ESCAPES = {0x0A: "\\n", 0x09: "\\t", 0x0D: "\\r", 0x5C: "\\\\", 0x22: '\\"'}
_ANSI_PARAM_BYTES = b"0123456789;"


def _continuation(byte: int) -> bool:
    return byte & 0xC0 == 0x80


def escape_str(data: bytes) -> str:
    """A str's bytes as a double-quoted, Python-style escaped literal (upstream's
    ``EscapedStringPy``).

    * ``\\n \\t \\r \\\\ \\"`` escaped; other control bytes and DEL as ``\\xNN``,
      except an ANSI sequence ``ESC [ digits/; m|K``, kept readable as
      ``\\x1b[...m``;
    * well-formed UTF-8 sequences as ``\\uXXXX`` (2 and 3 bytes) or
      ``\\UXXXXXXXX`` (4 bytes), never as the characters themselves;
    * any other byte >= 0x80 as ``\\xNN``.
    """
    out = ['"']
    i, n = 0, len(data)
    while i < n:
        c = data[i]
        d = data[i + 1] if i + 1 < n else 0
        if c == 0x1B and d == ord("["):
            j = i + 2
            while j < n and data[j] in _ANSI_PARAM_BYTES:
                j += 1
            if j < n and data[j] in b"mK":
                out.append("\\x1b[" + data[i + 2:j + 1].decode("ascii"))
                i = j + 1
                continue
        if c in _STR_ESCAPES:
            out.append(_STR_ESCAPES[c])
            i += 1
        elif c < 0x80:
            out.append(f"\\x{c:02x}" if c < 0x20 or c == 0x7F else chr(c))
            i += 1
        elif c & 0xE0 == 0xC0 and i + 1 < n and _continuation(d):
            out.append(f"\\u{((c & 0x1F) << 6) | (d & 0x3F):04x}")
            i += 2
        elif c & 0xF0 == 0xE0 and i + 2 < n and _continuation(d) and _continuation(data[i + 2]):
            point = ((c & 0x0F) << 12) | ((d & 0x3F) << 6) | (data[i + 2] & 0x3F)
            out.append(f"\\u{point:04x}")
            i += 3
        elif (c & 0xF8 == 0xF0 and i + 3 < n and _continuation(d)
              and _continuation(data[i + 2]) and _continuation(data[i + 3])):
            point = (((c & 0x07) << 18) | ((d & 0x3F) << 12) | ((data[i + 2] & 0x3F) << 6)
                     | (data[i + 3] & 0x3F))
            out.append(f"\\U{point:08x}")
            i += 4
        else:
            out.append(f"\\x{c:02x}")
            i += 1
    out.append('"')
    return "".join(out)


def format_bytes(data: bytes) -> str:
    """Bytes as ``b"..."``: printable ASCII as is, except ``"`` and ``\\``; others ``\\xNN``."""
    return 'b"' + "".join(
        chr(c) if 32 <= c < 127 and c not in (0x22, 0x5C) else f"\\x{c:02x}" for c in data
    ) + '"'


def _address_text(address: int) -> str:
    return f"0x{address:x}"


_IN_PROGRESS, _DONE = 1, 2


class Rope:
    """A text made of pieces, each a str or another Rope, joined once, by ``str()``.

    A frame's text holds its children's texts as pieces instead of copies of them, and the
    cache keeps that Rope, so printing a chain n levels deep takes O(n) time and memory.
    (Joining at every level copies the whole text below it: O(n**2) time, and the cache of
    every level's text holds O(n**2) bytes.) A text remembered and printed again is a piece
    in two places; ``str()`` writes it out at each.
    """

    __slots__ = ("pieces",)

    def __init__(self, pieces: List[Union[str, "Rope"]]) -> None:
        self.pieces = pieces

    def __str__(self) -> str:
        out: List[str] = []
        stack = [iter(self.pieces)]  # no recursion: a Rope can be a million levels deep
        while stack:
            for piece in stack[-1]:
                if isinstance(piece, Rope):
                    stack.append(iter(piece.pieces))
                    break
                out.append(piece)
            else:
                stack.pop()
        return "".join(out)


Text = Union[str, Rope]


def _separated(texts: List[Text], separator: str) -> List[Text]:
    """The texts with ``separator`` between each two."""
    pieces: List[Text] = []
    for i, text in enumerate(texts):
        if i:
            pieces.append(separator)
        pieces.append(text)
    return pieces


class ReprPrinter:
    """One ``ffi.ReprPrint`` call: the state shared by its frames and hook callbacks."""

    def __init__(self) -> None:
        self.show_address = _libc.getenv(REPR_WITH_ADDR_ENV) == b"1"
        self.state: Dict[int, int] = {}
        self.cache: Dict[int, Text] = {}

    def repr_value(self, value: abi.TVMFFIAny) -> str:
        """The text of an owned value (one run of the walk)."""
        text = self.immediate(value)
        if text is None:
            text = run_frames(self.frame(value), "ObjectGraphDFS")
        return str(text)

    def _suffix(self, address: int) -> str:
        return "@" + _address_text(address) if self.show_address else ""

    def immediate(self, value: abi.TVMFFIAny) -> Optional[Text]:
        """The text of a value that needs no frame, or None."""
        index = value.type_index
        if index == TI.kTVMFFINone:
            return "None"
        if index == TI.kTVMFFIBool:
            return "True" if value.v_int64 else "False"
        if index == TI.kTVMFFIInt:
            return str(value.v_int64)
        if index == TI.kTVMFFIFloat:
            return format_float(value.v_float64)
        if index == TI.kTVMFFIDataType:
            dtype = value.v_dtype
            return format_dtype(dtype.code, dtype.bits, dtype.lanes)
        if index == TI.kTVMFFIDevice:
            return format_device(value.v_device.device_type, value.v_device.device_id)
        if index == TI.kTVMFFISmallStr:
            return escape_str(strings.small_bytes(value))
        if index == TI.kTVMFFISmallBytes:
            return format_bytes(strings.small_bytes(value))
        if index < TI.kTVMFFIStaticObjectBegin:
            return TYPES.type_key(index)
        address = value.v_ptr
        if not address:
            return "None"
        state = self.state.get(address)
        if state == _DONE:
            return self.cache[address]
        if state == _IN_PROGRESS:
            return "..." + self._suffix(address)
        if address == missing_object():
            return "<MISSING>"
        if address == kwargs_object():
            return "<KWARGS>"
        if index == TI.kTVMFFIBigInt:
            return str(strings.words_to_int(bigint_words(value)))
        if index == TI.kTVMFFIStr:
            return escape_str(strings.object_bytes(address))
        if index == TI.kTVMFFIBytes:
            return format_bytes(strings.object_bytes(address))
        if index == TI.kTVMFFITensor:
            return self._tensor(address)
        if index == TI.kTVMFFIShape:
            return "Shape(" + ", ".join(str(d) for d in shape_dims(address)) + ")"
        hook = find_hook(REPR_ATTR, index)
        if hook is not None:
            self.state[address] = _IN_PROGRESS
            text = self._call_hook(hook, address)
            if index in CONTAINERS:
                text += self._suffix(address)
            return self._finish(address, text)
        if _is_enum(index):
            name = strings.view_bytes(abi.TVMFFIAny.from_address(address + ENUM_STR_INDEX_OFFSET))
            text = TYPES.type_key(index) + "." + _text(name) + self._suffix(address)
            return self._finish(address, text)
        return None

    def _tensor(self, address: int) -> str:
        tensor = tensor_dltensor(address)
        dtype = tensor.dtype
        shape = ", ".join(str(tensor.shape[i]) for i in range(tensor.ndim))
        device = format_device(tensor.device.device_type, tensor.device.device_id)
        return (f"{format_dtype(dtype.code, dtype.bits, dtype.lanes)}[{shape}]@{device}"
                + self._suffix(address))

    def _call_hook(self, hook: int, address: int) -> str:
        callback = make_callback(self.repr_value, store_str, REPR_ATTR)
        try:
            result = call_hook(hook, [object_view(address), object_view(callback)])
        finally:
            memory.dec_ref(callback)
        return _text_result(result)

    def _finish(self, address: int, text: Text) -> Text:
        self.state[address] = _DONE
        self.cache[address] = text
        return text

    def frame(self, value: abi.TVMFFIAny) -> Frame:
        """The frame of a container or object: its children's texts, joined."""
        address, index = value.v_ptr, value.type_index
        self.state[address] = _IN_PROGRESS
        children = Children(value, FLAGS.kTVMFFIFieldFlagBitMaskReprOff)
        header = TYPES.type_key(index) + self._suffix(address)
        texts = yield from children.results(self)
        if children.kind == "sequence":
            if index == TI.kTVMFFIArray:
                pieces = ["(", *_separated(texts, ", "), ",)" if len(texts) == 1 else ")"]
            else:
                pieces = ["[", *_separated(texts, ", "), "]"]
        elif children.kind == "map":
            entries = [Rope([texts[i], ": ", texts[i + 1]]) for i in range(0, len(texts), 2)]
            pieces = ["{", *_separated(entries, ", "), "}"]
        elif not texts:
            pieces = [header]
        else:
            seen: Set[bytes] = set()
            fields: List[Text] = []
            for field, field_text in zip(children.fields, texts):
                name = ctypes.string_at(field.name.data, field.name.size)
                if name in seen:  # a field shadowing an ancestor's prints once, first
                    continue
                seen.add(name)
                fields.append(Rope([_text(name) + "=", field_text]))
            pieces = [header, "(", *_separated(fields, ", "), ")"]
        if index in CONTAINERS:
            pieces.append(self._suffix(address))
        return self._finish(address, Rope(pieces))


def repr_print(value: abi.TVMFFIAny) -> str:
    """``ffi.ReprPrint`` of an owned value."""
    return ReprPrinter().repr_value(value)


# ------------------------------------------------------------- access paths

# The __ffi_repr__ hooks upstream registers for its access paths: a step prints as
# ".name", "[3]", "[<repr of key>]" or "[<missing:...>]"; a path as "<root>" and its
# steps from the root down, each printed through fn_repr. Both return a String object
# (upstream returns the std::string it built).

#: AccessStepObj: int32 kind, then the Any key; AccessPathObj: parent, step, int32 depth.
_STEP_KIND_OFFSET, _STEP_KEY_OFFSET = memory.HEADER_SIZE, memory.HEADER_SIZE + 8
_PATH_PARENT_OFFSET, _PATH_STEP_OFFSET = memory.HEADER_SIZE, memory.HEADER_SIZE + 8
_PATH_DEPTH_OFFSET = memory.HEADER_SIZE + 16


def _expect_type(address: int, type_key: str) -> None:
    index = memory.type_index_of(address)
    if index != TYPES.key_to_index(type_key.encode()):
        raise FFIError("TypeError", f"Cannot treat type `{TYPES.type_key(index)}` as type "
                                    f"`{type_key}`")


def _fn_repr_text(fn: int, value: abi.TVMFFIAny) -> str:
    return _text_result(call_hook(fn, [value]))


def _store_string_object(result: abi.TVMFFIAny, text: str) -> None:
    result.type_index = TI.kTVMFFIStr
    result.zero_padding = 0
    result.v_ptr = strings.new_bytes_object(TI.kTVMFFIStr, text.encode("utf-8", "surrogateescape"))


def access_step_repr(result, step, fn):
    _expect_type(step, "ffi.reflection.AccessStep")
    kind = ctypes.c_int32.from_address(step + _STEP_KIND_OFFSET).value
    key = abi.TVMFFIAny.from_address(step + _STEP_KEY_OFFSET)
    if kind == 0:  # kAttr: the name as is
        if key.type_index not in STRS + (TI.kTVMFFIRawStr,):
            raise FFIError("TypeError", "Cannot convert from type "
                                        f"`{TYPES.type_key(key.type_index)}` to `str`")
        text = "." + _text(strings.view_bytes(key))
    elif kind in (1, 4):  # kArrayItem, kArrayItemMissing: the index
        if key.type_index not in (TI.kTVMFFIInt, TI.kTVMFFIBool):
            raise FFIError("TypeError", "Cannot convert from type "
                                        f"`{TYPES.type_key(key.type_index)}` to `int`")
        text = f"[{key.v_int64}]" if kind == 1 else f"[<missing:{key.v_int64}>]"
    elif kind == 2:  # kMapItem
        text = f"[{_fn_repr_text(fn, key)}]"
    elif kind in (3, 5):  # kAttrMissing, kMapItemMissing
        text = f"[<missing:{_fn_repr_text(fn, key)}>]"
    else:
        raise FFIError("InternalError", f"unknown access step kind {kind}")
    _store_string_object(result, text)


def access_path_repr(result, path, fn):
    _expect_type(path, "ffi.reflection.AccessPath")
    steps = []
    while path and ctypes.c_int32.from_address(path + _PATH_DEPTH_OFFSET).value > 0:
        steps.append(ctypes.c_void_p.from_address(path + _PATH_STEP_OFFSET).value)
        path = ctypes.c_void_p.from_address(path + _PATH_PARENT_OFFSET).value
    texts = [_fn_repr_text(fn, object_view(step) if step else abi.TVMFFIAny())
             for step in reversed(steps)]
    _store_string_object(result, "<root>" + "".join(texts))

