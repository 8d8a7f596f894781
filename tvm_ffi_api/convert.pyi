"""What every core's ``convert`` module provides: Python values to ``TVMFFIAny`` and back.

Part of the core contract (``object.pyi`` says what that is); the encoding
rules themselves are shared (``arg_setters.argument_kind``).
"""

import ctypes
from typing import Any, Optional, Sequence

from tvm_ffi_common import abi

from .arg_setters import CallScope as CallScope
from .object_wrapper import Object

TI = abi.TVMFFITypeIndex

def set_arg(out: abi.TVMFFIAny, value: Any, scope: CallScope) -> None:
    """Encodes ``value`` into ``out`` as an argument; what the call must release goes to ``scope``."""

def pack_args(args: Sequence[Any], scope: CallScope) -> "ctypes.Array[abi.TVMFFIAny]":
    """The arguments of one call, encoded into a new array."""

def to_owned_any(value: Any, out: abi.TVMFFIAny) -> None:
    """Encodes ``value`` into ``out`` owning a reference (a callback's result)."""

def to_python(value: abi.TVMFFIAny, exchange_api: int = 0, strict: bool = False) -> Any:
    """The Python value of an owned ``value``, taking over its reference."""

def borrowed_to_python(value: abi.TVMFFIAny, exchange_api: int = 0, strict: bool = False) -> Any:
    """The Python value of a borrowed ``value`` (a callback's argument)."""

def release_any(value: abi.TVMFFIAny) -> None:
    """Drops the reference an owned ``value`` holds, if it holds one."""

def optional_handle(value: Optional[Object]) -> Optional[int]:
    """The handle of ``value``, or ``None``."""

def set_device_class(cls: type) -> None:
    """Tells the core the Python class of devices (``device.Device``) to decode into."""
