"""How the walker shows objects whose body has a fixed shape, and reflected objects.

Strings and bytes, big integers, errors, functions (with ``libtvm_ffi.so``'s
own closure fields when it made them), opaque Python objects, and any other
object by the fields its type reflects. One of the three families of object
bodies :class:`.walk.Walker` is made of; it uses the walker's helpers through
``self``.
"""

from __future__ import annotations

import ctypes
from typing import List, Tuple

from tvm_ffi_common import abi
from tvm_ffi_common.capi import LIB

from .known_code import CLOSURE_TRAMPOLINE, OWNED_TRAMPOLINE, library_function_trampoline
from .model import Field, Region, Section, shorten
from .reading import ANY_SIZE, HEADER_SIZE, TI, read, text_note, type_key_of

#: The Functions ``libtvm_ffi.so`` makes, told apart by the trampoline in their
#: ``safe_call``: where that code is, the fields it keeps after the cell, a note.
_LIBRARY_CLOSURES = (
    (CLOSURE_TRAMPOLINE, "c_api/src/builtins.c (builtin_function_create)",
     [("self", "the closure's data: what target gets as its handle"),
      ("target", "the safe-call function the trampoline forwards to"),
      ("release", "called with self when the function dies")],
     "made by TVMFFIFunctionCreate; not part of the ABI"),
    (OWNED_TRAMPOLINE, "c_api/src/builtins.c (tvm_ffi_runtime_function_with_owner)",
     [("self", "the module it came from, kept alive while the function lives"),
      ("target", "the kernel's exported safe-call, called with a NULL handle"),
      ("release", "unused (NULL)")],
     "a kernel function of a loaded module; not part of the ABI"),
)


class ObjectBodies:
    """Strings, bytes, big integers, errors, functions, opaque and reflected objects."""

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
            # This runtime keeps the backtrace in a block of its own, which malloc may place
            # right after the object: only a foreign error's is judged by its address.
            if (name == "backtrace" and array.data and depth < self.max_depth
                    and (self._is_ours(address) or not self._inside(address, array.data))):
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
        names = []
        for trampoline, code, fields, note in _LIBRARY_CLOSURES:
            if safe_call and safe_call == library_function_trampoline(trampoline):
                region.code, names = code, fields
                break
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
