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

The :class:`Walker` here reads what every value has (the ``TVMFFIAny``, an
object's header, the borrowed kinds) and hands an object's body to the module
that knows its kind: :mod:`.walk_objects` (strings, bytes, big integers,
errors, functions, opaque and reflected objects), :mod:`.walk_containers`
(shapes, arrays, lists, maps) or :mod:`.walk_tensors` (tensors and the DLPack
structs behind them). :mod:`.reading` holds the helpers all of them use,
:mod:`.known_code` the names of the code addresses objects hold.
"""

from __future__ import annotations

import ctypes
import struct
from typing import Callable, Dict, List, Optional, Tuple

from tvm_ffi_common import abi

from .model import AddressBook, Field, Region, Section
from .reading import (
    ANY_SIZE,
    KIND_NOTES,
    OBJECT_BEGIN,
    TI,
    device_name,
    dtype_name,
    float_note,
    int_of,
    is_pointer_type,
    kind_name,
    read,
    short_spelling,
    text_note,
    type_key_of,
)
from .spec_tables import c_spelling
from .walk_containers import ContainerBodies
from .walk_objects import ObjectBodies
from .walk_tensors import TensorBodies


class Walker(ObjectBodies, ContainerBodies, TensorBodies):
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
            if is_pointer_type(layout.ctype):
                f.is_pointer = True
                f.pointer = int.from_bytes(raw, "little") or None
            fields[layout.name] = f
        return fields

    def int_field(self, f: Field, ctype=ctypes.c_int64) -> int:
        return int_of(f.raw, ctype)

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
            payload.meaning = ("unused (zero)" if value == 0 else
                               f"{value & (2**64 - 1):#x}: NOT ZERO: a None carries no payload, "
                               "all 16 of its bytes are zero")
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
                             f"{dtype_name(code, bits, lanes)}\""
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
        D["device_id"].meaning = f"{ident}: {device_name(kind, ident)}"
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
