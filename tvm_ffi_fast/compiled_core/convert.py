"""Python values to TVMFFIAny and back: the fast core's side of the encoding.

The rules are the shared ones (:func:`arg_setters.argument_kind` is the
dispatch order, first match wins) and a kernel cannot tell the two front ends
apart. The work is done in C (``tvm_ffi_fast/src/frontend/encode.c`` and
``decode.c``); what stays here:

* :func:`_choose_setter`, asked once per Python type by the C encoder: it
  returns one of the kinds the C encodes itself (``_frontend.KIND_*``), the
  DLPack exchange table of a framework tensor type (as a capsule the C
  reads), or, for the rare kinds, the shared Python setter
  (:data:`arg_setters.PYTHON_SETTERS`), which writes into the ``TVMFFIAny``
  through ctypes;
* the names the shared API modules import (``set_arg``, ``to_python``, ...),
  each one call into the core.
"""

from __future__ import annotations

import ctypes
from typing import Any, Callable, Dict, Optional, Union

from tvm_ffi_common import abi, pycapi

from . import _frontend, dlpack_exchange, upcalls
from .arg_setters import PYTHON_SETTERS, CallScope, argument_kind
from .object import CObject

TI = abi.TVMFFITypeIndex
_OBJECT_BEGIN = int(TI.kTVMFFIStaticObjectBegin)

#: The argument kinds the C encoder writes itself, by their shared names.
_C_KINDS: Dict[str, int] = {
    "none": _frontend.KIND_NONE,
    "object": _frontend.KIND_OBJECT,
    "dlpack": _frontend.KIND_DLPACK,
    "bool": _frontend.KIND_BOOL,
    "int": _frontend.KIND_INT,
    "float": _frontend.KIND_FLOAT,
    "dtype": _frontend.KIND_DTYPE,
    "device": _frontend.KIND_DEVICE,
    "native_str": _frontend.KIND_NATIVE_STR,
    "native_bytes": _frontend.KIND_NATIVE_BYTES,
    "native_shape": _frontend.KIND_NATIVE_SHAPE,
    "str": _frontend.KIND_STR,
    "bytes": _frontend.KIND_BYTES,
    "sequence": _frontend.KIND_SEQUENCE,
    "dict": _frontend.KIND_DICT,
    "void_p": _frontend.KIND_VOID_P,
    "callable": _frontend.KIND_CALLABLE,
}


_EXCHANGE_CAPSULE_NAME = pycapi.static_name(dlpack_exchange.CAPSULE_NAME)


def _choose_setter(value: Any) -> Union[int, Callable, Any]:
    """A kind the core encodes, a framework's exchange table, or the Python setter of a rare kind.

    Called by the core once per Python type (the answer is cached by type).
    """
    kind = argument_kind(value)
    if kind in _C_KINDS:
        return _C_KINDS[kind]
    if kind == "dlpack_exchange":
        address = dlpack_exchange.class_api_address(type(value))
        return pycapi.capsule_new(address, _EXCHANGE_CAPSULE_NAME, None)
    return PYTHON_SETTERS[kind]


def _fallback_set(setter: Callable, address: int, value: Any, scope: CallScope) -> None:
    """Runs a Python setter on the TVMFFIAny the core is filling at ``address``."""
    setter(abi.TVMFFIAny.from_address(address), value, scope)


# --------------------------------------------------------------- the core's entry points


def set_arg(out: abi.TVMFFIAny, value: Any, scope: CallScope) -> None:
    """Writes ``value`` into ``out`` as a borrowed argument."""
    _frontend.set_arg(ctypes.addressof(out), value, scope)


def pack_args(args, scope: CallScope) -> "ctypes.Array[abi.TVMFFIAny]":
    """A TVMFFIAny array holding ``args`` as borrowed arguments."""
    packed = (abi.TVMFFIAny * len(args))()
    _frontend.pack_into(ctypes.addressof(packed), args, scope)
    return packed


def to_owned_any(value: Any, out: abi.TVMFFIAny) -> None:
    """Writes ``value`` into ``out`` as an owned value (a callback's result)."""
    _frontend.to_owned_any_at(value, ctypes.addressof(out))


def to_python(value: abi.TVMFFIAny, exchange_api: int = 0, strict: bool = False) -> Any:
    """The Python value of an *owned* TVMFFIAny; takes over its reference (seen through the
    DLPack exchange table at ``exchange_api``, if not 0)."""
    return _frontend.to_python_at(ctypes.addressof(value), exchange_api, strict)


def borrowed_to_python(value: abi.TVMFFIAny, exchange_api: int = 0, strict: bool = False) -> Any:
    """The Python value of a *borrowed* TVMFFIAny (a callback argument, a container element)."""
    return _frontend.borrowed_to_python_at(ctypes.addressof(value), exchange_api, strict)


def release_any(value: abi.TVMFFIAny) -> None:
    """Drops the reference an owned TVMFFIAny holds, if any."""
    if value.type_index >= _OBJECT_BEGIN:
        _frontend.decref(value.v_ptr)


def optional_handle(value: Optional[CObject]) -> Optional[int]:
    """The handle of an optional object argument."""
    return None if value is None else value._handle


def set_device_class(cls: type) -> None:
    """Makes ``cls`` (Device or a subclass) the class of devices returned from calls."""
    _frontend.set_device_class(cls)

upcalls.install("convert", set_arg=set_arg, set_device_class=set_device_class)
