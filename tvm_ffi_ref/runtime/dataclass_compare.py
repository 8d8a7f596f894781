"""``ffi.RecursiveEq/Lt/Le/Gt/Ge``: one three-way comparison, in two modes.

Its twin in C: ``tvm_ffi_fast/src/dataclass_compare.c``.

:class:`RecursiveComparer` compares two values leaf by leaf and child by
child, in equality mode (every mismatch is "unequal") or ordering mode
(``TypeError`` where no order exists), tracking the object pairs on the way
down to catch cycles. The rules are in :mod:`.dataclass_ops`; this module holds
the comparison side of them alone.
"""

from __future__ import annotations

import math
from typing import List, Optional, Set, Tuple

from tvm_ffi_common import abi

from . import anyvalue, functions, memory, strings
from .dataclass_walk import (
    BYTES,
    COMPARE_ATTR,
    EQ_ATTR,
    INTS,
    MAPS,
    SEQUENCES,
    STRS,
    Frame,
    call_hook,
    find_hook,
    hook_int,
    make_callback,
    object_view,
    read_field,
    reflected_fields,
    release_all,
    run_frames,
)
from .maps import map_find, map_items, map_size as map_size_of
from .registry import TYPES
from .sequences import seq_items
from .shapes import shape_dims
from .slots import FFIError
from .strings import bigint_words
from .type_index import TI

FLAGS = abi.TVMFFIFieldFlagBitMask


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >> 31 else value


def _sign(difference: int) -> int:
    return (difference > 0) - (difference < 0)


def compare_chars(lhs: bytes, rhs: bytes) -> int:
    """Upstream's ``memncmp``: bytes as signed ``char`` (x86-64), then the shorter first."""
    for a, b in zip(lhs, rhs):
        if a != b:
            return _sign((a ^ 0x80) - (b ^ 0x80))  # bias turns signed order into unsigned
    return _sign(len(lhs) - len(rhs))


def compare_ints(lhs: int, rhs: int) -> int:
    """Three-way comparison of Python ints."""
    return _sign(lhs - rhs)


def compare_tuples(lhs: tuple, rhs: tuple) -> int:
    """Three-way comparison of tuples of numbers, field by field."""
    return (lhs > rhs) - (lhs < rhs)


class RecursiveComparer:
    """One comparison call: the mode and the (lhs, rhs) object pairs being compared."""

    def __init__(self, eq_only: bool) -> None:
        self.eq_only = eq_only
        self.on_stack: Set[Tuple[int, int]] = set()

    def compare(self, lhs: abi.TVMFFIAny, rhs: abi.TVMFFIAny) -> int:
        """-1, 0 or 1 for two owned values (one run of the walk)."""
        result = self.immediate(lhs, rhs)
        if result is None:
            result = run_frames(self.frame(lhs, rhs), "RecursiveCompare")
        return result

    def _cannot_order(self, message: str) -> int:
        """In equality mode, "unequal"; in ordering mode, a TypeError with ``message``."""
        if self.eq_only:
            return 1
        raise FFIError("TypeError", message)

    def immediate(self, lhs: abi.TVMFFIAny, rhs: abi.TVMFFIAny) -> Optional[int]:
        """The comparison of two values that needs no frame, or None."""
        left, right = lhs.type_index, rhs.type_index
        if left == TI.kTVMFFINone or right == TI.kTVMFFINone:  # None sorts first
            return compare_ints(left != TI.kTVMFFINone, right != TI.kTVMFFINone)
        if (left in STRS and right in STRS) or (left in BYTES and right in BYTES):
            return compare_chars(strings.view_bytes(lhs), strings.view_bytes(rhs))
        if left != right:
            if self.eq_only:
                return 1
            if left in INTS and right in INTS:
                return compare_ints(strings.words_to_int(bigint_words(lhs)),
                                    strings.words_to_int(bigint_words(rhs)))
            raise FFIError("TypeError", "Cannot compare values of different types: "
                                        f"{TYPES.type_key(left)} vs {TYPES.type_key(right)}")
        if left < TI.kTVMFFIStaticObjectBegin:
            return self._compare_pod(lhs, rhs)
        if left == TI.kTVMFFIBigInt:
            return compare_ints(strings.words_to_int(bigint_words(lhs)),
                                strings.words_to_int(bigint_words(rhs)))
        if lhs.v_ptr == rhs.v_ptr:
            return 0
        if not lhs.v_ptr or not rhs.v_ptr:
            return -1 if not lhs.v_ptr else 1
        if left == TI.kTVMFFIShape:
            lhs_dims, rhs_dims = shape_dims(lhs.v_ptr), shape_dims(rhs.v_ptr)
            for a, b in zip(lhs_dims, rhs_dims):
                if a != b:
                    return compare_ints(a, b)
            return compare_ints(len(lhs_dims), len(rhs_dims))
        if (lhs.v_ptr, rhs.v_ptr) in self.on_stack:
            if self.eq_only:
                return 0
            raise FFIError("ValueError", "RecursiveCompare: cyclic reference detected in ordering")
        if left >= TI.kTVMFFIStaticObjectEnd:
            return self._custom(lhs.v_ptr, rhs.v_ptr, left)
        return None

    def _compare_pod(self, lhs: abi.TVMFFIAny, rhs: abi.TVMFFIAny) -> int:
        index = lhs.type_index
        if index == TI.kTVMFFIBool:
            return compare_ints(bool(lhs.v_int64), bool(rhs.v_int64))
        if index == TI.kTVMFFIInt:
            return compare_ints(lhs.v_int64, rhs.v_int64)
        if index == TI.kTVMFFIFloat:
            a, b = lhs.v_float64, rhs.v_float64
            if math.isnan(a) or math.isnan(b):
                if self.eq_only:
                    return 0 if math.isnan(a) and math.isnan(b) else 1
                raise FFIError("TypeError", "Cannot order NaN values")
            return (a > b) - (a < b)
        if index == TI.kTVMFFIDataType:
            a, b = lhs.v_dtype, rhs.v_dtype
            return compare_tuples((a.code, a.bits, a.lanes), (b.code, b.bits, b.lanes))
        if index == TI.kTVMFFIDevice:
            a, b = lhs.v_device, rhs.v_device
            return compare_tuples((a.device_type, a.device_id), (b.device_type, b.device_id))
        if lhs.zero_padding == rhs.zero_padding and lhs.v_int64 == rhs.v_int64:
            return 0
        return self._cannot_order(f"Cannot order values of type {TYPES.type_key(index)}")

    def _custom(self, lhs: int, rhs: int, index: int) -> Optional[int]:
        """The result of the type's ``__ffi_eq__``/``__ffi_compare__`` hook, or None."""
        eq_hook = find_hook(EQ_ATTR, index) if self.eq_only else None
        compare_hook = find_hook(COMPARE_ATTR, index) if eq_hook is None else None
        hook = eq_hook or compare_hook
        if hook is None:
            return None
        if eq_hook is not None:
            callback = make_callback(lambda a, b: self.compare(a, b) == 0, functions.set_bool,
                                     EQ_ATTR)
        else:
            callback = make_callback(self.compare, strings.store_int, COMPARE_ATTR)
        pair = (lhs, rhs)
        self.on_stack.add(pair)
        try:
            result = call_hook(hook, [object_view(lhs), object_view(rhs),
                                      object_view(callback)])
        finally:
            memory.dec_ref(callback)
        value = hook_int(result, "bool" if eq_hook is not None else "int")
        self.on_stack.discard(pair)
        if eq_hook is not None:
            return 0 if value else 1
        return _int32(value)

    def _children(self, lhs: abi.TVMFFIAny, rhs: abi.TVMFFIAny, owned: List[abi.TVMFFIAny]):
        """``(kind, child pairs, result if all pairs are equal)``; ``kind`` is None when the
        pair is decided before any child is compared (maps that cannot match).

        Every child value is appended to ``owned``, holding a reference for the frame's life.
        """
        index = lhs.type_index
        if index in SEQUENCES:
            left, right = seq_items(lhs.v_ptr), seq_items(rhs.v_ptr)
            pairs = list(zip(left, right))
            tail = compare_ints(len(left), len(right))
            kind = "sequence"
        elif index in MAPS:
            left = map_items(lhs.v_ptr)
            if len(left) != map_size_of(rhs.v_ptr):
                return None, [], self._cannot_order("Cannot order Map/Dict values")
            pairs = []
            for key, value in left:
                other = map_find(rhs.v_ptr, key)
                if other is None:
                    return None, [], self._cannot_order("Cannot order Map/Dict values")
                pairs.append((value, other))
            tail, kind = 0, "map"
        else:
            for field in reflected_fields(index, FLAGS.kTVMFFIFieldFlagBitMaskCompareOff):
                owned.append(read_field(lhs.v_ptr, field))
                owned.append(read_field(rhs.v_ptr, field))
            return "object", list(zip(owned[::2], owned[1::2])), 0
        for a, b in pairs:
            anyvalue.inc_ref_any(a)
            anyvalue.inc_ref_any(b)
            owned.extend((a, b))
        return kind, pairs, tail

    def frame(self, lhs: abi.TVMFFIAny, rhs: abi.TVMFFIAny) -> Frame:
        """The frame of two containers or objects of one type: children pairwise, in order.

        The first unequal pair decides; in ordering mode a difference found under
        a map (at any depth) is a TypeError, since maps have no order.
        """
        pair = (lhs.v_ptr, rhs.v_ptr)
        self.on_stack.add(pair)
        owned: List[abi.TVMFFIAny] = []
        try:
            kind, pairs, tail = self._children(lhs, rhs, owned)
            if kind is None:
                return tail
            for a, b in pairs:
                result = self.immediate(a, b)
                if result is None:
                    result = yield self.frame(a, b)
                if result != 0:
                    if kind == "map" and not self.eq_only:
                        raise FFIError("TypeError", "Cannot order Map/Dict values")
                    return result
            return tail
        finally:
            release_all(owned)
            self.on_stack.discard(pair)


def recursive_compare(lhs: abi.TVMFFIAny, rhs: abi.TVMFFIAny, eq_only: bool) -> int:
    """-1, 0 or 1: the walk's three-way comparison of two owned values."""
    return RecursiveComparer(eq_only).compare(lhs, rhs)

