"""Type records and the Python class of each type index.

The runtime keeps a ``TVMFFITypeInfo`` record per type (:func:`type_info`);
this module reads them and keeps :data:`TYPE_CLASSES`, the wrapper class of
each type index. A type nobody registered a class for gets one on first
sight (:func:`class_for_type_index`, see ``type_registry.make_fallback_class``),
derived from its parent's class, so that fields the ancestors reflect are
inherited. Each core's ``object.register_class`` fills the table.
"""

from __future__ import annotations

import ctypes
from typing import Dict, Optional

from tvm_ffi_common import abi
from tvm_ffi_common.capi import LIB

from . import upcalls

#: The Python class of each type index.
TYPE_CLASSES: Dict[int, type] = {}


def type_info(type_index: int) -> abi.TVMFFITypeInfo:
    """The runtime's record of a type."""
    return LIB.TVMFFIGetTypeInfo(type_index).contents


def type_key(type_index: int) -> str:
    """The key of a registered type index."""
    key = type_info(type_index).type_key
    return ctypes.string_at(key.data, key.size).decode()


def type_key_to_index(key: str) -> Optional[int]:
    """The index registered for ``key``, or None."""
    data = key.encode()
    index = LIB.TVMFFITypeGetOrAllocIndex(
        ctypes.byref(abi.TVMFFIByteArray(ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p),
                                         len(data))),
        -1, 0, 0, 0, -2)
    return None if index == -2 else index


def class_for_type_index(type_index: int) -> type:
    """The wrapper class of a type index, made from its record if never registered."""
    cls = TYPE_CLASSES.get(type_index)
    if cls is None:
        cls = _fallback_class(type_index)
    return cls


def _fallback_class(type_index: int) -> type:
    return upcalls.make_fallback_class(type_index)
