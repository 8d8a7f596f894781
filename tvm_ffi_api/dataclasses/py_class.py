"""``@py_class``: a Python class that defines a TVM FFI object type, with dataclass semantics.

::

    @py_class("my.Point", eq=True)
    class Point(Object):
        x: float
        y: float = 0.0

registers the type ``my.Point`` (a child of the nearest registered base),
lays out its fields in the object (so C++ code reads them through
reflection), and installs ``__init__``, ``__repr__``, ``__eq__``... as a
dataclass would. Field values are checked and converted against their
annotations when set. Registration happens in two phases (see
:mod:`._resolve_fields`): annotations may name classes defined later.

Equality has three independent knobs: ``eq``/``unsafe_hash`` make ``==`` and
``hash()`` compare field by field (default: identity of the object, as for
any ``Object``); ``structural_eq`` (default ``"tree"``) says how
``structural_equal``/``structural_hash`` treat the type; ``same_as`` is
always identity.
"""

from __future__ import annotations

import sys
import typing
from copy import copy
from typing import Any, ClassVar, Dict, Optional, Union

from .._dunder import _install_dataclass_dunders
from ..class_attrs import _add_class_attrs
from ..sentinels import MISSING
from ..type_records import TypeInfo
from ..type_schema import TypeSchema
from . import _resolve_fields
from .field import KW_ONLY, Field, _field_converter, field, init_property as _InitProperty
from .py_methods import (  # noqa: F401
    _FFI_TYPE_ATTR_NAMES,
    _collect_py_methods,
    _inherited_type_attrs,
    _type_attr_options,
    method,
)
from .transform import dataclass_transform

#: ``structural_eq`` values and the ``TVMFFISEqHashKind`` each registers (None: no metadata).
_STRUCTURE_KIND_MAP: Dict[Optional[str], int] = {
    None: 0, "tree": 1, "var": 2, "dag": 3, "const-tree": 4, "singleton": 5}


def _field_hooks(cls: type) -> list:
    """Functions in the class hierarchy marked ``__ffi_on_fields_resolved__``, bases first."""
    return [hook for base in reversed(cls.__mro__) for hook in base.__dict__.values()
            if callable(hook) and getattr(hook, "__ffi_on_fields_resolved__", False) is True]


def _inherited_field_count(type_info: TypeInfo) -> int:
    count, parent = 0, type_info.parent_type_info
    while parent is not None:
        count += len(parent.fields or ())
        parent = parent.parent_type_info
    return count


def _make_field(cls: type, owner: type, name: str, resolved: Any, params: dict,
                kw_only: bool, init_properties: dict) -> Field:
    """The Field of one annotation: from the body's value (a Field, an init_property, a plain
    default, or nothing), with the decorator's defaults applied."""
    value = owner.__dict__.get(name, MISSING)
    if isinstance(value, Field):
        f = value if owner is cls else copy(value)
    elif isinstance(value, _InitProperty):
        f = field(init=False, structural_eq="ignore", repr=False, hash=False, compare=False)
        init_properties[name] = value.func
    elif value is not MISSING:
        f = field(default=value)
    else:
        f = field()
    if owner is cls and value is not MISSING:
        delattr(cls, name)
    f.name = name
    f._ty_schema = TypeSchema.from_annotation(resolved)
    f.type = resolved
    if f.kw_only is None:
        f.kw_only = kw_only
    if params["frozen"] and not f.frozen:
        f.frozen = True
    if f.hash is None:
        f.hash = f.compare
    return f



def _collect_fields(type_info: TypeInfo, resolved_fields: _resolve_fields.ResolvedFields):
    """The type's own Fields, the marker annotations seen, and the init_property functions."""
    cls, params = type_info.type_cls, type_info._decorator_args
    owners, hints_by_owner = resolved_fields
    marker_types = getattr(cls, "__ffi_field_markers__", ())
    if not isinstance(marker_types, (tuple, list)) or not all(
            isinstance(marker, type) for marker in marker_types):
        raise TypeError("__ffi_field_markers__ must be a tuple or list of types")
    parent = type_info.parent_type_info
    markers = list(getattr(parent, "_decorator_args", {}).get("field_markers", ()))
    inherited = _inherited_field_count(type_info)
    fields: Dict[str, Field] = {}
    init_properties: Dict[str, Any] = {}
    kw_only = params["kw_only"]
    for owner in owners:
        for name, resolved in hints_by_owner[owner].items():
            if resolved is ClassVar or typing.get_origin(resolved) is ClassVar:
                continue
            if resolved is KW_ONLY:
                kw_only = True
                if owner is cls and name in cls.__dict__:
                    delattr(cls, name)
                continue
            if any(resolved is marker for marker in marker_types):
                markers.append((resolved, owner, name, inherited + len(fields)))
                continue
            fields[name] = _make_field(cls, owner, name, resolved, params, kw_only,
                                       init_properties)
    return list(fields.values()), markers, init_properties


def _restore_user_init(cls: type) -> None:
    """Drops the temporary ``__init__`` of a deferred class (giving back the user's own)."""
    if "__ffi_py_class_is_deferred_init__" not in cls.__dict__:
        return
    if "__init__" in cls.__dict__:
        delattr(cls, "__init__")
    delattr(cls, "__ffi_py_class_is_deferred_init__")
    user_init = cls.__dict__.get("_py_class_user_init")
    if user_init is not None:
        cls.__init__ = user_init
        delattr(cls, "_py_class_user_init")


def on_fields_resolved(type_info: TypeInfo,
                       resolved_fields: _resolve_fields.ResolvedFields) -> None:
    """Phase 2: makes the Fields, runs field hooks, registers fields, methods and type
    attributes, and installs the dataclass methods."""

    cls, params = type_info.type_cls, type_info._decorator_args
    hooks = _field_hooks(cls)
    own_fields, markers, init_properties = _collect_fields(type_info, resolved_fields)
    globalns = getattr(sys.modules.get(cls.__module__), "__dict__", {})
    if init_properties:
        cls.__ffi_init_property_funcs__ = init_properties
    type_attr_names, inherited_attrs = _type_attr_options(cls)
    params["field_markers"] = tuple(markers)
    # Hooks run before registration freezes the fields (they may still change options).
    for hook in hooks:
        hook(type_info, own_fields)
    for f in own_fields:
        if f.extra_kwargs:
            raise TypeError(f"{cls.__name__}.{f.name}: unrecognized field options: "
                            + ", ".join(sorted(f.extra_kwargs)))
    py_methods = _collect_py_methods(cls, globalns) or []
    py_methods.extend(_inherited_type_attrs(type_info, inherited_attrs))
    type_info._register_fields(own_fields, _STRUCTURE_KIND_MAP[params["structural_eq"]])
    for py_field, type_field in zip(own_fields, type_info.fields):
        type_field.dataclass_field = py_field
    type_info._register_py_methods(py_methods, type_attr_names=type_attr_names)
    _add_class_attrs(cls, type_info, type_attr_names=type_attr_names)
    _restore_user_init(cls)
    _install_dataclass_dunders(cls, init=params["init"], repr=params["repr"], eq=params["eq"],
                               order=params["order"], unsafe_hash=params["unsafe_hash"],
                               match_args=params["match_args"], py_class_mode=True)


_resolve_fields.on_fields_resolved = on_fields_resolved  # phase 2's end, for the waiting list


@dataclass_transform(eq_default=False, order_default=False, field_specifiers=(Field, field))
def py_class(cls_or_type_key: Union[type, str, None] = None, /, *,
             type_key: Optional[str] = None, frozen: bool = False, init: bool = True,
             repr: bool = True, eq: bool = False, order: bool = False,
             unsafe_hash: bool = False, match_args: bool = True, kw_only: bool = False,
             structural_eq: Optional[str] = "tree", slots: bool = True) -> Any:
    """Registers a Python-defined type (see the module docstring).

    Usable bare (``@py_class``), with a type key (``@py_class("my.Point")``),
    with options, or both. The type key defaults to
    ``"<module>.<qualname>"``. ``frozen`` makes fields read-only after
    ``__init__`` (``type(obj).field.set(obj, v)`` still writes); ``init``,
    ``repr``, ``eq``, ``order`` (needs ``eq``), ``unsafe_hash``, ``match_args``
    and ``kw_only`` are as for :func:`dataclasses.dataclass`;
    ``structural_eq`` is None, ``"tree"``, ``"var"``, ``"dag"``,
    ``"const-tree"`` or ``"singleton"``; ``slots`` is accepted for type
    checkers (object classes never have a ``__dict__``).
    """
    if order and not eq:
        raise ValueError("order=True requires eq=True")
    if structural_eq not in _STRUCTURE_KIND_MAP:
        choices = sorted(k for k in _STRUCTURE_KIND_MAP if k is not None)
        raise ValueError(f"structural_eq must be one of {choices} or None, "
                         f"got {structural_eq!r}")
    params = {"frozen": frozen, "init": init, "repr": repr, "eq": eq, "order": order,
              "unsafe_hash": unsafe_hash, "match_args": match_args, "kw_only": kw_only,
              "structural_eq": structural_eq}
    key = cls_or_type_key if isinstance(cls_or_type_key, str) else type_key

    def decorator(cls: type) -> type:
        globalns = getattr(sys.modules.get(cls.__module__), "__dict__", {})
        info = _resolve_fields.register_type_without_fields(cls, key)
        info._decorator_args = dict(params)  # per class: hooks may adjust them
        try:
            resolved = _resolve_fields.resolve_type_hints_by_owner(cls, globalns)
            if resolved is not None:
                on_fields_resolved(info, resolved)
                _resolve_fields.flush_pending()
            else:
                _resolve_fields.defer_field_registration(cls, info, globalns)
        except Exception:
            _resolve_fields.rollback_registration(cls, info)
            raise
        cls.__ffi_is_dataclass__ = True
        return cls

    if cls_or_type_key is None or isinstance(cls_or_type_key, str):
        return decorator
    if isinstance(cls_or_type_key, type):
        return decorator(cls_or_type_key)
    raise TypeError(f"py_class: expected str or type, got {type(cls_or_type_key)}")


py_class.__dataclass_transform__["kwargs"]["converter"] = _field_converter
