"""The rules a function's status and result must obey, checked on every call.

A well-behaved function returns 0 with an *owned* value in ``result``, or -1
with an error in the raised slot (-2: an error already pending in the calling
frontend, a legacy convention). An owned value never holds a borrowed-only
kind (a raw C string, a byte-array pointer, an rvalue reference), an inline
small string holds at most 7 bytes, and an object result names a registered
type that matches its header. Breaking one of these would make the caller
read garbage or crash; instead the caller raises :class:`ABIViolation`,
naming the rule. The checker (``tvm-ffi-check``) reports the same rules.
"""

from __future__ import annotations

import ctypes
from typing import Optional

from . import abi
from ._lib import LIB

TI = abi.TVMFFITypeIndex
_OBJECT_BEGIN = int(TI.kTVMFFIStaticObjectBegin)
_POD_END = int(TI.kTVMFFIUnchanged)
_BORROWED_ONLY = {
    TI.kTVMFFIRawStr: "a raw C string (kTVMFFIRawStr)",
    TI.kTVMFFIByteArrayPtr: "a byte-array pointer (kTVMFFIByteArrayPtr)",
    TI.kTVMFFIObjectRValueRef: "an rvalue reference (kTVMFFIObjectRValueRef)",
}


class ABIViolation(RuntimeError):
    """A function broke a rule of the TVM FFI calling convention.

    ``rule`` is a short identifier (``"status"``, ``"error-raised"``,
    ``"result-owned"``, ``"result-type"``, ``"small-str-length"``,
    ``"object-header"``); the message explains it.
    """

    def __init__(self, rule: str, message: str):
        super().__init__(f"ABI rule '{rule}' broken: {message}")
        self.rule = rule


def status_violation(status: int) -> Optional[ABIViolation]:
    """The violation of a status other than 0, -1 and -2."""
    if status in (0, -1, -2):
        return None
    return ABIViolation("status", f"the function returned status {status}; the ABI allows 0 "
                                  "(success), -1 (error raised) and -2 (error pending in the "
                                  "frontend)")


def missing_error_violation() -> ABIViolation:
    """The violation of returning -1 with nothing raised."""
    return ABIViolation("error-raised", "the function returned -1 but left no error in the "
                                        "raised-error slot (TVMFFIErrorSetRaised)")


def _registered(type_index: int) -> bool:
    if LIB.TVMFFIGetTypeInfo(type_index):
        return True
    handle = ctypes.c_void_p()  # the failed lookup raised an error: discard it
    LIB.TVMFFIErrorMoveFromRaised(ctypes.byref(handle))
    if handle.value:
        LIB.TVMFFIObjectDecRef(handle)
    return False


def result_violation(result: abi.TVMFFIAny) -> Optional[ABIViolation]:
    """The first rule an owned result breaks, or None."""
    index = result.type_index
    if index in _BORROWED_ONLY:
        return ABIViolation("result-owned", f"the result holds {_BORROWED_ONLY[index]}, which "
                                            "only a borrowed argument may hold; return an owned "
                                            "String/Bytes instead")
    if index in (TI.kTVMFFISmallStr, TI.kTVMFFISmallBytes) and result.small_str_len > 7:
        return ABIViolation("small-str-length", f"an inline small string/bytes result claims "
                                                f"{result.small_str_len} bytes; at most 7 fit")
    if index < 0 or _POD_END < index < _OBJECT_BEGIN:
        return ABIViolation("result-type", f"the result has type index {index}, which is no "
                                           "type the ABI defines")
    if index >= _OBJECT_BEGIN:
        if not result.v_ptr:
            return ABIViolation("object-header", f"the result claims an object (type index "
                                                 f"{index}) but its pointer is NULL")
        if not _registered(index):
            return ABIViolation("result-type", f"the result has type index {index}, which no "
                                               "registered type uses")
        header_index = ctypes.c_int32.from_address(result.v_ptr + 8).value
        if header_index != index:
            return ABIViolation("object-header", f"the result's type index {index} differs from "
                                                 f"its object header's {header_index}")
    return None
