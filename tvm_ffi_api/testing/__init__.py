"""Upstream's ``tvm_ffi.testing``: the testing library's functions and types, for tests.

Importing the package loads ``libtvm_ffi_testing.so`` (``c_api/testing``),
which registers the ``testing.*`` global functions and object types of
upstream's testing library; this package gives them upstream's Python names:

* every ``testing.<name>`` global as ``<name>`` (from ``_ffi_api``);
* a class per type (``TestIntPair``, ``TestObjectBase``, ``_TestCxxAutoInit``, ...)
  and the helpers ``create_object``, ``make_unregistered_object``, ``add_one``
  (from ``testing``);
* ``run_with_gpu_lock``, which serialises GPU tests across processes.
"""

from tvm_ffi_common import libinfo as _libinfo

_libinfo.load_testing_library()

from ._ffi_api import *  # noqa: E402,F401,F403
from ._locking import run_with_gpu_lock  # noqa: E402,F401
from .testing import (  # noqa: E402,F401
    TestCompare,
    TestCustomCompare,
    TestCustomHash,
    TestEqWithoutHash,
    TestFrozenCxx,
    TestHash,
    TestIntPair,
    TestNonCopyable,
    TestObjectBase,
    TestObjectDerived,
    TestObjectPtrHolder,
    _SchemaAllTypes,
    _TestCxxAutoInit,
    _TestCxxAutoInitAllInitOff,
    _TestCxxAutoInitChild,
    _TestCxxAutoInitKwOnlyDefaults,
    _TestCxxAutoInitParent,
    _TestCxxAutoInitSimple,
    _TestCxxClassBase,
    _TestCxxClassDerived,
    _TestCxxClassDerivedDerived,
    _TestCxxEnumHolder,
    _TestCxxInitSubset,
    _TestCxxIntEnum,
    _TestCxxKwOnly,
    _TestCxxNoAutoInit,
    _TestCxxStrEnum,
    add_one,
    create_object,
    make_unregistered_object,
)
