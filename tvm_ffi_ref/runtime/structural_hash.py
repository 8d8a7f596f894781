"""Structural hashing: ``ffi.StructuralHash(value, map_free_vars, skip_tensor_content) -> int``.

Its twin in C: ``tvm_ffi_fast/src/structural_hash.c``.

A 64-bit hash that agrees with structural equality (:mod:`.structural_equal`)
under the same options. Users store these numbers and C++ code compares them,
so every rule below is upstream's bit for bit. ``combine`` is
``StableHashCombine`` and ``bytes_hash`` is ``StableHashBytes``
(:mod:`.hashing`); ``key_hash(T)`` is the ``type_key_hash`` of type ``T``.
The result is returned as int64 (the uint64 bit pattern).

* **Inline values**: ``combine(type_index, payload)`` over the 8 payload
  bytes as uint64, with every NaN replaced by the quiet NaN
  ``0x7ff8000000000000``; a small string hashes as a String object would:
  ``combine(kTVMFFIStr, bytes_hash(content))``. (Small *bytes* keep their own
  type index and payload: unlike strings, they do not hash as a Bytes object.)
* **String / Bytes** objects: ``combine(type_index, bytes_hash(content))``;
  **BigInt**: ``combine(type_index, bytes_hash(its two's-complement words))``.
* **Array / List**: ``h = combine(key_hash, size)``, then
  ``h = combine(h, hash(element))`` for each element. **Shape** likewise over
  its dimensions (as uint64).
* **Map / Dict**: ``h = combine(key_hash, size)``; each entry whose key has an
  *order-independent* hash -- an inline value (no NaN rule), a string, bytes,
  a BigInt, or an object this walk already hashed -- goes into a list sorted
  by that key hash; other entries are left out. Then for each run of equal key
  hashes: a lone entry adds ``combine(h, key)`` and ``combine(h, hash(value))``;
  a tie adds the key hash once and no value, so that the result cannot depend
  on the map's order.
* **Tensor**: ``combine(key_hash, ndim)``, each dimension, the dtype as a
  uint64 (code, bits, lanes in its low bytes), then -- unless
  ``skip_tensor_content`` -- ``bytes_hash`` of the data (CPU, contiguous).
* **Objects**, by kind (:mod:`.structural_rules`): a hash already computed in
  this walk for the same object is reused (any kind). Otherwise
  ``h = key_hash(T)``, then ``h = combine(h, hash(field))`` per field not
  ``SEqHashIgnore``, each in its region -- or the ``__s_hash__`` hook. A free
  variable inside a definition region adds ``combine(h, n)`` where ``n``
  counts the free variables met so far in regions (the 1st, 2nd, ... bound);
  outside one it is hashed by address instead (its fields are still walked,
  so the count stays what upstream's is). A DAG node then adds
  ``combine(h, m)``, ``m`` counting DAG nodes finished so far.

``__s_hash__(obj, init_hash, hash_cb) -> int``: ``hash_cb(value, init, region)``
returns ``combine(init, hash(value))`` with ``region`` in force (0 keeps the
current one); the hook's int result is the object's hash.
"""

from __future__ import annotations

import ctypes
from typing import Dict, List, Optional, Set, Tuple

from tvm_ffi_common import abi

from . import anyvalue, memory, strings
from .container_common import ANY_SIZE
from .dataclass_hash import signed64, type_key_hash
from .dataclass_walk import (
    MAPS,
    SEQUENCES,
    Frame,
    call_hook,
    find_hook,
    hook_int,
    object_view,
    read_field,
    reflected_fields,
    run_frames,
)
from .hashing import MASK64, stable_hash_bytes, stable_hash_combine, stable_hash_small
from .maps import map_items
from .registry import check_failed, check_op_failed
from .sequences import SLOT_FIELDS, seq_slots
from .shapes import shape_dims
from .signatures import typed_function, typed_global
from .slots import FFIError
from .structural_rules import (
    IGNORE,
    KIND,
    REGION,
    S_HASH_ATTR,
    field_region,
    hook_region,
    seq_hash_kind,
)
from .tensor import data_size, is_contiguous, shape_of, tensor_dltensor
from .type_index import TI

OBJECT_BEGIN = TI.kTVMFFIStaticObjectBegin
_QUIET_NAN = 0x7FF8000000000000
_EXPONENT, _MANTISSA = 0x7FF0000000000000, (1 << 52) - 1
#: A value met again inside itself: upstream recurses until its stack overflows.
CYCLE_MESSAGE = "StructuralHash: the value graph has a cycle (a value contains itself)"


def _string_hash(index: int, address: int) -> int:
    """``combine(type, bytes_hash(content))`` of a String or Bytes object."""
    return stable_hash_combine(index, stable_hash_bytes(strings.object_bytes(address)))


def _bigint_hash(index: int, address: int) -> int:
    return stable_hash_combine(index, stable_hash_bytes(ctypes.string_at(
        *strings.bigint_words_view(address))))


def _small_str_hash(length: int, payload: int) -> int:
    # StableHashBytes of at most 8 bytes is those bytes as one little-endian word modulo
    # 2**31 - 1: the payload's first ``length`` bytes (the mask drops any bytes past them).
    return stable_hash_combine(TI.kTVMFFIStr, stable_hash_small(payload & ((1 << 8 * length) - 1)))


def _is_nan(bits: int) -> bool:
    """Whether a float64's bits (as uint64) are a NaN: all exponent bits set, mantissa not 0."""
    return bits & _EXPONENT == _EXPONENT and bits & _MANTISSA != 0


def _scalar_hash(index: int, tag: int, payload: int) -> Optional[int]:
    """The hash of a value that holds no other values, None for the others.

    Taken from a value's three fields, as a slot table holds them (``tag``: the 4 bytes
    after the type index, a small string's length; ``payload``: the last 8 as uint64), so
    that a table read at once needs no ``TVMFFIAny`` per element.
    """
    if index < OBJECT_BEGIN:
        if index == TI.kTVMFFISmallStr:
            return _small_str_hash(tag, payload)
        if index == TI.kTVMFFIFloat and _is_nan(payload):
            return stable_hash_combine(index, _QUIET_NAN)
        return stable_hash_combine(index, payload)
    if index == TI.kTVMFFIBigInt:
        return _bigint_hash(index, payload)
    if index in (TI.kTVMFFIStr, TI.kTVMFFIBytes):
        return _string_hash(index, payload)
    return None


def _fields(value: abi.TVMFFIAny) -> Tuple[int, int, int]:
    """``(type index, tag, payload)`` of a value: what :func:`_scalar_hash` takes."""
    return value.type_index, value.small_str_len, value.v_uint64


class StructuralHasher:
    """One structural hash: the region in force, the memo and the two counters.

    The walk is depth first, as upstream's recursion, but its frames are generators run by
    :func:`run_frames` on an explicit stack: a chain a million objects deep costs heap, not
    Python's recursion limit or the C stack. Leaves (inline values, strings, BigInts) are
    hashed on the spot without a frame. Only a ``__s_hash__`` hook nests a walk (through its
    callback), as it nests C calls upstream.
    """

    def __init__(self, map_free_vars: bool, skip_tensor_content: bool):
        self.region = REGION.kTVMFFIDefRegionKindPattern if map_free_vars \
            else REGION.kTVMFFIDefRegionKindNone
        self.skip_tensor_content = skip_tensor_content
        self.free_vars = 0   # free variables hashed inside a region so far
        self.dag_nodes = 0   # DAG nodes finished so far
        self.memo: Dict[int, int] = {}
        self.held: List[int] = []  # the memoized objects, kept alive (their addresses are keys)
        self.active: Set[int] = set()  # the containers and objects being hashed (a cycle check)
        self.fields: Dict[int, list] = {}  # type index -> its hashed fields (types stay put)
        self.key_hashes: Dict[int, int] = {}  # type index -> its type_key_hash
        self.callback: Optional[int] = None
        self.finished = False

    def close(self) -> None:
        self.finished = True
        for address in self.held:
            memory.dec_ref(address)
        self.held.clear()
        if self.callback is not None:
            memory.dec_ref(self.callback)

    def hash(self, value: abi.TVMFFIAny) -> int:
        """The structural hash of a value (uint64; see the module docstring)."""
        leaf = self.leaf(*_fields(value))
        if leaf is not None:
            return leaf
        return run_frames(self.frame(value.type_index, value.v_ptr), "StructuralHash")

    def leaf(self, index: int, tag: int, payload: int) -> Optional[int]:
        """The hash of a value that needs no frame (None for the others): a scalar, or an
        Array or List of scalars. Taken from the value's three fields (:func:`_fields`), as
        a slot table read at once holds them."""
        if index in SEQUENCES:
            return self.flat_sequence_hash(payload, index)
        return _scalar_hash(index, tag, payload)

    def flat_sequence_hash(self, address: int, index: int) -> Optional[int]:
        """The hash of an Array or List whose elements are all scalars, or None.

        The frame's rule, taken in one loop: such a sequence holds no container, so it
        cannot be part of a cycle and needs no frame (a wide value of small Arrays would
        otherwise cost a frame per Array). The loop stops at the first element that is
        not a scalar; the frame then walks the sequence.
        """
        slots = seq_slots(address)
        result = stable_hash_combine(self.key_hash(index), len(slots) // ANY_SIZE)
        for fields in SLOT_FIELDS.iter_unpack(slots):
            item_hash = _scalar_hash(*fields)
            if item_hash is None:
                return None
            result = stable_hash_combine(result, item_hash)
        return result

    def key_hash(self, type_index: int) -> int:
        """``type_key_hash`` of a type, looked up once per walk."""
        found = self.key_hashes.get(type_index)
        if found is None:
            found = self.key_hashes[type_index] = type_key_hash(type_index)
        return found

    def frame(self, index: int, address: int) -> Frame:
        """The frame hashing a container, shape, tensor or object (type index, address)."""
        if address in self.active:
            raise FFIError("ValueError", CYCLE_MESSAGE)
        self.active.add(address)
        try:
            if index in SEQUENCES:
                slots = seq_slots(address)  # elements as fields: no TVMFFIAny per element
                result = stable_hash_combine(self.key_hash(index), len(slots) // ANY_SIZE)
                for item_index, tag, payload in SLOT_FIELDS.iter_unpack(slots):
                    item_hash = self.leaf(item_index, tag, payload)
                    if item_hash is None:
                        item_hash = yield self.frame(item_index, payload)
                    result = stable_hash_combine(result, item_hash)
                return result
            if index in MAPS:
                return (yield from self.map_frame(address, index))
            if index == TI.kTVMFFIShape:
                dims = shape_dims(address)
                result = stable_hash_combine(type_key_hash(index), len(dims))
                for dim in dims:
                    result = stable_hash_combine(result, dim & MASK64)
                return result
            if index == TI.kTVMFFITensor:
                return self.hash_tensor(address)
            return (yield from self.object_frame(address))
        finally:
            self.active.discard(address)

    def order_independent_hash(self, key: abi.TVMFFIAny) -> Optional[int]:
        """A map key's hash that cannot depend on the order entries are visited in, or None."""
        index, tag, payload = _fields(key)
        if index < OBJECT_BEGIN:
            if index == TI.kTVMFFISmallStr:
                return _small_str_hash(tag, payload)
            return stable_hash_combine(index, payload)
        if index in (TI.kTVMFFIStr, TI.kTVMFFIBytes):
            return _string_hash(index, payload)
        if index == TI.kTVMFFIBigInt:
            return _bigint_hash(index, payload)
        return self.memo.get(payload)

    def map_frame(self, address: int, index: int) -> Frame:
        entries = map_items(address)
        result = stable_hash_combine(type_key_hash(index), len(entries))
        keyed: List[Tuple[int, abi.TVMFFIAny]] = []
        for key, value in entries:
            key_hash = self.order_independent_hash(key)
            if key_hash is not None:
                keyed.append((key_hash, value))
        keyed.sort(key=lambda entry: entry[0])
        i = 0
        while i < len(keyed):
            run_end = i + 1
            while run_end < len(keyed) and keyed[run_end][0] == keyed[i][0]:
                run_end += 1
            result = stable_hash_combine(result, keyed[i][0])
            if run_end == i + 1:
                value = keyed[i][1]
                value_hash = self.leaf(*_fields(value))
                if value_hash is None:
                    value_hash = yield self.frame(value.type_index, value.v_ptr)
                result = stable_hash_combine(result, value_hash)
            i = run_end
        return result

    def hash_tensor(self, address: int) -> int:
        tensor = tensor_dltensor(address)
        result = stable_hash_combine(type_key_hash(TI.kTVMFFITensor), tensor.ndim)
        for extent in shape_of(tensor):
            result = stable_hash_combine(result, extent & MASK64)
        dtype = tensor.dtype
        result = stable_hash_combine(result, dtype.code | dtype.bits << 8 | dtype.lanes << 16)
        if not self.skip_tensor_content:
            if tensor.device.device_type != abi.DLDeviceType.kDLCPU:
                raise check_op_failed("tensor.device().device_type == kDLCPU",
                                      tensor.device.device_type, abi.DLDeviceType.kDLCPU,
                                      "can only hash CPU tensor")
            if not is_contiguous(tensor):
                raise check_failed("tensor.IsContiguous()", "Can only hash contiguous tensor")
            size = data_size(tensor)
            content = ctypes.string_at(tensor.data, size) if size else b""
            result = stable_hash_combine(result, stable_hash_bytes(content))
        return result

    def object_frame(self, address: int) -> Frame:
        type_index = memory.type_index_of(address)
        kind = seq_hash_kind(type_index)
        if address in self.memo:
            return self.memo[address]
        if kind != KIND.kTVMFFISEqHashKindFreeVar:
            result = yield from self.fields_frame(address, type_index)
        else:
            # A free variable: its fields are uses even in a Simple region, and they
            # are walked even when the result is the address (they may count variables).
            region = self.region
            if region == REGION.kTVMFFIDefRegionKindSimple:
                self.region = REGION.kTVMFFIDefRegionKindNone
            try:
                result = yield from self.fields_frame(address, type_index)
            finally:
                self.region = region
            if region != REGION.kTVMFFIDefRegionKindNone:
                result = stable_hash_combine(result, self.free_vars)
                self.free_vars += 1
            else:
                result = address  # std::hash of a pointer is its value
        if kind == KIND.kTVMFFISEqHashKindDAGNode:
            result = stable_hash_combine(result, self.dag_nodes)
            self.dag_nodes += 1
        memory.inc_ref(address)
        self.held.append(address)
        self.memo[address] = result
        return result

    def in_region(self, region: int, value: abi.TVMFFIAny) -> int:
        saved, self.region = self.region, region
        try:
            return self.hash(value)
        finally:
            self.region = saved

    def fields_frame(self, address: int, type_index: int) -> Frame:
        """The type's ``__s_hash__`` hook, or its fields folded into its type key hash."""
        result = type_key_hash(type_index)
        hook = find_hook(S_HASH_ATTR, type_index)
        if hook is not None:
            init = abi.TVMFFIAny()
            strings.store_int(init, signed64(result))
            returned = call_hook(hook, [object_view(address), init,
                                        object_view(self.hook_callback())])
            return hook_int(returned, "int") & MASK64
        fields = self.fields.get(type_index)
        if fields is None:
            fields = self.fields[type_index] = reflected_fields(type_index, IGNORE)
        for field in fields:
            value = read_field(address, field)
            try:
                leaf = self.leaf(*_fields(value))
                if leaf is None:
                    saved = self.region
                    self.region = field_region(field.flags, saved)
                    try:
                        leaf = yield self.frame(value.type_index, value.v_ptr)
                    finally:
                        self.region = saved
                result = stable_hash_combine(result, leaf)
            finally:
                anyvalue.dec_ref_any(value)
        return result

    def hook_callback(self) -> int:
        """``hash_cb(value, init, region) -> int``, made once per hash."""
        if self.callback is None:
            def hash_cb(result, value, init, region):
                if self.finished:
                    raise FFIError("RuntimeError", "a structural hash hook callback was called "
                                                   "after its hash finished")
                inner = self.in_region(hook_region(region, self.region), value)
                strings.store_int(result, signed64(stable_hash_combine(init & MASK64, inner)))

            self.callback = typed_function(["AnyView", "int", "int"], "int", hash_cb)
        return self.callback


def structural_hash(value: abi.TVMFFIAny, map_free_vars: bool = False,
                    skip_tensor_content: bool = False) -> int:
    """The structural hash of ``value`` as uint64 (StructuralKey caches it)."""
    hasher = StructuralHasher(map_free_vars, skip_tensor_content)
    try:
        return hasher.hash(value)
    finally:
        hasher.close()


@typed_global("ffi.StructuralHash", ["Any", "bool", "bool"], "int")
def _structural_hash(result, value, map_free_vars, skip_tensor_content):
    strings.store_int(result, signed64(structural_hash(value, map_free_vars, skip_tensor_content)))

