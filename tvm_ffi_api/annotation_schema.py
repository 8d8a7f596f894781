"""The type schema of a Python annotation (:meth:`TypeSchema.from_annotation`).

=======================================  ================================
annotation                               schema
=======================================  ================================
``None``, ``type(None)``, ``Any``        ``None``, ``None``, ``Any``
``bool``, ``int``, ``float``, ``str``,   the same names
``bytes``
``list[T]``, ``dict[K, V]``              ``List[T]``, ``Dict[K, V]``
``tuple[T, ...]``                        ``Array[T]`` (variable length)
``tuple[A, B]``, ``tuple[()]``,          ``tuple[A, B]``, ``tuple[()]``,
``tuple``                                ``tuple`` (any length)
``Callable[[A], R]``, ``Callable``       ``Callable`` with return and params
``Optional[T]``, ``T | None``            ``Optional[T]``
``Union[A, B]``, ``A | B``               ``Union[A, B]``; with None:
                                         ``Optional[Union[A, B]]``
a registered object class (``Array``,    its origin (``Array``, ``Map``...)
``Map``, a ``@py_class``...), with       or type key, with arguments
type arguments or not
``String``/``Bytes``, ``dtype``,         ``str``/``bytes``, ``dtype``,
``Device``, ``ctypes.c_void_p``          ``Device``, ``ctypes.c_void_p``
a class with ``__dlpack__``              ``Tensor``
=======================================  ================================
"""

from __future__ import annotations

import collections.abc
import ctypes
import types
import typing
from typing import Any, Tuple

from . import upcalls
from .device import Device
from .object import CObject
from .scalar_converters import dtype_classes
from .string import Bytes, String
from .type_registry import _type_cls_to_type_info
from .type_schema import INDEX_ORIGIN, TypeSchema

_SCALARS = {type(None): "None", bool: "bool", int: "int", float: "float", str: "str",
            bytes: "bytes", list: "List", dict: "Dict", tuple: "tuple",
            collections.abc.Callable: "Callable", ctypes.c_void_p: "ctypes.c_void_p"}

_UNION_TYPE = getattr(types, "UnionType", None)


def schema_of_annotation(annotation: Any) -> TypeSchema:
    """The :class:`TypeSchema` of ``annotation``; ``TypeError`` if it has none."""
    if annotation is None:
        return TypeSchema("None")
    if annotation is typing.Any:
        return TypeSchema("Any")
    if isinstance(annotation, type) or annotation is collections.abc.Callable:
        origin = _SCALARS.get(annotation)
        if origin is not None:
            return TypeSchema(origin)
    if _UNION_TYPE is not None and isinstance(annotation, _UNION_TYPE):
        return _union(typing.get_args(annotation))
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Union:
        return _union(args)
    if origin is list:
        if len(args) > 1:
            raise TypeError(f"list takes at most 1 type argument, got {len(args)}")
        return TypeSchema("List", tuple(schema_of_annotation(a) for a in args))
    if origin is dict:
        if len(args) not in (0, 2):
            raise TypeError(f"dict requires 0 or 2 type arguments, got {len(args)}")
        return TypeSchema("Dict", tuple(schema_of_annotation(a) for a in args))
    if origin is tuple:
        return _tuple(annotation, args)
    if origin is collections.abc.Callable:
        return _callable(args)
    if isinstance(origin, type) and _is_object_class(origin):
        return _object_class(origin, args)
    if isinstance(annotation, type):
        return _class(annotation)
    raise TypeError(f"Cannot convert {annotation!r} to TypeSchema")


def _union(args: Tuple[Any, ...]) -> TypeSchema:
    members = tuple(schema_of_annotation(a) for a in args if a is not type(None))
    if len(members) == len(args):
        return TypeSchema("Union", members)
    inner = members[0] if len(members) == 1 else TypeSchema("Union", members)
    return TypeSchema("Optional", (inner,))


def _tuple(annotation: Any, args: Tuple[Any, ...]) -> TypeSchema:
    if len(args) == 2 and args[1] is Ellipsis:
        return TypeSchema("Array", (schema_of_annotation(args[0]),))
    if args:
        return TypeSchema("tuple", tuple(schema_of_annotation(a) for a in args))
    # ``tuple[()]`` has no arguments but, unlike bare ``tuple``, fixes the length at 0.
    return TypeSchema("tuple", ()) if annotation is not tuple else TypeSchema("tuple")


def _callable(args: Tuple[Any, ...]) -> TypeSchema:
    if len(args) != 2:
        return TypeSchema("Callable")
    params, returns = args
    named = {"return": (schema_of_annotation(returns),)}
    if isinstance(params, list):
        named["params"] = tuple(schema_of_annotation(p) for p in params)
    return TypeSchema("Callable", named_args=named)


def _is_object_class(cls: type) -> bool:

    return issubclass(cls, CObject)  # CObject itself: a base, refused as unregistered


def _object_class(cls: type, args: Tuple[Any, ...]) -> TypeSchema:

    info = _type_cls_to_type_info(cls)
    if info is None:
        raise TypeError(f"CObject subclass {cls!r} is not registered in TYPE_CLS_TO_INFO; "
                        "use @register_object to register it")
    origin = INDEX_ORIGIN.get(info.type_index, info.type_key)
    if args:
        if origin in ("Array", "List") and len(args) != 1:
            raise TypeError(f"{origin} requires 1 type argument, got {len(args)}")
        if origin in ("Map", "Dict") and len(args) != 2:
            raise TypeError(f"{origin} requires 2 type arguments, got {len(args)}")
        return TypeSchema(origin, tuple(schema_of_annotation(a) for a in args),
                          origin_type_index=info.type_index)
    return TypeSchema(origin, origin_type_index=info.type_index)


def _class(cls: type) -> TypeSchema:

    if _is_object_class(cls):
        return _object_class(cls, ())
    if issubclass(cls, String):
        return TypeSchema("str")
    if issubclass(cls, Bytes):
        return TypeSchema("bytes")
    if issubclass(cls, dtype_classes()):
        return TypeSchema("dtype")
    if issubclass(cls, Device):
        return TypeSchema("Device")
    if hasattr(cls, "__dlpack__"):
        return TypeSchema("Tensor")
    raise TypeError(f"Cannot convert {cls!r} to TypeSchema")

upcalls.install("annotation_schema", schema_of_annotation=schema_of_annotation)
