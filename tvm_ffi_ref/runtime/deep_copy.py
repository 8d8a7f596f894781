"""``ffi.DeepCopy(value)``: a copy of a value graph that shares nothing mutable with it.

Its twin in C: ``tvm_ffi_fast/src/deep_copy.c``.

Immutable leaves are kept, not copied: inline values, strings, bytes, Shapes,
BigInts and registered enum singletons. Everything else reachable is copied
once, so sharing and cycles come out as they went in:

* an **Array** or **Map** is rebuilt from its copied children once they are
  done (a Map entry by entry: key, value, in iteration order);
* a **List** or **Dict** is created empty first and filled as its children
  are copied (so a cycle back to it finds the copy);
* any other **object** is copied by its type's ``__ffi_shallow_copy__``
  (``InternalError ... is not copy-constructible`` without one) first, then
  each field (all of them, ancestors' first) whose copy differs from the
  original is set through its setter.

An Array or Map met again while its own children are still being copied
cannot have its copy yet: the original stands in, and once everything is
copied, every List, Dict and object copy that holds such an original is fixed
to hold the copy instead (a Dict entry is removed and set again, so it moves
to the end of the Dict's order). An Array or Map copy itself keeps the
original there, as upstream's does.
"""

from __future__ import annotations

from typing import Dict, Optional, Set

from tvm_ffi_common import abi

from . import anyvalue
from .any_hash import custom_entry
from .dataclass_walk import Frame, object_view, read_field, reflected_fields, run_frames
from .maps import dict_erase, dict_from_pairs, dict_set, map_from_pairs, map_items
from .reflection import ENUM
from .reflection_make_object import (
    _call as call_owned,  # the runtime's "call, owned result" helper
    call_setter,
)
from .registry import TYPES, check_failed
from .sequence_edits import list_append, seq_set
from .sequences import ARRAY_INIT_CAPACITY, array_from_anys, list_reserve, new_list, seq_items
from .signatures import typed_global
from .type_index import TI

SHALLOW_COPY_ATTR = b"__ffi_shallow_copy__"
_LEAVES = (TI.kTVMFFIStr, TI.kTVMFFIBytes, TI.kTVMFFIShape, TI.kTVMFFIBigInt)


class DeepCopier:
    """One deep copy: the copies made so far (original address -> owned copy)."""

    def __init__(self) -> None:
        self.copies: Dict[int, abi.TVMFFIAny] = {}
        self.in_progress: Set[int] = set()  # Arrays and Maps whose children are being copied
        self.deferred = False

    def release(self) -> None:
        for copy in self.copies.values():
            anyvalue.dec_ref_any(copy)
        self.copies.clear()

    def copy(self, value: abi.TVMFFIAny) -> abi.TVMFFIAny:
        """The copy of ``value`` (borrowed: owned by this copier, or ``value`` itself)."""
        done = self.known(value)
        if done is not None:
            return done
        return run_frames(self.frame(value), "DeepCopy")

    def known(self, value: abi.TVMFFIAny) -> Optional[abi.TVMFFIAny]:
        """The copy of ``value`` when it needs no frame: a leaf (itself), a value copied
        already, or an Array or Map being copied (itself, fixed later); else None."""
        index = value.type_index
        if index < TI.kTVMFFIStaticObjectBegin:
            return value
        address = value.v_ptr
        if address in self.copies:
            return self.copies[address]
        if address in self.in_progress:
            self.deferred = True
            return value
        if index in _LEAVES or TYPES.is_instance(index, ENUM):
            return value
        return None

    def frame(self, value: abi.TVMFFIAny) -> Frame:
        """The frame copying a container or object: children are copied by yielding their
        frames to :func:`run_frames`, so depth costs no recursion."""
        index, address = value.type_index, value.v_ptr
        if index in (TI.kTVMFFIArray, TI.kTVMFFIMap):
            return (yield from self.copy_immutable(address, index))
        if index == TI.kTVMFFIList:
            return (yield from self.copy_list(address))
        if index == TI.kTVMFFIDict:
            return (yield from self.copy_dict(address))
        return (yield from self.copy_object(address, index))

    def remember(self, original: int, copy_address: int) -> abi.TVMFFIAny:
        self.copies[original] = object_view(copy_address)
        return self.copies[original]

    def copy_immutable(self, address: int, index: int) -> Frame:
        children = [_retained(v) for v in seq_items(address)] if index == TI.kTVMFFIArray \
            else [_retained(v) for pair in map_items(address) for v in pair]
        self.in_progress.add(address)
        copied = []
        try:
            for child in children:
                done = self.known(child)
                copied.append(done if done is not None else (yield self.frame(child)))
        finally:
            self.in_progress.discard(address)
            for child in children:
                anyvalue.dec_ref_any(child)
        if index == TI.kTVMFFIArray:
            # Array() reserved for n, then n push_backs: each goes in place (the new Array
            # has room and one reference), so the Array is filled in one step
            array = array_from_anys(copied, capacity=max(ARRAY_INIT_CAPACITY, len(copied)))
            return self.remember(address, array)
        pairs = list(zip(copied[0::2], copied[1::2]))
        return self.remember(address, map_from_pairs(pairs))

    def copy_list(self, address: int) -> Frame:
        children = [_retained(v) for v in seq_items(address)]
        copy = new_list(0)  # List() reserved for n
        list_reserve(copy, len(children))
        result = self.remember(address, copy)
        try:
            for child in children:
                done = self.known(child)
                list_append(copy, done if done is not None else (yield self.frame(child)))
        finally:
            for child in children:
                anyvalue.dec_ref_any(child)
        return result

    def copy_dict(self, address: int) -> Frame:
        children = [_retained(v) for pair in map_items(address) for v in pair]
        copy = dict_from_pairs([])
        result = self.remember(address, copy)
        try:
            for i in range(0, len(children), 2):
                key = self.known(children[i])
                if key is None:
                    key = yield self.frame(children[i])
                value = self.known(children[i + 1])
                if value is None:
                    value = yield self.frame(children[i + 1])
                dict_set(copy, key, value)
        finally:
            for child in children:
                anyvalue.dec_ref_any(child)
        return result

    def copy_object(self, address: int, index: int) -> Frame:
        fields = reflected_fields(index, 0)
        children = [read_field(address, field) for field in fields]
        try:
            shallow = custom_entry(SHALLOW_COPY_ATTR, index)
            if shallow is None or shallow.type_index != TI.kTVMFFIFunction:
                raise check_failed("copy_fn.has_value()", f'Cannot deep copy object of type '
                                   f'"{TYPES.type_key(index)}" because it is not '
                                   "copy-constructible")
            copy = call_owned(shallow.v_ptr, [object_view(address)])
            self.copies[address] = copy
            for field, child in zip(fields, children):
                copied = self.known(child)
                if copied is None:
                    copied = yield self.frame(child)
                if not _same(child, copied):
                    call_setter(field, copy.v_ptr + field.offset, copied)
            return copy
        finally:
            for child in children:
                anyvalue.dec_ref_any(child)

    # ------------------------------------------------------------ the fixups

    def fix_deferred(self) -> None:
        """Replaces originals standing in for Array/Map copies (see the module docstring)."""
        for copy in list(self.copies.values()):
            index = copy.type_index
            if index == TI.kTVMFFIList:
                for i, item in enumerate(seq_items(copy.v_ptr)):
                    if item.type_index >= TI.kTVMFFIStaticObjectBegin and \
                            item.v_ptr in self.copies:
                        seq_set(copy.v_ptr, i, self.copies[item.v_ptr])
            elif index == TI.kTVMFFIDict:
                self.fix_dict(copy.v_ptr)
            elif index >= TI.kTVMFFIStaticObjectEnd:
                self.fix_object(copy.v_ptr, index)

    def replacement(self, value: abi.TVMFFIAny):
        if value.type_index >= TI.kTVMFFIStaticObjectBegin and value.v_ptr in self.copies:
            return self.copies[value.v_ptr]
        return None

    def fix_dict(self, address: int) -> None:
        fixes = []
        for key, value in map_items(address):
            new_key, new_value = self.replacement(key), self.replacement(value)
            if new_key is not None or new_value is not None:
                fixes.append([_retained(key), _retained(key if new_key is None else new_key),
                              _retained(value if new_value is None else new_value)])
        for old_key, new_key, new_value in fixes:
            dict_erase(address, old_key)
            dict_set(address, new_key, new_value)
        for fix in fixes:
            for value in fix:
                anyvalue.dec_ref_any(value)

    def fix_object(self, address: int, index: int) -> None:
        for field in reflected_fields(index, 0):
            value = read_field(address, field)
            try:
                new = self.replacement(value)
                if new is not None and not _same(new, value):
                    call_setter(field, address + field.offset, new)
            finally:
                anyvalue.dec_ref_any(value)


def _retained(value: abi.TVMFFIAny) -> abi.TVMFFIAny:
    """An owned copy of a borrowed value (so it outlives changes to its container)."""
    copied = abi.TVMFFIAny()
    anyvalue.copy_any(value, copied)
    anyvalue.inc_ref_any(copied)
    return copied


def _same(a: abi.TVMFFIAny, b: abi.TVMFFIAny) -> bool:
    """C++'s ``Any::same_as``: the same type index and payload."""
    return a.type_index == b.type_index and a.v_int64 == b.v_int64


def deep_copy(value: abi.TVMFFIAny) -> abi.TVMFFIAny:
    """The deep copy of ``value``, owned (see the module docstring)."""
    copier = DeepCopier()
    try:
        result = _retained(copier.copy(value))
        if copier.deferred:
            copier.fix_deferred()
        return result
    finally:
        copier.release()


@typed_global("ffi.DeepCopy", ["Any"], "Any")
def _deep_copy(result, value):
    anyvalue.copy_any(deep_copy(value), result)

