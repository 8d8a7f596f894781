"""Standard-library dataclass instances to nested tuples, fast.

:func:`unpack_dataclass_to_tuple` does what ``dataclasses.astuple`` does,
without copying leaf values, by compiling one small function per dataclass
class (cached per thread). The function is built from a *schema* of the
class: per field, ``None`` for a value taken as is (its annotation is a type
that cannot hold a dataclass, such as ``int`` or ``dict[str, float]``), a
nested schema for a field whose annotation is itself a dataclass, and
``"unpack"`` for anything else (unpacked at run time by looking at the value).
Lists, tuples (named tuples keep their class) and dict values are unpacked
element by element.
"""

from __future__ import annotations

import dataclasses
import keyword
import sys
import threading
import typing
from typing import Any, Dict, Optional, Set, Union

#: Schema entry of a field unpacked at run time.
UNPACK = "unpack"

#: A schema: field name -> None (leaf), :data:`UNPACK`, or a nested schema.
DataclassToTupleSchema = dict

#: Annotation origins whose values are leaves when every type argument is.
_LEAF_CONTAINERS: tuple = (tuple, dict, set, frozenset, typing.Union)
if sys.version_info >= (3, 10):
    import types

    _LEAF_CONTAINERS += (types.UnionType,)

#: Types whose values can never hold a dataclass.
_LEAF_TYPES = {int, float, str, bool, bytes, complex, type(None)}

_thread_cache = threading.local()


def _is_leaf_annotation(annotation: Any) -> bool:
    """Whether values of ``annotation`` are certainly leaves (a list never is: it becomes a
    tuple... of its elements, unpacked)."""
    if isinstance(annotation, type):
        return annotation in _LEAF_TYPES
    if annotation is Ellipsis:
        return True
    if typing.get_origin(annotation) in _LEAF_CONTAINERS:
        args = typing.get_args(annotation)
        return bool(args) and all(_is_leaf_annotation(a) for a in args)
    return False


def _classify(annotation: Any, seen: Set[type]) -> Union[None, str, dict]:
    """The schema entry of a field annotated ``annotation``."""
    if isinstance(annotation, str) or annotation is Any or annotation is object:
        return UNPACK
    if isinstance(annotation, type) and dataclasses.is_dataclass(annotation):
        return UNPACK if annotation in seen else _extract_dataclass_to_tuple_schema(
            annotation, memo=seen)
    if isinstance(annotation, type) and annotation in _LEAF_TYPES:
        return None
    if typing.get_origin(annotation) in _LEAF_CONTAINERS and _is_leaf_annotation(annotation):
        return None
    return UNPACK


def _extract_dataclass_to_tuple_schema(cls: type, *,
                                       memo: Optional[Set[type]] = None) -> DataclassToTupleSchema:
    """The schema of a dataclass class, from its resolved annotations (a field whose annotation
    does not resolve is unpacked at run time)."""
    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
        raise TypeError(f"Expected a dataclass class, got {cls!r}")
    seen = memo if memo is not None else set()
    seen.add(cls)
    try:
        hints = typing.get_type_hints(cls)
    except (NameError, TypeError, AttributeError):
        hints = {}
    return {f.name: _classify(hints.get(f.name, f.type), seen) for f in dataclasses.fields(cls)}


def _validate_dataclass_to_tuple_schema(schema: DataclassToTupleSchema) -> None:
    """Checks that a schema names only identifiers (its names go into generated code)."""
    if not isinstance(schema, dict):
        raise TypeError(f"DataclassToTupleSchema must be a dict, got {type(schema).__name__}")
    for name, entry in schema.items():
        if not isinstance(name, str):
            raise TypeError(f"Schema field name must be a string, got {type(name).__name__}")
        if not name.isidentifier():
            raise ValueError(f"Schema field name {name!r} is not a valid Python identifier")
        if keyword.iskeyword(name):
            raise ValueError(f"Schema field name {name!r} is a Python keyword")
        if entry is not None and entry != UNPACK:
            _validate_dataclass_to_tuple_schema(entry)


def _tuple_expression(prefix: str, schema: DataclassToTupleSchema) -> str:
    """The source of a tuple expression unpacking ``prefix`` by ``schema``."""
    items = []
    for name, entry in schema.items():
        attribute = f"{prefix}.{name}"
        if entry is None:
            items.append(attribute)
        elif entry == UNPACK:
            items.append(f"_unpack({attribute})")
        else:
            items.append(_tuple_expression(attribute, entry))
    return "(" + "".join(item + ", " for item in items).rstrip(" ") + ")"


def _identity(value: Any) -> Any:
    return value


def _compile(cls: type) -> Any:
    schema = _extract_dataclass_to_tuple_schema(cls)
    _validate_dataclass_to_tuple_schema(schema)
    namespace: Dict[str, Any] = {}
    source = f"def unpack(_value):\n    return {_tuple_expression('_value', schema)}\n"
    exec(source, {"_unpack": unpack_dataclass_to_tuple}, namespace)  # noqa: S102 - names checked
    return namespace["unpack"]


def unpack_dataclass_to_tuple(x: Any) -> Any:
    """``x`` with every dataclass instance in it replaced by the tuple of its field values.

    Lists and tuples are unpacked element by element (keeping their type, a
    named tuple its class), dicts value by value; other values are returned as
    they are, never copied.
    """
    cache = getattr(_thread_cache, "unpackers", None)
    if cache is None:
        cache = _thread_cache.unpackers = {}
    kind = type(x)
    unpack = cache.get(kind)
    if unpack is not None:
        return unpack(x)
    if dataclasses.is_dataclass(kind):
        unpack = cache[kind] = _compile(kind)
        return unpack(x)
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return kind(*(unpack_dataclass_to_tuple(item) for item in x))
    if isinstance(x, (list, tuple)):
        return kind(unpack_dataclass_to_tuple(item) for item in x)
    if isinstance(x, dict):
        return {k: unpack_dataclass_to_tuple(v) for k, v in x.items()}
    cache[kind] = _identity
    return x
