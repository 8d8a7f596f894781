"""Opaque objects: foreign handles (Python objects) wrapped as TVM FFI objects.

Its twin in C: ``tvm_ffi_fast/src/objects.c``.

An opaque object is ``TVMFFIObject`` + ``TVMFFIOpaqueObjectCell`` (the handle);
the deleter given at creation runs on the handle when the object dies. Only
``kTVMFFIOpaquePyObject`` exists today, as upstream allows.
"""

from __future__ import annotations

import ctypes

from tvm_ffi_common import abi

from . import memory
from .slots import FFIError, implements

TI = abi.TVMFFITypeIndex
_CELL_SIZE = ctypes.sizeof(abi.TVMFFIOpaqueObjectCell)
_HandleDeleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


def _destroy_opaque(address: int) -> None:
    handle = ctypes.c_void_p.from_address(memory.cell_address(address)).value
    deleter = ctypes.c_void_p.from_address(memory.cell_address(address) + _CELL_SIZE).value
    if deleter:
        _HandleDeleter(deleter)(handle)


def new_opaque(handle: int, type_index: int, deleter: int) -> int:
    """An opaque object holding ``handle``; ``deleter(handle)`` runs when it dies."""
    if type_index != TI.kTVMFFIOpaquePyObject:
        raise FFIError("RuntimeError", "Only kTVMFFIOpaquePyObject is supported for now")
    address = memory.new_object(type_index, memory.HEADER_SIZE + _CELL_SIZE + 8, _destroy_opaque)
    ctypes.c_void_p.from_address(memory.cell_address(address)).value = handle
    ctypes.c_void_p.from_address(memory.cell_address(address) + _CELL_SIZE).value = deleter
    return address


@implements("TVMFFIObjectCreateOpaque")
def object_create_opaque(handle, type_index, deleter, out):
    out[0] = new_opaque(handle, type_index, deleter)
