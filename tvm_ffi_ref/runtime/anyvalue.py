"""Owned and borrowed TVMFFIAny values.

An *AnyView* (every argument) borrows: it may point at an object without
holding a reference, or at a C string or byte array that is not an object at
all. An *Any* (every result, every container element) owns: an object payload
carries one strong reference, and borrowed-only kinds never appear. Turning a
view into an owned value is therefore more than a copy.
"""

from __future__ import annotations

import ctypes

from tvm_ffi_common import abi

from . import memory, strings
from .slots import FFIError, implements
from .type_index import TI

OBJECT_BEGIN = TI.kTVMFFIStaticObjectBegin


def holds_object(value: abi.TVMFFIAny) -> bool:
    """Whether the payload is an object pointer (type index 64 and up)."""
    return value.type_index >= OBJECT_BEGIN


def inc_ref_any(value: abi.TVMFFIAny) -> None:
    """Adds a reference to the object an Any holds, if any."""
    if value.type_index >= OBJECT_BEGIN and value.v_ptr:
        memory.inc_ref(value.v_ptr)


def dec_ref_any(value: abi.TVMFFIAny) -> None:
    """Drops the reference an owned Any holds, if any."""
    if value.type_index >= OBJECT_BEGIN and value.v_ptr:
        memory.dec_ref(value.v_ptr)


def copy_any(src: abi.TVMFFIAny, dst: abi.TVMFFIAny) -> None:
    """Copies all 16 bytes of ``src`` into ``dst`` (no reference counting)."""
    ctypes.memmove(ctypes.addressof(dst), ctypes.addressof(src), ctypes.sizeof(abi.TVMFFIAny))


def view_to_owned(view: abi.TVMFFIAny, out: abi.TVMFFIAny) -> None:
    """Writes into ``out`` an owned value equal to the borrowed ``view``.

    Objects gain a reference; a raw C string becomes a str and a byte-array
    pointer becomes bytes (inline when at most 7 bytes); an rvalue reference
    moves the object out of the slot it points to; everything else is copied.
    A NULL pointer in a view that points (upstream: a crash) is a ValueError.
    """
    index = view.type_index
    if index == TI.kTVMFFIRawStr:
        if not view.v_ptr:
            raise FFIError("ValueError", "a const char* value is NULL")
        strings.store_str_or_bytes(out, ctypes.string_at(view.v_ptr), is_str=True)
    elif index == TI.kTVMFFIByteArrayPtr:
        if not view.v_ptr:
            raise FFIError("ValueError", "a TVMFFIByteArray* value is NULL")
        strings.store_str_or_bytes(out, strings.view_bytes(view), is_str=False)
    elif index == TI.kTVMFFIObjectRValueRef:
        slot = ctypes.c_void_p.from_address(view.v_ptr) if view.v_ptr else None
        if slot is None or not slot.value:  # upstream's failed check, kind and text
            raise FFIError("InternalError", "Check failed: (obj_addr[0] != nullptr) is false: "
                                            "RValueRef already moved")
        moved = slot.value
        slot.value = None
        out.type_index = memory.type_index_of(moved)
        out.zero_padding = 0
        out.v_ptr = moved
    else:
        copy_any(view, out)
        inc_ref_any(out)


@implements("TVMFFIAnyViewToOwnedAny")
def any_view_to_owned_any(view, out):
    view_to_owned(view.contents, out.contents)
