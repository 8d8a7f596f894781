"""``register_object``: binding a Python class to a registered type key.

The class becomes the wrapper of every object of that type (and of
descendants nobody registered), and gains the type's reflected fields,
methods and ``__ffi_init__`` constructor (:mod:`tvm_ffi_ref.reflection`).
"""

from __future__ import annotations

from typing import TypeVar, Union

from .object import register_class, type_key_to_index
from .reflection import install_reflection

_T = TypeVar("_T", bound=type)


def register_object(type_key: Union[str, type, None] = None, *, init: bool = True):
    """Registers the decorated class for ``type_key`` (default: the class name).

    Raises ``ValueError`` when no runtime type has that key: the kernel library
    defining it must be loaded first.
    """

    def register(cls: _T, key: str) -> _T:
        type_index = type_key_to_index(key)
        if type_index is None:
            raise ValueError(f"Cannot find object type index for {key}")
        register_class(type_index, cls)
        if init or "__init__" in cls.__dict__:
            install_reflection(cls, type_index)
        else:
            init_before = cls.__dict__.get("__init__")
            install_reflection(cls, type_index)
            if init_before is None and "__init__" in cls.__dict__:
                del cls.__init__
        cls.__tvm_ffi_type_key__ = key
        return cls

    if isinstance(type_key, str):
        return lambda cls: register(cls, type_key)
    if type_key is None:
        return lambda cls: register(cls, cls.__name__)
    if isinstance(type_key, type):
        return register(type_key, type_key.__name__)
    raise TypeError("type_key must be a string, type, or None")
