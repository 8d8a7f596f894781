"""What the two Python cores write alike: the reference's (ctypes) and ``cffi_core`` (cffi).

Each Python core reaches the runtime its own way (ctypes in ``tvm_ffi_ref``, cffi in
``tvm_ffi_fast/cffi_core`` for PyPy's JIT); the parts of its ``shortcuts`` that do not
touch that mechanism are written here once and imported by both. The compiled core has
them in C (``tvm_ffi_fast/src/frontend``).
"""

from __future__ import annotations

from numbers import Integral
from typing import Any, Callable, NamedTuple, Optional, Tuple

from tvm_ffi_common import pycapi


class DLTensorFields(NamedTuple):
    """A snapshot of the ``DLTensor`` fields a Tensor reports."""

    data: int  # 0 for NULL
    device_type: int
    device_id: int
    ndim: int
    dtype: Tuple[int, int, int]  # (code, bits, lanes)
    shape: Tuple[int, ...]
    strides: Optional[Tuple[int, ...]]  # None when the DLTensor stores none (compact)
    byte_offset: int


def field_address(obj: Any, offset: int) -> int:
    """The address of the field at ``offset`` in ``obj``'s object (``ValueError`` if it has none)."""
    handle = obj._handle
    if not handle:
        raise ValueError(f"cannot access a field of an empty {type(obj).__name__} (no object)")
    return handle + offset


def interpreter_pending_error() -> Optional[BaseException]:
    """The exception set in the interpreter (by a signal handler ``PyErr_CheckSignals`` ran
    for a failed ``TVMFFIEnvCheckSignals``), taken out of it; None when none is set."""
    try:
        pycapi.err_occurred()
    except BaseException as pending:  # noqa: BLE001 - it is what we are looking for
        return pending
    return None


def new_shape(cls: type, content: Any, global_function: Callable[[str], Any]) -> Any:
    """``tensor.Shape(content)``: a tuple (of ``cls``) of the integers ``content`` holds,
    remembering the Shape object ``ffi.Shape`` makes of them (``ValueError`` for a
    non-integer); ``global_function`` is the core's lookup of a global function."""
    content = tuple(content)
    for x in content:
        if not isinstance(x, Integral):
            raise ValueError("Shape must be a tuple of integers")
    self = tuple.__new__(cls, content)
    self._tvm_ffi_cached_object = global_function("ffi.Shape")(*content)._tvm_ffi_cached_object
    return self
