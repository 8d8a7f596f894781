"""What registering a class for a type adds to it: field properties, methods, constructors.

:func:`_add_class_attrs` gives a class its type's reflected fields (as
:class:`~.type_records.FFIProperty`) and methods, and ``__ffi_init__`` when
the type has a constructor (a ``__ffi_init__`` method, or the attribute a
generated one is registered as). ``_dunder._install_init`` makes ``__init__``
call that constructor (it lives there, beside the ``__init__`` it builds); a type
without one gets an ``__init__`` that says it cannot be constructed directly.
"""

from __future__ import annotations

import warnings
from typing import Any, Collection, Optional

from .class_annotations import own_annotations
from .sentinels import KWARGS, MISSING
from .type_records import TypeInfo
from .type_registry import _lookup_type_attr


def _ffi_init_of(type_info: TypeInfo) -> Optional[Any]:
    """The type's constructor: its ``__ffi_init__`` method, else the ``__ffi_init__`` attribute."""
    for method in type_info.methods:
        if method.name == "__ffi_init__":
            return method.func
    return _lookup_type_attr(type_info.type_index, "__ffi_init__")


def _set_names(function: Any, cls: type, name: str) -> None:
    function.__qualname__ = f"{cls.__qualname__}.{name}"
    function.__module__ = cls.__module__


def _add_class_attrs(type_cls: type, type_info: TypeInfo,
                     type_attr_names: Collection[str] = ()) -> type:
    """Adds the type's fields, methods and ``__ffi_init__`` to ``type_cls`` (never replacing
    what the class body defines)."""
    for field in type_info.fields or ():
        if field.name not in type_cls.__dict__:
            setattr(type_cls, field.name, field.as_property(type_cls))
    has_ffi_init = False
    for method in type_info.methods:
        if method.name == "__ffi_init__":
            _install_ffi_init_attr(type_cls, type_info, method.func)
            has_ffi_init = True
        elif not hasattr(type_cls, method.name):
            setattr(type_cls, method.name, method.as_callable(type_cls))
    if not has_ffi_init:
        ffi_init = _lookup_type_attr(type_info.type_index, "__ffi_init__")
        if ffi_init is not None:
            _install_ffi_init_attr(type_cls, type_info, ffi_init)
    _add_type_attr_class_attrs(type_cls, type_info, type_attr_names)
    return type_cls


def _add_type_attr_class_attrs(type_cls: type, type_info: TypeInfo,
                               type_attr_names: Collection[str]) -> None:
    """Makes the named type attributes the type has into class attributes."""
    for name in type_attr_names:
        value = _lookup_type_attr(type_info.type_index, name)
        if value is not None and name not in type_cls.__dict__:
            setattr(type_cls, name, value)


def pack_kwargs(args: tuple, kwargs: dict) -> list:
    """Positional arguments, then ``KWARGS`` and ``name, value`` pairs (MISSING ones left out)."""
    packed = list(args)
    if kwargs:
        packed.append(KWARGS)
        for key, value in kwargs.items():
            if value is not MISSING:
                packed += [key, value]
    return packed


def _install_ffi_init_attr(cls: type, type_info: TypeInfo, ffi_init: Any) -> None:
    """Adds ``__ffi_init__(*args, **kwargs)``: builds the object with the type's constructor."""
    type_name = cls.__name__

    def __ffi_init__(self: Any, /, *args: Any, **kwargs: Any) -> None:
        if type_info is not type(self).__tvm_ffi_type_info__:
            raise TypeError(
                f"Calling `{type_name}.__ffi_init__()` on a `{type(self).__name__}` instance is "
                f"not supported. Define `{type(self).__name__}` with init=True.")
        self.__init_handle_by_constructor__(ffi_init, *pack_kwargs(args, kwargs))

    _set_names(__ffi_init__, cls, "__ffi_init__")
    cls.__ffi_init__ = __ffi_init__


def _cannot_construct(cls: type) -> Any:
    message = (f"`{cls.__name__}` cannot be constructed directly. "
               "Define a custom __init__ or use a factory method.")

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        raise TypeError(message)

    _set_names(__init__, cls, "__init__")
    return __init__


def _warn_missing_field_annotations(cls: type, type_info: TypeInfo, *, stacklevel: int) -> None:
    """Warns when the class body does not annotate some of the type's own reflected fields."""

    reflected = {field.name for field in type_info.fields or ()}
    missing = sorted(reflected - set(own_annotations(cls)))
    if missing:
        warnings.warn(
            f"@c_class({type_info.type_key!r}): class `{cls.__qualname__}` does not annotate the "
            f"following reflected field(s): {', '.join(missing)}. Add type annotations (e.g. "
            "`field_name: type`) to the class body for IDE support and documentation.",
            UserWarning, stacklevel=stacklevel)
