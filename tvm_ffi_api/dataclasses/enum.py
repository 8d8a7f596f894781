"""Enums whose variants are FFI objects, one per variant, shared with C++.

::

    class Color(IntEnum, type_key="my.Color"):
        red = entry(value=1)
        blue = entry(value=2)

``Color.red`` is a singleton object of type ``my.Color``; ``Color(1)``,
``Color("red")`` and ``Color.get(1)`` return it. Every variant has an integer
and a string index (``_int_index``, ``_str_index``); an :class:`IntEnum`'s
``value`` is its integer index, a :class:`StrEnum`'s its string index. The
variants live in an ``ffi.EnumState`` registered as the type's
``__ffi_enum__`` attribute (entries in order, indexes, extensible attribute
columns), so C++ code finds them too. When C++ already registered the type
(and its variants), the class binds to them: a bare annotation
``red: ClassVar[Color]`` names an existing variant.
"""

from __future__ import annotations

import typing
from typing import Any, Callable, ClassVar, Dict, Iterator, List, Optional, Tuple

from ..class_annotations import own_annotations
from ..container import Dict as FFIDict, List as FFIList
from ..object import Object
from ..sentinels import MISSING
from ..type_registry import _lookup_type_attr, _object_type_key_to_index, _register_type_attr
from .c_class import c_class
from .py_class import py_class

__all__ = ["ENUM_STATE_ATTR", "Enum", "EnumAttrMap", "EnumState", "IntEnum", "StrEnum", "auto",
           "entry"]

#: The type attribute holding an enum type's ``ffi.EnumState``.
ENUM_STATE_ATTR = "__ffi_enum__"
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


@c_class("ffi.EnumState")
class EnumState(Object):
    """The variants of one enum type: ``entries`` in order, ``indexes`` by int and str index,
    and ``attrs``, the extensible attribute columns."""

    entries: FFIList
    indexes: FFIDict
    attrs: FFIDict


class _EnumEntry:
    """A declared variant: positional and keyword values of its own fields."""

    __slots__ = ("args", "kwargs")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.args = args
        self.kwargs = kwargs

    def __repr__(self) -> str:
        parts = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs.items()]
        return f"entry({', '.join(parts)})"


def entry(*args: Any, **kwargs: Any) -> Any:
    """Declares a variant (with values for the enum's own fields, if it has any)."""
    return _EnumEntry(*args, **kwargs)


def auto() -> Any:
    """Declares a variant whose indices come from its name and position."""
    return _EnumEntry()


class _ClassProperty:
    __slots__ = ("fget",)

    def __init__(self, fget: Callable[[type], Any]) -> None:
        self.fget = fget

    def __get__(self, instance: Any, owner: Optional[type] = None) -> Any:
        return self.fget(owner if owner is not None else type(instance))


def _normalize_index(index: Any) -> Any:
    if isinstance(index, bool):
        return int(index)
    if isinstance(index, int):
        if not _INT64_MIN <= index <= _INT64_MAX:
            raise OverflowError(f"enum integer index {index} is outside int64")
        return index
    if isinstance(index, str):
        return index
    raise TypeError(f"enum index must be int or str, got {type(index).__name__}")


def _state(cls: type, *, create: bool = False) -> Optional[EnumState]:
    info = getattr(cls, "__tvm_ffi_type_info__", None)
    if info is None:
        return None
    state = _lookup_type_attr(info.type_index, ENUM_STATE_ATTR)
    if state is None and create:
        _register_type_attr(info.type_index, ENUM_STATE_ATTR, EnumState())
        state = _lookup_type_attr(info.type_index, ENUM_STATE_ATTR)
    return state


def _ordered_entries(cls: type) -> List[Any]:
    state = _state(cls)
    return [] if state is None else list(state.entries)


class _EnumMeta(type(Object)):
    """Iterating an enum class gives its variants; calling it with an index looks one up."""

    def __iter__(cls) -> Iterator[Any]:
        return iter(_ordered_entries(cls))

    def __len__(cls) -> int:
        return len(_ordered_entries(cls))

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if not kwargs and len(args) == 1:
            value = args[0]
            if isinstance(value, cls):
                return value
            if isinstance(value, (int, str)):
                try:
                    return cls.get(value)
                except KeyError:
                    raise ValueError(f"{value!r} is not a valid {cls.__name__}") from None
        return super().__call__(*args, **kwargs)


@c_class("ffi.Enum", init=False)
class Enum(Object, metaclass=_EnumMeta):
    """Base of enums whose variants are FFI singletons (see the module docstring)."""

    __slots__ = ()
    _int_index: int
    _str_index: str

    def __init_subclass__(cls, *, type_key: Optional[str] = None, frozen: bool = True,
                          init: bool = True, repr: bool = True, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if type_key is None:
            return
        payload_type = getattr(cls, "__tvm_ffi_payload_enum__", None)
        user_repr = "__repr__" in cls.__dict__
        binders, declarations = _collect_declarations(cls, payload_type)
        cxx_backed = _object_type_key_to_index(type_key) is not None
        if cxx_backed:
            c_class(type_key, init=init, repr=repr)(cls)
        else:
            py_class(type_key, frozen=frozen, structural_eq="singleton")(cls)
        if payload_type is not None:
            _install_payload_behavior(cls, payload_type, user_repr)
        _resolve(cls, binders, declarations, type_key, cxx_backed, payload_type)

    @classmethod
    def get(cls, index: Any) -> "Enum":
        """The variant at an integer or string index (``KeyError`` if none)."""
        index = _normalize_index(index)
        state = _state(cls)
        if state is not None and index in state.indexes:
            return state.indexes[index]
        raise KeyError(index)

    @classmethod
    def all_entries(cls) -> Iterator["Enum"]:
        """The variants in registration order."""
        return iter(_ordered_entries(cls))

    @_ClassProperty
    def attr_dict(cls: type) -> Any:
        """The live extensible-attribute dict (column name -> {variant: value})."""
        state = _state(cls)
        return FFIDict({}) if state is None else state.attrs

    @classmethod
    def def_attr(cls, name: str, *, default: Any = MISSING) -> "EnumAttrMap":
        """A per-variant view of extensible attribute ``name``."""
        return EnumAttrMap(cls, name, default=default)


class EnumAttrMap:
    """One extensible attribute of an enum: a mutable map from variant to value."""

    __slots__ = ("_default", "_enum_cls", "_name")

    def __init__(self, enum_cls: type, name: str, *, default: Any = MISSING) -> None:
        self._enum_cls = enum_cls
        self._name = name
        self._default = default

    def _check(self, variant: object) -> None:
        if not isinstance(variant, self._enum_cls):
            raise TypeError(f"expected {self._enum_cls.__name__}, got {type(variant).__name__}")

    def _column(self, create: bool) -> Any:
        state = _state(self._enum_cls, create=create)
        if state is None:
            return None
        column = state.attrs.get(self._name)
        if column is None and create:
            column = FFIDict({})
            state.attrs[self._name] = column
        return column

    def __setitem__(self, variant: object, value: Any) -> None:
        self._check(variant)
        self._column(True)[variant] = value

    def __getitem__(self, variant: object) -> Any:
        self._check(variant)
        column = self._column(False)
        if column is not None and variant in column:
            return column[variant]
        if self._default is not MISSING:
            return self._default
        raise KeyError(f"{variant!r} has no extensible attribute {self._name!r}")

    def __contains__(self, variant: object) -> bool:
        if not isinstance(variant, self._enum_cls):
            return False
        column = self._column(False)
        return column is not None and variant in column

    def get(self, variant: object, default: Any = None) -> Any:
        """The stored value, or ``default``."""
        return self[variant] if variant in self else default

    @property
    def name(self) -> str:
        """The attribute's name."""
        return self._name


def _install_payload_behavior(cls: type, payload_type: type, user_repr: bool) -> None:
    """``==``, ``hash`` and ``str`` by payload, ``name`` and a ``Class.name`` repr."""
    def eq(self: Any, other: object) -> Any:
        if isinstance(other, type(self)):
            return self.value == other.value
        if isinstance(other, payload_type):
            return self.value == other
        return NotImplemented

    def ne(self: Any, other: object) -> Any:
        result = eq(self, other)
        return NotImplemented if result is NotImplemented else not result

    defaults = {"__eq__": eq, "__ne__": ne, "__str__": lambda self: str(self.value),
                "__hash__": lambda self: hash(self.value)}
    for key, value in defaults.items():
        if key not in cls.__dict__:
            setattr(cls, key, value)
    if "name" not in cls.__dict__:
        cls.name = property(lambda self: str(self._str_index))
    if not user_repr:
        cls.__repr__ = lambda self: f"{type(self).__name__}.{self.name}"


def _reject_value_field(cls: type, base_name: str) -> None:
    if "value" in cls.__dict__ or "value" in own_annotations(cls):
        raise TypeError(f"{base_name} reserves `value` as its canonical index alias")


@c_class("ffi.IntEnum", init=False)
class IntEnum(Enum):  # type: ignore[metaclass]  # (_EnumMeta's base is computed)
    """An enum whose ``value`` is its integer index (a signed 64-bit int)."""

    __slots__ = ()
    __tvm_ffi_payload_enum__ = int
    value: int

    def __init_subclass__(cls, **kwargs: Any) -> None:
        _reject_value_field(cls, "IntEnum")
        super().__init_subclass__(**kwargs)


@c_class("ffi.StrEnum", init=False)
class StrEnum(Enum):  # type: ignore[metaclass]  # (_EnumMeta's base is computed)
    """An enum whose ``name`` and ``value`` are its string index."""

    __slots__ = ()
    __tvm_ffi_payload_enum__ = str
    value: str

    def __init_subclass__(cls, **kwargs: Any) -> None:
        _reject_value_field(cls, "StrEnum")
        super().__init_subclass__(**kwargs)


# ------------------------------------------------------------ declarations


def _is_class_var(annotation: Any) -> bool:
    if annotation is ClassVar or typing.get_origin(annotation) is ClassVar:
        return True
    return isinstance(annotation, str) and annotation.replace(" ", "").startswith(
        ("ClassVar", "typing.ClassVar"))


def _collect_declarations(cls: type, payload_type: Optional[type]
                          ) -> Tuple[List[str], Dict[str, _EnumEntry]]:
    """Binders (``name: ClassVar[...]`` without a value) and declared variants, removed from
    the class body; a payload enum also takes plain values (``red = 1``)."""
    annotations = own_annotations(cls)
    binders = [name for name, ann in annotations.items()
               if not name.startswith("_") and _is_class_var(ann) and name not in cls.__dict__]
    field_names = {name for name, ann in annotations.items() if not _is_class_var(ann)}
    declarations: Dict[str, _EnumEntry] = {}
    for name, value in list(cls.__dict__.items()):
        if name.startswith("_") or name in field_names:
            continue
        if isinstance(value, _EnumEntry):
            declarations[name] = value
        elif payload_type is not None and not (
                isinstance(value, (staticmethod, classmethod, property)) or callable(value)):
            declarations[name] = _EnumEntry(value=value)
        else:
            continue
        delattr(cls, name)
    return binders, declarations


def _indices(cls: type, alias: str, ordinal: int, declaration: _EnumEntry,
             payload_type: Optional[type]) -> Tuple[int, str, _EnumEntry]:
    kwargs = dict(declaration.kwargs)
    if "_int_index" in kwargs or "_str_index" in kwargs:
        raise TypeError(f"{cls.__name__}.{alias}: enum indices are inferred")
    if payload_type is None:
        return ordinal, alias, declaration
    if "value" not in kwargs:
        raise TypeError(f"{cls.__name__}.{alias} requires a {payload_type.__name__} value")
    value = kwargs.pop("value")
    if type(value) is not payload_type:
        raise TypeError(f"{cls.__name__}.{alias} value must be {payload_type.__name__}")
    rest = _EnumEntry(*declaration.args, **kwargs)
    if payload_type is int:
        _normalize_index(value)
        return value, alias, rest
    return ordinal, value, rest


def _create(cls: type, int_index: int, str_index: str, declaration: _EnumEntry,
            cxx_backed: bool) -> Any:
    try:
        if not cxx_backed:
            return cls(*declaration.args, _int_index=int_index, _str_index=str_index,
                       **declaration.kwargs)
        if declaration.args:
            raise TypeError("C++-backed enum entries require keyword fields")
        ffi_new = _lookup_type_attr(cls.__tvm_ffi_type_info__.type_index, "__ffi_new__")
        if ffi_new is None:
            raise TypeError("enum type has no allocator")
        instance = ffi_new()
        values = {"_int_index": int_index, "_str_index": str_index, **declaration.kwargs}
        for name, value in values.items():
            descriptor = getattr(cls, name, None)
            if descriptor is None or not hasattr(descriptor, "set"):
                raise TypeError(f"field {name!r} has no reflected setter")
            descriptor.set(instance, value)
        return instance
    except Exception as err:  # noqa: BLE001 - reported with the variant's name
        raise TypeError(f"{cls.__name__}.{str_index}: invalid enum entry: {err}") from None


def _register(entries: Any, indexes: Any, instance: Any) -> None:
    entries.append(instance)
    indexes[instance._int_index] = instance
    indexes[instance._str_index] = instance


def _resolve(cls: type, binders: List[str], declarations: Dict[str, _EnumEntry], type_key: str,
             cxx_backed: bool, payload_type: Optional[type]) -> None:
    """Binds each binder and declaration to its variant, creating the missing ones."""
    state = _state(cls, create=True)
    entries, indexes = state.entries, state.indexes
    for alias in binders:
        instance = indexes.get(alias)
        if instance is None:
            if cxx_backed:
                raise RuntimeError(f"{type_key!r} has no enum at string index {alias!r}")
            if payload_type is int:
                raise TypeError(f"{cls.__name__}.{alias} requires an integer value")
            instance = _create(cls, len(entries), alias, _EnumEntry(), cxx_backed)
            _register(entries, indexes, instance)
        setattr(cls, alias, instance)
    for alias, declaration in declarations.items():
        int_index, str_index, rest = _indices(cls, alias, len(entries), declaration,
                                              payload_type)
        instance = indexes.get(int_index if payload_type is int else str_index)
        if instance is None:
            if int_index in indexes or str_index in indexes:
                raise ValueError(f"duplicate enum index in {cls.__name__}.{alias}")
            instance = _create(cls, int_index, str_index, rest, cxx_backed)
            _register(entries, indexes, instance)
        setattr(cls, alias, instance)
