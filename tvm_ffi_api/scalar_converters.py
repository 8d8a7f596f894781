"""The type converters of scalar origins: int, float, bool, str, bytes, Device, dtype, ...

Each is a step ``step(converter, value) -> (result, changed)`` raising
:class:`~.converter_base.ConvertError` on a mismatch (see :mod:`.type_converter`).
"""

from __future__ import annotations

import ctypes
import os
import sys
from numbers import Integral, Real
from typing import Any, Callable

from .arg_setters import OPAQUE_PTR_HANDLERS
from .converter_base import (
    INT64_MAX,
    INT64_MIN,
    Converter,
    ConvertError,
    Result,
    _mismatch,
    describe,
    materialize,
    pack_checked,
)
from .device import Device
from .dtype import dtype
from .function import Function
from .object import CObject
from .string import Bytes, String
from .tensor import Tensor

# ------------------------------------------------------------------ scalars


def dtype_classes() -> tuple:
    """The classes whose instances are dtypes: ``dtype`` and the bare ``DataType`` if any."""

    data_type = getattr(sys.modules[dtype.__module__], "DataType", None)
    return (dtype,) if data_type is None else (dtype, data_type)


def _any(conv: Converter, value: Any) -> Result:

    pack_checked(value, "Any", value)
    native = (type(None), bool, int, float, ctypes.c_void_p, String, Bytes, Tensor, Device,
              CObject, *dtype_classes())
    return value, not isinstance(value, native)


def _none(conv: Converter, value: Any) -> Result:
    if value is None:
        return None, False
    raise ConvertError(f"expected None, got {describe(value)}")


def _in_int64(value: int) -> int:
    if not INT64_MIN <= value <= INT64_MAX:
        raise ConvertError(f"integer {value} out of int64 range [{INT64_MIN}, {INT64_MAX}]")
    return value


def _builtin(fn: Callable, value: Any) -> Any:
    try:
        return fn(value)
    except Exception as err:  # noqa: BLE001 - reported as the conversion's failure
        raise ConvertError(f"{fn.__name__}() failed for {type(value).__qualname__}: {err}") \
            from None


def _int(conv: Converter, value: Any) -> Result:
    if isinstance(value, bool):
        return int(value), True
    if isinstance(value, int):
        return _in_int64(value), False
    if isinstance(value, Integral):
        return _in_int64(_builtin(int, value)), True
    if hasattr(type(value), "__tvm_ffi_int__"):
        return materialize(value, "int", value), True
    raise _mismatch("int", value)


def _float(conv: Converter, value: Any) -> Result:
    if isinstance(value, float):
        return value, False
    if isinstance(value, int):
        return float(value), True
    if isinstance(value, (Integral, Real)):
        return _builtin(float, value), True
    if hasattr(type(value), "__tvm_ffi_float__"):
        return materialize(value, "float", value), True
    raise _mismatch("float", value)


def _bool(conv: Converter, value: Any) -> Result:
    if isinstance(value, bool):
        return value, False
    if isinstance(value, Integral):
        return _builtin(bool, value), True
    raise _mismatch("bool", value)


def _str(conv: Converter, value: Any) -> Result:
    if isinstance(value, str):
        return value, not isinstance(value, String)
    raise _mismatch("str", value)


def _bytes(conv: Converter, value: Any) -> Result:
    if isinstance(value, bytes):
        return value, not isinstance(value, Bytes)
    if isinstance(value, bytearray):
        return bytes(value), True
    raise _mismatch("bytes", value)


def _device(conv: Converter, value: Any) -> Result:

    if isinstance(value, Device):
        return value, False
    if isinstance(value, str):
        try:
            return Device(value), True
        except Exception:  # noqa: BLE001 - any parse failure is the same mismatch
            raise ConvertError(f"expected Device, got invalid device string {value!r}") from None
    kind = type(value)
    if hasattr(kind, "__dlpack_device__") and not hasattr(kind, "__dlpack__"):
        return materialize(value, "Device", value), True
    raise _mismatch("Device", value)


def _dtype(conv: Converter, value: Any) -> Result:

    if isinstance(value, dtype_classes()):
        return value, False
    if isinstance(value, str):
        try:
            return dtype(value), True
        except Exception:  # noqa: BLE001 - any parse failure is the same mismatch
            raise ConvertError(f"expected dtype, got invalid dtype string {value!r}") from None
    torch, numpy = sys.modules.get("torch"), sys.modules.get("numpy")
    if ((torch is not None and isinstance(value, torch.dtype))
            or (numpy is not None and isinstance(value, numpy.dtype))
            or hasattr(value, "__dlpack_data_type__")):
        return materialize(value, "dtype", value), True
    raise _mismatch("dtype", value)


def _opaque_ptr(conv: Converter, value: Any) -> Result:
    if isinstance(value, ctypes.c_void_p):
        return value, False
    if value is None:
        return ctypes.c_void_p(None), True
    kind = type(value)
    if (hasattr(kind, "__tvm_ffi_opaque_ptr__") or hasattr(kind, "__cuda_stream__")
            or kind in OPAQUE_PTR_HANDLERS):
        return materialize(value, "ctypes.c_void_p", value), True
    raise _mismatch("ctypes.c_void_p", value)


def _tensor(conv: Converter, value: Any) -> Result:

    if isinstance(value, Tensor):
        return value, False
    kind = type(value)
    if hasattr(kind, "__dlpack__") or (
            os.environ.get("TVM_FFI_SKIP_DLPACK_C_EXCHANGE_API", "0") != "1"
            and hasattr(kind, "__dlpack_c_exchange_api__")):
        return materialize(value, "Tensor", value), True
    raise _mismatch("Tensor", value)


def _callable(conv: Converter, value: Any) -> Result:

    if isinstance(value, Function):
        return value, False
    if callable(value) and not isinstance(value, CObject):
        return materialize(value, "Callable", value), True
    raise _mismatch("Callable", value)
