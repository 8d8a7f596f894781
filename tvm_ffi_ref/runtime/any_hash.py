"""AnyHash and AnyEqual: when two values are the same key, and where a key hashes to.

Its twin in C: ``tvm_ffi_fast/src/any_hash.c``.

Map, Dict and the ``Contains`` functions of Array and List compare values with
these two rules. C++ code compiled from upstream's headers computes them
inline, so a map built on one side is probed on the other: both rules are ABI.

AnyEqual(lhs, rhs)
    1. If the 16 bytes of the two ``TVMFFIAny`` are identical, equal. This
       covers every inline value (ints, bools, floats compared by bit pattern,
       so ``0.0 != -0.0`` and a NaN equals itself; devices, dtypes, pointers,
       small strings) and object identity.
    2. Same type index: a String or Bytes object equals another with the same
       content. Another object type may register a custom rule in the type
       attribute column ``__any_equal__``; otherwise different objects differ.
    3. Different type indices: only the string pairs (String, SmallStr) and
       the bytes pairs (Bytes, SmallBytes) can be equal, by content. An int
       never equals a bool or a float.

AnyHash(value), a uint64
    * small str: ``combine(kTVMFFIStr, payload % (2**31 - 1))``, where
      ``payload`` is the 8 payload bytes as a little-endian integer (bytes
      after the content are zero);
    * small bytes: the same with ``kTVMFFIBytes``;
    * String/Bytes object: ``combine(type_index, StableHashBytes(content))``;
      for content of at most 7 bytes this equals the small form's hash, so
      equal strings hash alike whatever their encoding;
    * an object whose type has an entry in ``__any_hash__``:
      ``combine(type_index, custom(value))``;
    * anything else: ``combine(type_index, payload)`` (the pointer, for objects).

    ``combine(key, value) = key ^ (value + 0x9e3779b9 + (key << 6) + (key >> 2))``
    on uint64 (:mod:`.hashing`).

Custom entries (``__any_hash__`` / ``__any_equal__``, indexed by type index) are
either an opaque pointer to a native function
``TVMFFIAny fn(const TVMFFIAny* value)`` / ``fn(const TVMFFIAny* lhs, const
TVMFFIAny* rhs)`` returning an Int / Bool (or an Error object on failure), or
a Function object called with one / two arguments. Both columns exist from the
start: C++ code caches the column pointer the first time it hashes, so a
column created later would never be seen by it. BigInt keys use the column,
as upstream's library registers them: the hash of the BigInt's two's-complement
words, and equality of value.
"""

from __future__ import annotations

import ctypes

from tvm_ffi_common import abi
from tvm_ffi_common.capi import LIB

from . import anyvalue, errors, functions, memory, strings
from .hashing import MASK64, stable_hash_bytes, stable_hash_combine, stable_hash_small
from .registry import TYPES
from .slots import FFIError
from .type_index import TI

#: The type attribute columns holding custom key rules, by type index.
ANY_HASH_ATTR = b"__any_hash__"
ANY_EQUAL_ATTR = b"__any_equal__"

_STRING_KINDS = (TI.kTVMFFIStr, TI.kTVMFFIBytes)
_CROSS_ENCODING_PAIRS = {
    (TI.kTVMFFIStr, TI.kTVMFFISmallStr),
    (TI.kTVMFFISmallStr, TI.kTVMFFIStr),
    (TI.kTVMFFIBytes, TI.kTVMFFISmallBytes),
    (TI.kTVMFFISmallBytes, TI.kTVMFFIBytes),
}
_ANY_SIZE = ctypes.sizeof(abi.TVMFFIAny)

_NativeHash = ctypes.CFUNCTYPE(abi.TVMFFIAny, ctypes.POINTER(abi.TVMFFIAny))
_NativeEqual = ctypes.CFUNCTYPE(abi.TVMFFIAny, ctypes.POINTER(abi.TVMFFIAny),
                                ctypes.POINTER(abi.TVMFFIAny))


def raw_bytes(value: abi.TVMFFIAny) -> bytes:
    """The 16 bytes of a ``TVMFFIAny`` as stored."""
    return ctypes.string_at(ctypes.addressof(value), _ANY_SIZE)


def custom_entry(attr: bytes, type_index: int):
    """The custom rule registered for ``type_index`` in column ``attr``, or None.

    Read through the published ``TVMFFITypeAttrColumn``, exactly as C++ reads it.
    """
    column = TYPES.attr_column(attr)
    if column is None:
        return None
    cell = column.column
    offset = type_index - cell.begin_index
    if offset < 0 or offset >= cell.size:
        return None
    entry = cell.data[offset]
    return None if entry.type_index == TI.kTVMFFINone else entry


def _raise_error_object(address: int) -> None:
    kind, message, _ = errors.error_parts(address)
    memory.dec_ref(address)
    raise FFIError(kind, message)


def _call_custom(entry: abi.TVMFFIAny, values, native_type, expected_index: int) -> int:
    """Calls a custom rule on ``values``; returns the payload of its Int/Bool result."""
    if entry.type_index == TI.kTVMFFIOpaquePtr:
        native = native_type(entry.v_ptr)
        result = native(*[ctypes.byref(v) for v in values])
    elif entry.type_index == TI.kTVMFFIFunction:
        args = (abi.TVMFFIAny * len(values))(*values)
        result = abi.TVMFFIAny()
        if functions.call_function(entry.v_ptr, args, len(values), ctypes.byref(result)) != 0:
            raised = errors.take_raised()
            if raised:
                _raise_error_object(raised)
            raise FFIError("RuntimeError", "a custom key rule failed without an error")
    else:
        raise FFIError("InternalError", f"Check failed: custom key rule must be a native "
                       f"function pointer or a Function, got type index {entry.type_index}")
    if result.type_index == expected_index:
        return result.v_int64
    if result.type_index == TI.kTVMFFIError:
        _raise_error_object(result.v_ptr)
    returned = result.type_index
    anyvalue.dec_ref_any(result)
    raise FFIError("InternalError", f"Check failed: a custom key rule returned type index "
                   f"{returned}, expected {expected_index}")


def any_hash(value: abi.TVMFFIAny) -> int:
    """AnyHash of an owned value (uint64); see the module docstring."""
    index = value.type_index
    if index == TI.kTVMFFISmallStr:
        return stable_hash_combine(TI.kTVMFFIStr, stable_hash_small(value.v_uint64))
    if index == TI.kTVMFFISmallBytes:
        return stable_hash_combine(TI.kTVMFFIBytes, stable_hash_small(value.v_uint64))
    if index in _STRING_KINDS:
        return stable_hash_combine(index, stable_hash_bytes(strings.object_bytes(value.v_ptr)))
    if index >= TI.kTVMFFIStaticObjectBegin:
        entry = custom_entry(ANY_HASH_ATTR, index)
        if entry is not None:
            custom = _call_custom(entry, [value], _NativeHash, TI.kTVMFFIInt)
            return stable_hash_combine(index, custom & MASK64)
    return stable_hash_combine(index & MASK64, value.v_uint64)


def any_equal(lhs: abi.TVMFFIAny, rhs: abi.TVMFFIAny) -> bool:
    """AnyEqual of two owned values; see the module docstring."""
    if raw_bytes(lhs) == raw_bytes(rhs):
        return True
    left, right = lhs.type_index, rhs.type_index
    if left == right:
        if left in _STRING_KINDS:
            return strings.object_bytes(lhs.v_ptr) == strings.object_bytes(rhs.v_ptr)
        if left >= TI.kTVMFFIStaticObjectBegin:
            entry = custom_entry(ANY_EQUAL_ATTR, left)
            if entry is not None:
                return bool(_call_custom(entry, [lhs, rhs], _NativeEqual, TI.kTVMFFIBool))
        return False
    if (left, right) in _CROSS_ENCODING_PAIRS:
        return strings.view_bytes(lhs) == strings.view_bytes(rhs)
    return False


# ------------------------------------------------- BigInt's entries, and the columns


def _register_columns() -> None:
    TYPES.register_attr(TI.kTVMFFINone, ANY_HASH_ATTR, abi.TVMFFIAny())
    TYPES.register_attr(TI.kTVMFFINone, ANY_EQUAL_ATTR, abi.TVMFFIAny())
    # BigInt's rules are native functions in libtvm_ffi.so, as upstream registers
    # native ones (C++ code hashing a BigInt key then never calls into Python):
    # the hash is stable_hash_bytes of the two's-complement words, and two BigInts
    # are equal when their words are.
    for attr, native in ((ANY_HASH_ATTR, LIB.tvm_ffi_runtime_bigint_any_hash),
                         (ANY_EQUAL_ATTR, LIB.tvm_ffi_runtime_bigint_any_equal)):
        value = abi.TVMFFIAny(type_index=TI.kTVMFFIOpaquePtr)
        value.v_ptr = ctypes.cast(native, ctypes.c_void_p).value
        TYPES.register_attr(TI.kTVMFFIBigInt, attr, value)


_register_columns()
