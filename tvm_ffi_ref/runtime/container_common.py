"""What the four containers share: slots, the ``data_deleter`` rule, and checked addresses.

Its twin in C: ``tvm_ffi_fast/src/containers.c`` (and the declarations in ``containers.h``).

Array, List (:mod:`.sequences`), Map and Dict (:mod:`.maps`) keep their elements in
``TVMFFIAny`` slots of 16 bytes (:data:`ANY_SIZE`); a slot owns its value (an object in it
holds one reference). Each keeps them in a buffer that its cell's ``data_deleter`` frees,
NULL when the buffer is inline, and whichever side grows the container frees the old
buffer through the pointer the object holds (:func:`call_data_deleter`): the buffer and the
deleter beside it may come from C++. This runtime's deleters are libc ``free`` (the blocks
of a Map, :data:`FREE_ADDRESS`) and ``operator delete`` (every List buffer,
:data:`LIST_BUFFER_FREE_ADDRESS`).

The front-end helpers of these modules take raw addresses; :func:`check_type` keeps a
wrong one from being read as the wrong layout.
"""

from __future__ import annotations

import ctypes
from typing import Optional, Sequence

from tvm_ffi_common import abi
from tvm_ffi_common.capi import LIB

from . import anyvalue, memory
from .registry import TYPES
from .slots import FFIError

#: sizeof(TVMFFIAny): one slot of a container.
ANY_SIZE = ctypes.sizeof(abi.TVMFFIAny)

_libc = ctypes.CDLL(None)
#: The ``data_deleter`` of the Map blocks this runtime allocates: libc ``free``.
FREE_ADDRESS = ctypes.cast(_libc.free, ctypes.c_void_p).value
#: The ``data_deleter`` of every List buffer: ``operator delete`` (see :mod:`.sequences`).
LIST_BUFFER_FREE_ADDRESS = ctypes.cast(LIB.tvm_ffi_runtime_list_buffer_free,
                                       ctypes.c_void_p).value
#: ``void (*)(void*)``: the type of ``data_deleter``.
DataDeleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


def check_type(address: int, allowed: Sequence[int], helper: str) -> None:
    """Raises TypeError unless the object at ``address`` has one of the ``allowed`` type indices.

    The front-end helpers take raw addresses; a wrong one would otherwise be
    read as the wrong layout.
    """
    index = memory.type_index_of(address)
    if index in allowed:
        return
    try:
        got = TYPES.type_key(index)
    except FFIError:
        got = f"type index {index}"
    names = " or ".join(TYPES.type_key(i) for i in allowed)
    raise TypeError(f"{helper}: argument 'address' must be an {names} object, got {got}")


def read_pointer(address: int) -> Optional[int]:
    """The pointer stored at ``address`` (None for NULL)."""
    return ctypes.c_void_p.from_address(address).value


def call_data_deleter(deleter: Optional[int], data: Optional[int]) -> None:
    """Runs a container's ``data_deleter(data)`` (ours called directly, C++'s through a
    function pointer)."""
    if not deleter:
        return
    if deleter == FREE_ADDRESS:
        memory.free(data)
    elif deleter == LIST_BUFFER_FREE_ADDRESS:
        LIB.tvm_ffi_runtime_list_buffer_free(data)
    else:
        DataDeleter(deleter)(data)


def owned_copy(view: abi.TVMFFIAny) -> abi.TVMFFIAny:
    """A new owned value equal to ``view`` (see ``anyvalue.view_to_owned``)."""
    owned = abi.TVMFFIAny()
    anyvalue.view_to_owned(view, owned)
    return owned
