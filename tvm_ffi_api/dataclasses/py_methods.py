"""Methods and type attributes a ``@py_class`` body gives its type.

* A function marked with :func:`method` becomes a method in the type's
  ``TVMFFITypeInfo`` (resolvable by name from C++, Rust or Python's
  ``TypeInfo.methods``), with a type schema built from its annotations.
* A body entry whose name is a type attribute name (``__ffi_repr__``,
  ``__s_equal__``, ...; see :data:`_FFI_TYPE_ATTR_NAMES`) becomes that type
  attribute instead, so C++ code dispatching through the attribute's column
  finds it. ``__ffi_type_attr_names__`` adds names for a class and its
  subclasses; ``__ffi_inherit_type_attrs__`` lists the parent entries copied
  to the new type (by default the structural and JSON hooks).
"""

from __future__ import annotations

import inspect
import json
import sys
import typing
from typing import Any, Dict, List, Optional, Tuple

from ..type_records import TypeInfo
from ..type_registry import _lookup_type_attr
from ..type_schema import TypeSchema
from ._resolve_fields import _build_localns

#: Names registered as type attributes (C++ dispatch columns), not as methods.
_FFI_TYPE_ATTR_NAMES: frozenset = frozenset({
    "__ffi_repr__", "__ffi_hash__", "__ffi_eq__", "__ffi_compare__", "__ffi_convert__",
    "__ffi_convert_type_schema__", "__any_hash__", "__any_equal__", "__s_equal__", "__s_hash__",
    "__s_visit__", "__s_mutate__", "__s_maybe_inplace_mutate__", "__data_to_json__",
    "__data_from_json__",
})

#: The parent entries a new type copies unless the class says otherwise (columns are flat:
#: a C++ subclass does not inherit them).
_DEFAULT_INHERIT_TYPE_ATTRS: Tuple[str, ...] = (
    "__s_equal__", "__s_hash__", "__s_visit__", "__data_to_json__", "__data_from_json__")


def _type_attr_options(cls: type) -> Tuple[frozenset, Tuple[str, ...]]:
    """The type attribute names of ``cls`` and the parent entries it copies."""
    extra = getattr(cls, "__ffi_type_attr_names__", ())
    inherited = getattr(cls, "__ffi_inherit_type_attrs__", _DEFAULT_INHERIT_TYPE_ATTRS)
    for value in (extra, inherited):
        if not isinstance(value, (tuple, list)) or not all(isinstance(n, str) for n in value):
            raise TypeError("TypeAttr registration lists must be tuples or lists of strings")
    return _FFI_TYPE_ATTR_NAMES | frozenset(extra) | frozenset(inherited), tuple(inherited)


def _inherited_type_attrs(type_info: TypeInfo, names: Tuple[str, ...]) -> List[tuple]:
    """``(name, value, True, None)`` for each listed entry the nearest ancestor has (a class body
    entry, even None, stops the search)."""

    cls = type_info.type_cls
    entries = []
    for name in names:
        if name in cls.__dict__:
            continue
        parent = type_info.parent_type_info
        while parent is not None:
            value = _lookup_type_attr(parent.type_index, name)
            if value is not None:
                entries.append((name, value, True, None))
                break
            if parent.type_cls is not None and name in parent.type_cls.__dict__:
                break
            parent = parent.parent_type_info
    return entries


def method(fn: Any) -> Any:
    """Marks a ``@py_class`` method (plain or ``staticmethod``) for the type's method table.

    A ``classmethod`` is refused: its class-first call does not fit the packed
    calling convention, where the object comes first.
    """
    if isinstance(fn, staticmethod):
        fn.__func__.__ffi_method__ = True
        return fn
    if isinstance(fn, classmethod):
        raise TypeError("@tvm_ffi.method: @classmethod is not supported for FFI TypeMethod "
                        "registration — the classmethod's ``cls`` first arg does not match the "
                        "packed-call convention. Use @staticmethod or a plain instance method "
                        "instead.")
    if not callable(fn):
        raise TypeError(f"@tvm_ffi.method: expected a callable, got {type(fn).__name__}.")
    fn.__ffi_method__ = True
    return fn


def _is_method_marked(value: Any) -> bool:
    if isinstance(value, (staticmethod, classmethod)):
        return getattr(value.__func__, "__ffi_method__", False) is True
    return callable(value) and getattr(value, "__ffi_method__", False) is True


def _callable_type_schema_json() -> str:
    return json.dumps({"type_schema": TypeSchema("Callable").to_json()})


def _resolved_hints(cls: type, func: Any, globalns: Dict[str, Any]) -> Optional[dict]:
    kwargs: Dict[str, Any] = {"globalns": globalns}
    if sys.version_info >= (3, 11):
        kwargs["include_extras"] = True
    for cross_module in (False, True):
        try:
            return typing.get_type_hints(func, localns=_build_localns(cls, cross_module=cross_module),
                                         **kwargs)
        except (NameError, AttributeError):
            continue
    return None


def _method_type_schema_json(cls: type, func: Any, is_static: bool,
                             globalns: Dict[str, Any]) -> str:
    """The metadata of a marked method: its ``Callable`` type schema from the annotations (the
    bare ``Callable`` when they do not resolve or the signature has ``*args``/keywords)."""
    hints = _resolved_hints(cls, func, globalns)
    if hints is None:
        return _callable_type_schema_json()
    params = list(inspect.signature(func).parameters.values())
    P = inspect.Parameter
    if any(p.kind in (P.VAR_POSITIONAL, P.VAR_KEYWORD) for p in params):
        return _callable_type_schema_json()
    schemas = []
    if not is_static:
        schemas.append(TypeSchema.from_annotation(cls))
        params = params[1:]
    for param in params:
        if param.kind is P.KEYWORD_ONLY:
            return _callable_type_schema_json()
        schemas.append(TypeSchema.from_annotation(hints.get(param.name, Any)))
    returns = TypeSchema.from_annotation(hints.get("return", Any))
    schema = TypeSchema("Callable", named_args={"return": (returns,), "params": tuple(schemas)})
    return json.dumps({"type_schema": schema.to_json()})


def _collect_py_methods(cls: type, globalns: Optional[Dict[str, Any]] = None) -> Optional[list]:
    """The body's type attribute entries and marked methods.

    Entries are ``(name, value, is_static)``, or with ``globalns`` given (the
    registration path) ``(name, value, is_static, metadata_json)``; None when
    there are none.
    """
    type_attr_names, _ = _type_attr_options(cls)
    short_form = globalns is None
    if globalns is None:
        globalns = vars(sys.modules[cls.__module__])
    entries: list = []
    for name, value in cls.__dict__.items():
        marked = _is_method_marked(value)
        if name not in type_attr_names and not marked:
            continue
        if isinstance(value, classmethod):
            raise TypeError(
                f"@py_class({cls.__name__!r}): {name!r} is wrapped by @classmethod, which is "
                "incompatible with FFI registration — the cls-first arg breaks the packed-call "
                "convention. Use @staticmethod or a plain instance method. If you wrote "
                "``@classmethod @method``, swap to ``@staticmethod @method`` (or drop "
                "@classmethod).")
        is_static = isinstance(value, staticmethod)
        func = value.__func__ if is_static else value
        metadata = None
        if marked and name not in type_attr_names:
            metadata = _method_type_schema_json(cls, func, is_static, globalns)
        entries.append((name, func, is_static) if short_form
                       else (name, func, is_static, metadata))
    return entries or None
