"""The Python classes of the testing library's types, and the helpers tests use.

Each class is registered for the ``testing.*`` type of the same name (with
``c_class``, as upstream's are) and documents the fields the C++ side reflects.
``__test__ = False`` keeps pytest from collecting the ``Test*`` classes.
"""

from __future__ import annotations

import sys
from typing import Any, ClassVar, Mapping, Optional, Sequence, Union

from ..dataclasses import IntEnum, StrEnum, c_class, entry
from ..device import Device
from ..dtype import dtype
from ..function import get_global_func
from ..object import Object
from ..reflection import lookup_type_attr

# ------------------------------------------------------------- simple objects


@c_class("testing.TestObjectBase")
class TestObjectBase(Object):
    """Three defaulted fields (``v_f64`` read-only) and the method ``add_i64``."""

    __test__ = False
    v_i64: int
    v_f64: float
    v_str: str


@c_class("testing.TestIntPair")
class TestIntPair(Object):
    """Two read-only ints made by ``TestIntPair(a, b)``, with ``sum()``."""

    __test__: ClassVar[bool] = False
    a: int
    b: int


@c_class("testing.TestFrozenCxx", frozen=True)
class TestFrozenCxx(Object):
    """A type whose Python class is frozen although C++ could write it."""

    __test__: ClassVar[bool] = False
    value: int
    tag: str


@c_class("testing.TestObjectDerived")
class TestObjectDerived(TestObjectBase):
    """``TestObjectBase`` plus a map and an array of anything."""

    __test__ = False
    v_map: Mapping[Any, Any]
    v_array: Sequence[Any]


@c_class("testing.TestObjectPtrHolder")
class TestObjectPtrHolder(Object):
    """A required and an optional reference to a ``TestObjectBase``."""

    __test__ = False
    value: TestObjectBase
    optional_value: Optional[TestObjectBase]


@c_class("testing.TestNonCopyable")
class TestNonCopyable(Object):
    """An object C++ cannot copy (no ``__ffi_shallow_copy__``)."""

    __test__ = False
    value: int


@c_class("testing.SchemaAllTypes")
class _SchemaAllTypes:
    """A field and a method for each kind of declared type (for type schemas)."""

    v_bool: bool
    v_int: int
    v_float: float
    v_device: Device
    v_dtype: dtype
    v_string: str
    v_bytes: bytes
    v_opt_int: Optional[int]
    v_opt_str: Optional[str]
    v_arr_int: Sequence[int]
    v_arr_str: Sequence[str]
    v_map_str_int: Mapping[str, int]
    v_map_str_arr_int: Mapping[str, Sequence[int]]
    v_variant: Union[str, Sequence[int], Mapping[str, int]]
    v_opt_arr_variant: Optional[Sequence[Union[int, str]]]


# ------------------------------------------------------------- helpers


def create_object(type_key: str, **kwargs: Any) -> Object:
    """An object of ``type_key`` made by reflection, its fields set from ``kwargs``.

    Fields not given take their defaults (``ffi.MakeObjectFromPackedArgs``).
    For tests only.
    """
    args: list = [type_key]
    for name, value in kwargs.items():
        args += [name, value]
    return get_global_func("ffi.MakeObjectFromPackedArgs")(*args)


def make_unregistered_object() -> Object:
    """An object of a type no Python class is registered for."""
    return get_global_func("testing.make_unregistered_object")()


def add_one(x: int) -> int:
    """``x + 1``, computed by the testing library."""
    return get_global_func("testing.add_one")(x)


# ------------------------------------------------------------- compare and hash


@c_class("testing.TestCompare")
class TestCompare(Object):
    """``ignored_field`` takes no part in comparisons."""

    __test__ = False
    key: int
    name: str
    ignored_field: int


@c_class("testing.TestHash")
class TestHash(Object):
    """``hash_ignored`` takes no part in hashing."""

    __test__ = False
    key: int
    name: str
    hash_ignored: int


@c_class("testing.TestCustomHash")
class TestCustomHash(Object):
    """Its ``__ffi_hash__`` hook hashes ``key`` only."""

    __test__ = False
    key: int
    label: str


@c_class("testing.TestCustomCompare")
class TestCustomCompare(Object):
    """Its ``__ffi_eq__``/``__ffi_compare__`` hooks look at ``key`` only."""

    __test__ = False
    key: int
    label: str


@c_class("testing.TestEqWithoutHash")
class TestEqWithoutHash(Object):
    """Has ``__ffi_eq__`` but no ``__ffi_hash__``, which hashing rejects."""

    __test__ = False
    key: int
    label: str


# ------------------------------------------------------------- class hierarchy


@c_class("testing.TestCxxClassBase")
class _TestCxxClassBase(Object):
    """A base whose Python ``__init__`` adjusts its arguments before C++ sees them."""

    v_i64: int
    v_i32: int
    not_field_1 = 1
    not_field_2: ClassVar[int] = 2

    def __init__(self, v_i64: int, v_i32: int) -> None:
        ffi_init = lookup_type_attr(type(self)._tvm_ffi_type_index, "__ffi_init__")
        self.__init_handle_by_constructor__(ffi_init, v_i64 + 1, v_i32 + 2)


@c_class("testing.TestCxxClassDerived", eq=True, order=True, unsafe_hash=True)
class _TestCxxClassDerived(_TestCxxClassBase):
    """Adds two floats (``v_f32`` defaults to 8)."""

    v_f64: float
    v_f32: float


@c_class("testing.TestCxxClassDerivedDerived")
class _TestCxxClassDerivedDerived(_TestCxxClassDerived):
    """Adds a string (default ``"default"``) and a bool."""

    v_str: str
    v_bool: bool


class _TestCxxIntEnum(IntEnum, type_key="testing.TestCxxIntEnum"):
    low = entry(value=10)
    high = entry(value=20)


class _TestCxxStrEnum(StrEnum, type_key="testing.TestCxxStrEnum"):
    add = entry(value="+")
    mul = entry(value="*")


@c_class("testing.TestCxxEnumHolder")
class _TestCxxEnumHolder(Object):
    """Holds one of each C++-backed enum."""

    __test__ = False
    priority: _TestCxxIntEnum
    opcode: _TestCxxStrEnum


# ------------------------------------------------------------- constructors


@c_class("testing.TestCxxInitSubset")
class _TestCxxInitSubset(Object):
    """Only ``required_field`` is a constructor parameter."""

    required_field: int
    optional_field: int
    note: str


@c_class("testing.TestCxxKwOnly")
class _TestCxxKwOnly(Object):
    """Every field keyword-only; ``w`` defaults to 100."""

    x: int
    y: int
    z: int
    w: int


@c_class("testing.TestCxxAutoInit")
class _TestCxxAutoInit(Object):
    """``b`` is not a parameter (default 42), ``c`` is keyword-only, ``d`` defaults to 99."""

    __test__ = False
    a: int
    b: int
    c: int
    d: int


@c_class("testing.TestCxxAutoInitSimple")
class _TestCxxAutoInitSimple(Object):
    """Two positional fields."""

    __test__ = False
    x: int
    y: int


@c_class("testing.TestCxxAutoInitAllInitOff")
class _TestCxxAutoInitAllInitOff(Object):
    """No field is a parameter: x = 7, y = 9 (defaults), z = 1234 (as C++ makes it)."""

    __test__ = False
    x: int
    y: int
    z: int


@c_class("testing.TestCxxAutoInitKwOnlyDefaults")
class _TestCxxAutoInitKwOnlyDefaults(Object):
    """Required and defaulted fields, positional and keyword-only, and a hidden one."""

    __test__ = False
    p_required: int
    p_default: int
    k_required: int
    k_default: int
    hidden: int


@c_class("testing.TestCxxNoAutoInit", init=False)
class _TestCxxNoAutoInit(Object):
    """C++ gives no ``__ffi_init__``: the class cannot be called."""

    __test__ = False
    x: int
    y: int


@c_class("testing.TestCxxAutoInitParent")
class _TestCxxAutoInitParent(Object):
    """The parent half of an inherited auto-generated constructor."""

    __test__ = False
    parent_required: int
    parent_default: int


@c_class("testing.TestCxxAutoInitChild")
class _TestCxxAutoInitChild(_TestCxxAutoInitParent):
    """The child half: its fields follow the parent's."""

    __test__ = False
    child_required: int
    child_kw_only: int


_PYTHON_MARKS = {"requires_py310": (3, 10), "requires_py312": (3, 12), "requires_py313": (3, 13)}


def __getattr__(name: str) -> Any:
    # pytest marks skipping a test on older Pythons, made when asked (pytest is a test
    # dependency, not the package's).
    if name in _PYTHON_MARKS:
        import pytest

        version = _PYTHON_MARKS[name]
        return pytest.mark.skipif(sys.version_info < version,
                                  reason=f"requires Python {version[0]}.{version[1]}+")
    if name in ("_TestCxxIntEnum", "_TestCxxStrEnum"):
        raise AttributeError(f"{name} needs the enum classes of this front end's dataclasses "
                             "module, which it does not have yet")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
