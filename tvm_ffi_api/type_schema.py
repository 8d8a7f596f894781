"""Type schemas: the types TVM FFI reflection publishes, as Python values.

A kernel publishes the type of every field, method and typed global as JSON
in its metadata (``{"type": "ffi.Array", "args": [{"type": "int"}]}``); a
``@py_class`` field gets one from its annotation. :class:`TypeSchema` is that
description: an *origin* (a short name such as ``int``, ``Array``,
``Optional``, or an object type key) and its type arguments. It converts from
JSON and from Python annotations, prints itself in Python typing syntax, and
checks and converts values (:mod:`.type_converter` does the work).

Upstream's C++ spellings fold into Python's on parsing: ``ffi.String`` and
``std::string`` are ``str``, ``ffi.Array`` and ``std::vector`` are ``Array``,
``Variant`` is ``Union``, and so on (:data:`ORIGIN_ALIASES`).
"""

from __future__ import annotations

import dataclasses
import json
from functools import cached_property
from typing import Any, Callable, Dict, Optional, Tuple

from tvm_ffi_common import abi

from . import upcalls

TI = abi.TVMFFITypeIndex
_OBJECT_BEGIN = int(TI.kTVMFFIStaticObjectBegin)

#: ``origin_type_index`` of ``Optional`` and ``Union`` (no single type index).
STRUCTURAL_TYPE_INDEX = -2
#: ``origin_type_index`` of an origin that names no known type.
UNKNOWN_TYPE_INDEX = -3

#: Spellings of the published JSON and the origin each one folds into.
ORIGIN_ALIASES: Dict[str, str] = {
    "Variant": "Union", "Optional": "Optional", "Tuple": "tuple",
    "ffi.Function": "Callable", "ffi.Array": "Array", "ffi.List": "List", "ffi.Map": "Map",
    "ffi.Dict": "Dict", "ffi.OpaquePyObject": "Any", "ffi.Object": "Object",
    "ffi.Tensor": "Tensor", "ffi.BigInt": "int", "DLTensor*": "Tensor",
    "void*": "ctypes.c_void_p",
    "TVMFFIByteArray*": "bytes", "ffi.SmallBytes": "bytes", "ffi.Bytes": "bytes",
    "std::string": "str", "const char*": "str", "ffi.SmallStr": "str", "ffi.String": "str",
    "DataType": "dtype",
    # C++ standard-library types (upstream's extra/stl.h publishes these).
    "std::vector": "Array", "std::optional": "Optional", "std::variant": "Union",
    "std::tuple": "tuple", "std::map": "Map", "std::unordered_map": "Map",
    "std::function": "Callable",
    # A moved reference is, to Python, a plain object.
    "ObjectRValueRef": "Object",
}

#: The type index of each origin that has one.
ORIGIN_TYPE_INDEX: Dict[str, int] = {
    "None": TI.kTVMFFINone, "int": TI.kTVMFFIInt, "bool": TI.kTVMFFIBool,
    "float": TI.kTVMFFIFloat, "str": TI.kTVMFFIStr, "bytes": TI.kTVMFFIBytes,
    "Device": TI.kTVMFFIDevice, "dtype": TI.kTVMFFIDataType,
    "ctypes.c_void_p": TI.kTVMFFIOpaquePtr, "Tensor": TI.kTVMFFITensor,
    "Object": TI.kTVMFFIObject, "Callable": TI.kTVMFFIFunction, "Array": TI.kTVMFFIArray,
    "List": TI.kTVMFFIList, "Map": TI.kTVMFFIMap, "Dict": TI.kTVMFFIDict, "Any": TI.kTVMFFIAny,
}

#: The origin of a type index (the inverse, plus the indices that alias an origin).
INDEX_ORIGIN: Dict[int, str] = {
    **{int(index): origin for origin, index in ORIGIN_TYPE_INDEX.items()},
    int(TI.kTVMFFIDLTensorPtr): "Tensor", int(TI.kTVMFFIRawStr): "str",
    int(TI.kTVMFFIByteArrayPtr): "bytes", int(TI.kTVMFFISmallStr): "str",
    int(TI.kTVMFFISmallBytes): "bytes", int(TI.kTVMFFIObjectRValueRef): "Object",
    int(TI.kTVMFFIBigInt): "int",
}

#: Keys whose folding loses information (``int`` is also a native type): kept in ``type_key``.
RETAINED_TYPE_KEYS: Dict[int, str] = {int(TI.kTVMFFIBigInt): "ffi.BigInt"}

#: The type attribute naming the schema a type accepts as input (see :meth:`TypeSchema.input_repr`).
CONVERT_TYPE_SCHEMA_ATTR = "__ffi_convert_type_schema__"

_SEQUENCE_ORIGINS = ("list", "Array", "List")
_MAPPING_ORIGINS = ("dict", "Map", "Dict")


def _check_named_args(named_args: Any) -> Dict[str, Tuple["TypeSchema", ...]]:
    if not isinstance(named_args, dict):
        raise TypeError("named_args must be a map of names to type lists")
    checked = {}
    for name, values in named_args.items():
        if not isinstance(name, str) or not name:
            raise ValueError("named_args keys must be nonempty strings")
        if not isinstance(values, (list, tuple)):
            raise TypeError("named_args values must be lists of type schemas")
        if any(not isinstance(value, TypeSchema) for value in values):
            raise TypeError("named_args values must contain type schemas")
        checked[name] = tuple(values)
    return checked


@dataclasses.dataclass(repr=False)
class TypeSchema:
    """A TVM FFI type: an ``origin`` and its type arguments.

    ``args`` holds positional type arguments; ``named_args`` maps a name to a
    tuple of schemas (a function type has ``return`` and ``params``).
    ``fallback`` is what a type unknown here is shown as. ``type_key`` keeps
    the key a folded origin was parsed from when folding lost it (``ffi.BigInt``).
    """

    origin: str
    args: Optional[Tuple["TypeSchema", ...]] = None
    origin_type_index: int = dataclasses.field(default=UNKNOWN_TYPE_INDEX, repr=False)
    fallback: Optional["TypeSchema"] = None
    named_args: Optional[Dict[str, Tuple["TypeSchema", ...]]] = None
    type_key: Optional[str] = dataclasses.field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.args is not None and not isinstance(self.args, tuple):
            self.args = tuple(self.args)
        origin = self.origin
        if not isinstance(origin, str) or not origin:
            raise ValueError("schema type must be a nonempty string")
        if self.args is None and origin != "tuple":
            self.args = ()
        if self.args is not None and any(not isinstance(a, TypeSchema) for a in self.args):
            raise TypeError("schema arguments must be TypeSchema instances")
        if self.named_args is not None:
            self.named_args = _check_named_args(self.named_args)
        self._check_arity()
        if self.origin_type_index == UNKNOWN_TYPE_INDEX:
            self.origin_type_index = self._resolve_type_index()

    def _check_arity(self) -> None:
        origin, args = self.origin, self.args
        if origin == "Callable":
            if args and self.named_args is None:
                # The older flat form: the return type, then the parameter types.
                self.named_args = {"return": (args[0],)}
                if len(args) > 1:
                    self.named_args["params"] = args[1:]
                self.args = args = ()
            if self.named_args is not None:
                if args or set(self.named_args) - {"return", "params"}:
                    raise ValueError("Callable uses only named return and params groups")
                if len(self.named_args.get("return", ())) != 1:
                    raise ValueError("Callable return group must contain exactly one type")
        elif origin == "Union":
            if len(args) < 2:
                raise ValueError("Union must have at least two arguments")
        elif origin == "Optional":
            if len(args) != 1:
                raise ValueError("Optional must have exactly one argument")
        elif origin in _SEQUENCE_ORIGINS:
            if len(args) not in (0, 1):
                raise ValueError(f"{origin} must have 0 or 1 argument")
            if not args:
                self.args = (TypeSchema("Any"),)
        elif origin in _MAPPING_ORIGINS:
            if len(args) not in (0, 2):
                raise ValueError(f"{origin} must have 0 or 2 arguments")
            if not args:
                self.args = (TypeSchema("Any"), TypeSchema("Any"))

    def _resolve_type_index(self) -> int:
        if self.origin in ("Optional", "Union"):
            return STRUCTURAL_TYPE_INDEX
        if self.origin in ORIGIN_TYPE_INDEX:
            return int(ORIGIN_TYPE_INDEX[self.origin])
        index = upcalls.object_type_key_to_index(self.origin)
        return UNKNOWN_TYPE_INDEX if index is None else index

    # ------------------------------------------------------------ relations

    def is_subtype_of(self, target_cls: type) -> bool:
        """Whether this schema's origin is ``target_cls``'s object type or one derived from it."""
        target_info = getattr(target_cls, "__tvm_ffi_type_info__", None)
        if target_info is None:
            try:
                target_index = TypeSchema.from_annotation(target_cls).origin_type_index
            except TypeError:
                return False
            if target_index == TI.kTVMFFIObject:
                return self.origin_type_index >= _OBJECT_BEGIN
            return False
        if self.origin_type_index == target_info.type_index:
            return True
        source_info = upcalls.type_index_to_type_info(self.origin_type_index)
        return source_info is not None and target_info.type_index in source_info.type_ancestors

    # ------------------------------------------------------- checking values

    @cached_property
    def _converter(self) -> Any:
        # Built on first use, when every type it may name has been registered.

        return upcalls.build_converter(self)

    def check_value(self, value: object) -> None:
        """Raises ``TypeError`` naming the mismatch if ``value`` does not fit this type."""
        upcalls.run_converter(self, value, "type check failed")

    def convert(self, value: object) -> Any:
        """``value`` converted to this type as a :class:`~.cany.CAny` (``TypeError`` if it cannot be)."""
        return upcalls.run_converter(self, value, "type conversion failed")

    # ------------------------------------------------------------------ JSON

    @staticmethod
    def _from_maybe_json(raw: object) -> "TypeSchema":
        if isinstance(raw, TypeSchema):
            return raw
        if isinstance(raw, str):
            return TypeSchema.from_json_str(raw)
        if isinstance(raw, dict):
            return TypeSchema.from_json_obj(raw)
        raise TypeError(f"expected TypeSchema, JSON string, or JSON dict, got {type(raw).__name__}")

    @staticmethod
    def from_json_obj(obj: Dict[str, Any]) -> "TypeSchema":
        """The schema a parsed JSON object describes (non-object ``args`` entries are skipped)."""
        if not isinstance(obj, dict) or "type" not in obj:
            raise TypeError(f"expected schema dict with 'type' key, got {type(obj).__name__}")
        spelled = obj["type"]
        if not isinstance(spelled, str):
            raise TypeError("schema type must be a string")
        origin = ORIGIN_ALIASES.get(spelled, spelled)
        type_key = spelled if spelled in RETAINED_TYPE_KEYS.values() else None
        fallback = TypeSchema.from_json_obj(obj["fallback"]) if "fallback" in obj else None
        named_args = None
        if "named_args" in obj:
            raw_named = obj["named_args"]
            if not isinstance(raw_named, dict):
                raise TypeError("named_args must be a map of names to type lists")
            named_args = {}
            for name, values in raw_named.items():
                if not isinstance(name, str) or not name or not isinstance(values, list):
                    raise TypeError("named_args must map names to type lists")
                if any(not isinstance(value, dict) for value in values):
                    raise TypeError("named_args lists must contain type schemas")
                named_args[name] = tuple(TypeSchema.from_json_obj(v) for v in values)
        if "args" not in obj:
            return TypeSchema(origin, fallback=fallback, named_args=named_args, type_key=type_key)
        raw_args = obj["args"]
        if (spelled == "std::function" and isinstance(raw_args, (list, tuple))
                and len(raw_args) == 2 and isinstance(raw_args[1], (list, tuple))):
            # The older std::function form: [return, [params...]].
            named_args = {"return": (TypeSchema.from_json_obj(raw_args[0]),),
                          "params": tuple(TypeSchema.from_json_obj(v) for v in raw_args[1])}
            return TypeSchema(origin, fallback=fallback, named_args=named_args, type_key=type_key)
        if not isinstance(raw_args, (list, tuple)):
            raw_args = ()
        args = tuple(TypeSchema.from_json_obj(a) for a in raw_args if isinstance(a, dict))
        return TypeSchema(origin, args, fallback=fallback, named_args=named_args,
                          type_key=type_key)

    @staticmethod
    def from_json_str(s: str) -> "TypeSchema":
        """The schema a JSON string describes."""
        return TypeSchema.from_json_obj(json.loads(s))

    def to_json(self) -> Dict[str, Any]:
        """This schema as a JSON-ready dict (a retained ``type_key`` is written as the type)."""
        result: Dict[str, Any] = {"type": self.type_key or self.origin}
        if self.args is not None and (self.args or self.origin == "tuple"):
            result["args"] = [arg.to_json() for arg in self.args]
        if self.named_args is not None:
            result["named_args"] = {name: [v.to_json() for v in values]
                                    for name, values in self.named_args.items()}
        if self.fallback is not None:
            result["fallback"] = self.fallback.to_json()
        return result

    @staticmethod
    def from_type_index(type_index: int, args: Tuple["TypeSchema", ...] = ()) -> "TypeSchema":
        """The schema of a registered type index (with optional type arguments)."""
        origin = INDEX_ORIGIN.get(type_index)
        if origin is None:
            origin = upcalls.type_index_to_key(type_index)
        return TypeSchema(origin, args, origin_type_index=type_index,
                          type_key=RETAINED_TYPE_KEYS.get(type_index))

    @staticmethod
    def from_annotation(annotation: object) -> "TypeSchema":
        """The schema of a Python annotation (``int``, ``list[int]``, ``Optional[X]``, a class...)."""
        return upcalls.schema_of_annotation(annotation)

    # -------------------------------------------------------------- printing

    def __repr__(self) -> str:
        return self.repr(ty_map=None)

    def repr(self, ty_map: Optional[Callable[[str], str]] = None) -> str:
        """This schema in Python typing syntax (``Array[int]``, ``int | None``, ...).

        ``ty_map`` renames origins on the way (e.g. ``Array`` -> ``Sequence``).
        """
        return self.output_repr(ty_map)

    def input_repr(self, ty_map: Optional[Callable[[str], str]] = None) -> str:
        """The annotation of the values this type accepts (a type's ``__ffi_convert_type_schema__``)."""
        return self._render(ty_map, True, frozenset())

    def output_repr(self, ty_map: Optional[Callable[[str], str]] = None) -> str:
        """The annotation of the values this type produces."""
        return self._render(ty_map, False, frozenset())

    def _render(self, ty_map, input_mode: bool, expanded: frozenset) -> str:
        if (self.fallback is not None and self.origin_type_index == UNKNOWN_TYPE_INDEX
                and self.origin not in ("tuple", "list", "dict")):
            return self.fallback._render(ty_map, input_mode, expanded)
        if input_mode and self.origin_type_index >= _OBJECT_BEGIN \
                and self.origin_type_index not in expanded:
            accepted = upcalls.lookup_type_attr(self.origin_type_index,
                                                CONVERT_TYPE_SCHEMA_ATTR)
            if accepted is not None:
                return TypeSchema._from_maybe_json(accepted)._render(
                    ty_map, True, expanded | {self.origin_type_index})
        origin = self.origin if ty_map is None else ty_map(self.origin)

        def render(schema: "TypeSchema") -> str:
            return schema._render(ty_map, input_mode, expanded)

        if origin == "Callable":
            if not self.named_args:
                return "Callable[..., Any]"
            returns = render(self.named_args["return"][0])
            if "params" not in self.named_args:
                return f"Callable[..., {returns}]"
            params = ", ".join(render(p) for p in self.named_args["params"])
            return f"Callable[[{params}], {returns}]"
        args = [render(a) for a in (self.args or ())]
        if origin == "Union":
            return " | ".join(args)
        if origin == "Optional":
            return f"{args[0]} | None"
        if origin == "tuple" and self.args == ():
            return "tuple[()]"
        return f"{origin}[{', '.join(args)}]" if args else origin

