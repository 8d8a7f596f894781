"""The names every front-end package exports, gathered once.

``tvm_ffi_ref/__init__.py`` and ``tvm_ffi_fast/__init__.py`` install their
runtime, then take these names with ``from .public import *`` and answer the
dtype constants (``float32``, ...) through :func:`dtype_constants`.
"""

from __future__ import annotations

from typing import Any, Callable

from tvm_ffi_common import __version__, abi
from tvm_ffi_common.capi import LIB

from . import convert as _encoding  # noqa: F401 - loaded before ``convert`` names the function
from . import dtype as _dtype_module
from .api_convert import convert, convert_func
from .container import Array, Dict, List, Map
from .device import Device, DLDeviceType, device
from .dtype import dtype
from .error import Error, register_error
from .function import Function, get_global_func
from .module import Module, load_module, system_lib
from .object import Object, ObjectConvertible, ObjectRValueRef
from .pyobject import OpaquePyObject
from .registry import (get_global_func_metadata, list_global_func_names, register_global_func,
                       register_object, remove_global_func)
from .stream import StreamContext, get_raw_stream, use_raw_stream, use_torch_stream
from .string import Bytes, String
from .tensor import Shape, Tensor, from_dlpack

__all__ = [
    "LIB", "abi", "__version__",
    "Array", "Bytes", "DLDeviceType", "Device", "Dict", "Error", "Function", "List", "Map",
    "Module", "Object", "ObjectConvertible", "ObjectRValueRef", "OpaquePyObject", "Shape",
    "StreamContext", "String", "Tensor",
    "convert", "convert_func", "device", "dtype", "from_dlpack", "get_global_func", "get_global_func_metadata",
    "get_raw_stream", "list_global_func_names", "load_module", "register_error",
    "register_global_func", "register_object", "remove_global_func", "system_lib",
    "use_raw_stream", "use_torch_stream",
]

#: The dtype constants a package answers as attributes (``tvm_ffi_fast.float32``, ...).
DTYPE_NAMES = tuple(_dtype_module.DTYPE_NAMES)


def dtype_constants(package: str, namespace: dict) -> Callable[[str], Any]:
    """A module ``__getattr__`` making each dtype constant on first use (cached in ``namespace``)."""

    def __getattr__(name: str) -> Any:
        if name in _dtype_module.DTYPE_NAMES:
            value = namespace[name] = dtype(name)
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
