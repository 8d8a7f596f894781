"""JSON graphs: ``ffi.ToJSONGraph`` / ``ffi.FromJSONGraph`` and their ``...String`` forms.

Its twin in C: ``tvm_ffi_fast/src/json_graph.c``.

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
from .dtype import format_dtype_bytes, parse_dtype_bytes
from .functions import set_object
from .json_text import parse, stringify
from .maps import dict_from_pairs, map_find, map_from_pairs, map_items
from .reflection import ENUM, ENUM_STATE, INT_ENUM
from .reflection_make_object import (
    _call as call_owned,  # the runtime's "call, owned result" helper
    call_setter,
    call_setter_to_default,
    create_empty,
)
from .registry import TYPES, check_failed
from .sequences import array_from_anys, list_from_anys, seq_items
from .shapes import shape_dims, shape_from_ints
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


def _base64_decode(text: bytes) -> bytes:
    """Upstream's lenient decoder: whole quads, unknown characters as 0, ``=`` ends a quad."""
    if text and len(text) % 4:
        raise check_failed("bytes.size % 4 == 0", "invalid base64 encoding")
    table = {c: i for i, c in enumerate(
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")}
    out = bytearray()
    for i in range(0, len(text), 4):
        quad = text[i:i + 4]
        bits = 0
        for c in quad:
            bits = bits << 6 | table.get(c, 0)
        out.append(bits >> 16 & 0xFF)
        if quad[2] != ord("="):
            out.append(bits >> 8 & 0xFF)
        if quad[3] != ord("="):
            out.append(bits & 0xFF)
    return bytes(out)


def _is_enum(type_index: int, base: int) -> bool:
    return type_index >= TI.kTVMFFIStaticObjectBegin and TYPES.is_instance(type_index, base)


def _has_creator(info: abi.TVMFFITypeInfo) -> bool:
    if info.metadata and info.metadata.contents.creator:
        return True
    entry = custom_entry(b"__ffi_new__", info.type_index)
    return entry is not None and entry.type_index == TI.kTVMFFIFunction


def _hook(attr: bytes, type_index: int) -> Optional[int]:
    entry = custom_entry(attr, type_index)
    if entry is None:
        return None
    if entry.type_index != TI.kTVMFFIFunction:
        raise FFIError("TypeError", f"Cannot convert from type `{type_key_of(entry)}` "
                                    "to `ffi.Function`")
    return entry.v_ptr


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
        held = self.owned.keep(_copy(value))  # the table's key keeps the value alive
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
        if _is_enum(index, INT_ENUM):
            return o.int(ctypes.c_int64.from_address(address + 24).value)
        if _is_enum(index, ENUM):
            return abi.TVMFFIAny.from_address(address + 32)
        hook = _hook(TO_JSON_ATTR, index)
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


def _copy(value: abi.TVMFFIAny) -> abi.TVMFFIAny:
    copied = abi.TVMFFIAny()
    anyvalue.copy_any(value, copied)
    return copied


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


# ------------------------------------------------------------------ loading


def _cast_error(value: abi.TVMFFIAny, target: str) -> FFIError:
    return FFIError("TypeError", f"Cannot convert from type `{type_key_of(value)}` to `{target}`")


def _as_int(value: abi.TVMFFIAny) -> int:
    if value.type_index not in (TI.kTVMFFIInt, TI.kTVMFFIBool):
        raise _cast_error(value, "int")
    return value.v_int64


def _as_str(value: abi.TVMFFIAny) -> bytes:
    if value.type_index not in (TI.kTVMFFISmallStr, TI.kTVMFFIStr):
        raise _cast_error(value, "str")
    return strings.view_bytes(value)


def _as_array(value: abi.TVMFFIAny) -> List[abi.TVMFFIAny]:
    if value.type_index != TI.kTVMFFIArray:
        raise _cast_error(value, "Array<Any>")
    return seq_items(value.v_ptr)


def _as_ints(value: abi.TVMFFIAny) -> List[int]:
    """An ``Array<int>``: every element an int (or bool)."""
    items = _as_array(value) if value.type_index == TI.kTVMFFIArray else None
    if items is None:
        raise _cast_error(value, "Array<int>")
    for i, item in enumerate(items):
        if item.type_index not in (TI.kTVMFFIInt, TI.kTVMFFIBool):
            raise FFIError("TypeError", f"Cannot convert from type `Array[index {i}: "
                                        f"{type_key_of(item)}]` to `Array<int>`")
    return [item.v_int64 for item in items]


def _as_map(value: abi.TVMFFIAny) -> int:
    if value.type_index != TI.kTVMFFIMap:
        raise _cast_error(value, "Map<Any, Any>")
    return value.v_ptr


def _member(map_address: int, name: bytes, owned: Owned) -> abi.TVMFFIAny:
    found = map_find(map_address, owned.str(name))
    if found is None:
        raise FFIError("KeyError", "key is not in Map")
    return found


class GraphReader:
    """Rebuilds values from the nodes of a JSON graph, each node once."""

    def __init__(self, graph: abi.TVMFFIAny, owned: Owned):
        self.owned = owned
        if graph.type_index != TI.kTVMFFIMap:
            raise FFIError("ValueError", "Invalid JSON Object Graph, expected an object")
        root = map_find(graph.v_ptr, owned.str(b"root_index"))
        if root is None or root.type_index != TI.kTVMFFIInt:
            raise FFIError("ValueError", "Invalid JSON Object Graph, expected `root_index` "
                                         "integer field")
        nodes = map_find(graph.v_ptr, owned.str(b"nodes"))
        if nodes is None or nodes.type_index != TI.kTVMFFIArray:
            raise FFIError("ValueError", "Invalid JSON Object Graph, expected `nodes` array field")
        self.root = root.v_int64
        self.nodes = seq_items(nodes.v_ptr)
        self.decoded: List[Optional[abi.TVMFFIAny]] = [None] * len(self.nodes)
        self.null_index = -1
        self.decoding: Set[int] = set()  # nodes whose children are being decoded

    def value_of(self, index: int) -> abi.TVMFFIAny:
        """The value of node ``index`` (borrowed from this reader's owned values)."""
        return run_frames(self.value_frame(index), "FromJSONGraph")

    def child(self, index: int) -> Frame:
        """Node ``index``'s value, to ``yield from``: at once when decoded already, else by
        yielding its frame to :func:`run_frames` (so depth costs no recursion)."""
        if 0 <= index < len(self.nodes) and self.decoded[index] is not None:
            return self.decoded[index]
        return (yield self.value_frame(index))

    def value_frame(self, index: int) -> Frame:
        """The frame decoding node ``index`` (children first)."""
        if not 0 <= index < len(self.nodes):
            raise FFIError("ValueError", f"Invalid JSON Object Graph: invalid node index {index}")
        if index == self.null_index:
            return abi.TVMFFIAny()
        if self.decoded[index] is None:
            if index in self.decoding:
                raise FFIError("ValueError", "Invalid JSON Object Graph: node "
                                             f"{index} contains itself (a cycle)")
            self.decoding.add(index)
            value = self.owned.keep((yield from self.decode(_as_map(self.nodes[index]))))
            self.decoding.discard(index)
            self.decoded[index] = value
            if value.type_index == TI.kTVMFFINone:
                self.decoded[index] = None
                self.null_index = index
        return self.decoded[index] if self.decoded[index] is not None else abi.TVMFFIAny()

    def decode(self, node: int) -> Frame:
        """An owned value from a node ``{"type": ..., "data": ...}`` (a frame's part)."""
        o = self.owned
        type_index = TYPES.key_to_index(_as_str(_member(node, b"type", o)))
        data = lambda: _member(node, b"data", o)  # noqa: E731 - read only where needed
        if type_index == TI.kTVMFFINone:
            return abi.TVMFFIAny()
        if type_index in (TI.kTVMFFIBool, TI.kTVMFFIInt, TI.kTVMFFIFloat):
            return _scalar(type_index, data())
        if type_index == TI.kTVMFFIDataType:
            return _dtype(data())
        if type_index == TI.kTVMFFIDevice:
            device = _as_ints(data())
            if len(device) != 2:
                raise FFIError("ValueError", "Invalid JSON Object Graph: Device data must be an "
                               f"array of [device_type, device_id], got {len(device)} element(s)")
            value = abi.TVMFFIAny(type_index=TI.kTVMFFIDevice)
            value.v_device = abi.DLDevice(device[0] & 0xFFFFFFFF, device[1] & 0xFFFFFFFF)
            return value
        if type_index in (TI.kTVMFFIStr, TI.kTVMFFIBytes):
            text = _as_str(data())
            content = text if type_index == TI.kTVMFFIStr else _base64_decode(text)
            value = abi.TVMFFIAny()
            strings.store_str_or_bytes(value, content, is_str=type_index == TI.kTVMFFIStr)
            return value
        if type_index in (TI.kTVMFFIArray, TI.kTVMFFIList):
            items = []
            for i in _as_array(data()):
                items.append((yield from self.child(_as_int(i))))
            make = array_from_anys if type_index == TI.kTVMFFIArray else list_from_anys
            return _owned_object(make(items))
        if type_index in (TI.kTVMFFIMap, TI.kTVMFFIDict):
            return _owned_object((yield from self.decode_map(type_index, _as_array(data()))))
        if type_index == TI.kTVMFFIShape:
            return _owned_object(shape_from_ints(_as_ints(data())))
        return (yield from self.decode_object(type_index, data()))

    def decode_map(self, type_index: int, indices: List[abi.TVMFFIAny]) -> Frame:
        if len(indices) % 2:
            raise FFIError("ValueError", "Invalid JSON Object Graph: Map/Dict data must contain "
                           f"an even number of [key, value] entries, got {len(indices)}")
        pairs = []
        for i in range(0, len(indices), 2):
            key_index, value_index = _as_int(indices[i]), _as_int(indices[i + 1])
            key = yield from self.child(key_index)
            pairs.append((key, (yield from self.child(value_index))))
        return (map_from_pairs if type_index == TI.kTVMFFIMap else dict_from_pairs)(pairs)

    def decode_object(self, type_index: int, data: abi.TVMFFIAny) -> Frame:
        if _is_enum(type_index, INT_ENUM):
            return _enum_singleton(type_index, self.owned.int(_as_int(data)), str(_as_int(data)))
        if _is_enum(type_index, ENUM):
            return _enum_singleton(type_index, data, _as_str(data).decode())
        hook = _hook(FROM_JSON_ATTR, type_index)
        if hook is not None:
            return call_owned(hook, [data])
        info = TYPES.entry(type_index).info
        address = create_empty(info)
        try:
            fields = _as_map(data)
            for field in reflected_fields(type_index, 0):
                name = ctypes.string_at(field.name.data, field.name.size)
                given = map_find(fields, self.owned.str(name))
                if given is not None:
                    value = yield from self.field_value(field.field_static_type_index, given)
                    call_setter(field, address + field.offset, value)
                elif field.flags & abi.TVMFFIFieldFlagBitMask.kTVMFFIFieldFlagBitMaskHasDefault:
                    call_setter_to_default(field, address + field.offset)
                else:
                    raise FFIError("TypeError", f"Required field `{name.decode()}` not set in "
                                                f"type `{TYPES.type_key(type_index)}`")
        except BaseException:
            memory.dec_ref(address)
            raise
        return _owned_object(address)

    def field_value(self, static: int, data: abi.TVMFFIAny) -> Frame:
        """A field's value from its data: inline for None/bool/int/float/DataType fields."""
        if static == TI.kTVMFFINone:
            return abi.TVMFFIAny()
        if static in (TI.kTVMFFIBool, TI.kTVMFFIInt, TI.kTVMFFIFloat):
            return _scalar(static, data)
        if static == TI.kTVMFFIDataType:
            return _dtype(data)
        return (yield from self.child(_as_int(data)))


def _scalar(type_index: int, data: abi.TVMFFIAny) -> abi.TVMFFIAny:
    """``data`` cast to bool / int / float, as C++'s ``cast<T>`` converts."""
    if type_index == TI.kTVMFFIFloat:
        if data.type_index == TI.kTVMFFIFloat:
            return _copy(data)
        return abi.TVMFFIAny(type_index=TI.kTVMFFIFloat, v_float64=float(_as_int_for(data, "float")))
    number = _as_int_for(data, "bool" if type_index == TI.kTVMFFIBool else "int")
    if type_index == TI.kTVMFFIBool:
        return abi.TVMFFIAny(type_index=TI.kTVMFFIBool, v_int64=int(number != 0))
    value = abi.TVMFFIAny()
    strings.store_int(value, number)
    return value


def _as_int_for(data: abi.TVMFFIAny, target: str) -> int:
    if data.type_index not in (TI.kTVMFFIInt, TI.kTVMFFIBool):
        raise _cast_error(data, target)
    return data.v_int64


def _dtype(data: abi.TVMFFIAny) -> abi.TVMFFIAny:
    code, bits, lanes = parse_dtype_bytes(_as_str(data))
    value = abi.TVMFFIAny(type_index=TI.kTVMFFIDataType)
    value.v_dtype = abi.DLDataType(code, bits, lanes)
    return value


def _owned_object(address: int) -> abi.TVMFFIAny:
    value = abi.TVMFFIAny(type_index=memory.type_index_of(address))
    value.v_ptr = address
    return value


def _enum_singleton(type_index: int, index: abi.TVMFFIAny, shown: str) -> abi.TVMFFIAny:
    """The registered enum singleton of ``type_index`` with ``index`` (owned)."""
    state = custom_entry(ENUM_ATTR, type_index)
    if state is not None and state.type_index == ENUM_STATE:
        indexes = ctypes.c_void_p.from_address(state.v_ptr + 32).value
        found = map_find(indexes, index) if indexes else None
        if found is not None:
            return _copy_owned(found)
    raise FFIError("ValueError", f"Enum `{TYPES.type_key(type_index)}` has no instance with "
                                 f"index {shown}")


def _copy_owned(value: abi.TVMFFIAny) -> abi.TVMFFIAny:
    copied = _copy(value)
    anyvalue.inc_ref_any(copied)
    return copied


def from_json_graph(graph: abi.TVMFFIAny) -> abi.TVMFFIAny:
    """The value a JSON graph describes (owned; see the module docstring)."""
    owned = Owned()
    try:
        reader = GraphReader(graph, owned)
        return _copy_owned(reader.value_of(reader.root))
    finally:
        owned.release()


# ------------------------------------------------------------------ globals


@typed_global("ffi.ToJSONGraph", ["Any", "Any"], "Any")
def _to_json_graph(result, value, metadata):
    set_object(result, to_json_graph(value, metadata))


@typed_global("ffi.ToJSONGraphString", ["Any", "Any"], "str")
def _to_json_graph_string(result, value, metadata):
    graph = _owned_object(to_json_graph(value, metadata))
    try:
        strings.store_str_or_bytes(result, stringify(graph), is_str=True)
    finally:
        anyvalue.dec_ref_any(graph)


@typed_global("ffi.FromJSONGraph", ["Any"], "Any")
def _from_json_graph(result, graph):
    anyvalue.copy_any(from_json_graph(graph), result)


@typed_global("ffi.FromJSONGraphString", ["str"], "Any")
def _from_json_graph_string(result, text):
    graph = parse(strings.view_bytes(text))
    try:
        anyvalue.copy_any(from_json_graph(graph), result)
    finally:
        anyvalue.dec_ref_any(graph)


def _register_bigint_hooks() -> None:
    """BigInt saves as decimal text, as upstream's library registers it."""
    def to_json(result, value):
        strings.store_str_or_bytes(result, str(strings.words_to_int(
            strings.bigint_words(value))).encode(), is_str=True)

    def from_json(result, value):
        text = _as_str(value)
        if not _DECIMAL.fullmatch(text):
            raise FFIError("ValueError", "Invalid decimal string for ffi.BigInt")
        strings.store_int(result, int(text))

    from .signatures import typed_function
    for attr, impl in ((TO_JSON_ATTR, to_json), (FROM_JSON_ATTR, from_json)):
        TYPES.register_attr(TI.kTVMFFINone, attr, abi.TVMFFIAny())
        function = typed_function(["AnyView"], "Any", impl)
        TYPES.register_attr(TI.kTVMFFIBigInt, attr,
                            abi.TVMFFIAny(type_index=TI.kTVMFFIFunction, v_ptr=function))
        memory.dec_ref(function)


_DECIMAL = __import__("re").compile(rb"[+-]?[0-9]+")
_register_bigint_hooks()
