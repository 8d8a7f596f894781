"""Reflected types registered from Python, as a C++ kernel's ``ObjectDef`` registers them.

The spec's pages on structural equality need objects of types that declare a
structural kind (a free variable, a tree node) and field flags (ignored,
defining variables); a kernel library would register them in C++::

    refl::ObjectDef<LetObj>().def_ro("var", &LetObj::var, refl::AttachFieldFlag::SEqHashDefSimple())

:func:`define_type` makes the same records through this runtime's registry:
a child of ``ffi.Object`` whose fields are ``Any`` slots after the header,
with a creator, so ``ffi.MakeObjectFromPackedArgs`` builds its objects.
"""

from __future__ import annotations

from typing import Sequence, Tuple

from tvm_ffi_common import abi

from . import memory
from .reflection import ANY, ANY_SIZE, _field, _metadata, _schema
from .registry import TYPES

TI = abi.TVMFFITypeIndex


def define_type(type_key: str, kind: int, fields: Sequence[Tuple[str, int]]) -> int:
    """Registers ``type_key`` with ``kind`` (a ``TVMFFISEqHashKind``); returns its type index.

    ``fields`` are ``(name, flags)``: every field is an ``Any`` slot, in order
    after the 24-byte header, with ``TVMFFIFieldFlagBitMask`` flags (writable
    is always added, so the creator's objects can be filled). Registering a key
    again returns the existing index and changes nothing.
    """
    key = type_key.encode()
    if key in TYPES.by_key:
        return TYPES.by_key[key]
    index = TYPES.get_or_alloc(key, -1, 1, 0, True, TI.kTVMFFIObject)
    writable = abi.TVMFFIFieldFlagBitMask.kTVMFFIFieldFlagBitMaskWritable
    for i, (name, flags) in enumerate(fields):
        _field(index, name, memory.HEADER_SIZE + i * ANY_SIZE, ANY, _schema("Any"), -1,
               flags=flags | writable)
    _metadata(index, memory.HEADER_SIZE + len(fields) * ANY_SIZE, kind, creator=True)
    return index

