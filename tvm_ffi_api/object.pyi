"""What every core's ``object`` module provides: the object wrappers and their class registry.

The contract between the shared API and a core (``tvm_ffi_api/__init__.py``
says how a core is mounted): the shared modules import these names from
``.object`` and nothing else; ``tests/test_core_contract.py`` checks the
reference's, the compiled and the cffi core against this file.
"""

from typing import Any, Optional

from tvm_ffi_common import abi

from .object_protocols import (
    ObjectConvertible as ObjectConvertible,
    ObjectRValueRef as ObjectRValueRef,
)
from .object_wrapper import CObject as CObject, Object as Object, TensorBase as TensorBase
from .type_info import (
    class_for_type_index as class_for_type_index,
    type_info as type_info,
    type_key_to_index as type_key_to_index,
)

TI = abi.TVMFFITypeIndex

def type_index_of(handle: int) -> int:
    """The type index in the header of the object at ``handle``."""

def register_class(type_index: int, cls: type) -> type:
    """Makes ``cls`` the Python class of objects of ``type_index``; returns it."""

def wrap_owned(handle: int, type_index: Optional[int] = None) -> Any:
    """The Python wrapper taking over one owned reference to ``handle`` (its class by type index)."""
