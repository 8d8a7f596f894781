"""JSON graphs, loading: ``ffi.FromJSONGraph`` and its ``...String`` form; BigInt's hooks.

Its twin in C: ``tvm_ffi_fast/src/json_graph_load.c`` (BigInt's hooks: ``json_graph.c``).

The format and the rules of loading are stated in :mod:`.json_graph`, with what
loading shares with saving. Here :class:`GraphReader` decodes nodes on demand from
the root, each once (so sharing comes back), with upstream's error texts for
malformed graphs.
"""

from __future__ import annotations

import ctypes
import re
from typing import List, Optional, Set

from tvm_ffi_common import abi

from . import anyvalue, memory, strings
from .any_hash import custom_entry
from .dataclass_walk import Frame, reflected_fields, run_frames
from .dtype import parse_dtype_bytes
from .json_graph import (
    ENUM_ATTR,
    FROM_JSON_ATTR,
    TO_JSON_ATTR,
    Owned,
    copy_view,
    is_enum,
    json_hook,
    owned_object,
)
from .json_text import parse
from .maps import dict_from_pairs, map_find, map_from_pairs
from .reflection import ENUM, ENUM_STATE, INT_ENUM
from .reflection_make_object import (
    _call as call_owned,  # the runtime's "call, owned result" helper
    call_setter,
    call_setter_to_default,
    create_empty,
)
from .registry import TYPES, check_failed
from .sequences import array_from_anys, list_from_anys, seq_items
from .shapes import shape_from_ints
from .signatures import type_key_of, typed_function, typed_global
from .slots import FFIError
from .type_index import TI


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
            return owned_object(make(items))
        if type_index in (TI.kTVMFFIMap, TI.kTVMFFIDict):
            return owned_object((yield from self.decode_map(type_index, _as_array(data()))))
        if type_index == TI.kTVMFFIShape:
            return owned_object(shape_from_ints(_as_ints(data())))
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
        if is_enum(type_index, INT_ENUM):
            return _enum_singleton(type_index, self.owned.int(_as_int(data)), str(_as_int(data)))
        if is_enum(type_index, ENUM):
            return _enum_singleton(type_index, data, _as_str(data).decode())
        hook = json_hook(FROM_JSON_ATTR, type_index)
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
        return owned_object(address)

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
            return copy_view(data)
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
    copied = copy_view(value)
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

    for attr, impl in ((TO_JSON_ATTR, to_json), (FROM_JSON_ATTR, from_json)):
        TYPES.register_attr(TI.kTVMFFINone, attr, abi.TVMFFIAny())
        function = typed_function(["AnyView"], "Any", impl)
        TYPES.register_attr(TI.kTVMFFIBigInt, attr,
                            abi.TVMFFIAny(type_index=TI.kTVMFFIFunction, v_ptr=function))
        memory.dec_ref(function)


_DECIMAL = re.compile(rb"[+-]?[0-9]+")
_register_bigint_hooks()
