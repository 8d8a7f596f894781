"""The ``dataclasses`` helpers for ``@c_class``/``@py_class`` types: fields, asdict, replace...

They behave as the standard library's do for its dataclasses: :func:`fields`
lists the Field of every field, ancestors first; :func:`asdict` and
:func:`astuple` copy an instance recursively (FFI containers become Python
lists and dicts, so the result is plain data); :func:`replace` copies with
some fields changed (frozen ones too).
"""

from __future__ import annotations

import copy
from collections import namedtuple
from functools import wraps
from typing import Any, Callable, Iterable, Tuple

from ..cany import to_py_class_value as _to_py_class_value
from ..container import Array, Dict, List, Map
from ..type_schema import TypeSchema
from .field import Field

__all__ = ["asdict", "astuple", "fields", "is_dataclass", "replace"]

#: Values returned as they are (immutable, not containers), as ``dataclasses`` does.
_ATOMIC_TYPES = frozenset({bool, bytes, complex, float, int, str, type(None), type(Ellipsis),
                           type(NotImplemented)})


def is_dataclass(obj: Any) -> bool:
    """Whether ``obj`` is a ``@c_class``/``@py_class`` class or an instance of one (FFI
    containers, which are reflected too, are not)."""
    cls = obj if isinstance(obj, type) else type(obj)
    return getattr(cls, "__ffi_is_dataclass__", False) is True


def fields(obj_or_cls: Any) -> Tuple[Field, ...]:
    """The Fields of a ``@c_class``/``@py_class`` class or instance, ancestors' first."""
    if not is_dataclass(obj_or_cls):
        raise TypeError("fields() argument must be a c_class or py_class type or instance, "
                        f"got {type(obj_or_cls).__name__}")
    cls = obj_or_cls if isinstance(obj_or_cls, type) else type(obj_or_cls)
    chain = []
    info = getattr(cls, "__tvm_ffi_type_info__", None)
    while info is not None:
        chain.append(info)
        info = info.parent_type_info
    return tuple(tf.dataclass_field for info in reversed(chain) for tf in info.fields or ()
                 if tf.dataclass_field is not None)


def _make_namedtuple(typename: str, fields: Tuple[Field, ...]) -> Any:
    """A named tuple class whose construction, ``_make`` and ``_replace`` convert each value as
    the given fields do (all required, in order; defaults and hooks do not apply)."""
    tuple_cls = namedtuple(typename, [f.name for f in fields])
    names = tuple_cls._fields
    schemas = tuple(f._ty_schema if f._ty_schema is not None else TypeSchema.from_annotation(f.type)
                    for f in fields)
    tuple_cls.__annotations__ = {f.name: f.type for f in fields if f.type is not None}
    native_new = tuple_cls.__new__
    native_make = tuple_cls._make.__func__

    @wraps(native_new)
    def checked_new(cls: type, /, *args: Any, **kwargs: Any) -> tuple:
        raw = native_new(cls, *args, **kwargs)
        converted = []
        for name, schema, value in zip(names, schemas, raw):
            try:
                converted.append(_to_py_class_value(schema.convert(value)))
            except TypeError as exc:
                raise TypeError(f"{typename}.{name}: {exc}") from exc
        return native_new(cls, *converted)

    @classmethod
    def checked_make(cls: Any, iterable: Iterable[Any]) -> tuple:
        return cls(*native_make(cls, iterable))  # the native one checks the length

    tuple_cls.__new__ = staticmethod(checked_new)
    tuple_cls._make = checked_make
    return tuple_cls


def replace(obj: Any, /, **changes: Any) -> Any:
    """A copy of ``obj`` with the given fields set (through ``obj.__replace__``)."""
    return obj.__replace__(**changes)


def _is_instance(obj: Any) -> bool:
    return not isinstance(obj, type) and is_dataclass(obj)


def _asdict_inner(obj: Any, dict_factory: Callable) -> Any:  # noqa: PLR0911 - one case each
    kind = type(obj)
    if kind in _ATOMIC_TYPES:
        return obj
    if isinstance(obj, (Array, List)):
        return [_asdict_inner(v, dict_factory) for v in obj]
    if isinstance(obj, (Map, Dict)):
        return dict_factory([(_asdict_inner(k, dict_factory), _asdict_inner(v, dict_factory))
                             for k, v in obj.items()])
    if _is_instance(obj):
        pairs = [(f.name, _asdict_inner(getattr(obj, f.name), dict_factory))
                 for f in fields(obj)]
        return dict(pairs) if dict_factory is dict else dict_factory(pairs)
    if kind in (list, tuple):
        return kind(_asdict_inner(v, dict_factory) for v in obj)
    if kind is dict:
        return {_asdict_inner(k, dict_factory): _asdict_inner(v, dict_factory)
                for k, v in obj.items()}
    if issubclass(kind, tuple):
        items = [_asdict_inner(v, dict_factory) for v in obj]
        return kind(*items) if hasattr(obj, "_fields") else kind(items)
    if issubclass(kind, dict):
        return _copy_dict(obj, lambda v: _asdict_inner(v, dict_factory))
    if issubclass(kind, list):
        return kind(_asdict_inner(v, dict_factory) for v in obj)
    return copy.deepcopy(obj)


def _copy_dict(obj: dict, inner: Callable) -> dict:
    """A dict subclass instance copied item by item (a defaultdict keeps its factory)."""
    kind = type(obj)
    if hasattr(kind, "default_factory"):
        result = kind(obj.default_factory)
        for k, v in obj.items():
            result[inner(k)] = inner(v)
        return result
    return kind((inner(k), inner(v)) for k, v in obj.items())


def _astuple_inner(obj: Any, tuple_factory: Callable) -> Any:
    kind = type(obj)
    if kind in _ATOMIC_TYPES:
        return obj
    if isinstance(obj, (Array, List)):
        return [_astuple_inner(v, tuple_factory) for v in obj]
    if isinstance(obj, (Map, Dict)):
        return {_astuple_inner(k, tuple_factory): _astuple_inner(v, tuple_factory)
                for k, v in obj.items()}
    if _is_instance(obj):
        return tuple_factory([_astuple_inner(getattr(obj, f.name), tuple_factory)
                              for f in fields(obj)])
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return kind(*[_astuple_inner(v, tuple_factory) for v in obj])
    if isinstance(obj, (list, tuple)):
        return kind(_astuple_inner(v, tuple_factory) for v in obj)
    if isinstance(obj, dict):
        return _copy_dict(obj, lambda v: _astuple_inner(v, tuple_factory))
    return copy.deepcopy(obj)


def asdict(obj: Any, *, dict_factory: Callable = dict) -> Any:
    """The fields of a ``@c_class``/``@py_class`` instance as a new dict, recursively."""
    if not _is_instance(obj):
        raise TypeError("asdict() should be called on c_class / py_class instances")
    return _asdict_inner(obj, dict_factory)


def astuple(obj: Any, *, tuple_factory: Callable = tuple) -> Any:
    """The fields of a ``@c_class``/``@py_class`` instance as a new tuple, recursively."""
    if not _is_instance(obj):
        raise TypeError("astuple() should be called on c_class / py_class instances")
    return _astuple_inner(obj, tuple_factory)
