"""JSON graphs: the format, saving (``ffi.ToJSONGraph`` and its ``...String`` form).

Its twin in C: ``tvm_ffi_fast/src/json_graph.c`` (and ``json_graph_save.c``).

Loading, ``ffi.FromJSONGraph`` and its ``...String`` form, and BigInt's two hooks are
:mod:`.json_graph_load`; what saving and loading share (the hook lookup, :class:`Owned`)
is here.

A value graph saved as JSON that keeps sharing. ``ToJSONGraph(value,
metadata)`` returns the JSON value (a Map) ``{"root_index": i, "nodes": [...],
"metadata": metadata}`` (``metadata`` only when given); ``ToJSONGraphString``
is its text (``ffi.json.Stringify``, compact). Each distinct value -- equal by
AnyEqual, so equal strings and equal ints share a node, ``1`` and ``1.0`` and
``True`` do not -- becomes one node ``{"type": K, "data": D}``, appended once
its children are, so children come first and the root last:

=====================  ===================  ==================================================
value                  ``type``             ``data``
=====================  ===================  ==================================================
None                   ``"None"``           (no data)
bool, int, float       ``"bool"`` ...       the value
dtype                  ``"DataType"``       its string, ``"float32"``
device                 ``"Device"``         ``[device_type, device_id]``
str / bytes            ``"ffi.String"`` /   the text / base64 of the bytes
                       ``"ffi.Bytes"``
Array, List            ``"ffi.Array"`` ...  the element node indices
Map, Dict              ``"ffi.Map"`` ...    key, value, key, value, ... node indices
Shape                  ``"ffi.Shape"``      the dimensions
IntEnum / Enum         its type key         its int index / its string index
other objects          its type key         its ``__data_to_json__`` hook's result, else
                                            ``{field: ...}`` for every reflected field:
                                            fields declared None/bool/int/float/DataType are
                                            inline, others node indices
=====================  ===================  ==================================================

An object type needs a creator (or ``__ffi_new__``) to be saved. A List or
Dict that contains itself cannot be saved (``ValueError``). BigInt saves as
its decimal text (its ``__data_to_json__``).

``FromJSONGraph(json)`` / ``FromJSONGraphString(text)`` rebuild the value:
nodes decoded once each (sharing restored), objects made empty through their
creator and filled field by field through the setters (a missing field takes
its default, or is a ``TypeError``), enums looked up among their registered
singletons, ``__data_from_json__`` hooks called with the node's data. Bad
input is a ``ValueError`` (or the ``TypeError`` of a wrong value type).
"""

from __future__ import annotations

import base64
import builtins
import ctypes
from typing import Dict, List, Optional, Set

from tvm_ffi_common import abi

from . import anyvalue, memory, strings
from .any_hash import any_equal, any_hash, custom_entry
from .dataclass_walk import Frame, object_view, read_field, reflected_fields, run_frames
from .dtype import format_dtype_bytes
from .functions import set_object
from .json_text import stringify
from .maps import map_from_pairs, map_items
from .reflection import ENUM, INT_ENUM
from .reflection_make_object import _call as call_owned  # the runtime's "call, owned result" helper
from .registry import TYPES
from .sequences import array_from_anys, seq_items
from .shapes import shape_dims
from .signatures import type_key_of, typed_global
from .slots import FFIError
from .type_index import TI

TO_JSON_ATTR = b"__data_to_json__"
FROM_JSON_ATTR = b"__data_from_json__"
ENUM_ATTR = b"__ffi_enum__"
_INLINE_FIELDS = (TI.kTVMFFINone, TI.kTVMFFIBool, TI.kTVMFFIInt, TI.kTVMFFIFloat,
                  TI.kTVMFFIDataType)


class Owned:
    """Owned TVMFFIAny values made while building, released together."""

    def __init__(self) -> None:
        self.values: List[abi.TVMFFIAny] = []

    def keep(self, value: abi.TVMFFIAny) -> abi.TVMFFIAny:
        self.values.append(value)
        return value

    def int(self, number: int) -> abi.TVMFFIAny:
        value = abi.TVMFFIAny()
        strings.store_int(value, number)
        return value

    def float(self, number: float) -> abi.TVMFFIAny:
        return abi.TVMFFIAny(type_index=TI.kTVMFFIFloat, v_float64=number)

    def bool(self, truth: bool) -> abi.TVMFFIAny:
        return abi.TVMFFIAny(type_index=TI.kTVMFFIBool, v_int64=int(truth))

    def str(self, text: bytes) -> abi.TVMFFIAny:
        value = abi.TVMFFIAny()
        strings.store_str_or_bytes(value, text, is_str=True)
        return self.keep(value)

    def object(self, address: builtins.int) -> abi.TVMFFIAny:  # (``int`` is the method above)
        return self.keep(object_view(address))

    def release(self) -> None:
        for value in self.values:
            anyvalue.dec_ref_any(value)
        self.values.clear()


class _Key:
    """A value as a dict key under AnyHash / AnyEqual (the node table's key rule)."""

    __slots__ = ("value", "hash")

    def __init__(self, value: abi.TVMFFIAny):
        self.value = value
        self.hash = any_hash(value)

    def __hash__(self) -> int:
        return self.hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Key) and any_equal(self.value, other.value)


def is_enum(type_index: int, base: int) -> bool:
    """Whether ``type_index`` is an object type deriving from the enum base ``base``."""
    return type_index >= TI.kTVMFFIStaticObjectBegin and TYPES.is_instance(type_index, base)


def _has_creator(info: abi.TVMFFITypeInfo) -> bool:
    if info.metadata and info.metadata.contents.creator:
        return True
    entry = custom_entry(b"__ffi_new__", info.type_index)
    return entry is not None and entry.type_index == TI.kTVMFFIFunction


def json_hook(attr: bytes, type_index: int) -> Optional[int]:
    """The Function of the ``__data_to_json__``/``__data_from_json__`` column ``attr`` for
    ``type_index``, if it has one (TypeError when the column holds something else)."""
    entry = custom_entry(attr, type_index)
    if entry is None:
        return None
    if entry.type_index != TI.kTVMFFIFunction:
        raise FFIError("TypeError", f"Cannot convert from type `{type_key_of(entry)}` "
                                    "to `ffi.Function`")
    return entry.v_ptr


def owned_object(address: int) -> abi.TVMFFIAny:
    """An owned object address as a ``TVMFFIAny`` (it takes over the reference)."""
    value = abi.TVMFFIAny(type_index=memory.type_index_of(address))
    value.v_ptr = address
    return value


def copy_view(value: abi.TVMFFIAny) -> abi.TVMFFIAny:
    """A 16-byte copy of ``value`` holding no reference of its own."""
    copied = abi.TVMFFIAny()
    anyvalue.copy_any(value, copied)
    return copied


# ------------------------------------------------------------------ saving


class GraphWriter:
    """Turns a value graph into nodes (JSON values), one per distinct value."""

    def __init__(self, owned: Owned):
        self.owned = owned
        self.nodes: List[abi.TVMFFIAny] = []  # each an owned Map
        self.index: Dict[_Key, int] = {}
        self.active: Set[int] = set()  # Lists and Dicts being saved

    def node_of(self, value: abi.TVMFFIAny) -> int:
        """The node index of ``value``, saving it (and its children first) if new."""
        return run_frames(self.node_frame(value), "ToJSONGraph")

    def child(self, value: abi.TVMFFIAny) -> Frame:
        """A child's node index, to ``yield from``: at once when it was saved already, else
        by yielding its frame to :func:`run_frames` (so depth costs no recursion)."""
        known = self.index.get(_Key(value))
        if known is None:
            known = yield self.node_frame(value)
        return known

    def node_frame(self, value: abi.TVMFFIAny) -> Frame:
        """The frame saving ``value``'s node (children first); returns its index."""
        key = _Key(value)
        if key in self.index:
            return self.index[key]
        pairs = yield from self.describe(value)
        node = self.owned.object(map_from_pairs(pairs))
        self.nodes.append(node)
        held = self.owned.keep(copy_view(value))  # the table's key keeps the value alive
        anyvalue.inc_ref_any(held)
        self.index[_Key(held)] = len(self.nodes) - 1
        return len(self.nodes) - 1

    def describe(self, value: abi.TVMFFIAny) -> Frame:
        """The ``type`` and ``data`` pairs of a value's node (a frame's part)."""
        o, index = self.owned, value.type_index
        type_key = TYPES.type_key(index).encode()
        if index in (TI.kTVMFFISmallStr, TI.kTVMFFIStr):
            return [(o.str(b"type"), o.str(b"ffi.String")),
                    (o.str(b"data"), o.str(strings.view_bytes(value)))]
        if index in (TI.kTVMFFISmallBytes, TI.kTVMFFIBytes):
            encoded = base64.b64encode(strings.view_bytes(value))
            return [(o.str(b"type"), o.str(b"ffi.Bytes")), (o.str(b"data"), o.str(encoded))]
        pair = [(o.str(b"type"), o.str(type_key))]
        if index == TI.kTVMFFINone:
            return pair
        if index in (TI.kTVMFFIBool, TI.kTVMFFIInt, TI.kTVMFFIFloat):
            return pair + [(o.str(b"data"), value)]
        if index == TI.kTVMFFIDataType:
            dtype = value.v_dtype
            text = format_dtype_bytes(dtype.code, dtype.bits, dtype.lanes)
            return pair + [(o.str(b"data"), o.str(text))]
        if index == TI.kTVMFFIDevice:
            device = [o.int(value.v_device.device_type), o.int(value.v_device.device_id)]
            return pair + [(o.str(b"data"), o.object(array_from_anys(device)))]
        if index < TI.kTVMFFIStaticObjectBegin:
            raise FFIError("RuntimeError", f"Cannot serialize type `{type_key.decode()}`")
        return pair + [(o.str(b"data"), (yield from self.object_data(value)))]

    def object_data(self, value: abi.TVMFFIAny) -> Frame:
        o, index, address = self.owned, value.type_index, value.v_ptr
        if index in (TI.kTVMFFIArray, TI.kTVMFFIList):
            items = seq_items(address)
            return (yield from self.guarded(address, index == TI.kTVMFFIList, "List", items))
        if index in (TI.kTVMFFIMap, TI.kTVMFFIDict):
            items = [item for pair in map_items(address) for item in pair]
            return (yield from self.guarded(address, index == TI.kTVMFFIDict, "Dict", items))
        if index == TI.kTVMFFIShape:
            return o.object(array_from_anys([o.int(d) for d in shape_dims(address)]))
        if is_enum(index, INT_ENUM):
            return o.int(ctypes.c_int64.from_address(address + 24).value)
        if is_enum(index, ENUM):
            return abi.TVMFFIAny.from_address(address + 32)
        hook = json_hook(TO_JSON_ATTR, index)
        if hook is not None:
            return o.keep(call_owned(hook, [value]))
        info = TYPES.entry(index).info
        if not _has_creator(info):
            raise FFIError("TypeError", f"Type `{TYPES.type_key(index)}` does not support "
                                        "ToJSONGraph (no native creator or __ffi_new__ type attr)")
        fields = []
        for field in reflected_fields(index, 0):
            name = ctypes.string_at(field.name.data, field.name.size)
            field_value = o.keep(read_field(address, field))
            static = field.field_static_type_index
            if static in _INLINE_FIELDS:
                data = self.inline(static, field_value)
            else:
                data = o.int((yield from self.child(field_value)))
            fields.append((o.str(name), data))
        return o.object(map_from_pairs(fields))

    def inline(self, static: int, value: abi.TVMFFIAny) -> abi.TVMFFIAny:
        """A field declared None/bool/int/float/DataType, written into the object's data."""
        o = self.owned
        if static == TI.kTVMFFINone:
            return abi.TVMFFIAny()
        if static == TI.kTVMFFIBool:
            return o.bool(bool(value.v_int64))
        if static == TI.kTVMFFIInt:
            return o.int(value.v_int64)
        if static == TI.kTVMFFIFloat:
            return o.float(value.v_float64)
        dtype = value.v_dtype
        return o.str(format_dtype_bytes(dtype.code, dtype.bits, dtype.lanes))

    def guarded(self, address: int, mutable: bool, what: str,
                children: List[abi.TVMFFIAny]) -> Frame:
        """The node indices of ``children``, as an Array; a List/Dict may not contain itself."""
        if mutable:
            if address in self.active:
                raise FFIError("ValueError", "Cycle detected during serialization: "
                                             f"a {what} contains itself")
            self.active.add(address)
        indices = []
        for item in children:
            indices.append(self.owned.int((yield from self.child(item))))
        self.active.discard(address)
        return self.owned.object(array_from_anys(indices))


def to_json_graph(value: abi.TVMFFIAny, metadata: abi.TVMFFIAny) -> int:
    """The JSON graph (an owned Map) of ``value`` (see the module docstring)."""
    owned = Owned()
    try:
        writer = GraphWriter(owned)
        root = writer.node_of(value)
        pairs = [(owned.str(b"root_index"), owned.int(root)),
                 (owned.str(b"nodes"), owned.object(array_from_anys(writer.nodes)))]
        if metadata.type_index != TI.kTVMFFINone:
            pairs.append((owned.str(b"metadata"), metadata))
        return map_from_pairs(pairs)
    finally:
        owned.release()


# ------------------------------------------------------------------ globals


@typed_global("ffi.ToJSONGraph", ["Any", "Any"], "Any")
def _to_json_graph(result, value, metadata):
    set_object(result, to_json_graph(value, metadata))


@typed_global("ffi.ToJSONGraphString", ["Any", "Any"], "str")
def _to_json_graph_string(result, value, metadata):
    graph = owned_object(to_json_graph(value, metadata))
    try:
        strings.store_str_or_bytes(result, stringify(graph), is_str=True)
    finally:
        anyvalue.dec_ref_any(graph)
