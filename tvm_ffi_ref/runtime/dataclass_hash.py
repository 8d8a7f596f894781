"""``ffi.RecursiveHash``: the hash of each leaf and the walk's hash frames.

Its twin in C: ``tvm_ffi_fast/src/dataclass_hash.c``.

:class:`RecursiveHasher` folds a value's leaves and children into one stable
64-bit number that agrees with ``ffi.RecursiveEq`` (equal values hash alike),
memoizing finished objects and standing in for an object met again on the
way down. The rules are in :mod:`.dataclass_ops`; this module holds the hash
side of them alone.
"""

from __future__ import annotations

import math
import struct
from typing import Dict, Optional, Set

from tvm_ffi_common import abi

from . import memory, strings
from .any_hash import custom_entry
from .dataclass_walk import (
    BYTES,
    COMPARE_ATTR,
    EQ_ATTR,
    HASH_ATTR,
    STRS,
    Children,
    Frame,
    call_hook,
    find_hook,
    hook_int,
    make_callback,
    object_view,
    run_frames,
)
from .hashing import MASK64, stable_hash_bytes, stable_hash_combine
from .registry import TYPES
from .shapes import shape_dims
from .slots import FFIError
from .type_index import TI

FLAGS = abi.TVMFFIFieldFlagBitMask


def signed64(value: int) -> int:
    value &= MASK64
    return value - (1 << 64) if value >> 63 else value


def type_key_hash(type_index: int) -> int:
    """``TVMFFITypeInfo.type_key_hash`` of a registered type."""
    return TYPES.entry(type_index).info.type_key_hash


_CANONICAL_NAN_BITS = 0x7FF8000000000000


def _float_bits(value: float) -> int:
    if math.isnan(value):
        return _CANONICAL_NAN_BITS
    if value == 0.0:
        return 0
    return struct.unpack("<Q", struct.pack("<d", value))[0]


def hash_pod(value: abi.TVMFFIAny) -> int:
    """The hash of an inline (non-string) value."""
    index = value.type_index
    if index == TI.kTVMFFIBool:
        return stable_hash_combine(index, 1 if value.v_int64 else 0)
    if index == TI.kTVMFFIInt:
        return stable_hash_combine(index, value.v_int64 & MASK64)
    if index == TI.kTVMFFIFloat:
        return stable_hash_combine(index, _float_bits(value.v_float64))
    if index == TI.kTVMFFIDataType:
        dtype = value.v_dtype
        result = stable_hash_combine(index, dtype.code)
        result = stable_hash_combine(result, dtype.bits)
        return stable_hash_combine(result, dtype.lanes)
    if index == TI.kTVMFFIDevice:
        device = value.v_device
        result = stable_hash_combine(index, device.device_type & MASK64)
        return stable_hash_combine(result, device.device_id & MASK64)
    return stable_hash_combine(index & MASK64, value.v_uint64)


class RecursiveHasher:
    """One ``ffi.RecursiveHash`` call: the memo and the objects on the way down."""

    def __init__(self) -> None:
        self.memo: Dict[int, int] = {}
        self.on_stack: Set[int] = set()

    def hash_value(self, value: abi.TVMFFIAny) -> int:
        """The uint64 hash of an owned value (one run of the walk)."""
        result = self.immediate(value)
        if result is None:
            result = run_frames(self.frame(value), "ObjectGraphDFS")
        return result

    def immediate(self, value: abi.TVMFFIAny) -> Optional[int]:
        """The hash of a value that needs no frame, or None."""
        index = value.type_index
        if index == TI.kTVMFFINone:
            return stable_hash_combine(0, 0)
        if index in STRS:
            return stable_hash_combine(TI.kTVMFFIStr, stable_hash_bytes(strings.view_bytes(value)))
        if index in BYTES:
            return stable_hash_combine(TI.kTVMFFIBytes,
                                       stable_hash_bytes(strings.view_bytes(value)))
        if index < TI.kTVMFFIStaticObjectBegin:
            return hash_pod(value)
        address = value.v_ptr
        if not address:
            return stable_hash_combine(0, 0)
        if address in self.memo:
            return self.memo[address]
        if address in self.on_stack:  # a cycle: stand in with the type's hash
            return type_key_hash(index)
        if index == TI.kTVMFFIShape:
            dims = shape_dims(address)
            result = stable_hash_combine(type_key_hash(index), len(dims))
            for dim in dims:
                result = stable_hash_combine(result, dim & MASK64)
            self.memo[address] = result
            return result
        hook = find_hook(HASH_ATTR, index)
        if hook is not None:
            self.on_stack.add(address)
            callback = make_callback(lambda v: signed64(self.hash_value(v)), strings.store_int,
                                     HASH_ATTR)
            try:
                result = call_hook(hook, [object_view(address), object_view(callback)])
            finally:
                memory.dec_ref(callback)
            result = hook_int(result, "int") & MASK64
            self.memo[address] = result
            self.on_stack.discard(address)
            return result
        defines_equality = any(custom_entry(attr, index) is not None
                               for attr in (EQ_ATTR, COMPARE_ATTR))
        if index >= TI.kTVMFFIStaticObjectEnd and defines_equality:
            raise FFIError("ValueError", f"RecursiveHash: type '{TYPES.type_key(index)}' defines "
                           "__ffi_eq__ or __ffi_compare__ but not __ffi_hash__. Add a "
                           "__ffi_hash__ hook to maintain the invariant "
                           "RecursiveEq(a,b) => RecursiveHash(a)==RecursiveHash(b).")
        return None

    def frame(self, value: abi.TVMFFIAny) -> Frame:
        """The frame of a container or object: its children's hashes, folded."""
        address, index = value.v_ptr, value.type_index
        self.on_stack.add(address)
        children = Children(value, FLAGS.kTVMFFIFieldFlagBitMaskHashOff
                            | FLAGS.kTVMFFIFieldFlagBitMaskCompareOff)
        if children.kind == "object":
            result = type_key_hash(index)
        else:
            result = stable_hash_combine(type_key_hash(index), children.size)
        hashes = yield from children.results(self)
        if children.kind == "sequence":
            for position, child_hash in enumerate(hashes):
                result = stable_hash_combine(result, stable_hash_combine(child_hash, position))
        elif children.kind == "map":
            entries = sorted(stable_hash_combine(hashes[i], hashes[i + 1])
                             for i in range(0, len(hashes), 2))
            for entry in entries:
                result = stable_hash_combine(result, entry)
        else:
            for child_hash in hashes:
                result = stable_hash_combine(result, child_hash)
        self.memo[address] = result
        self.on_stack.discard(address)
        return result


def recursive_hash(value: abi.TVMFFIAny) -> int:
    """``ffi.RecursiveHash`` of an owned value, as the int64 upstream returns."""
    return signed64(RecursiveHasher().hash_value(value))

