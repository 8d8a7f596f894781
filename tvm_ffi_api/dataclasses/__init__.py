"""Dataclass-style FFI object types: ``c_class`` for C++-defined types, ``py_class`` for Python ones.

Both give a class the methods of a :mod:`dataclasses` dataclass, driven by
the type's reflection; :func:`fields`, :func:`asdict`, :func:`astuple`,
:func:`replace` and :func:`is_dataclass` work on them as on the standard
library's. :class:`Enum`, :class:`IntEnum` and :class:`StrEnum` make enums
whose variants are FFI singletons.
"""

from ..object import Object
from ..sentinels import MISSING
from .c_class import c_class
from .common import asdict, astuple, fields, is_dataclass, replace
from .enum import Enum, EnumAttrMap, EnumState, IntEnum, StrEnum, auto, entry
from .field import KW_ONLY, Field, field, init_property
from .gen_abi_cpp import gen_abi_cpp
from .py_class import py_class

__all__ = [
    "KW_ONLY", "MISSING", "Enum", "EnumAttrMap", "EnumState", "Field", "IntEnum", "Object",
    "StrEnum", "asdict", "astuple", "auto", "c_class", "entry", "field", "fields", "gen_abi_cpp",
    "init_property", "is_dataclass", "py_class", "replace",
]
