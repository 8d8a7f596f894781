"""The dataclass methods ``@c_class`` and ``@py_class`` give a class.

:func:`_install_dataclass_dunders` adds, unless the class body defines them:

* ``__init__`` calling the type's ``__ffi_init__`` (positional arguments in
  field order, required ones first; keyword arguments after the ``KWARGS``
  marker), with a signature built from the fields, then the
  ``init_property`` functions and ``__post_init__``;
* ``__repr__`` (``ffi.ReprPrint``), ``__eq__``/``__ne__`` (``ffi.RecursiveEq``),
  ``__lt__``... (``ffi.RecursiveLt``...) and ``__hash__`` (``ffi.RecursiveHash``)
  when asked for, each family as a unit;
* ``__copy__`` (the type's ``__ffi_shallow_copy__``), ``__deepcopy__``
  (``ffi.DeepCopy``), ``__replace__`` (a copy with some fields set) and
  ``__match_args__``.

A ``@py_class`` ``__init__`` does nothing when the object already exists, so
``super().__init__()`` from a subclass is harmless; a user-written
``__init__`` is wrapped so that the object is allocated (``__ffi_new__``)
before it runs. A ``@c_class`` ``__init__`` refuses to run for a subclass.
:func:`_install_init` gives a class registered without the decorators the same
``__init__`` (or one saying it cannot be constructed).
"""

from __future__ import annotations

import copy
import functools
import inspect
from typing import Any, Callable, Dict, List, Optional, Tuple

from .class_attrs import _cannot_construct, _ffi_init_of, pack_kwargs
from .function import get_global_func
from .object_methods import CObjectMethods
from .sentinels import MISSING
from .type_records import TypeInfo
from .type_registry import _lookup_type_attr

#: ``repr(obj)`` by ``ffi.ReprPrint`` (``TypeName(handle)`` if that fails).
object_repr = CObjectMethods.__repr__


def _global(name: str) -> Any:

    return get_global_func(name)


# ---------------------------------------------------------------- __init__


def _chain(type_info: TypeInfo) -> List[TypeInfo]:
    """The type's info and its ancestors', root first."""
    chain = []
    while type_info is not None:
        chain.append(type_info)
        type_info = type_info.parent_type_info
    return chain[::-1]


def _all_fields(type_info: TypeInfo) -> list:
    return [f for info in _chain(type_info) for f in info.fields or ()]


def _init_normalization_fields(type_info: TypeInfo) -> Tuple[list, Dict[str, Any]]:
    """The positional ``__init__`` fields (required first) and the init fields by name."""
    fields = _all_fields(type_info)
    positional = [f for f in fields if f.c_init and not f.c_kw_only]
    ordered = ([f for f in positional if not f.c_has_default]
               + [f for f in positional if f.c_has_default])
    return ordered, {f.name: f for f in fields if f.c_init}


def _make_init_signature(type_info: TypeInfo) -> inspect.Signature:
    """``(self, <required>, <with defaults>, *, <keyword-only required>, <...defaults>)``."""
    P = inspect.Parameter
    fields = [f for f in _all_fields(type_info) if f.c_init]
    params = [P("self", P.POSITIONAL_OR_KEYWORD)]
    for kind, kw_only in ((P.POSITIONAL_OR_KEYWORD, False), (P.KEYWORD_ONLY, True)):
        group = [f for f in fields if f.c_kw_only == kw_only]
        params += [P(f.name, kind) for f in group if not f.c_has_default]
        params += [P(f.name, kind, default=MISSING) for f in group if f.c_has_default]
    return inspect.Signature(params)


def _collect_init_property_funcs(type_cls: type) -> List[Tuple[str, Callable]]:
    """The ``init_property`` functions of the class and its bases, bases first."""
    funcs: Dict[str, Callable] = {}
    for klass in reversed(type_cls.__mro__):
        funcs.update(klass.__dict__.get("__ffi_init_property_funcs__", {}))
    return list(funcs.items())


def _make_init(type_cls: type, type_info: TypeInfo, ffi_init: Any,
               py_class_mode: bool = False) -> Callable[..., None]:
    """``__init__`` building the object with ``ffi_init`` (see the module docstring)."""
    positional, by_name = _init_normalization_fields(type_info)
    has_post_init = hasattr(type_cls, "__post_init__")
    init_properties = _collect_init_property_funcs(type_cls)
    type_name = type_cls.__name__
    # Only payload-enum fields normalize their values (a payload becomes its variant).
    normalize_at = {i: f.normalize_value for i, f in enumerate(positional)
                    if f._is_payload_enum_field()}
    normalize_named = {name: f.normalize_value for name, f in by_name.items()
                       if f._is_payload_enum_field()}

    def construct(self: Any, args: tuple, kwargs: dict) -> None:
        if normalize_at:
            args = tuple(normalize_at[i](v) if i in normalize_at else v
                         for i, v in enumerate(args))
        if kwargs:
            if normalize_named:
                kwargs = {k: (normalize_named[k](v) if k in normalize_named and v is not MISSING
                              else v) for k, v in kwargs.items()}
            args = pack_kwargs(args, kwargs)
        self.__init_handle_by_constructor__(ffi_init, *args)
        if init_properties:
            cls = type(self)
            for name, func in init_properties:
                getattr(cls, name).set(self, func(self))
        if has_post_init:
            self.__post_init__()

    if py_class_mode:
        def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
            if self.__chandle__() == 0:
                construct(self, args, kwargs)
    else:
        def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
            if type_info is not type(self).__tvm_ffi_type_info__:
                raise TypeError(
                    f"Calling `super().__init__()` is not supported for @c_class `{type_name}`. "
                    "Use @py_class for inheritance with manual __init__, or define "
                    f"`{type(self).__name__}` with init=True.")
            construct(self, args, kwargs)

    __init__.__signature__ = _make_init_signature(type_info)
    __init__.__qualname__ = f"{type_cls.__qualname__}.__init__"
    __init__.__module__ = type_cls.__module__
    return __init__


def _wrap_user_init(user_init: Callable, ffi_new: Any) -> Callable:
    """A user ``__init__`` that runs on an allocated (empty) object."""

    @functools.wraps(user_init)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if self.__chandle__() == 0:
            self.__init_handle_by_constructor__(ffi_new)
        user_init(self, *args, **kwargs)

    return __init__


# --------------------------------------------------- copy, deepcopy, replace


def _make_copy(type_info: TypeInfo, shallow_copy_fn: Optional[Any]) -> Callable:
    """``__copy__`` by the type's ``__ffi_shallow_copy__`` (TypeError when it has none)."""
    if shallow_copy_fn is not None:
        def __copy__(self: Any) -> Any:
            return shallow_copy_fn(self)
    else:
        def __copy__(self: Any) -> Any:
            raise TypeError(f"Type `{type(self).__name__}` does not support copy. "
                            "The underlying C++ type is not copy-constructible.")
    return __copy__


def _make_deepcopy(_type_info: TypeInfo) -> Callable:
    """``__deepcopy__`` by ``ffi.DeepCopy`` (looked up when first used)."""

    def __deepcopy__(self: Any, memo: Any = None) -> Any:
        return _global("ffi.DeepCopy")(self)

    return __deepcopy__


def _make_replace(_type_info: TypeInfo) -> Callable:
    """``__replace__(**changes)``: a shallow copy with the given fields set (frozen too)."""

    def __replace__(self: Any, **kwargs: Any) -> Any:
        obj = copy.copy(self)
        cls = type(obj)
        for key, value in kwargs.items():
            getattr(cls, key).set(obj, value)
        return obj

    return __replace__


def _set_match_args(cls: type, type_info: TypeInfo) -> None:
    """``__match_args__``: the positional init fields, ancestors' first (unless defined)."""
    if "__match_args__" in cls.__dict__:
        return
    names = [f.name for f in _all_fields(type_info)
             if f.dataclass_field is not None and f.dataclass_field.init
             and not f.dataclass_field.kw_only]
    cls.__match_args__ = tuple(names)


# ------------------------------------------------------------- comparisons


def _is_comparable(self: Any, other: Any) -> bool:
    return isinstance(other, type(self)) or isinstance(self, type(other))


def _comparison(global_name: str, negate: bool = False) -> Callable:
    def compare(self: Any, other: Any) -> Any:
        if not _is_comparable(self, other):
            return NotImplemented
        result = _global(global_name)(self, other)
        return not result if negate else result

    return compare


def _install_comparisons(cls: type, eq: bool, order: bool, unsafe_hash: bool) -> None:
    defined = set(cls.__dict__)
    if eq and not {"__eq__", "__ne__"} & defined:
        cls.__eq__ = _comparison("ffi.RecursiveEq")
        cls.__ne__ = _comparison("ffi.RecursiveEq", negate=True)
    if order and not {"__lt__", "__le__", "__gt__", "__ge__"} & defined:
        for name, global_name in (("__lt__", "ffi.RecursiveLt"), ("__le__", "ffi.RecursiveLe"),
                                  ("__gt__", "ffi.RecursiveGt"), ("__ge__", "ffi.RecursiveGe")):
            setattr(cls, name, _comparison(global_name))
    if unsafe_hash and "__hash__" not in defined:
        def __hash__(self: Any) -> int:
            return _global("ffi.RecursiveHash")(self)

        cls.__hash__ = __hash__


# ------------------------------------------------------------- installing


def _install_dataclass_dunders(cls: type, *, init: bool, repr: bool, eq: bool, order: bool,
                               unsafe_hash: bool, match_args: bool = True,
                               py_class_mode: bool = False) -> None:
    """Installs the dataclass methods on ``cls`` (see the module docstring)."""
    type_info: TypeInfo = cls.__tvm_ffi_type_info__
    ffi_init = _ffi_init_of(type_info)
    ffi_new = _lookup_type_attr(type_info.type_index, "__ffi_new__")
    if "__init__" not in cls.__dict__:
        if init and ffi_init is not None:
            cls.__init__ = _make_init(cls, type_info, ffi_init=ffi_init,
                                      py_class_mode=py_class_mode)
        elif not init:
            cls.__init__ = _cannot_construct(cls)
    elif py_class_mode and ffi_new is not None:
        cls.__init__ = _wrap_user_init(cls.__dict__["__init__"], ffi_new)
    if repr and "__repr__" not in cls.__dict__:
        cls.__repr__ = object_repr
    _install_comparisons(cls, eq, order, unsafe_hash)
    if "__copy__" not in cls.__dict__:
        cls.__copy__ = _make_copy(type_info, _lookup_type_attr(type_info.type_index,
                                                               "__ffi_shallow_copy__"))
    if "__deepcopy__" not in cls.__dict__:
        cls.__deepcopy__ = _make_deepcopy(type_info)
    if "__replace__" not in cls.__dict__:
        cls.__replace__ = _make_replace(type_info)
    if match_args:
        _set_match_args(cls, type_info)


def _install_init(cls: type, type_info: TypeInfo) -> None:
    """Gives ``cls`` an ``__init__`` calling the type's constructor (unless the body has one)."""
    if "__init__" in cls.__dict__:
        return
    ffi_init = _ffi_init_of(type_info)
    if ffi_init is not None:
        cls.__init__ = _make_init(cls, type_info, ffi_init=ffi_init)
    else:
        cls.__init__ = _cannot_construct(cls)
