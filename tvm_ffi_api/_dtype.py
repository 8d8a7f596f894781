"""``tvm_ffi._dtype``: where upstream's package defines ``dtype`` and ``DataTypeCode``
(TVM imports them from here); the same objects as :mod:`.dtype`'s."""

from .dtype import DataTypeCode, dtype  # noqa: F401

__all__ = ["DataTypeCode", "dtype"]
