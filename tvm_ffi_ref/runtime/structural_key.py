"""``ffi.StructuralKey``: a value wrapped to be a map key by structure, its hash cached.

Its twin in C: ``tvm_ffi_fast/src/structural_key.c``.

A StructuralKey object is the header, then ``key`` (an Any, offset 24) and
``hash_i64`` (int64, offset 40): the structural hash of ``key`` computed once
when the key is made (``ffi.StructuralKey(key)``, or the type's
``__ffi_init__``). Two keys are equal (``ffi.StructuralKeyEqual``) when they
are the same object, or their hashes match and their values are structurally
equal.

The type registers ``__any_hash__`` (the cached hash) and ``__any_equal__``
(that equality), so Map and Dict -- in Python or in C++ code reading them
inline -- find entries by structure when keyed by StructuralKeys. As upstream's
are, both are native functions (``libtvm_ffi.so``'s ``tvm_ffi_runtime_structural_key_*``).
"""

from __future__ import annotations

import ctypes

from tvm_ffi_common import abi
from tvm_ffi_common.capi import LIB

from . import anyvalue
from .any_hash import ANY_EQUAL_ATTR, ANY_HASH_ATTR
from .dataclass_hash import signed64
from .functions import set_bool, set_object
from .reflection import STRUCTURAL_KEY, new_reflected
from .registry import TYPES, check_not_null
from .signatures import typed_global
from .structural_equal import structural_equal
from .structural_hash import structural_hash
from .type_index import TI

_KEY_AT = 24
_HASH_AT = 40


def new_structural_key(key: abi.TVMFFIAny) -> int:
    """A StructuralKey holding a new reference to ``key`` and its structural hash; owned."""
    hash_i64 = signed64(structural_hash(key))
    address = new_reflected(STRUCTURAL_KEY)
    slot = abi.TVMFFIAny.from_address(address + _KEY_AT)
    anyvalue.copy_any(key, slot)
    anyvalue.inc_ref_any(slot)
    ctypes.c_int64.from_address(address + _HASH_AT).value = hash_i64
    return address


def _key_fields(value: abi.TVMFFIAny, name: str):
    if value.type_index != STRUCTURAL_KEY:
        raise check_not_null(f"{name}_obj")
    address = value.v_ptr
    return abi.TVMFFIAny.from_address(address + _KEY_AT), \
        ctypes.c_int64.from_address(address + _HASH_AT).value


def structural_key_equal(lhs: abi.TVMFFIAny, rhs: abi.TVMFFIAny) -> bool:
    """Whether two StructuralKeys are equal (see the module docstring)."""
    if lhs.type_index >= TI.kTVMFFIStaticObjectBegin and lhs.type_index == rhs.type_index \
            and lhs.v_ptr == rhs.v_ptr:
        return True
    lhs_key, lhs_hash = _key_fields(lhs, "lhs")
    rhs_key, rhs_hash = _key_fields(rhs, "rhs")
    return lhs_hash == rhs_hash and structural_equal(lhs_key, rhs_key)


@typed_global("ffi.StructuralKey", ["Any"], "ffi.StructuralKey")
def _make_structural_key(result, key):
    set_object(result, new_structural_key(key))


@typed_global("ffi.StructuralKeyEqual", ["Any", "Any"], "bool")
def _structural_key_equal(result, lhs, rhs):
    set_bool(result, structural_key_equal(lhs, rhs))


def _register_key_rules() -> None:
    """StructuralKey's ``__any_hash__`` / ``__any_equal__`` entries: native functions in
    ``libtvm_ffi.so`` (as upstream registers native ones), calling back into
    ``ffi.StructuralEqual`` for equality."""
    for attr, native in ((ANY_HASH_ATTR, LIB.tvm_ffi_runtime_structural_key_any_hash),
                         (ANY_EQUAL_ATTR, LIB.tvm_ffi_runtime_structural_key_any_equal)):
        value = abi.TVMFFIAny(type_index=TI.kTVMFFIOpaquePtr)
        value.v_ptr = ctypes.cast(native, ctypes.c_void_p).value
        TYPES.register_attr(STRUCTURAL_KEY, attr, value)


_register_key_rules()
