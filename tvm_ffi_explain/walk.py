"""Reads the bytes behind a ``TVMFFIAny`` and says what each one means.

Everything here reads memory through the ctypes mirror (:mod:`tvm_ffi_common.abi`):
field names, offsets and sizes come from the ``ctypes.Structure`` of the
header that declares them, never from numbers written here. The walk follows
the ABI: a ``TVMFFIAny`` says by its ``type_index`` which payload member is
live; an object starts with a ``TVMFFIObject`` header whose ``type_index``
says which cell follows; a cell's pointers say where the rest is (inside the
object or in a separate buffer). Parts that belong to whoever allocated the
object (a String's bytes after its cell, the reference runtime's bookkeeping
after a Tensor's ``DLTensor``) are shown only where a pointer or the
reference runtime's own layout says they are.
"""

from __future__ import annotations

import ctypes
import math
import struct
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from tvm_ffi_common import abi
from tvm_ffi_common.capi import LIB
from .spec_tables import c_spelling
from .model import AddressBook, Field, Region, Section, shorten

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


def _is_pointer_type(ctype) -> bool:
    if ctype in (ctypes.c_void_p, ctypes.c_char_p):
        return True
    return isinstance(ctype, type) and issubclass(ctype, (ctypes._Pointer, ctypes._CFuncPtr))


def _int_of(raw: bytes, ctype) -> int:
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


def _dtype_name(code: int, bits: int, lanes: int) -> str:
    try:
        from tvm_ffi_ref.runtime.dtype import format_dtype

        return format_dtype(code, bits, lanes) or "void"
    except Exception:  # noqa: BLE001 - codes without a dtype string (complex) get a made-up one
        try:
            base = abi.DLDataTypeCode(code).name[len("kDL"):].lower()
        except ValueError:
            base = f"code{code}_"
        return f"{base}{bits}" + (f"x{lanes}" if lanes != 1 else "") + " (no dtype string)"


def _device_name(device_type: int, device_id: int) -> str:
    try:
        name = abi.DLDeviceType(device_type).name
    except ValueError:
        name = f"device type {device_type}"
    return f"{name}, id {device_id}"


# ----------------------------------------------------------------- known code


_KNOWN_CODE: Optional[Dict[int, str]] = None


def known_code() -> Dict[int, str]:
    """Names of the code addresses the reference runtime and ``libtvm_ffi.so`` put in objects.

    Code in a shared library is named by ``dladdr``; these are ctypes callbacks
    (which live in anonymous memory) and ``libtvm_ffi.so``'s private functions,
    found by making one probe Function.
    """
    global _KNOWN_CODE
    if _KNOWN_CODE is not None:
        return _KNOWN_CODE
    from tvm_ffi_ref import function, pyobject
    from tvm_ffi_ref.runtime import containers, errors, map_storage, memory, tensors

    def address(callback) -> int:
        return ctypes.cast(callback, ctypes.c_void_p).value

    known = {
        memory.OBJECT_DELETER_ADDRESS: "tvm_ffi_ref.runtime.memory.OBJECT_DELETER",
        memory.FREE_OBJECT_ADDRESS: "tvm_ffi_runtime_free_object in libtvm_ffi.so "
                                    "(frees the block; nothing else to release)",
        memory.FREE_SEQUENCE_ADDRESS: "tvm_ffi_runtime_free_sequence in libtvm_ffi.so "
                                      "(releases the elements, then the block)",
        containers.FREE_ADDRESS: "free in libc",
        map_storage.ADOPTED_SMALL_DELETER: "tvm_ffi_ref.runtime.map_storage."
                                           "_release_adopted_small_map",
        address(errors._update_backtrace): "tvm_ffi_ref.runtime.errors._update_backtrace",
        address(function._python_safe_call): "tvm_ffi_ref.function._python_safe_call "
                                             "(runs the Python callable)",
        address(function._python_deleter): "tvm_ffi_ref.function._python_deleter",
        address(pyobject._release_pyobject): "tvm_ffi_ref.pyobject._release_pyobject "
                                             "(Py_DecRef)",
        tensors._EXPORTED_DELETER[False]: "tvm_ffi_ref.runtime.tensors._exported_deleter",
        tensors._EXPORTED_DELETER[True]: "tvm_ffi_ref.runtime.tensors."
                                         "_exported_versioned_deleter",
    }
    known.update(_library_function_code())
    _KNOWN_CODE = known
    return known


@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def _probe_release(_self):
    pass


@abi.TVMFFISafeCallType
def _probe_call(handle, args, num_args, result):  # pragma: no cover - never called
    return 0


def _probe_function(make) -> Optional[Tuple[int, int]]:
    """(trampoline, deleter) of a Function ``make(out)`` builds in ``libtvm_ffi.so``."""
    out = ctypes.c_void_p()
    if make(ctypes.byref(out)):
        handle = ctypes.c_void_p()
        LIB.TVMFFIErrorMoveFromRaised(ctypes.byref(handle))
        if handle.value:
            LIB.TVMFFIObjectDecRef(handle)
        return None
    try:
        cell = abi.TVMFFIFunctionCell.from_address(out.value + HEADER_SIZE)
        header = abi.TVMFFIObject.from_address(out.value)
        return (ctypes.cast(cell.safe_call, ctypes.c_void_p).value,
                ctypes.cast(header.deleter, ctypes.c_void_p).value)
    finally:
        LIB.TVMFFIObjectDecRef(out.value)


def _library_function_code() -> Dict[int, str]:
    """Addresses of ``libtvm_ffi.so``'s Function trampolines and deleters, from probe Functions."""
    known: Dict[int, str] = {}
    closure = _probe_function(lambda out: LIB.TVMFFIFunctionCreate(1, _probe_call, _probe_release,
                                                                   out))
    if closure:
        known[closure[0]] = CLOSURE_TRAMPOLINE
        known[closure[1]] = "libtvm_ffi.so's Function deleter: calls release(self), frees the object"
    owned = _probe_function(lambda out: LIB.tvm_ffi_runtime_function_with_owner(_probe_call, None,
                                                                               out))
    if owned:
        known[owned[0]] = OWNED_TRAMPOLINE
        known[owned[1]] = ("libtvm_ffi.so's kernel-function deleter: releases the owning module, "
                           "frees the object")
    return known


CLOSURE_TRAMPOLINE = "libtvm_ffi.so's trampoline: calls target(self, args, num_args, result)"
OWNED_TRAMPOLINE = "libtvm_ffi.so's kernel trampoline: calls target(NULL, args, num_args, result)"


def library_function_trampoline(kind: str = CLOSURE_TRAMPOLINE) -> Optional[int]:
    """The ``safe_call`` ``libtvm_ffi.so`` puts in the cell of Functions it makes.

    ``kind`` is :data:`CLOSURE_TRAMPOLINE` (``TVMFFIFunctionCreate`` closures)
    or :data:`OWNED_TRAMPOLINE` (a module's kernel functions).
    """
    for address, name in known_code().items():
        if name == kind:
            return address
    return None


# -------------------------------------------------------------------- walker


class Walker:
    """Builds :class:`Region` s from memory, following pointers depth first.

    ``max_items`` bounds how many elements of a container (and bytes of a
    payload, in eights) are shown; ``max_depth`` how deep pointers are followed.
    """

    def __init__(self, book: AddressBook, max_items: int = 8, max_depth: int = 6,
                 max_bytes: int = 64):
        self.book = book
        self.max_items = max(1, max_items)
        self.max_depth = max(0, max_depth)
        self.max_bytes = max(8, max_bytes)
        self.seen: Dict[Tuple[int, str], Region] = {}

    # ------------------------------------------------------------ helpers

    def struct_fields(self, struct: type, address: int, base: int,
                      prefix: str = "") -> Dict[str, Field]:
        """Every C-visible field of ``struct`` at ``address``, by name, offsets from ``base``."""
        fields = {}
        for layout in abi.c_fields(struct):
            raw = read(address + layout.offset, layout.size)
            spelling = short_spelling(abi.FIELD_C_TYPES.get((struct.__name__, layout.name))
                                      or c_spelling(layout.ctype))
            f = Field(base + layout.offset, prefix + layout.name, spelling, raw)
            if _is_pointer_type(layout.ctype):
                f.is_pointer = True
                f.pointer = int.from_bytes(raw, "little") or None
            fields[layout.name] = f
        return fields

    def int_field(self, f: Field, ctype=ctypes.c_int64) -> int:
        return _int_of(f.raw, ctype)

    def new_region(self, kind: str, address: Optional[int], summary: str = "",
                   code: str = "", key: str = "") -> Region:
        region = Region("", kind, address, 0, summary, code=code)
        if address:
            self.seen[(address, key or kind)] = region
        return region

    def finish(self, region: Region) -> Region:
        """Sets the region's size from its fields and records it in the address book."""
        extent = 0
        for f in region.fields():
            extent = max(extent, f.offset + f.size)
        region.size = max(region.size, extent)
        self.book.add_region(region)
        return region

    def already(self, address: int, key: str) -> Optional[Region]:
        return self.seen.get((address, key))

    def bytes_section(self, title: str, address: int, base: int, size: int, note: str,
                      is_str: Optional[bool] = None) -> List[Section]:
        """A run of bytes as one field (at most ``max_bytes``), plus an elision when longer."""
        shown = min(size, self.max_bytes)
        raw = read(address, shown)
        meaning = note
        f = Field(base, "bytes", f"char[{size}]", raw, meaning)
        sections = [Section(title, f"char[{size}]" if title else "", [f])]
        if size > shown:
            sections.append(Section("", "", note=f"... {size - shown} more bytes ...",
                                    elided=True))
        return sections

    # ------------------------------------------------------------ TVMFFIAny

    def any_region(self, address: int, label: str, summary: str, code: str = "",
                   depth: int = 0) -> Region:
        """A standalone ``TVMFFIAny`` (an argument or a result) as a region."""
        region = Region(label, "TVMFFIAny", address, ANY_SIZE, summary, code=code)
        region.sections.append(Section("", "TVMFFIAny", self.any_fields(address, 0, depth)))
        self.book.add_region(region)
        return region

    def any_fields(self, address: int, base: int, depth: int, prefix: str = "") -> List[Field]:
        """The fields of a ``TVMFFIAny`` at ``address``: the live union members only."""
        F = self.struct_fields(abi.TVMFFIAny, address, base, prefix)
        index = self.int_field(F["type_index"], ctypes.c_int32)
        F["type_index"].meaning = self.kind_line(index)
        rows = [F["type_index"]]
        small = index in (TI.kTVMFFISmallStr, TI.kTVMFFISmallBytes)
        if small:
            length = self.int_field(F["small_str_len"], ctypes.c_uint32)
            F["small_str_len"].meaning = (f"{length}: the length lives where other kinds "
                                          "keep zero padding")
            rows.append(F["small_str_len"])
        else:
            padding = self.int_field(F["zero_padding"], ctypes.c_uint32)
            F["zero_padding"].meaning = ("zero" if padding == 0 else
                                         f"{padding}: NOT ZERO, which breaks the ABI rule")
            rows.append(F["zero_padding"])
        rows += self.payload_fields(F, index, address, base, depth, prefix)
        return rows

    def kind_line(self, index: int) -> str:
        """The meaning of a type index: its name and what it says about the payload."""
        name = kind_name(index)
        if index < OBJECT_BEGIN:
            note = KIND_NOTES.get(index, "not a type index of this ABI version")
            return f"{index} = {name}: {note}"
        key = type_key_of(index)
        key_text = f' "{key}"' if key and key != name else ""
        return f"{index} = {name}{key_text}: the payload is an object pointer"

    def payload_fields(self, F: Dict[str, Field], index: int, address: int, base: int,
                       depth: int, prefix: str) -> List[Field]:
        payload = F["v_int64"]
        value = self.int_field(payload)
        if index == TI.kTVMFFINone:
            payload.meaning = "unused (zero)"
            return [payload]
        if index in (TI.kTVMFFIInt, TI.kTVMFFIUnchanged):
            payload.meaning = str(value)
            return [payload]
        if index == TI.kTVMFFIBool:
            payload.meaning = f"{value} = {bool(value)}"
            return [payload]
        if index == TI.kTVMFFIFloat:
            f = F["v_float64"]
            f.meaning = float_note(struct.unpack("<d", f.raw)[0])
            return [f]
        if index == TI.kTVMFFIOpaquePtr:
            f = F["v_ptr"]
            f.meaning = "an opaque pointer, passed through untouched"
            return [f]
        if index == TI.kTVMFFIDataType:
            return self.dtype_fields(address + abi.TVMFFIAny.v_dtype.offset,
                                     base + abi.TVMFFIAny.v_dtype.offset, prefix + "v_dtype.")
        if index == TI.kTVMFFIDevice:
            return self.device_fields(address + abi.TVMFFIAny.v_device.offset,
                                      base + abi.TVMFFIAny.v_device.offset, prefix + "v_device.")
        if index in (TI.kTVMFFISmallStr, TI.kTVMFFISmallBytes):
            f = F["v_bytes"]
            length = min(self.int_field(F["small_str_len"], ctypes.c_uint32), 8)
            pad = 8 - length
            f.meaning = (text_note(f.raw[:length], index == TI.kTVMFFISmallStr)
                         + (f", then {pad} NUL byte{'s' if pad != 1 else ''}" if pad else ""))
            return [f]
        if index == TI.kTVMFFIRawStr:
            f = F["v_c_str"]
            f.is_pointer, f.pointer = True, value or None
            f.meaning = "a borrowed C string"
            if f.pointer and depth < self.max_depth:
                f.target = self.c_string_region(f.pointer)
            return [f]
        if index == TI.kTVMFFIByteArrayPtr:
            f = F["v_ptr"]
            f.meaning = "a borrowed TVMFFIByteArray"
            if f.pointer and depth < self.max_depth:
                f.target = self.byte_array_region(f.pointer)
            return [f]
        if index == TI.kTVMFFIDLTensorPtr:
            f = F["v_ptr"]
            f.meaning = "a borrowed DLTensor"
            if f.pointer and depth < self.max_depth:
                f.target = self.dltensor_region(f.pointer, depth + 1)
            return [f]
        if index == TI.kTVMFFIObjectRValueRef:
            f = F["v_ptr"]
            f.meaning = "the address of the caller's slot holding the object"
            if f.pointer and depth < self.max_depth:
                f.target = self.rvalue_slot_region(f.pointer, depth + 1)
            return [f]
        if index >= OBJECT_BEGIN:
            f = F["v_obj"]
            f.meaning = "the object (its header's address)"
            self.follow_object(f, depth)
            return [f]
        payload.meaning = "payload of an unknown kind"
        return [payload]

    def dtype_fields(self, address: int, base: int, prefix: str) -> List[Field]:
        D = self.struct_fields(abi.DLDataType, address, base, prefix)
        code = self.int_field(D["code"], ctypes.c_uint8)
        bits = self.int_field(D["bits"], ctypes.c_uint8)
        lanes = self.int_field(D["lanes"], ctypes.c_uint16)
        try:
            code_name = abi.DLDataTypeCode(code).name
        except ValueError:
            code_name = "a custom code" if code >= 129 else "an unknown code"
        D["code"].meaning = f"{code} = {code_name}"
        D["bits"].meaning = f"{bits} bits per lane"
        D["lanes"].meaning = f"{lanes} lane{'s' if lanes != 1 else ''}: dtype \"" \
                             f"{_dtype_name(code, bits, lanes)}\""
        rows = [D["code"], D["bits"], D["lanes"]]
        size = ctypes.sizeof(abi.DLDataType)
        if prefix.startswith("v_dtype") or prefix.endswith("v_dtype."):
            rows.append(Field(base + size, "(unused)", f"char[{8 - size}]",
                              read(address + size, 8 - size), "rest of the payload, zero"))
        return rows

    def device_fields(self, address: int, base: int, prefix: str) -> List[Field]:
        D = self.struct_fields(abi.DLDevice, address, base, prefix)
        kind = self.int_field(D["device_type"], ctypes.c_int32)
        ident = self.int_field(D["device_id"], ctypes.c_int32)
        try:
            D["device_type"].meaning = f"{kind} = {abi.DLDeviceType(kind).name}"
        except ValueError:
            D["device_type"].meaning = f"{kind} = an unknown device type"
        D["device_id"].meaning = f"{ident}: {_device_name(kind, ident)}"
        return [D["device_type"], D["device_id"]]

    # --------------------------------------------------------------- objects

    def follow_object(self, f: Field, depth: int) -> None:
        """Expands the object ``f`` points to as ``f.target`` (unless shown or too deep)."""
        address = f.pointer
        if not address:
            f.meaning += " (NULL)"
            return
        shown = self.already(address, "object")
        if shown is not None:
            f.see_also = shown
            return
        if depth >= self.max_depth:
            f.meaning += " (not expanded: deeper than the depth limit)"
            return
        f.target = self.object_region(address, depth + 1)

    def object_region(self, address: int, depth: int) -> Region:
        """An object: its header, then what its type index says follows."""
        index = ctypes.c_int32.from_address(address + 8).value
        key = type_key_of(index) or kind_name(index)
        region = self.new_region(f"{key} object", address, key="object")
        region.sections.append(self.header_section(address, index))
        builder = self._builders().get(index)
        if builder is None:
            builder = self._builder_by_ancestry(index)
        builder(region, address, index, depth)
        return self.finish(region)

    def _builders(self) -> Dict[int, Callable]:
        return {
            TI.kTVMFFIStr: self.string_body, TI.kTVMFFIBytes: self.string_body,
            TI.kTVMFFIBigInt: self.bigint_body, TI.kTVMFFIError: self.error_body,
            TI.kTVMFFIFunction: self.function_body, TI.kTVMFFIShape: self.shape_body,
            TI.kTVMFFITensor: self.tensor_body, TI.kTVMFFIArray: self.seq_body,
            TI.kTVMFFIList: self.seq_body, TI.kTVMFFIMap: self.map_body,
            TI.kTVMFFIDict: self.map_body, TI.kTVMFFIOpaquePyObject: self.opaque_body,
        }

    def _builder_by_ancestry(self, index: int) -> Callable:
        return self.reflected_body

    def header_section(self, address: int, index: int) -> Section:
        H = self.struct_fields(abi.TVMFFIObject, address, 0)
        count = self.int_field(H["combined_ref_count"], ctypes.c_uint64)
        strong, weak = count & 0xFFFFFFFF, count >> 32
        H["combined_ref_count"].meaning = f"strong {strong} (low 32 bits), weak {weak} (high 32)"
        H["type_index"].meaning = self.kind_line(index).split(":")[0]
        padding = self.int_field(H["__padding"], ctypes.c_uint32)
        H["__padding"].meaning = "zero" if not padding else str(padding)
        H["deleter"].meaning = "deleter(self, flags) runs when a count reaches zero"
        return Section("header", "TVMFFIObject",
                       [H["combined_ref_count"], H["type_index"], H["__padding"], H["deleter"]])

    def _inside(self, address: int, pointer: Optional[int], limit: int = 1 << 16) -> bool:
        return bool(pointer) and address <= pointer < address + limit

    def _is_ours(self, address: int) -> bool:
        from tvm_ffi_ref.runtime import memory

        return memory.is_ours(address)

    # --- strings, bytes, big integers

    def string_body(self, region: Region, address: int, index: int, depth: int) -> None:
        is_str = index == TI.kTVMFFIStr
        region.summary = ("a str longer than 7 UTF-8 bytes" if is_str else
                          "bytes longer than 7") + ": header, TVMFFIByteArray cell, then the bytes"
        region.code = "tvm_ffi_ref.runtime.strings.new_bytes_object"
        C = self.struct_fields(abi.TVMFFIByteArray, address + HEADER_SIZE, HEADER_SIZE, "")
        size = self.int_field(C["size"], ctypes.c_uint64)
        data = C["data"].pointer
        content = read(data, size) if data and size else b""
        C["size"].meaning = f"{size} bytes (the NUL after them is not counted)"
        region.sections.append(Section("cell", "TVMFFIByteArray", [C["data"], C["size"]]))
        if self._inside(address, data, HEADER_SIZE + 16 + 64):
            C["data"].meaning = "the bytes, inside this object"
            region.size = data - address + size + 1
            region.sections += self.bytes_section(
                "payload", data, data - address, size + 1,
                text_note(content, is_str) + " + NUL", is_str)
        else:
            C["data"].meaning = "the bytes, in a separate buffer"
            if data and depth < self.max_depth:
                C["data"].target = self.buffer_region(
                    "String bytes" if is_str else "Bytes bytes", data, size + 1,
                    text_note(content, is_str) + " + NUL")

    def bigint_body(self, region: Region, address: int, index: int, depth: int) -> None:
        region.summary = "an int outside int64: header, word count, then two's-complement words"
        region.code = "tvm_ffi_ref.runtime.strings.new_bigint_object"
        count_at = HEADER_SIZE
        count = ctypes.c_size_t.from_address(address + count_at).value
        words = read(address + count_at + 8, 8 * count)
        value = int.from_bytes(words, "little", signed=True) if words else 0
        region.sections.append(Section("cell", "{ size_t }", [Field(
            count_at, "size", "size_t", read(address + count_at, 8),
            f"{count} int64 words")]))
        section = Section("payload", f"int64_t[{count}]",
                          note=f"least significant word first; the value is "
                               f"{shorten(str(value), 40)}")
        region.size = count_at + 8 + 8 * count
        for i in range(min(count, self.max_items)):
            raw = words[8 * i: 8 * i + 8]
            section.fields.append(Field(count_at + 8 + 8 * i, f"word[{i}]", "int64_t", raw,
                                        str(int.from_bytes(raw, "little", signed=True))))
        region.sections.append(section)
        if count > self.max_items:
            region.sections.append(Section("", "", elided=True,
                                           note=f"... {count - self.max_items} more words ..."))

    def error_body(self, region: Region, address: int, index: int, depth: int) -> None:
        region.summary = "an error: header, then TVMFFIErrorCell (kind, message, backtrace, ...)"
        region.code = "tvm_ffi_ref.runtime.errors.new_error"
        cell_at = address + HEADER_SIZE
        cell = abi.TVMFFIErrorCell.from_address(cell_at)
        section = Section("cell", "TVMFFIErrorCell")
        for name in ("kind", "message", "backtrace"):
            array = getattr(cell, name)
            offset = getattr(abi.TVMFFIErrorCell, name).offset
            B = self.struct_fields(abi.TVMFFIByteArray, cell_at + offset, HEADER_SIZE + offset,
                                   name + ".")
            text = read(array.data, array.size) if array.data and array.size else b""
            B["data"].meaning = text_note(text, True) if text else "(empty)"
            B["size"].meaning = f"{array.size} bytes"
            if (name == "backtrace" and array.data and not self._inside(address, array.data)
                    and depth < self.max_depth):
                B["data"].target = self.buffer_region("backtrace text", array.data,
                                                      array.size + 1, "most recent frame first")
            section.fields += [B["data"], B["size"]]
        C = self.struct_fields(abi.TVMFFIErrorCell, cell_at, HEADER_SIZE)
        C["update_backtrace"].meaning = "replaces or appends to the backtrace"
        C["cause_chain"].meaning = "the error that caused this one, owned (or NULL)"
        C["extra_context"].meaning = "an object of extra context, owned (or NULL)"
        section.fields += [C["update_backtrace"], C["cause_chain"], C["extra_context"]]
        for name in ("cause_chain", "extra_context"):
            if C[name].pointer:
                self.follow_object(C[name], depth)
        region.sections.append(section)
        tail = HEADER_SIZE + ctypes.sizeof(abi.TVMFFIErrorCell)
        if self._is_ours(address) and self._inside(address, cell.kind.data):
            size = cell.kind.size + cell.message.size + 2
            region.sections += self.bytes_section(
                "payload", address + tail, tail, size,
                "kind + NUL, then message + NUL (where this runtime keeps them)")

    # --- functions

    def function_body(self, region: Region, address: int, index: int, depth: int) -> None:
        region.summary = "a function: header, then TVMFFIFunctionCell"
        C = self.struct_fields(abi.TVMFFIFunctionCell, address + HEADER_SIZE, HEADER_SIZE)
        C["safe_call"].meaning = "called as safe_call(this object, args, num_args, result)"
        C["cpp_call"].meaning = ("NULL: not made in C++" if not C["cpp_call"].pointer else
                                 "a C++ entry, usable only by the same C++ runtime")
        region.sections.append(Section("cell", "TVMFFIFunctionCell",
                                       [C["safe_call"], C["cpp_call"]]))
        safe_call = C["safe_call"].pointer
        if safe_call and safe_call == library_function_trampoline(CLOSURE_TRAMPOLINE):
            region.code = "c_api/src/builtins.c (builtin_function_create)"
            names = [("self", "the closure's data: what target gets as its handle"),
                     ("target", "the safe-call function the trampoline forwards to"),
                     ("release", "called with self when the function dies")]
            note = "made by TVMFFIFunctionCreate; not part of the ABI"
        elif safe_call and safe_call == library_function_trampoline(OWNED_TRAMPOLINE):
            region.code = "c_api/src/builtins.c (tvm_ffi_runtime_function_with_owner)"
            names = [("self", "the module it came from, kept alive while the function lives"),
                     ("target", "the kernel's exported safe-call, called with a NULL handle"),
                     ("release", "unused (NULL)")]
            note = "a kernel function of a loaded module; not part of the ABI"
        else:
            names = []
        if names:
            at = HEADER_SIZE + ctypes.sizeof(abi.TVMFFIFunctionCell)
            section = Section("closure", "libtvm_ffi.so's own fields", note=note)
            for i, (name, meaning) in enumerate(names):
                raw = read(address + at + 8 * i, 8)
                value = int.from_bytes(raw, "little")
                f = Field(at + 8 * i, name, "void*", raw, meaning)
                if name == "self":
                    f.meaning += (" (NULL)" if value == 0 else
                                  f" ({value})" if value < 1 << 20 else "")
                    f.is_pointer, f.pointer = value >= 1 << 20, value or None
                else:
                    f.is_pointer, f.pointer = True, value or None
                section.fields.append(f)
            region.sections.append(section)
        elif self._is_ours(address):
            region.code = "tvm_ffi_ref.runtime.functions.new_python_function"

    # --- shapes, sequences

    def shape_body(self, region: Region, address: int, index: int, depth: int) -> None:
        region.summary = "a shape: header, TVMFFIShapeCell, then the dims"
        region.code = "tvm_ffi_ref.runtime.containers.shape_from_ints"
        C = self.struct_fields(abi.TVMFFIShapeCell, address + HEADER_SIZE, HEADER_SIZE)
        size = self.int_field(C["size"], ctypes.c_uint64)
        data = C["data"].pointer
        C["size"].meaning = f"{size} dims"
        region.sections.append(Section("cell", "TVMFFIShapeCell", [C["data"], C["size"]]))
        if self._inside(address, data, HEADER_SIZE + 16 + 8):
            C["data"].meaning = "the dims, inside this object"
            region.size = data - address + 8 * size
            region.sections += self.int64_sections(data, data - address, size, "dim")
        else:
            C["data"].meaning = "the dims, elsewhere"
            if data and depth < self.max_depth:
                C["data"].target = self.int64_region("shape dims", data, size)

    def int64_sections(self, address: int, base: int, count: int, name: str) -> List[Section]:
        section = Section("payload", f"int64_t[{count}]")
        shown = min(count, self.max_items)
        for i in range(shown):
            raw = read(address + 8 * i, 8)
            section.fields.append(Field(base + 8 * i, f"{name}[{i}]", "int64_t", raw,
                                        str(int.from_bytes(raw, "little", signed=True))))
        sections = [section]
        if count > shown:
            sections.append(Section("", "", note=f"... {count - shown} more ...", elided=True))
        return sections

    def seq_body(self, region: Region, address: int, index: int, depth: int) -> None:
        is_array = index == TI.kTVMFFIArray
        region.summary = ("an Array: header, TVMFFISeqCell, then its slots inline" if is_array
                          else "a List: header and TVMFFISeqCell; the slots are in a buffer")
        region.code = ("tvm_ffi_ref.runtime.containers.array_from_anys" if is_array else
                       "tvm_ffi_ref.runtime.containers.list_from_anys")
        C = self.struct_fields(abi.TVMFFISeqCell, address + HEADER_SIZE, HEADER_SIZE)
        size = self.int_field(C["size"])
        capacity = self.int_field(C["capacity"])
        data = C["data"].pointer
        C["size"].meaning = f"{size} live slots"
        C["capacity"].meaning = f"room for {capacity}"
        inline = data == address + HEADER_SIZE + ctypes.sizeof(abi.TVMFFISeqCell)
        C["data_deleter"].meaning = ("NULL: the slots are part of this object" if
                                     not C["data_deleter"].pointer else
                                     "frees the separate slot buffer")
        region.sections.append(Section("cell", "TVMFFISeqCell", [
            C["data"], C["size"], C["capacity"], C["data_deleter"]]))
        if inline:
            C["data"].meaning = "the slots, inside this object"
            region.size = data - address + capacity * ANY_SIZE
            region.sections += self.slot_sections(data, data - address, size, capacity, depth)
        else:
            C["data"].meaning = "the slots, in a separate buffer"
            if data and depth < self.max_depth:
                buffer = self.new_region("List buffer", data,
                                         f"{capacity} slots of 16 bytes, the first {size} live",
                                         key="buffer")
                buffer.sections += self.slot_sections(data, 0, size, capacity, depth)
                buffer.size = capacity * ANY_SIZE
                C["data"].target = self.finish(buffer)

    def slot_sections(self, address: int, base: int, size: int, capacity: int,
                      depth: int) -> List[Section]:
        sections = []
        for i in self._shown_indices(size):
            if i is None:
                sections.append(Section("", "", elided=True,
                                        note=f"... {self._hidden(size)} more slots ..."))
                continue
            sections.append(Section(f"slot[{i}]", "TVMFFIAny", self.any_fields(
                address + ANY_SIZE * i, base + ANY_SIZE * i, depth)))
        if capacity > size:
            sections.append(Section("", "", elided=True,
                                    note=f"{capacity - size} unused slot(s) of room"))
        return sections

    def _shown_indices(self, count: int) -> List[Optional[int]]:
        """Which elements to show: all, or the first ``max_items - 1``, a gap, and the last."""
        if count <= self.max_items:
            return list(range(count))
        if self.max_items == 1:
            return [0, None]
        return list(range(self.max_items - 1)) + [None, count - 1]

    def _hidden(self, count: int) -> int:
        """How many elements :meth:`_shown_indices` leaves out."""
        return count - len([i for i in self._shown_indices(count) if i is not None])

    # --- maps

    def map_body(self, region: Region, address: int, index: int, depth: int) -> None:
        from tvm_ffi_ref.runtime import map_layout

        is_map = index == TI.kTVMFFIMap
        cell = map_layout.map_cell(address)
        small = map_layout.is_small(cell)
        C = self.struct_fields(map_layout.MapCell, address + map_layout.MAP_CELL_AT,
                               map_layout.MAP_CELL_AT)
        slots = cell.slots
        C["size"].meaning = f"{cell.size} entr{'y' if cell.size == 1 else 'ies'}"
        name = "Map" if is_map else "Dict"
        if small:
            region.summary = (f"a {name} in the small form: header, the map fields, then up to 4 "
                              "key/value pairs, scanned in order")
            region.code = "tvm_ffi_ref.runtime.map_storage.new_small_map"
            C["slots"].meaning = (f"bit 63 set = small form; room for "
                                  f"{slots & ~map_layout.SMALL_TAG} pairs")
            C["data_deleter"].meaning = ("NULL: the pairs are inside this object" if not
                                         cell.data_deleter else "frees the pairs' storage")
            fields = [C["data"], C["size"], C["slots"], C["data_deleter"]]
            region.sections.append(Section("cell", "MapBaseObj", fields))
            data = cell.data
            if data == address + map_layout.SMALL_PAIRS_AT:
                C["data"].meaning = "the pairs, inside this object"
                region.size = (map_layout.SMALL_PAIRS_AT
                               + (slots & ~map_layout.SMALL_TAG) * map_layout.PAIR_SIZE)
                region.sections += self.pair_sections(data, data - address, cell.size,
                                                      slots & ~map_layout.SMALL_TAG, depth)
            else:
                C["data"].meaning = "the pairs, elsewhere"
                if data and depth < self.max_depth:
                    pairs = self.new_region("small map pairs", data, "key/value pairs",
                                            key="buffer")
                    pairs.sections += self.pair_sections(data, 0, cell.size,
                                                         slots & ~map_layout.SMALL_TAG, depth)
                    C["data"].target = self.finish(pairs)
            return
        region.summary = (f"a {name} in the dense form: header and the map fields; the entries "
                          "are in a table of 16-slot blocks")
        region.code = "tvm_ffi_ref.runtime.map_storage.new_dense_map"
        C["slots"].meaning = f"{slots} slots (bit 63 clear = dense form)"
        C["data"].meaning = "the table of blocks"
        C["data_deleter"].meaning = "frees the table"
        C["fib_shift"].meaning = f"64 - log2(slots): home slot = (hash * 2^64/phi) >> " \
                                 f"{cell.fib_shift}"
        C["iter_list_head"].meaning = "first slot in insertion order"
        C["iter_list_tail"].meaning = "last slot in insertion order"
        region.sections.append(Section("cell", "DenseMapBaseObj", [
            C["data"], C["size"], C["slots"], C["data_deleter"], C["fib_shift"],
            C["iter_list_head"], C["iter_list_tail"]]))
        if cell.data and depth < self.max_depth:
            C["data"].target = self.dense_table_region(address, depth)

    def pair_sections(self, address: int, base: int, size: int, capacity: int,
                      depth: int) -> List[Section]:
        from tvm_ffi_ref.runtime import map_layout

        sections = []
        for i in self._shown_indices(size):
            if i is None:
                sections.append(Section("", "", elided=True,
                                        note=f"... {self._hidden(size)} more pairs ..."))
                continue
            at = address + map_layout.PAIR_SIZE * i
            at_base = base + map_layout.PAIR_SIZE * i
            sections.append(Section(f"pair[{i}].key", "TVMFFIAny",
                                    self.any_fields(at, at_base, depth)))
            sections.append(Section(f"pair[{i}].value", "TVMFFIAny",
                                    self.any_fields(at + ANY_SIZE, at_base + ANY_SIZE, depth)))
        if capacity > size:
            sections.append(Section("", "", elided=True,
                                    note=f"room for {capacity - size} more pair(s)"))
        return sections

    def dense_table_region(self, address: int, depth: int) -> Region:
        from tvm_ffi_ref.runtime import anyhash, map_dense_table, map_layout

        table = map_dense_table.DenseTable(address)
        cell = table.cell
        blocks = (cell.slots + map_layout.BLOCK_SLOTS - 1) // map_layout.BLOCK_SLOTS
        region = self.new_region(
            "dense map table", cell.data,
            f"{blocks} block(s) of {map_layout.BLOCK_SIZE} bytes: 16 metadata bytes, then 16 "
            "items (key, value, prev, next); shown in insertion order", key="buffer")
        region.code = "tvm_ffi_ref.runtime.map_dense_table.DenseTable"
        region.size = blocks * map_layout.BLOCK_SIZE
        order = []
        slot = cell.iter_list_head
        while slot != map_layout.INVALID_INDEX and len(order) < cell.size:
            order.append(slot)
            slot = table.item(slot).next
        for n in self._shown_indices(len(order)):
            if n is None:
                region.sections.append(Section("", "", elided=True, note=f"... "
                                               f"{self._hidden(len(order))} more entries ..."))
                continue
            i = order[n]
            block, item = divmod(i, map_layout.BLOCK_SLOTS)
            meta_at = block * map_layout.BLOCK_SIZE + item
            meta = table.meta(i)
            item_at = table.item_address(i) - cell.data
            key = table.item(i).first
            try:
                home = table.home(anyhash.any_hash(key))
                home_note = f"; its key hashes to home slot {home}"
            except Exception:  # noqa: BLE001 - a custom hash may fail; say nothing then
                home_note = ""
            section = Section(f"slot {i}", "meta byte + DenseItem",
                              note=f"entry {n} in insertion order: block {block}, item {item}"
                                   + home_note)
            section.fields.append(Field(meta_at, "meta", "uint8_t", bytes([meta]),
                                        self.meta_note(meta)))
            item_address = cell.data + item_at
            section.fields += self.any_fields(item_address, item_at, depth, "key.")
            section.fields += self.any_fields(item_address + ANY_SIZE, item_at + ANY_SIZE,
                                              depth, "value.")
            D = self.struct_fields(map_layout.DenseItem, item_address, item_at)
            for name, which in (("prev", "before"), ("next", "after")):
                value = self.int_field(D[name], ctypes.c_uint64)
                D[name].meaning = (f"no entry {which} this one"
                                   if value == map_layout.INVALID_INDEX else
                                   f"slot {value} comes {which} this one in insertion order")
                section.fields.append(D[name])
            region.sections.append(section)
        self.book.add_region(region)
        return region

    @staticmethod
    def meta_note(meta: int) -> str:
        from tvm_ffi_ref.runtime import map_layout

        if meta == map_layout.EMPTY_SLOT:
            return "0xff: empty"
        if meta == map_layout.PROTECTED_SLOT:
            return "0xfe: being vacated"
        role = ("a later link of its chain" if meta & map_layout.NOT_HEAD else
                "the head of its chain")
        jump = meta & map_layout.JUMP_MASK
        distance = map_layout.PROBE_DISTANCES[jump]
        follow = "the chain ends here" if distance == 0 else f"next link {distance} slots on"
        return f"0x{meta:02x}: {role}; jump {jump}: {follow}"

    # --- tensors

    def tensor_body(self, region: Region, address: int, index: int, depth: int) -> None:
        from tvm_ffi_ref.runtime import tensors

        region.summary = "a tensor: header, then a DLTensor read in place by kernels"
        region.code = "tvm_ffi_ref.runtime.tensors._wrap_managed"
        at = address + HEADER_SIZE
        fields, info = self.dltensor_fields(at, HEADER_SIZE, "", depth)
        region.sections.append(Section("cell", "DLTensor", fields))
        if not self._is_ours(address):
            return
        keep_at = tensors.KEEP_OFFSET
        raw = read(address + keep_at, 8)
        keep = int.from_bytes(raw, "little") or None
        f = Field(keep_at, "manager", "void*", raw, "what this tensor keeps alive",
                  keep, True)
        region.sections.append(Section("runtime", "the reference runtime's field",
                                       [f], note="upstream keeps the same pointer here"))
        dl = abi.DLTensor.from_address(at)
        if keep and depth < self.max_depth:
            f.target, f.meaning = self.managed_region(keep, dl, depth + 1)
        strides = ctypes.cast(dl.strides, ctypes.c_void_p).value
        if strides and strides == address + tensors.TAIL_OFFSET:
            section_list = self.int64_sections(strides, tensors.TAIL_OFFSET, dl.ndim, "stride")
            section_list[0].title = "strides"
            section_list[0].note = "the producer gave none: compact strides, kept here"
            region.sections += section_list

    def dltensor_fields(self, address: int, base: int, prefix: str,
                        depth: int) -> Tuple[List[Field], abi.DLTensor]:
        """The fields of a DLTensor, its shape, strides and data followed."""
        T = self.struct_fields(abi.DLTensor, address, base, prefix)
        dl = abi.DLTensor.from_address(address)
        rows = [T["data"]]
        T["data"].meaning = "the elements (first at data + byte_offset)"
        rows += self.device_fields(address + abi.DLTensor.device.offset,
                                   base + abi.DLTensor.device.offset, prefix + "device.")
        T["ndim"].meaning = f"{dl.ndim} dimensions"
        rows.append(T["ndim"])
        rows += self.dtype_fields(address + abi.DLTensor.dtype.offset,
                                  base + abi.DLTensor.dtype.offset, prefix + "dtype.")
        ndim = max(dl.ndim, 0)
        shape = [dl.shape[i] for i in range(ndim)] if dl.shape else []
        T["shape"].meaning = f"{tuple(shape)}"
        if dl.strides:
            strides = [dl.strides[i] for i in range(ndim)]
            T["strides"].meaning = f"{tuple(strides)} in elements"
        else:
            T["strides"].meaning = "NULL: compact row-major"
        T["byte_offset"].meaning = f"{dl.byte_offset}"
        rows += [T["shape"], T["strides"], T["byte_offset"]]
        if depth < self.max_depth:
            for name, count in (("shape", ndim), ("strides", ndim)):
                pointer = T[name].pointer
                if pointer and count and self.already(pointer, "int64") is None:
                    T[name].target = self.int64_region(f"{name} array", pointer, count)
            if dl.data and self.already(dl.data, "data") is None:
                T["data"].target = self.data_region(dl, shape)
        return rows, dl

    def dltensor_region(self, address: int, depth: int) -> Region:
        region = self.new_region("DLTensor", address, "a borrowed DLTensor: nobody is owed "
                                 "anything when the call ends", key="DLTensor")
        fields, _ = self.dltensor_fields(address, 0, "", depth)
        region.sections.append(Section("", "DLTensor", fields))
        return self.finish(region)

    def int64_region(self, kind: str, address: int, count: int) -> Region:
        region = self.new_region(kind, address, f"{count} int64_t values, owned by whoever "
                                 "made the DLTensor", key="int64")
        region.sections += self.int64_sections(address, 0, count, kind.split()[0])
        return self.finish(region)

    def data_region(self, dl: abi.DLTensor, shape: Sequence[int]) -> Region:
        count = 1
        for extent in shape:
            count *= extent
        lanes = max(dl.dtype.lanes, 1)
        item = max((dl.dtype.bits * lanes + 7) // 8, 1)
        start = dl.data + dl.byte_offset
        region = self.new_region("tensor data", dl.data,
                                 f"{count} element(s) of dtype "
                                 f"{_dtype_name(dl.dtype.code, dl.dtype.bits, dl.dtype.lanes)}; "
                                 "owned by the producer", key="data")
        if dl.device.device_type not in (abi.DLDeviceType.kDLCPU, abi.DLDeviceType.kDLCUDAHost):
            region.sections.append(Section("", "", elided=True,
                                           note="device memory: not readable from here"))
            return self.finish(region)
        strides = ([dl.strides[i] for i in range(dl.ndim)] if dl.strides
                   else _compact(shape))
        reach = sum((extent - 1) * stride for extent, stride in zip(shape, strides)
                    if extent > 0 and stride > 0)
        low = sum((extent - 1) * stride for extent, stride in zip(shape, strides)
                  if extent > 0 and stride < 0)
        if count == 0:
            region.sections.append(Section("", "", elided=True, note="no elements"))
            return self.finish(region)
        first = start + low * item
        span = (reach - low + 1) * item
        shown = min(span, self.max_bytes)
        shown -= shown % item if shown >= item else 0
        members = _element_offsets(shape, strides, low) if count <= 1 << 16 else None
        section = Section("elements", f"{item}-byte items",
                          note="memory in address order, from the lowest element on")
        for k in range(max(shown // item, 1)):
            raw = read(first + k * item, item)
            note = element_note(raw, dl.dtype)
            if members is not None and k not in members:
                note = (note + "  " if note else "") + "(a gap: not an element of this view)"
            section.fields.append(Field(first - dl.data + k * item, f"[{k}]",
                                        c_element_type(dl.dtype), raw, note))
        region.sections.append(section)
        if span > shown:
            region.sections.append(Section("", "", elided=True,
                                           note=f"... {span - shown} more bytes ..."))
        return self.finish(region)

    def managed_region(self, managed: int, dl: abi.DLTensor, depth: int) -> Tuple[Region, str]:
        """The DLPack managed tensor a Tensor keeps (versioned or not, told apart by its copy)."""
        versioned = None
        for candidate, struct_type in ((False, abi.DLManagedTensor),
                                       (True, abi.DLManagedTensorVersioned)):
            inner = abi.DLTensor.from_address(managed + struct_type.dl_tensor.offset)
            if inner.data == dl.data and inner.ndim == dl.ndim and \
                    ctypes.cast(inner.shape, ctypes.c_void_p).value == \
                    ctypes.cast(dl.shape, ctypes.c_void_p).value:
                versioned = candidate
                break
        if versioned is None:
            region = self.new_region("kept object", managed, "not a DLPack managed tensor this "
                                     "walker recognises", key="managed")
            return self.finish(region), "what this tensor keeps alive"
        struct_type = abi.DLManagedTensorVersioned if versioned else abi.DLManagedTensor
        region = self.new_region(struct_type.__name__, managed,
                                 "the producer's DLPack tensor; its deleter runs when the "
                                 "Tensor dies", key="managed")
        M = self.struct_fields(struct_type, managed, 0)
        rows = []
        if versioned:
            V = self.struct_fields(abi.DLPackVersion, managed, 0, "version.")
            V["major"].meaning = f"DLPack {self.int_field(V['major'], ctypes.c_uint32)}"
            V["minor"].meaning = f".{self.int_field(V['minor'], ctypes.c_uint32)}"
            rows += [V["major"], V["minor"]]
        M["manager_ctx"].meaning = "the producer's own context"
        M["deleter"].meaning = "the consumer calls deleter(self) exactly once"
        rows += [M["manager_ctx"], M["deleter"]]
        if versioned:
            M["flags"].meaning = f"DLPACK_FLAG_BITMASK_* = {self.int_field(M['flags'])}"
            rows.append(M["flags"])
        inner_at = struct_type.dl_tensor.offset
        inner, _ = self.dltensor_fields(managed + inner_at, inner_at, "dl_tensor.", depth)
        sections = [Section("", struct_type.__name__, rows),
                    Section("dl_tensor", "DLTensor", inner,
                            note="the Tensor's DLTensor is a copy of this one")]
        region.sections += sorted(sections, key=lambda s: s.fields[0].offset)
        what = ("the DLManagedTensorVersioned it took over" if versioned else
                "the DLManagedTensor it took over (DLPack 0.x, from __dlpack__())")
        return self.finish(region), what

    # --- opaque objects and everything else

    def opaque_body(self, region: Region, address: int, index: int, depth: int) -> None:
        region.summary = "a Python object no other encoding fits: header, then its PyObject*"
        region.code = "tvm_ffi_ref.pyobject.wrap_pyobject"
        C = self.struct_fields(abi.TVMFFIOpaqueObjectCell, address + HEADER_SIZE, HEADER_SIZE)
        handle = C["handle"].pointer
        described = "NULL"
        if handle:
            from .values import value_text

            try:
                described = shorten(value_text(ctypes.cast(handle, ctypes.py_object).value,
                                               self.book.stable), 50)
            except Exception:  # noqa: BLE001 - a repr may fail
                described = "a Python object"
        C["handle"].meaning = f"PyObject* of {described}, one reference owned"
        region.sections.append(Section("cell", "TVMFFIOpaqueObjectCell", [C["handle"]]))
        if self._is_ours(address):
            at = HEADER_SIZE + ctypes.sizeof(abi.TVMFFIOpaqueObjectCell)
            raw = read(address + at, 8)
            f = Field(at, "handle_deleter", "void (*)(void*)", raw,
                      "runs on the handle when the object dies",
                      int.from_bytes(raw, "little") or None, True)
            region.sections.append(Section("runtime", "the reference runtime's field", [f]))

    def reflected_body(self, region: Region, address: int, index: int, depth: int) -> None:
        """Any other object: the fields its type (and its ancestors) reflect."""
        region.summary = "an object: header, then the fields its type registers (reflection)"
        region.code = "tvm_ffi_ref.reflection.type_fields"
        fields = reflected_fields(index)
        section = Section("fields", "reflected fields")
        for name, offset, size, static_index, getter in fields:
            raw = read(address + offset, size) if size <= 64 else read(address + offset, 64)
            if size == ANY_SIZE and static_index != TI.kTVMFFIAny and getter is None:
                section.fields += self.any_fields(address + offset, offset, depth, name + ".")
                continue
            static_key = type_key_of(static_index) if static_index >= 0 else None
            f = Field(offset, name, static_key or f"{size} bytes", raw, "")
            if getter is not None:
                f.meaning = "its getter returns " + self.getter_note(getter, address + offset)
            section.fields.append(f)
        if not fields:
            section.note = "this type reflects no fields"
        region.sections.append(section)

    def getter_note(self, getter, field_address: int) -> str:
        from tvm_ffi_ref.convert import to_python
        from .values import describe

        result = abi.TVMFFIAny()
        try:
            if getter(field_address, ctypes.byref(result)):
                handle = ctypes.c_void_p()
                LIB.TVMFFIErrorMoveFromRaised(ctypes.byref(handle))
                if handle.value:
                    LIB.TVMFFIObjectDecRef(handle)
                return "an error"
            return describe(to_python(result))
        except Exception:  # noqa: BLE001 - a note is a nicety
            return "a value"

    # --- borrowed kinds

    def c_string_region(self, address: int) -> Region:
        data = ctypes.string_at(address)
        region = self.new_region("C string", address, "NUL-terminated, borrowed", key="cstr")
        region.sections += self.bytes_section("", address, 0, len(data) + 1,
                                              text_note(data, True) + " + NUL")
        return self.finish(region)

    def byte_array_region(self, address: int) -> Region:
        region = self.new_region("TVMFFIByteArray", address, "a borrowed (data, size)",
                                 key="bytearray")
        B = self.struct_fields(abi.TVMFFIByteArray, address, 0)
        size = self.int_field(B["size"], ctypes.c_uint64)
        data = B["data"].pointer
        B["size"].meaning = f"{size} bytes"
        B["data"].meaning = text_note(read(data, size), False) if data else "NULL"
        region.sections.append(Section("", "TVMFFIByteArray", [B["data"], B["size"]]))
        return self.finish(region)

    def rvalue_slot_region(self, address: int, depth: int) -> Region:
        region = self.new_region("object slot", address, "the caller's reference; a callee "
                                 "that takes it writes NULL here", key="slot")
        raw = read(address, 8)
        f = Field(0, "object", "TVMFFIObject*", raw, "the object to be moved",
                  int.from_bytes(raw, "little") or None, True)
        self.follow_object(f, depth)
        region.sections.append(Section("", "void*", [f]))
        return self.finish(region)

    def buffer_region(self, kind: str, address: int, size: int, note: str) -> Region:
        region = self.new_region(kind, address, "a separate block the object points to",
                                 key="buffer")
        region.sections += self.bytes_section("", address, 0, size, note)
        return self.finish(region)


def reflected_fields(index: int) -> List[Tuple[str, int, int, int, object]]:
    """``(name, offset, size, static type index, getter)`` of every reflected field, by offset."""
    info = LIB.TVMFFIGetTypeInfo(index)
    if not info:
        handle = ctypes.c_void_p()
        LIB.TVMFFIErrorMoveFromRaised(ctypes.byref(handle))
        if handle.value:
            LIB.TVMFFIObjectDecRef(handle)
        return []
    records = [info.contents]
    for depth in range(info.contents.type_depth):
        records.append(info.contents.type_ancestors[depth].contents)
    fields = []
    for record in records:
        for i in range(record.num_fields):
            f = record.fields[i]
            name = ctypes.string_at(f.name.data, f.name.size).decode(errors="replace")
            getter = f.getter if ctypes.cast(f.getter, ctypes.c_void_p).value else None
            fields.append((name, f.offset, f.size, f.field_static_type_index, getter))
    return sorted(fields, key=lambda item: item[1])


def _element_offsets(shape: Sequence[int], strides: Sequence[int], low: int) -> set:
    """Where each element of a view lies, in items from its lowest element."""
    offsets = {0 - low}
    for extent, stride in zip(shape, strides):
        offsets = {o + i * stride for o in offsets for i in range(extent)}
    return {o + 0 for o in offsets}


def _compact(shape: Sequence[int]) -> List[int]:
    strides, step = [], 1
    for extent in reversed(shape):
        strides.append(step)
        step *= extent
    return list(reversed(strides))


_ELEMENT_FORMATS = {
    (abi.DLDataTypeCode.kDLInt, 8): "<b", (abi.DLDataTypeCode.kDLInt, 16): "<h",
    (abi.DLDataTypeCode.kDLInt, 32): "<i", (abi.DLDataTypeCode.kDLInt, 64): "<q",
    (abi.DLDataTypeCode.kDLUInt, 8): "<B", (abi.DLDataTypeCode.kDLUInt, 16): "<H",
    (abi.DLDataTypeCode.kDLUInt, 32): "<I", (abi.DLDataTypeCode.kDLUInt, 64): "<Q",
    (abi.DLDataTypeCode.kDLFloat, 16): "<e", (abi.DLDataTypeCode.kDLFloat, 32): "<f",
    (abi.DLDataTypeCode.kDLFloat, 64): "<d", (abi.DLDataTypeCode.kDLBool, 8): "<?",
}


def c_element_type(dtype: abi.DLDataType) -> str:
    """A C-ish spelling of one element of a tensor."""
    return _dtype_name(dtype.code, dtype.bits, dtype.lanes)


def element_note(raw: bytes, dtype: abi.DLDataType) -> str:
    """The value of one element, when its dtype is a plain scalar (or a complex)."""
    if dtype.code == abi.DLDataTypeCode.kDLComplex and dtype.bits in (64, 128) and \
            dtype.lanes == 1 and len(raw) == dtype.bits // 8:
        real, imag = struct.unpack("<ff" if dtype.bits == 64 else "<dd", raw)
        return repr(complex(real, imag))
    fmt = _ELEMENT_FORMATS.get((dtype.code, dtype.bits))
    if fmt is None or dtype.lanes != 1 or len(raw) != struct.calcsize(fmt):
        return ""
    value = struct.unpack(fmt, raw)[0]
    return float_note(value) if isinstance(value, float) else repr(value)
