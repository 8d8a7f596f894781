"""Structural equality: ``ffi.StructuralEqual`` and ``ffi.GetFirstStructuralMismatch``.

Its twin in C: ``tvm_ffi_fast/src/structural_equal.c``.

``ffi.StructuralEqual(lhs, rhs, map_free_vars, skip_tensor_content) -> bool``
compares two values by structure (kinds and regions: :mod:`.structural_rules`):

* **Inline values** of different type indices differ, except a string (or
  bytes) against a string (bytes) in the other encoding, compared by content.
  Same index: a NaN float equals any NaN; otherwise the 8 payload bytes and the
  padding word must match (so ``0.0`` and ``-0.0`` differ, ``True`` is not ``1``).
* **Strings and bytes** by content, **BigInts** by value.
* **Array / List**: same length and equal elements in order. **Shape**: same
  dimensions. **Map / Dict**: the same number of entries, and for each entry of
  ``lhs`` (in its iteration order) ``rhs`` has the key -- after translating an
  object key bound by an earlier comparison -- with an equal value. Order does
  not matter; an object key is found by identity (or its ``__any_equal__``).
* **Tensors**: the same object; else same shape and dtype and, unless
  ``skip_tensor_content``, the same bytes (CPU, contiguous tensors only).
* **Objects** of one type index, by the type's kind: fields in declaration
  order (ancestors' first) skipping ``SEqHashIgnore``, each in its region, or
  the type's ``__s_equal__`` hook. Objects of different types differ.

Bindings: two DAG nodes that compared equal, or two free variables that met
in a definition region (or are one object), are bound to each other in both
directions; a bound object then equals only its partner, and a free variable
whose partner is unbound is unequal. ``map_free_vars`` makes the whole
comparison a Pattern region.

``__s_equal__(lhs, rhs, eq_cb) -> bool``: ``eq_cb(a, b, region, field_name)``
compares two sub-values with the walk's state; ``region`` (an int,
``TVMFFIDefRegionKind``) opens a definition region (0 keeps the current one),
``field_name`` names the step in a mismatch path. The hook decides equality.

``ffi.GetFirstStructuralMismatch`` runs the same comparison and returns None
when equal, else an Array of two AccessPaths to the first difference: each
level that fails adds one step on its way out -- ``.field`` (an attribute),
``[i]`` (an element; ``[<missing:i>]`` on the shorter side when lengths differ),
``[key]`` (a map entry; ``[<missing:key>]`` on the side that lacks it). A
mismatch at the top is a pair of root paths.
"""

from __future__ import annotations

import ctypes
import math
import struct
from typing import Dict, List, Optional, Set, Tuple

from tvm_ffi_common import abi

from . import anyvalue, memory, strings
from .container_common import ANY_SIZE
from .dataclass_walk import (
    BYTES,
    MAPS,
    SEQUENCES,
    STRS,
    Frame,
    call_hook,
    find_hook,
    hook_int,
    object_view,
    read_field,
    reflected_fields,
    run_frames,
)
from .functions import set_bool, set_object
from .maps import map_find, map_items
from .reflection import new_access_path, new_access_step
from .registry import check_failed, check_op_failed
from .sequences import SLOT_FIELDS, array_from_anys, seq_slots
from .shapes import shape_dims
from .signatures import typed_function, typed_global
from .slots import FFIError
from .structural_rules import (
    IGNORE,
    KIND,
    REGION,
    S_EQUAL_ATTR,
    field_region,
    hook_region,
    seq_hash_kind,
)
from .tensor import data_size, is_contiguous, shape_of, tensor_dltensor
from .type_index import TI

OBJECT_BEGIN = TI.kTVMFFIStaticObjectBegin

#: A pair met again inside itself: upstream recurses until its stack overflows.
CYCLE_MESSAGE = "StructuralEqual: the value graph has a cycle (a value contains itself)"

#: Access step kinds (``AccessKind``).
ATTR, ARRAY_ITEM, MAP_ITEM, ATTR_MISSING, ARRAY_ITEM_MISSING, MAP_ITEM_MISSING = range(6)

#: Pairs of type indices (lhs, rhs) that compare by content across encodings.
_CROSS_ENCODINGS = {(TI.kTVMFFIStr, TI.kTVMFFISmallStr), (TI.kTVMFFISmallStr, TI.kTVMFFIStr),
                    (TI.kTVMFFIBytes, TI.kTVMFFISmallBytes),
                    (TI.kTVMFFISmallBytes, TI.kTVMFFIBytes)}

_CALLBACK_PARAMS = ["AnyView", "AnyView", "int", "AnyView"]


def _str_any(text: bytes) -> abi.TVMFFIAny:
    value = abi.TVMFFIAny()
    strings.store_str_or_bytes(value, text, is_str=True)
    return value


def _int_any(number: int) -> abi.TVMFFIAny:
    value = abi.TVMFFIAny()
    strings.store_int(value, number)
    return value


def _scalars_equal(lhs: abi.TVMFFIAny, rhs: abi.TVMFFIAny) -> Optional[bool]:
    """Whether two values are equal when neither holds other values (else None)."""
    left, right = lhs.type_index, rhs.type_index
    if left != right:
        if (left, right) in _CROSS_ENCODINGS:
            return strings.view_bytes(lhs) == strings.view_bytes(rhs)
        return False
    if left < OBJECT_BEGIN:
        if left == TI.kTVMFFIFloat and math.isnan(lhs.v_float64):
            return math.isnan(rhs.v_float64)
        return lhs.zero_padding == rhs.zero_padding and lhs.v_int64 == rhs.v_int64
    if left == TI.kTVMFFIBigInt:
        return strings.words_to_int(strings.bigint_words(lhs)) == \
            strings.words_to_int(strings.bigint_words(rhs))
    if left in STRS or left in BYTES:
        return strings.object_bytes(lhs.v_ptr) == strings.object_bytes(rhs.v_ptr)
    return None


#: A slot's type index alone (the rest of its 16 bytes skipped), to scan a slot table's kinds.
_SLOT_TYPE_INDEX = struct.Struct("<i12x")


def _flat_sequences_equal(lhs: int, rhs: int) -> bool:
    """Whether two Arrays or Lists of scalars are equal, element by element.

    False means "not shown equal here": a length or an element differs, or an element is
    not a scalar. The frame then compares them, and records where they differ. Such a
    pair holds no container, so it cannot be part of a cycle and needs no frame (a wide
    value of small Arrays would otherwise cost a frame per pair).
    """
    left, right = seq_slots(lhs), seq_slots(rhs)
    if len(left) != len(right):
        return False
    if left == right and (not left or max(_SLOT_TYPE_INDEX.iter_unpack(left))[0] < OBJECT_BEGIN):
        # the same inline values, slot for slot (a NaN has the same bits); the largest type
        # index below the objects' says that no slot holds an object
        return True
    for offset in range(0, len(left), ANY_SIZE):  # a TVMFFIAny per element, as far as needed
        if not _scalars_equal(abi.TVMFFIAny.from_buffer_copy(left, offset),
                              abi.TVMFFIAny.from_buffer_copy(right, offset)):
            return False
    return True


class StructuralComparison:
    """One structural comparison: the region in force, bindings, and the mismatch trail."""

    def __init__(self, map_free_vars: bool, skip_tensor_content: bool, trace: bool):
        self.region = REGION.kTVMFFIDefRegionKindPattern if map_free_vars \
            else REGION.kTVMFFIDefRegionKindNone
        self.skip_tensor_content = skip_tensor_content
        # the mismatch trail, innermost step first: AccessStep addresses (owned)
        self.lhs_steps: Optional[List[int]] = [] if trace else None
        self.rhs_steps: Optional[List[int]] = [] if trace else None
        # bindings between objects of the two sides, by address; ``held`` keeps them alive
        self.lhs_to_rhs: Dict[int, int] = {}
        self.rhs_to_lhs: Dict[int, int] = {}
        self.held: List[int] = []
        self.callback: Optional[int] = None
        self.finished = False
        self.active: Set[Tuple[int, int]] = set()  # pairs being compared (a cycle check)
        self.fields: Dict[int, list] = {}  # type index -> its compared fields

    # ---------------------------------------------------------------- results

    def record(self, lhs_kind: int, lhs_key: abi.TVMFFIAny, rhs_kind: int,
               rhs_key: abi.TVMFFIAny) -> None:
        """Adds one step to each side's mismatch trail (when tracing)."""
        if self.lhs_steps is not None:
            self.lhs_steps.append(new_access_step(lhs_kind, lhs_key))
            self.rhs_steps.append(new_access_step(rhs_kind, rhs_key))

    def record_attr(self, name: bytes) -> None:
        if self.lhs_steps is not None:
            key = _str_any(name)
            self.record(ATTR, key, ATTR, key)
            anyvalue.dec_ref_any(key)

    def paths(self) -> int:
        """The two access paths of the trail, as an owned Array of two AccessPaths."""
        pair = []
        for steps in (self.lhs_steps, self.rhs_steps):
            path = new_access_path(None, None)
            for step in reversed(steps):
                deeper = new_access_path(path, step)
                memory.dec_ref(path)
                path = deeper
            pair.append(path)
        anys = [object_view(path) for path in pair]
        array = array_from_anys(anys)
        for path in pair:
            memory.dec_ref(path)
        return array

    def close(self) -> None:
        """Releases the trail and the bindings; the hook callback stops working."""
        self.finished = True
        for steps in (self.lhs_steps, self.rhs_steps):
            for step in steps or ():
                memory.dec_ref(step)
        for address in self.held:
            memory.dec_ref(address)
        self.held.clear()
        self.lhs_to_rhs.clear()
        self.rhs_to_lhs.clear()
        if self.callback is not None:
            memory.dec_ref(self.callback)

    def bind(self, lhs: int, rhs: int) -> None:
        for address in (lhs, rhs):
            memory.inc_ref(address)
            self.held.append(address)
        self.lhs_to_rhs[lhs] = rhs
        self.rhs_to_lhs[rhs] = lhs

    # ------------------------------------------------------------- the walk

    def equal(self, lhs: abi.TVMFFIAny, rhs: abi.TVMFFIAny) -> bool:
        """Whether two values are structurally equal (see the module docstring)."""
        equal = self.leaf(lhs, rhs)
        if equal is not None:
            return equal
        return run_frames(self.frame(lhs, rhs), "StructuralEqual")

    def leaf(self, lhs: abi.TVMFFIAny, rhs: abi.TVMFFIAny) -> Optional[bool]:
        """Whether two values are equal, when that needs no walk into them (else None)."""
        left = lhs.type_index
        if left in SEQUENCES and rhs.type_index == left and \
                _flat_sequences_equal(lhs.v_ptr, rhs.v_ptr):
            return True
        equal = _scalars_equal(lhs, rhs)
        if equal is not None:
            return equal
        if left == TI.kTVMFFIShape:
            return shape_dims(lhs.v_ptr) == shape_dims(rhs.v_ptr)
        if left == TI.kTVMFFITensor:
            return self.equal_tensors(lhs.v_ptr, rhs.v_ptr)
        return None

    def child(self, lhs: abi.TVMFFIAny, rhs: abi.TVMFFIAny) -> Frame:
        """Two children compared, to ``yield from``: at once when they are leaves."""
        equal = self.leaf(lhs, rhs)
        if equal is None:
            equal = yield self.frame(lhs, rhs)
        return equal

    def frame(self, lhs: abi.TVMFFIAny, rhs: abi.TVMFFIAny) -> Frame:
        """The frame comparing two containers or objects of the same type. Run by
        :func:`run_frames`, so depth costs no recursion; a pair met again inside itself
        is a cycle (upstream recurses until its stack overflows)."""
        pair = (lhs.v_ptr, rhs.v_ptr)
        if pair in self.active:
            raise FFIError("ValueError", CYCLE_MESSAGE)
        self.active.add(pair)
        try:
            if lhs.type_index in SEQUENCES:
                return (yield from self.equal_sequences(lhs.v_ptr, rhs.v_ptr))
            if lhs.type_index in MAPS:
                return (yield from self.equal_maps(lhs.v_ptr, rhs.v_ptr))
            return (yield from self.equal_objects(lhs.v_ptr, rhs.v_ptr))
        finally:
            self.active.discard(pair)

    def equal_sequences(self, lhs: int, rhs: int) -> Frame:
        # The slot tables as bytes: a pair of elements becomes two TVMFFIAny views only when
        # it is not two Arrays/Lists of equal scalars (a wide value's usual element).
        left, right = seq_slots(lhs), seq_slots(rhs)
        if len(left) != len(right) and self.lhs_steps is None:
            return False
        pairs = zip(SLOT_FIELDS.iter_unpack(left), SLOT_FIELDS.iter_unpack(right))
        for i, ((left_index, _, left_payload), (right_index, _, right_payload)) in \
                enumerate(pairs):
            if left_index in SEQUENCES and right_index == left_index and \
                    _flat_sequences_equal(left_payload, right_payload):
                continue
            a = abi.TVMFFIAny.from_buffer_copy(left, i * ANY_SIZE)
            b = abi.TVMFFIAny.from_buffer_copy(right, i * ANY_SIZE)
            equal = self.leaf(a, b)
            if equal is None:
                equal = yield self.frame(a, b)
            if not equal:
                index = _int_any(i)
                self.record(ARRAY_ITEM, index, ARRAY_ITEM, index)
                return False
        if len(left) == len(right):
            return True
        index = _int_any(min(len(left), len(right)) // ANY_SIZE)
        if len(left) > len(right):
            self.record(ARRAY_ITEM, index, ARRAY_ITEM_MISSING, index)
        else:
            self.record(ARRAY_ITEM_MISSING, index, ARRAY_ITEM, index)
        return False

    def translate(self, key: abi.TVMFFIAny, bindings: Dict[int, int]) -> abi.TVMFFIAny:
        """An object key bound to a partner stands for the partner on the other side."""
        if key.type_index < OBJECT_BEGIN or key.v_ptr not in bindings:
            return key
        return object_view(bindings[key.v_ptr])

    def equal_maps(self, lhs: int, rhs: int) -> Frame:
        left, right = map_items(lhs), map_items(rhs)
        if len(left) != len(right) and self.lhs_steps is None:
            return False
        for key, value in left:
            rhs_key = self.translate(key, self.lhs_to_rhs)
            found = map_find(rhs, rhs_key)
            if found is None:
                self.record(MAP_ITEM, key, MAP_ITEM_MISSING, rhs_key)
                return False
            if not (yield from self.child(value, found)):
                self.record(MAP_ITEM, key, MAP_ITEM, rhs_key)
                return False
        if len(left) == len(right):
            return True
        for key, _ in right:  # rhs has more: name a key lhs lacks
            lhs_key = self.translate(key, self.rhs_to_lhs)
            if map_find(lhs, lhs_key) is None:
                self.record(MAP_ITEM_MISSING, lhs_key, MAP_ITEM, key)
                return False
        return False

    def equal_tensors(self, lhs: int, rhs: int) -> bool:
        if lhs == rhs:
            return True
        a, b = tensor_dltensor(lhs), tensor_dltensor(rhs)
        if shape_of(a) != shape_of(b):
            return False
        if (a.dtype.code, a.dtype.bits, a.dtype.lanes) != (b.dtype.code, b.dtype.bits,
                                                           b.dtype.lanes):
            return False
        if self.skip_tensor_content:
            return True
        for name, tensor in (("lhs", a), ("rhs", b)):
            if tensor.device.device_type != abi.DLDeviceType.kDLCPU:
                raise check_op_failed(f"{name}.device().device_type == kDLCPU",
                                      tensor.device.device_type, abi.DLDeviceType.kDLCPU,
                                      "can only compare CPU tensor")
        for name, tensor in (("lhs", a), ("rhs", b)):
            if not is_contiguous(tensor):
                raise check_failed(f"{name}.IsContiguous()", "Can only compare contiguous tensor")
        size = data_size(a)  # from the data pointer, byte_offset aside, as upstream reads it
        return size == 0 or ctypes.string_at(a.data, size) == ctypes.string_at(b.data, size)

    def equal_objects(self, lhs: int, rhs: int) -> Frame:
        type_index = memory.type_index_of(lhs)
        kind = seq_hash_kind(type_index)
        if kind == KIND.kTVMFFISEqHashKindUniqueInstance:
            return lhs == rhs
        if kind == KIND.kTVMFFISEqHashKindConstTreeNode and lhs == rhs:
            return True
        if kind in (KIND.kTVMFFISEqHashKindDAGNode, KIND.kTVMFFISEqHashKindFreeVar):
            if lhs in self.lhs_to_rhs:
                return self.lhs_to_rhs[lhs] == rhs
            if rhs in self.rhs_to_lhs:
                return False  # rhs is bound to another: lhs is free here
        if kind != KIND.kTVMFFISEqHashKindFreeVar:
            equal = yield from self.equal_fields(lhs, rhs, type_index)
            if equal and kind == KIND.kTVMFFISEqHashKindDAGNode:
                self.bind(lhs, rhs)
            return equal
        # A free variable. Its own fields are uses, even in a Simple region.
        region = self.region
        if region == REGION.kTVMFFIDefRegionKindSimple:
            self.region = REGION.kTVMFFIDefRegionKindNone
        try:
            equal = yield from self.equal_fields(lhs, rhs, type_index)
        finally:
            self.region = region
        if not equal:
            return False
        if lhs == rhs or region != REGION.kTVMFFIDefRegionKindNone:
            self.bind(lhs, rhs)
            return True
        return False

    def in_region(self, region: int, lhs: abi.TVMFFIAny, rhs: abi.TVMFFIAny) -> bool:
        """Compares two values with ``region`` in force."""
        saved, self.region = self.region, region
        try:
            return self.equal(lhs, rhs)
        finally:
            self.region = saved

    def equal_fields(self, lhs: int, rhs: int, type_index: int) -> Frame:
        """The type's ``__s_equal__`` hook, or its fields one by one (first mismatch stops)."""
        hook = find_hook(S_EQUAL_ATTR, type_index)
        if hook is not None:
            result = call_hook(hook, [object_view(lhs), object_view(rhs),
                                      object_view(self.hook_callback())])
            return bool(hook_int(result, "bool"))
        fields = self.fields.get(type_index)
        if fields is None:
            fields = self.fields[type_index] = reflected_fields(type_index, IGNORE)
        for field in fields:
            a, b = read_field(lhs, field), read_field(rhs, field)
            try:
                equal = self.leaf(a, b)
                if equal is None:
                    saved = self.region
                    self.region = field_region(field.flags, saved)
                    try:
                        equal = yield self.frame(a, b)
                    finally:
                        self.region = saved
            finally:
                anyvalue.dec_ref_any(a)
                anyvalue.dec_ref_any(b)
            if not equal:
                self.record_attr(ctypes.string_at(field.name.data, field.name.size))
                return False
        return True

    def hook_callback(self) -> int:
        """``eq_cb(lhs, rhs, region, field_name) -> bool``, made once per comparison."""
        if self.callback is None:
            def eq_cb(result, lhs, rhs, region, field_name):
                if self.finished:
                    raise FFIError("RuntimeError", "a structural equality hook callback was "
                                                   "called after its comparison finished")
                equal = self.in_region(hook_region(region, self.region), lhs, rhs)
                if not equal and self.lhs_steps is not None:
                    if field_name.type_index not in STRS:
                        raise FFIError("TypeError", "Cannot convert from type "
                                       f"`{_type_key(field_name)}` to `ffi.String`")
                    self.record_attr(strings.view_bytes(field_name))
                set_bool(result, equal)

            self.callback = typed_function(_CALLBACK_PARAMS, "bool", eq_cb)
        return self.callback


def _type_key(value: abi.TVMFFIAny) -> str:
    from .signatures import type_key_of

    return type_key_of(value)


def structural_equal(lhs: abi.TVMFFIAny, rhs: abi.TVMFFIAny, map_free_vars: bool = False,
                     skip_tensor_content: bool = False) -> bool:
    """Whether ``lhs`` and ``rhs`` are structurally equal (StructuralKey uses it too)."""
    comparison = StructuralComparison(map_free_vars, skip_tensor_content, trace=False)
    try:
        return comparison.equal(lhs, rhs)
    finally:
        comparison.close()


@typed_global("ffi.StructuralEqual", ["Any", "Any", "bool", "bool"], "bool")
def _structural_equal(result, lhs, rhs, map_free_vars, skip_tensor_content):
    set_bool(result, structural_equal(lhs, rhs, map_free_vars, skip_tensor_content))


@typed_global("ffi.GetFirstStructuralMismatch", ["Any", "Any", "bool", "bool"],
              "Optional<Tuple<ffi.reflection.AccessPath, ffi.reflection.AccessPath>>")
def _first_mismatch(result, lhs, rhs, map_free_vars, skip_tensor_content):
    comparison = StructuralComparison(map_free_vars, skip_tensor_content, trace=True)
    try:
        equal = comparison.equal(lhs, rhs)
        if not equal:
            set_object(result, comparison.paths())
    finally:
        comparison.close()
