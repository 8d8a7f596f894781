"""Upstream's ``tvm_ffi.core``: the names libraries and tests take from it, in one place.

Upstream's ``core`` is its compiled Cython module; here every name it offers
that code outside upstream uses is gathered from the module that implements
it (the classes, the error tables, the class-override hooks, the registry
helpers). Names are upstream's, including the private ones its own test
suite and libraries reach for (``core._set_class_device``, ...).

The class overrides (``_set_class_device``, ``_set_class_tensor``) change
what every later call returns, and the matching ``_CLASS_*`` attribute here.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Tuple

from tvm_ffi_common.capi import LIB

from . import device as _device_module
from .api_convert import convert_func
from .arg_setters import OPAQUE_PTR_HANDLERS as _OPAQUE_PTR_HANDLERS
from .c_integers import narrow as _narrow
from .cany import CAny, to_py_class_value as _to_py_class_value
from .container import MISSING, ContainerBase as CContainerBase
from .device import Device, DLDeviceType
from .dtype import (
    DataType,
    create_data_type as _create_cdtype_from_tuple,
    dtype as _dtype,
    dtype_from_tuple,
    numpy_dtype_table,
    torch_dtype_table,
)
from .error import (
    ERROR_NAME_TO_TYPE,
    ERROR_TYPE_TO_NAME,
    Error,
    exception_to_error as _convert_to_ffi_error,
    traceback_to_backtrace as _TRACEBACK_TO_BACKTRACE_STR,
    with_backtrace as _WITH_APPEND_BACKTRACE,
)
from .exchange_test_wrapper import DLTensorTestWrapper
from .function import Function, get_global_func
from .object import (
    CObject,
    Object,
    ObjectConvertible,
    ObjectRValueRef,
    register_class,
    type_key_to_index as _object_type_key_to_index,
)
from .object_methods import new_object as _new_object
from .pyobject import OpaquePyObject, wrap_pyobject as _convert_to_opaque_object
from .registry import register_global_func
from .stream import _set_stream as _env_set_current_stream
from .string import Bytes, PyNativeObject, String
from .tensor import Tensor, __dlpack_version__, from_dlpack, set_tensor_class, shape_content

#: The class devices are made as (see :func:`_set_class_device`).
_CLASS_DEVICE: type = _device_module.DEVICE_CLASS

#: The class tensors are returned as (see :func:`_set_class_tensor`).
_CLASS_TENSOR: type = Tensor

#: The class dtypes are made as (fixed here: ``dtype``).
_CLASS_DTYPE: type = _dtype


def _set_class_device(cls: type) -> None:
    """Makes ``cls`` (a ``Device`` subclass) the class ``device()`` and every call return."""
    global _CLASS_DEVICE
    _device_module.set_device_class(cls)
    _CLASS_DEVICE = cls


def _create_device_from_tuple(cls: type, device_type: int, device_id: int) -> Device:
    """A ``cls`` device of the given DLPack type and index."""
    return cls._from_pair(device_type, device_id)


def _set_class_tensor(cls: type) -> None:
    """Makes ``cls`` (a ``Tensor`` subclass) the class every call and ``from_dlpack``
    return tensors as."""
    global _CLASS_TENSOR
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError(f"the tensor class must be Tensor or a subclass of it, got {cls!r}")
    set_tensor_class(cls)
    _CLASS_TENSOR = cls


def _shape_obj_get_py_tuple(obj: Object) -> Tuple[int, ...]:
    """The dimensions of a Shape object."""
    return shape_content(obj._handle)


def _env_get_current_stream(device_type: int, device_id: int) -> int:
    """The current stream of a device as an integer (0 when none)."""
    return LIB.TVMFFIEnvGetStream(_narrow(device_type, "int"), _narrow(device_id, "int")) or 0


def _convert_torch_dtype_to_ffi_dtype(torch_dtype: Any) -> _dtype:
    """The dtype of a torch.dtype of upstream's table (``KeyError`` for others)."""
    return dtype_from_tuple(*torch_dtype_table()[torch_dtype])


def _convert_numpy_dtype_to_ffi_dtype(numpy_dtype: Any) -> _dtype:
    """The dtype of a numpy.dtype of upstream's table (``KeyError`` for others)."""
    return dtype_from_tuple(*numpy_dtype_table()[numpy_dtype])


def _register_global_func(name: str, pyfunc: Callable[..., Any], override: bool) -> Function:
    """Registers ``pyfunc`` (a callable or a Function) as the global ``name``."""
    return register_global_func(name, pyfunc, override=override)


def _get_global_func(name: str, allow_missing: bool) -> Optional[Function]:
    """The global function ``name`` (None when absent and ``allow_missing``)."""
    return get_global_func(name, allow_missing=allow_missing)


def _convert_to_ffi_func(pyfunc: Callable[..., Any], tensor_cls: Optional[type] = None
                         ) -> Function:
    """A Function calling ``pyfunc`` (see ``convert_func``)."""
    return convert_func(pyfunc, tensor_cls)


__all__ = [
    "Bytes", "CAny", "CContainerBase", "CObject", "DLDeviceType", "DataType", "Device",
    "ERROR_NAME_TO_TYPE", "ERROR_TYPE_TO_NAME", "Error", "Function", "KWARGS", "MISSING",
    "Object", "ObjectConvertible", "ObjectRValueRef", "OpaquePyObject", "PyNativeObject",
    "String", "Tensor", "from_dlpack", "object_repr",
]

# ---------------------------------------------------------------------------------------
# Type information (upstream's TypeInfo, TypeField, TypeMethod, TypeSchema, and the
# _register_*/_lookup_*/_type_* helpers over them) is added below by the dataclasses
# work; keep this section last.
# ---------------------------------------------------------------------------------------

from ._dunder import object_repr  # noqa: E402
from .pyclass_fields import register_fields as _register_fields_of  # noqa: E402
from .sentinels import KWARGS  # noqa: E402 - the one wrapper the dataclass code compares
from .type_records import FFIProperty, FieldGetter, FieldSetter, TypeField, TypeInfo, TypeMethod  # noqa: E402
from .type_registry import (  # noqa: E402
    _lookup_or_register_type_info_from_type_key,
    _lookup_type_attr,
    _register_object_by_index,
    _register_py_class,
    _register_type_attr,
    _rollback_py_class,
    _set_type_cls,
    _type_cls_to_type_info,
    _type_index_to_type_info,
)
from .type_schema import TypeSchema  # noqa: E402


def _register_fields(type_info: TypeInfo, fields: list, structure_kind=None) -> list:
    """Registers the fields of a Python-defined type; returns their :class:`TypeField`s."""
    return _register_fields_of(type_info, fields, structure_kind)


__all__ += ["FFIProperty", "FieldGetter", "FieldSetter", "TypeField", "TypeInfo", "TypeMethod",
            "TypeSchema"]
