"""The hash functions that are part of the ABI.

Its twin in C: ``tvm_ffi_fast/src/any_hash.c``.

Two are needed, because C++ code compiled from upstream's headers computes
them inline or stores them where others read them:

* :func:`stable_hash_bytes` hashes string and bytes keys of Map and Dict (and
  :func:`stable_hash_combine` mixes in the type index). A map built by one
  side is probed by the other, so the bucket a key lands in must agree.
* :func:`std_hash_bytes` is libstdc++'s ``std::hash<std::string_view>`` (64-bit
  MurmurHash2 with seed 0xc70f6907), which upstream stores as
  ``TVMFFITypeInfo.type_key_hash``.

All arithmetic is on unsigned 64-bit integers, so every product wraps.
"""

from __future__ import annotations

MASK64 = (1 << 64) - 1

_STABLE_MULTIPLIER = 1099511628211
_STABLE_MODULUS = 2147483647


def stable_hash_bytes(data: bytes) -> int:
    """Upstream's ``StableHashBytes``: little-endian 8-byte words folded modulo 2**31 - 1.

    A trailing partial word is zero-padded; on a little-endian host the
    result is the same whatever the alignment of the data.
    """
    result = 0
    full = len(data) - len(data) % 8
    for start in range(0, full, 8):
        word = int.from_bytes(data[start:start + 8], "little")
        result = ((result * _STABLE_MULTIPLIER + word) & MASK64) % _STABLE_MODULUS
    if full < len(data):
        word = int.from_bytes(data[full:], "little")
        result = ((result * _STABLE_MULTIPLIER + word) & MASK64) % _STABLE_MODULUS
    return result


def stable_hash_small(payload: int) -> int:
    """The hash of an inline small string/bytes value from its 8 payload bytes (as uint64)."""
    return payload % _STABLE_MODULUS


def stable_hash_combine(key: int, value: int) -> int:
    """Upstream's ``StableHashCombine(key, value)`` on uint64."""
    return (key ^ ((value + 0x9E3779B9 + ((key << 6) & MASK64) + (key >> 2)) & MASK64)) & MASK64


_MURMUR_MULTIPLIER = (0xC6A4A793 << 32) + 0x5BD1E995
_STD_HASH_SEED = 0xC70F6907


def _shift_mix(value: int) -> int:
    return value ^ (value >> 47)


def std_hash_bytes(data: bytes, seed: int = _STD_HASH_SEED) -> int:
    """libstdc++'s 64-bit ``_Hash_bytes`` (what ``std::hash<std::string_view>`` returns)."""
    mul = _MURMUR_MULTIPLIER
    length = len(data)
    aligned = length & ~7
    result = (seed ^ (length * mul)) & MASK64
    for start in range(0, aligned, 8):
        word = int.from_bytes(data[start:start + 8], "little")
        mixed = (_shift_mix((word * mul) & MASK64) * mul) & MASK64
        result = ((result ^ mixed) * mul) & MASK64
    if length & 7:
        word = int.from_bytes(data[aligned:], "little")
        result = ((result ^ word) * mul) & MASK64
    result = (_shift_mix(result) * mul) & MASK64
    return _shift_mix(result)
