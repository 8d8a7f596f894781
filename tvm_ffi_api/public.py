"""The names every front-end package exports, gathered once.

``tvm_ffi_ref/__init__.py`` and ``tvm_ffi_fast/__init__.py`` install their
runtime, then take these names with ``from .public import *``: upstream's
top-level names, its submodules (``core``, ``libinfo``, ``registry``, ...) and
its dtype constants (``float32``, ...).
"""

from __future__ import annotations

from tvm_ffi_common import UPSTREAM_VERSION, __version__ as __impl_version__, abi
from tvm_ffi_common.capi import LIB

#: The version of upstream's ``tvm_ffi`` this package stands for (its ABI and Python API):
#: what code written for upstream reads. This project's own is :data:`__impl_version__`.
__version__ = UPSTREAM_VERSION

from . import (
    convert as _encoding,  # noqa: F401 - loaded before ``convert`` names the function
    dtype as _dtype_module,
)
from .api_convert import convert, convert_func
from .container import Array, Dict, List, Map
from .device import Device, DLDeviceType, device
from .dtype import dtype
from .error import Error, register_error
from .function import Function, get_global_func
from .module import Module, load_module, system_lib
from .object import Object, ObjectConvertible, ObjectRValueRef
from .pyobject import OpaquePyObject
from .registry import (
    get_global_func_metadata,
    list_global_func_names,
    register_global_func,
    register_object,
    remove_global_func,
)
from .stream import StreamContext, get_raw_stream, use_raw_stream, use_torch_stream
from .string import Bytes, String
from .tensor import Shape, Tensor, from_dlpack

# isort: split
# --- structural equality, hashing, walks and serialization (issue 12) ---
from . import access_path, serialization  # noqa: F401 - submodules upstream exposes
from .structural import (
    DefRegionKind,
    InplaceMode,
    StructuralKey,
    StructuralMutator,
    StructuralVisitor,
    VisitInterrupt,
    WalkOrder,
    WalkResult,
    get_first_structural_mismatch,
    structural_equal,
    structural_hash,
    structural_map,
    structural_mutate,
    structural_visit,
    structural_walk,
)

_STRUCTURAL_NAMES = [
    "DefRegionKind", "InplaceMode", "StructuralKey", "StructuralMutator", "StructuralVisitor",
    "VisitInterrupt", "WalkOrder", "WalkResult", "access_path", "get_first_structural_mismatch",
    "serialization", "structural_equal", "structural_hash", "structural_map",
    "structural_mutate", "structural_visit", "structural_walk",
]
# --- end of issue 12's block ---

__all__ = [
    "LIB", "abi", "__version__", "__impl_version__",
    "Array", "Bytes", "DLDeviceType", "Device", "Dict", "Error", "Function", "List", "Map",
    "Module", "Object", "ObjectConvertible", "ObjectRValueRef", "OpaquePyObject", "Shape",
    "StreamContext", "String", "Tensor",
    "convert", "convert_func", "device", "dtype", "from_dlpack", "get_global_func", "get_global_func_metadata",
    "get_raw_stream", "list_global_func_names", "load_module", "register_error",
    "register_global_func", "register_object", "remove_global_func", "system_lib",
    "use_raw_stream", "use_torch_stream",
] + _STRUCTURAL_NAMES

# ---- upstream's surface beyond the classes above (module surface, issue 11) ----
from . import _ffi_api, core, libinfo, registry  # noqa: E402,F401 - upstream imports these
from .cany import CAny  # noqa: E402
from .container import ContainerBase as CContainerBase  # noqa: E402
from .registry import init_ffi_api  # noqa: E402

#: ``__version__`` as a tuple, ``(0, 1, 15, "post2")``, as upstream's.
__version_tuple__ = tuple(int(part) if part.isdigit() else part
                          for part in __version__.split("."))

#: The dtype constants (``float32``, ...): real attributes of the package, as upstream's.
DTYPE_NAMES = tuple(_dtype_module.DTYPE_NAMES)
globals().update(_dtype_module.DTYPE_CONSTANTS)

__all__ += ["CAny", "CContainerBase", "__version_tuple__", "convert_func", "init_ffi_api",
            *DTYPE_NAMES]

# ------------------------------------------------ dataclasses and typed methods (issue 13)
from . import dataclasses  # noqa: E402 - registers the enum types' classes as upstream's does
from .dataclasses.py_methods import method  # noqa: E402

__all__ += ["dataclasses", "method"]

# ---- building kernels from Python (issue 15): upstream's package imports it with itself ----
from . import cpp  # noqa: E402,F401

__all__ += ["cpp"]

# ---- the annotation reader: it installs ``TypeSchema.from_annotation``'s callee (upcalls) ----
from . import annotation_schema  # noqa: E402,F401
