"""Arguments of a library's own object types: how to make one, and making it.

A method's first parameter is its object (``testing.TestIntPair.sum`` takes a
``testing.TestIntPair``), and a library's functions take its types too. The
checker makes such an argument the way a caller would, with what the type
registered, in this order of preference:

1. its ``__ffi_init__`` constructor (``refl::init<...>``), from its schema;
2. a static method whose schema returns the type (``def_static("make", ...)``);
3. its reflected fields, each from its schema, through
   ``ffi.MakeObjectFromPackedArgs`` (the type must be creatable: a native
   creator or ``__ffi_new__``; a field without a schema needs a default).

:func:`constructor` picks one in the checker's process (from the type's
description, :func:`tvm_ffi_check.targets.describe_type`); :func:`make`
calls it in the worker. An argument that cannot be made stops that call
before the function is reached (:class:`ArgumentNotMade`): it is counted,
never reported as the function's fault.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple


class ArgumentNotMade(Exception):
    """A library object the checker needed as an argument could not be made."""


@dataclass(frozen=True)
class Constructor:
    """How to make an object: ``via`` (a method name, or ``""`` for fields), parameter schemas."""

    via: str
    params: Tuple[Optional[dict], ...]
    fields: Tuple[str, ...] = ()


def _method_signature(method: Dict[str, Any]):
    from .schema import SchemaError, parse_metadata  # the checker's side only: hypothesis

    try:
        return parse_metadata(method["metadata"]) if method.get("metadata") else None
    except SchemaError:
        return None


def _field_schema(field: Dict[str, Any]) -> Optional[dict]:
    try:
        schema = json.loads(field["metadata"]).get("type_schema") if field["metadata"] else None
        return json.loads(schema) if isinstance(schema, str) else schema
    except (ValueError, AttributeError):
        return None


def constructor(kind: Dict[str, Any]) -> Optional[Constructor]:
    """The way to make an object of the described type, or None when there is none."""
    key = kind["key"]
    statics = [m for m in kind["methods"] if m["static"]]
    for method in sorted(statics, key=lambda m: m["name"] != "__ffi_init__"):
        signature = _method_signature(method)
        if signature is None:
            continue
        if method["name"] == "__ffi_init__" or (signature.returns or {}).get("type") == key:
            return Constructor(method["name"], tuple(signature.params))
    if not kind.get("creatable"):
        return None
    names: List[str] = []
    params: List[Optional[dict]] = []
    for field in kind["fields"]:
        schema = _field_schema(field)
        if schema is not None:
            names.append(field["name"])
            params.append(schema)
        elif not field["has_default"]:
            return None
    return Constructor("", tuple(params), tuple(names))


def make(spec, args: List[Any]):
    """Makes the object ``spec`` (an :class:`~tvm_ffi_check.values.ObjectArg`) describes.

    ``args`` are its arguments, already turned into what the front end passes.
    """
    import tvm_ffi_ref as api

    from .targets import METHOD, resolve

    try:
        if not spec.via:
            pairs = [item for pair in zip(spec.fields, args) for item in pair]
            return api.get_global_func("ffi.MakeObjectFromPackedArgs")(spec.type_key, *pairs)
        return resolve(None, (METHOD, spec.via, spec.type_key))(*args)
    except Exception as exc:  # noqa: BLE001 - whatever the constructor raised
        raise ArgumentNotMade(f"making {spec!r} failed: {type(exc).__name__}: {exc}") from None


def make_pooled(spec, args: List[Any]):
    """Makes a pooled object (a :class:`~tvm_ffi_check.values.PooledArg`) by calling again
    the function that returned one; it must return an object of the recorded type again."""
    from . import targets

    try:
        made = targets.resolve(targets.LOADED[0], spec.target)(*args)
    except Exception as exc:  # noqa: BLE001 - whatever the call raised this time
        raise ArgumentNotMade(f"making {spec!r} failed: {type(exc).__name__}: {exc}") from None
    made_key = getattr(made, "type_key", None)
    if made_key != spec.type_key:
        raise ArgumentNotMade(f"{spec!r} returned {made_key or type(made).__name__} this time, "
                              f"not {spec.type_key}")
    return made
