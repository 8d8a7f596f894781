"""``convert``: a Python value as the TVM FFI value it stands for, by upstream's rules.

``api.convert(value)`` is not "pass it to a kernel and take it back" (that is
``convert.round_trip``): it follows the rules of upstream's ``tvm_ffi.convert``,
in upstream's order, first match wins:

=========================================================  ==========================
value                                                      result
=========================================================  ==========================
an ``Object`` (a Function, Tensor, Error or               the value itself
OpaquePyObject is a ``CObject`` only, as upstream's),
``String``/``Bytes``/``Shape``, ``bool``, any
``numbers.Number`` (NumPy scalars too), ``c_void_p``,
``dtype``
``tuple``/``list``                                         ``Array(value)``
``dict``                                                   ``Map(value)``
``str``                                                    ``String(value)`` (no object)
``bytes``/``bytearray``                                    ``Bytes(value)`` (no object)
an ``ObjectConvertible``                                   ``value.asobject()``
any callable (a Function too)                              a new Function calling it
``None``                                                   ``None``
anything with ``__dlpack__`` (a Tensor too)                ``from_dlpack(value)``
a ``torch.dtype`` / ``numpy.dtype`` of upstream's tables   its ``dtype`` (else KeyError)
``__dlpack_data_type__()`` provider                        the ``dtype`` of its triple
an ``Exception``                                           its Error object
``__tvm_ffi_object__()`` provider                          the object it provides
``__cuda_stream__``, ``__tvm_ffi_opaque_ptr__``,           the value itself (calls
``__dlpack_device__``, ``__tvm_ffi_int__`` or              convert it when passed)
``__tvm_ffi_float__`` provider
anything else (a Device, an Error, ``numpy.bool_``, ...)   an ``OpaquePyObject``
=========================================================  ==========================

Both front ends share this module: the classes it names come from each one's
own core (``from .object import Object`` finds the importing package's).
"""

from __future__ import annotations

import ctypes
import sys
from numbers import Number
from typing import Any, Callable

from .container import Array, Map
from .dlpack_exchange import tensor_class_api_address
from .dtype import (
    dtype,
    dtype_from_python_triple,
    dtype_from_tuple,
    numpy_dtype_table,
    torch_dtype_table,
)
from .error import exception_to_error
from .function import Function, wrap_callable
from .object import Object, ObjectConvertible
from .pyobject import wrap_pyobject
from .string import Bytes, String
from .tensor import Shape, from_dlpack

#: Values convert returns unchanged (besides objects): upstream's PyNativeObject
#: classes (String, Bytes, Shape), plain scalars and dtypes.
_KEPT = (String, Bytes, Shape, bool, Number, ctypes.c_void_p, dtype)

#: Protocols a call converts by itself, so convert leaves their values as they are.
_KEPT_PROTOCOLS = ("__cuda_stream__", "__tvm_ffi_opaque_ptr__", "__dlpack_device__",
                   "__tvm_ffi_int__", "__tvm_ffi_float__")


def convert(value: Any) -> Any:
    """``value`` as a TVM FFI value, exactly as upstream's ``tvm_ffi.convert`` makes it.

    Lists and tuples become ``Array``, dicts ``Map``, str ``String`` and bytes
    ``Bytes``, callables ``Function``, DLPack producers ``Tensor``, exceptions
    ``Error``; objects, scalars and dtypes stay as they are; a value no rule
    covers is wrapped in an ``OpaquePyObject``. See the module's table.
    """
    if isinstance(value, Object):
        return value
    if isinstance(value, _KEPT):
        return value
    if isinstance(value, (tuple, list)):
        return Array(value)
    if isinstance(value, dict):
        return Map(value)
    if isinstance(value, str):
        return String(value)
    if isinstance(value, (bytes, bytearray)):
        return Bytes(value)
    if isinstance(value, ObjectConvertible):
        return value.asobject()
    if callable(value):
        return wrap_callable(value)
    if value is None:
        return None
    if hasattr(value, "__dlpack__"):
        return from_dlpack(value)
    torch = sys.modules.get("torch")  # a torch.dtype exists only once torch is imported
    if torch is not None and isinstance(value, torch.dtype):
        return dtype_from_tuple(*torch_dtype_table()[value])  # KeyError(value) if not there
    numpy = sys.modules.get("numpy")  # a numpy.dtype exists only once NumPy is imported
    if numpy is not None and isinstance(value, numpy.dtype):
        return dtype_from_tuple(*numpy_dtype_table()[value])  # KeyError(value) if not there
    if hasattr(value, "__dlpack_data_type__"):
        return dtype_from_python_triple(*value.__dlpack_data_type__())
    if isinstance(value, Exception):
        return exception_to_error(value)
    if hasattr(value, "__tvm_ffi_object__"):
        return value.__tvm_ffi_object__()
    if any(hasattr(value, name) for name in _KEPT_PROTOCOLS):
        return value
    return wrap_pyobject(value)


def convert_func(pyfunc: Callable[..., Any], tensor_cls: Any = None) -> Function:
    """A new Function calling the Python callable ``pyfunc`` (``convert``'s callable rule).

    With ``tensor_cls`` (a framework tensor class publishing a DLPack exchange
    table, e.g. ``torch.Tensor``), the Tensor arguments C++ passes reach
    ``pyfunc`` as ``tensor_cls`` tensors, converted in C through the table
    before ``pyfunc`` runs; ``TypeError`` if the class publishes none.
    """
    if tensor_cls is None:
        return wrap_callable(pyfunc)
    return wrap_callable(pyfunc, tensor_class_api_address(tensor_cls))
