"""``@c_class``: the Python class of a type C++ defines, with dataclass semantics.

``@c_class("my.Point", eq=True)`` is :func:`~..registry.register_object`
plus what ``@py_class`` gives a class: a :class:`~.field.Field` for each
reflected field (from the C++ traits: default, ``init``, ``kw_only``,
``repr``...), the type attributes as class attributes, and ``__init__``,
``__repr__``, comparisons, hashing and copying from the C++ reflection.
"""

from __future__ import annotations

import typing
from typing import Any, Callable

from .._dunder import _install_dataclass_dunders
from ..class_attrs import _add_type_attr_class_attrs, _warn_missing_field_annotations
from ..registry import register_object
from .field import Field, _field_converter, field
from .py_methods import _FFI_TYPE_ATTR_NAMES
from .transform import dataclass_transform


def _attach_field_objects(cls: type, type_info: Any, *, frozen: bool = False) -> None:
    """Gives each of the type's own reflected fields a :class:`Field` (``dataclass_field``)."""
    try:
        hints = typing.get_type_hints(cls)
    except Exception:  # noqa: BLE001 - annotations are optional for a C++ type
        hints = {}
    for tf in type_info.fields:
        if frozen:
            tf.frozen = True
        f = Field(name=tf.name, _ty_schema=tf.ty, default=tf.c_default,
                  default_factory=tf.c_default_factory, frozen=tf.frozen, init=tf.c_init,
                  repr=tf.c_repr, hash=tf.c_hash, compare=tf.c_compare, kw_only=tf.c_kw_only,
                  structural_eq=tf.c_structural_eq, doc=tf.doc)
        f.type = hints.get(tf.name)
        tf.dataclass_field = f


def _reinstall_field_properties(cls: type, type_info: Any, shadowed_names: set) -> None:
    """Makes the field properties again (after ``frozen`` changed), leaving shadowing ones."""
    for tf in type_info.fields:
        if tf.name not in shadowed_names:
            setattr(cls, tf.name, tf.as_property(cls))


@dataclass_transform(eq_default=False, order_default=False, field_specifiers=(Field, field))
def c_class(type_key: str, *, frozen: bool = False, init: bool = True, repr: bool = True,
            eq: bool = False, order: bool = False, unsafe_hash: bool = False,
            match_args: bool = True) -> Callable[[type], type]:
    """Registers the decorated class for the C++ type ``type_key`` (see the module docstring).

    ``init``: ``__init__`` from the C++ constructor (its ``Init``/``KwOnly``/
    ``Default`` traits); ``repr``: ``ffi.ReprPrint``; ``eq``/``order``/
    ``unsafe_hash``: the recursive comparisons and hash of C++ reflection;
    ``frozen``: the type's own fields read-only from Python (``type(obj).f.set``
    still writes); ``match_args``: the positional init fields. A dunder the
    class body defines is kept.
    """
    def decorator(cls: type) -> type:
        for name, value in list(cls.__dict__.items()):
            if isinstance(value, Field):
                delattr(cls, name)
        shadowed = set(vars(cls))
        cls = register_object(type_key, init=False)(cls)
        type_info = cls.__tvm_ffi_type_info__
        _warn_missing_field_annotations(cls, type_info, stacklevel=2)
        _attach_field_objects(cls, type_info, frozen=frozen)
        if frozen:
            _reinstall_field_properties(cls, type_info, shadowed)
        _add_type_attr_class_attrs(cls, type_info, _FFI_TYPE_ATTR_NAMES)
        _install_dataclass_dunders(cls, init=init, repr=repr, eq=eq, order=order,
                                   unsafe_hash=unsafe_hash, match_args=match_args)
        cls.__ffi_is_dataclass__ = True
        return cls

    return decorator


c_class.__dataclass_transform__["kwargs"]["converter"] = _field_converter
