"""C++ views of reflected object types: ``gen_abi_cpp("my.*")`` -> a header.

For each selected object type (and its dynamic ancestors) the header declares
a struct deriving from its parent's, with one member per reflected field, of a
C++ type whose size and alignment match the field's (``int64_t``,
``::tvm::ffi::String``, ``::tvm::ffi::Array<...>``, ``Arc<OtherObj>``, ...), and
static assertions that C++ places every member at the reflected offset. The
structs only *look up* their type index (``TVM_FFI_DECLARE_OBJECT_INFO_LOOKUP``):
C++ code compiled with the header reads objects Python or another library
made, without registering anything.

Type keys map to namespaces and a struct name: ``a.b.Node`` is
``::a::b::NodeObj``; a part that is not a C identifier becomes
``__ffi_escape_<utf-8 hex>``. The text is deterministic (sorted by namespace,
name and key).
"""

from __future__ import annotations

import fnmatch
import json
import re
from dataclasses import dataclass
from itertools import groupby
from typing import Dict, Iterable, List, Optional, Sequence, Tuple, Union

from ..registry import get_registered_type_keys
from ..type_records import TypeField, TypeInfo
from ..type_registry import _lookup_or_register_type_info_from_type_key, _object_type_key_to_index
from ..type_schema import TypeSchema

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_ESCAPE = "__ffi_escape_"
_OBJECT_INDEX = 64
_FIRST_DYNAMIC_INDEX = 128
_ARC_OBJECT = "::tvm::ffi::Arc<::tvm::ffi::Object>"


@dataclass(frozen=True)
class _Carrier:
    """The C++ type of a member, with its size and alignment."""

    cpp_type: str
    size: int
    alignment: int


@dataclass(frozen=True)
class _Builtin:
    """A built-in object type: its C++ object class and owning value type (if any)."""

    object_type: str
    value_type: Optional[str]
    size: int
    alignment: int


#: Carriers of fields known only by static type index (no type schema).
_STATIC_CARRIERS = {
    -1: _Carrier("::tvm::ffi::Any", 16, 8), 1: _Carrier("int64_t", 8, 8),
    2: _Carrier("bool", 1, 1), 3: _Carrier("double", 8, 8), 4: _Carrier("void*", 8, 8),
    5: _Carrier("DLDataType", 4, 2), 6: _Carrier("DLDevice", 8, 4),
}

#: Carriers of scalar origins.
_SCALAR_CARRIERS = {
    "int": _Carrier("int64_t", 8, 8), "float": _Carrier("double", 8, 8),
    "bool": _Carrier("bool", 1, 1), "ctypes.c_void_p": _Carrier("void*", 8, 8),
    "dtype": _Carrier("DLDataType", 4, 2), "DataType": _Carrier("DLDataType", 4, 2),
    "Device": _Carrier("DLDevice", 8, 4), "Any": _Carrier("::tvm::ffi::Any", 16, 8),
    "str": _Carrier("::tvm::ffi::String", 16, 8), "bytes": _Carrier("::tvm::ffi::Bytes", 16, 8),
    "Callable": _Carrier("::tvm::ffi::Function", 8, 8),
    "Tensor": _Carrier("::tvm::ffi::Tensor", 8, 8),
}

_CONTAINERS = {"Array": "::tvm::ffi::Array", "List": "::tvm::ffi::List",
               "Map": "::tvm::ffi::Map", "Dict": "::tvm::ffi::Dict",
               "tuple": "::tvm::ffi::Tuple"}

#: The raw (unfolded) schema spellings that store each folded origin natively.
_NATIVE_SPELLINGS = {
    "int": {"int"}, "float": {"float"}, "bool": {"bool"}, "ctypes.c_void_p": {"void*"},
    "dtype": {"DataType"}, "DataType": {"DataType"}, "Device": {"Device"}, "Any": {"Any"},
    "str": {"ffi.String", "ffi.SmallStr"}, "bytes": {"ffi.Bytes", "ffi.SmallBytes"},
    "Callable": {"ffi.Function"}, "Tensor": {"ffi.Tensor"},
}
_STRUCTURAL_SPELLINGS = {"Array": "ffi.Array", "List": "ffi.List", "Map": "ffi.Map",
                         "Dict": "ffi.Dict", "tuple": "Tuple", "Optional": "Optional",
                         "Union": "Variant"}

_BUILTINS = {
    "ffi.Object": _Builtin("::tvm::ffi::Object", None, 8, 8),
    "ffi.String": _Builtin("::tvm::ffi::detail::StringObj", "::tvm::ffi::String", 16, 8),
    "ffi.Bytes": _Builtin("::tvm::ffi::detail::BytesObj", "::tvm::ffi::Bytes", 16, 8),
    "ffi.Error": _Builtin("::tvm::ffi::ErrorObj", "::tvm::ffi::Error", 16, 8),
    "ffi.Function": _Builtin("::tvm::ffi::FunctionObj", "::tvm::ffi::Function", 8, 8),
    "ffi.Shape": _Builtin("::tvm::ffi::ShapeObj", "::tvm::ffi::Shape", 8, 8),
    "ffi.Tensor": _Builtin("::tvm::ffi::TensorObj", "::tvm::ffi::Tensor", 8, 8),
    "ffi.Array": _Builtin("::tvm::ffi::ArrayObj", "::tvm::ffi::Array<::tvm::ffi::Any>", 8, 8),
    "ffi.Map": _Builtin("::tvm::ffi::MapObj",
                        "::tvm::ffi::Map<::tvm::ffi::Any, ::tvm::ffi::Any>", 8, 8),
    "ffi.Module": _Builtin("::tvm::ffi::ModuleObj",
                           "::tvm::ffi::ObjectPtr<::tvm::ffi::ModuleObj>", 8, 8),
    # ffi.OpaquePyObject has no C++ owning wrapper.
    "ffi.List": _Builtin("::tvm::ffi::ListObj", "::tvm::ffi::List<::tvm::ffi::Any>", 8, 8),
    "ffi.Dict": _Builtin("::tvm::ffi::DictObj",
                         "::tvm::ffi::Dict<::tvm::ffi::Any, ::tvm::ffi::Any>", 8, 8),
    "ffi.VisitInterrupt": _Builtin("::tvm::ffi::VisitInterruptObj",
                                   "::tvm::ffi::ObjectPtr<::tvm::ffi::VisitInterruptObj>", 8, 8),
}


def _builtins_by_index() -> Dict[int, _Builtin]:
    found = {}
    for key, builtin in _BUILTINS.items():
        index = _object_type_key_to_index(key)
        if index is not None:
            found[index] = builtin
    return found


# ------------------------------------------------------------------- names


def _cpp_identifier(text: str) -> str:
    if _IDENTIFIER.fullmatch(text) and not text.startswith(_ESCAPE):
        return text
    return _ESCAPE + text.encode("utf-8").hex()


def _cpp_string_literal(text: str) -> str:
    """A C++ string literal of ``text``'s UTF-8 bytes (octal escapes outside printable ASCII)."""
    out = []
    for byte in text.encode("utf-8"):
        if byte in (0x22, 0x5C):  # '"' and '\\'
            out.append("\\" + chr(byte))
        elif 0x20 <= byte <= 0x7E:
            out.append(chr(byte))
        else:
            out.append(f"\\{byte:03o}")
    return '"' + "".join(out) + '"'


def _namespaces_and_name(type_key: str) -> Tuple[Tuple[str, ...], str]:
    *namespaces, last = type_key.split(".")
    return tuple(_cpp_identifier(n) for n in namespaces), _cpp_identifier(last) + "Obj"


def _qualified(type_key: str) -> str:
    namespaces, name = _namespaces_and_name(type_key)
    return "::" + "::".join((*namespaces, name))


def _lineage(info: TypeInfo) -> List[TypeInfo]:
    chain = []
    while info is not None:
        chain.append(info)
        info = info.parent_type_info
    return chain[::-1]


def _in_namespaces(blocks: Iterable[Tuple[Tuple[str, ...], List[str]]]) -> List[str]:
    """Lines of ``(namespaces, lines)`` blocks, consecutive blocks of a namespace sharing it."""
    lines: List[str] = []
    for namespaces, group in groupby(blocks, key=lambda block: block[0]):
        if lines:
            lines.append("")
        body: List[str] = []
        for _, block in group:
            if body:
                body.append("")
            body += block
        lines += [f"namespace {n} {{" for n in namespaces]
        lines += [""] * bool(namespaces) + body + [""] * bool(namespaces)
        lines += [f"}}  // namespace {n}" for n in reversed(namespaces)]
    return lines + [""] if lines else lines


# ---------------------------------------------------------------- selection


def _select_type_infos(type_keys: Union[str, Sequence[str]]) -> List[TypeInfo]:
    """The infos of the selected object types and their dynamic ancestors, parents first."""
    registered = sorted({str(key) for key in get_registered_type_keys()})
    selected = set()
    for selector in [type_keys] if isinstance(type_keys, str) else type_keys:
        matches = [key for key in registered if fnmatch.fnmatchcase(key, selector)]
        if not matches:
            raise ValueError(f"Type-key selector {selector!r} did not match any registered type")
        objects = [key for key in matches
                   if _lookup_or_register_type_info_from_type_key(key).type_index >= _OBJECT_INDEX]
        if not objects:
            raise ValueError(f"Type-key selector {selector!r} did not match any registered "
                             "object type")
        selected.update(objects)
    builtins = _builtins_by_index()
    closure: Dict[int, TypeInfo] = {}
    for key in sorted(selected):
        info = _lookup_or_register_type_info_from_type_key(key)
        if info.type_index < _FIRST_DYNAMIC_INDEX:
            if info.type_index not in builtins:
                raise ValueError(f"Static TVM-FFI type {info.type_key!r} is not supported")
            continue
        closure.update({a.type_index: a for a in _lineage(info)
                        if a.type_index >= _FIRST_DYNAMIC_INDEX})
    return sorted(closure.values(), key=lambda i: (len(i.type_ancestors), i.type_key))


def _check_native_schema(schema: TypeSchema, raw: dict) -> None:
    """Refuses a native field whose raw spelling folds to ``schema`` but stores other bytes."""
    origin, spelled = schema.origin, raw["type"]
    if origin in _NATIVE_SPELLINGS:
        if spelled not in _NATIVE_SPELLINGS[origin]:
            raise ValueError(f"native schema origin {spelled!r} normalizes to {origin!r} but "
                             "does not have the canonical owning representation")
        return
    if origin in _STRUCTURAL_SPELLINGS:
        expected = _STRUCTURAL_SPELLINGS[origin]
        if spelled != expected:
            raise ValueError(f"native schema origin {spelled!r} normalizes to {origin!r} but is "
                             f"not the canonical {expected!r} carrier")
        raw_args = raw.get("args", ())
        if not isinstance(raw_args, list) or len(raw_args) != len(schema.args):
            raise ValueError(f"raw schema {raw!r} does not match normalized schema {schema!r}")
        for arg, raw_arg in zip(schema.args, raw_args):
            if not isinstance(raw_arg, dict) or not isinstance(raw_arg.get("type"), str):
                raise ValueError(f"invalid nested raw schema {raw_arg!r}")
            _check_native_schema(arg, raw_arg)
        return
    if schema.origin_type_index >= _OBJECT_INDEX:
        expected = "ffi.Object" if origin == "Object" else origin
        if spelled != expected:
            raise ValueError(f"native object schema origin {spelled!r} does not match "
                             f"{expected!r}")
        return
    raise ValueError(f"unsupported native raw schema {raw!r}")


# ----------------------------------------------------------------- lowering


@dataclass(frozen=True)
class _Member:
    reflected_name: str
    member_name: str
    carrier: _Carrier
    offset: int


@dataclass(frozen=True)
class _Struct:
    info: TypeInfo
    namespaces: Tuple[str, ...]
    name: str
    base: str
    alignment: int
    total_size: int
    members: Tuple[_Member, ...]


class _Generator:
    """Builds the header for the given type infos (see :func:`gen_abi_cpp`)."""

    def __init__(self, emitted_infos: List[TypeInfo]) -> None:
        self.emitted_infos = emitted_infos
        self.builtins = _builtins_by_index()
        #: Every dynamic type the header names (declared; defined when emitted).
        self.dependencies: Dict[int, TypeInfo] = {i.type_index: i for i in emitted_infos}

    def _dynamic_object_type(self, schema: TypeSchema) -> str:
        if schema.origin_type_index < _FIRST_DYNAMIC_INDEX:
            raise ValueError(f"Schema {schema!r} is not a registered object type")
        info = _lookup_or_register_type_info_from_type_key(schema.origin)
        self.dependencies[info.type_index] = info
        return _qualified(info.type_key)

    def _object_class(self, schema: TypeSchema) -> str:
        if schema.origin_type_index == _OBJECT_INDEX or schema.origin == "Object":
            return "::tvm::ffi::Object"
        builtin = self.builtins.get(schema.origin_type_index)
        return builtin.object_type if builtin is not None else self._dynamic_object_type(schema)

    def _object(self, schema: TypeSchema) -> _Carrier:
        """A non-null reference to an object of ``schema``'s type."""
        if schema.origin_type_index == _OBJECT_INDEX or schema.origin == "Object":
            return _Carrier(_ARC_OBJECT, 8, 8)
        builtin = self.builtins.get(schema.origin_type_index)
        if builtin is None:
            return _Carrier(f"::tvm::ffi::Arc<{self._dynamic_object_type(schema)}>", 8, 8)
        if builtin.value_type is None:
            raise ValueError(f"Static TVM-FFI type {schema.origin!r} has no supported C++ "
                             "value wrapper")
        if builtin.value_type.startswith("::tvm::ffi::ObjectPtr<"):
            return _Carrier(f"::tvm::ffi::Arc<{builtin.object_type}>", 8, 8)
        return _Carrier(builtin.value_type, builtin.size, builtin.alignment)

    def _nullable_object(self, schema: TypeSchema) -> _Carrier:
        return _Carrier(f"::tvm::ffi::ObjectPtr<{self._object_class(schema)}>", 8, 8)

    def _lower_value(self, schema: TypeSchema, *, container_argument: bool = False,
                     is_native_field: bool = False) -> _Carrier:
        origin, args = schema.origin, schema.args
        if origin in _SCALAR_CARRIERS:
            return _SCALAR_CARRIERS[origin]
        if origin in ("Optional", "Union"):
            # In a container an optional or a union of objects is a (nullable) pointer; a field
            # keeps the discriminated Any.
            if container_argument and origin == "Optional" and \
                    args[0].origin_type_index >= _OBJECT_INDEX:
                return self._nullable_object(args[0])
            if container_argument and origin == "Union" and \
                    all(a.origin_type_index >= _OBJECT_INDEX for a in args):
                return _Carrier(_ARC_OBJECT, 8, 8)
            return _Carrier("::tvm::ffi::Any", 16, 8)
        if origin in _CONTAINERS:
            inner = ", ".join(self._lower_value(a, container_argument=True,
                                                is_native_field=is_native_field).cpp_type
                              for a in args)
            return _Carrier(f"{_CONTAINERS[origin]}<{inner}>", 8, 8)
        if schema.origin_type_index >= _OBJECT_INDEX:
            return self._object(schema)
        raise ValueError(f"Unsupported TVM-FFI type schema {schema!r}")

    def _native_optional(self, field: TypeField, owner: TypeInfo) -> _Carrier:
        value = field.ty.args[0]
        layout = (field.size, field.alignment)
        if value.origin in ("str", "bytes") and layout == (16, 8):
            return self._lower_value(value)
        if value.origin_type_index >= _OBJECT_INDEX and layout == (16, 8):
            return _Carrier(f"::tvm::ffi::Optional<{self._object(value).cpp_type}>", 16, 8)
        if value.origin_type_index >= _OBJECT_INDEX and layout == (8, 8):
            return self._nullable_object(value)
        raise ValueError(f"Ambiguous native Optional carrier for {owner.type_key}.{field.name} "
                         f"with layout {layout}")

    def _raw_schema(self, field: TypeField, owner: TypeInfo) -> dict:
        raw = field.metadata.get("type_schema")
        if isinstance(raw, str):
            try:
                raw = json.loads(raw)
            except json.JSONDecodeError as err:
                raise ValueError(f"Invalid raw type schema for {owner.type_key}.{field.name}: "
                                 f"{raw!r}") from err
        if not isinstance(raw, dict) or not isinstance(raw.get("type"), str):
            raise ValueError(f"Missing raw type schema for native field "
                             f"{owner.type_key}.{field.name}")
        return raw

    def _lower_field(self, field: TypeField, owner: TypeInfo) -> _Carrier:
        """The member type of a field (a C++ field's schema is checked against its bytes)."""
        schema = field.ty
        python_field = hasattr(owner, "_decorator_args")
        layout = (field.size, field.alignment)
        if schema is not None and not python_field:
            _check_native_schema(schema, self._raw_schema(field, owner))
        if schema is None:
            carrier = _STATIC_CARRIERS.get(field.field_static_type_index)
            if carrier is None and field.field_static_type_index >= _OBJECT_INDEX:
                carrier = _Carrier("::tvm::ffi::ObjectPtr<::tvm::ffi::Object>", 8, 8)
            if carrier is None:
                raise ValueError(f"Cannot determine carrier for {owner.type_key}.{field.name}: "
                                 "missing type schema and static type index "
                                 f"{field.field_static_type_index}")
        elif schema.origin in ("Optional", "Union"):
            if python_field:
                carrier = _Carrier("::tvm::ffi::Any", 16, 8)
            elif schema.origin == "Optional":
                carrier = self._native_optional(field, owner)
            elif layout == (8, 8) and all(a.origin_type_index >= _OBJECT_INDEX
                                          for a in schema.args):
                carrier = _Carrier(_ARC_OBJECT, 8, 8)
            else:
                raise ValueError(f"Ambiguous native {schema.origin} carrier for "
                                 f"{owner.type_key}.{field.name} with layout {layout}")
        else:
            carrier = self._lower_value(schema, is_native_field=not python_field)
        builtin = self.builtins.get(schema.origin_type_index) if schema is not None else None
        if builtin is not None and builtin.value_type == "::tvm::ffi::Error":
            # Error also derives from std::exception (a library detail): trust reflection.
            carrier = _Carrier(builtin.value_type, field.size, field.alignment)
        if layout != (carrier.size, carrier.alignment) and layout == (8, 8) and \
                builtin is not None and schema.origin_type_index >= _OBJECT_INDEX:
            # A one-pointer field of a type whose wrapper is bigger: the object class.
            carrier = _Carrier(f"::tvm::ffi::Arc<{builtin.object_type}>", 8, 8)
        if layout != (carrier.size, carrier.alignment):
            raise ValueError(f"Carrier {carrier.cpp_type} for {owner.type_key}.{field.name} has "
                             f"layout {(carrier.size, carrier.alignment)}, but reflection reports "
                             f"{layout} at offset {field.offset}")
        return carrier

    def _struct(self, info: TypeInfo) -> _Struct:
        if not info._has_type_metadata and not hasattr(info, "_decorator_args"):
            raise ValueError(f"Native type {info.type_key!r} does not expose fixed total-size "
                             "metadata")
        parent = info.parent_type_info
        if parent is None:
            raise ValueError(f"Object type {info.type_key!r} does not expose its parent type")
        if parent.type_index >= _FIRST_DYNAMIC_INDEX:
            base = _qualified(parent.type_key)
        elif parent.type_index in self.builtins:
            base = self.builtins[parent.type_index].object_type
        else:
            raise ValueError(f"Parent type {parent.type_key!r} of {info.type_key!r} is not "
                             "supported")
        total_size = int(info.total_size)
        members = tuple(_Member(f.name, _cpp_identifier(f.name), self._lower_field(f, info),
                                f.offset)
                        for f in sorted(info.fields or (), key=lambda f: f.offset))
        alignment = max([8] + [f.alignment for a in _lineage(info) for f in a.fields or ()])
        namespaces, name = _namespaces_and_name(info.type_key)
        return _Struct(info, namespaces, name, base, alignment, total_size, members)

    def build(self) -> str:
        """The header's text."""
        structs = [self._struct(info) for info in self.emitted_infos]
        defined = {s.info.type_index for s in structs}
        dependencies = sorted(self.dependencies.values(),
                              key=lambda i: (*_namespaces_and_name(i.type_key), i.type_key))
        lines = ["#pragma once", "", "#include <tvm/ffi/tvm_ffi.h>", ""]
        lines += _in_namespaces((_namespaces_and_name(i.type_key)[0],
                                 [f"struct {_namespaces_and_name(i.type_key)[1]};"])
                                for i in dependencies)
        for info in dependencies:
            lines += ["template <>", "inline constexpr bool tvm::ffi::is_object_subclass_v"
                                     f"<{_qualified(info.type_key)}> = true;"]
        lines.append("")
        lines += _in_namespaces(
            (_namespaces_and_name(i.type_key)[0],
             [f"struct {_namespaces_and_name(i.type_key)[1]} : public ::tvm::ffi::Object {{",
              _lookup_line(i), "};"])
            for i in dependencies if i.type_index not in defined)
        lines += ["static_assert(sizeof(::tvm::ffi::Object) == 24);",
                  "static_assert(alignof(::tvm::ffi::Object) == 8);", "",
                  "#if defined(__clang__) || defined(__GNUC__)", "#pragma GCC diagnostic push",
                  '#pragma GCC diagnostic ignored "-Winvalid-offsetof"',
                  "#elif defined(_MSC_VER)", "#pragma warning(push)",
                  "#pragma warning(disable : 4749)", "#endif", ""]
        lines += _in_namespaces((s.namespaces, _struct_lines(s)) for s in structs)
        lines += ["#if defined(__clang__) || defined(__GNUC__)", "#pragma GCC diagnostic pop",
                  "#elif defined(_MSC_VER)", "#pragma warning(pop)", "#endif", ""]
        return "\n".join(lines)


def _lookup_line(info: TypeInfo) -> str:
    return (f"  TVM_FFI_DECLARE_OBJECT_INFO_LOOKUP({_cpp_string_literal(info.type_key)}, "
            f"{len(info.type_ancestors)});")


def _struct_lines(s: _Struct) -> List[str]:
    body = [f"struct alignas({s.alignment}) {s.name} : public {s.base} {{", _lookup_line(s.info)]
    body += [""] * bool(s.members)
    for m in s.members:
        renamed = (f", reflected name={m.reflected_name!r}"
                   if m.member_name != m.reflected_name else "")
        body.append(f"  {m.carrier.cpp_type} {m.member_name};  // offset={m.offset}, "
                    f"size={m.carrier.size}, align={m.carrier.alignment}{renamed}")
    body += ["};", "", f"static_assert(sizeof({s.name}) == {s.total_size});",
             f"static_assert(alignof({s.name}) == {s.alignment});"]
    for m in s.members:
        body += [f"static_assert(sizeof(decltype({s.name}::{m.member_name})) == "
                 f"{m.carrier.size});",
                 f"static_assert(alignof(decltype({s.name}::{m.member_name})) == "
                 f"{m.carrier.alignment});",
                 f"static_assert(offsetof({s.name}, {m.member_name}) == {m.offset});"]
    return body


def gen_abi_cpp(type_keys: Union[str, Sequence[str]]) -> str:
    """A C++17 header of lookup-only views of the object types ``type_keys`` names (exact keys
    or shell patterns), with their dynamic ancestors and the types their fields name."""
    return _Generator(_select_type_infos(type_keys)).build()


__all__ = ["gen_abi_cpp"]
