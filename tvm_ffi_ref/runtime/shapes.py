"""Shape: an immutable run of int64 dims, laid out so that C++ reads it in place; ``ffi.Shape``.

Its twin in C: ``tvm_ffi_fast/src/containers.c``.

A Shape is ``TVMFFIObject`` + ``TVMFFIShapeCell`` (``int64_t* data``, ``size_t size``,
at 24 and 32); the dims a Shape made here holds follow inline at 40. A Shape made
elsewhere (a Tensor's, say) may point its ``data`` anywhere, so readers go through
the cell (:func:`shape_dims`).
"""

from __future__ import annotations

import ctypes
from typing import List, Sequence

from tvm_ffi_common import abi

from . import memory
from .container_common import check_type
from .functions import def_global, set_object
from .slots import FFIError
from .type_index import TI

#: Where a Shape's inline dims start: header + TVMFFIShapeCell.
SHAPE_DIMS_AT = memory.HEADER_SIZE + ctypes.sizeof(abi.TVMFFIShapeCell)


def shape_from_ints(dims: Sequence[int]) -> int:
    """A new Shape object holding ``dims`` inline; returns an owned address."""
    address = memory.new_object(TI.kTVMFFIShape, SHAPE_DIMS_AT + 8 * len(dims))
    cell = abi.TVMFFIShapeCell.from_address(memory.cell_address(address))
    cell.data = ctypes.cast(address + SHAPE_DIMS_AT, ctypes.POINTER(ctypes.c_int64))
    cell.size = len(dims)
    (ctypes.c_int64 * len(dims)).from_address(address + SHAPE_DIMS_AT)[:] = list(dims)
    return address


def shape_dims(address: int) -> List[int]:
    """The dims of a Shape object (wherever its cell points)."""
    check_type(address, (TI.kTVMFFIShape,), "shape_dims")
    cell = abi.TVMFFIShapeCell.from_address(memory.cell_address(address))
    return [cell.data[i] for i in range(cell.size)]


@def_global("ffi.Shape")
def _ffi_shape(args, result):
    dims = []
    for value in args:
        if value.type_index not in (TI.kTVMFFIInt, TI.kTVMFFIBool):
            raise FFIError("ValueError", "Expect shape to take list of int arguments")
        dims.append(value.v_int64)
    set_object(result, shape_from_ints(dims))
