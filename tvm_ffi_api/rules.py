"""The rules a function's status and result must obey, checked on every call.

A well-behaved function returns 0 with an *owned* value in ``result``, or -1
with an error in the raised slot (-2: an error already pending in the calling
frontend, a legacy convention). An owned value never holds a borrowed-only
kind (a raw C string, a byte-array pointer, an rvalue reference), an inline
small string holds at most 7 bytes, and an object result names a registered
type that matches its header. Breaking one of these would make the caller
read garbage or crash; instead the caller raises :class:`ABIViolation`,
naming the rule. The checker (``tvm-ffi-check``) reports the same rules, and
the ones only a checker can see (reference counts, memory safety, leaks,
determinism, threads, crashes):
:data:`RULES` is the one list of rule ids and what each requires.
"""

from __future__ import annotations

import ctypes
import re
from typing import List, Optional

from tvm_ffi_common import abi
from tvm_ffi_common.capi import LIB

TI = abi.TVMFFITypeIndex
_OBJECT_BEGIN = int(TI.kTVMFFIStaticObjectBegin)
_POD_END = int(TI.kTVMFFIUnchanged)
#: Every rule of the calling convention: id -> what a function must do. The
#: front end enforces the per-call result rules on every call (``status``,
#: ``error-raised``, ``result-owned``, ``small-str-length``, ``result-type``,
#: ``object-header``); ``tvm-ffi-check`` checks them all.
RULES = {
    "status": "the status is 0 (success), -1 (error raised) or -2 (error pending in the "
              "frontend)",
    "error-raised": "a -1 status comes with an error in the raised-error slot",
    "error-content": "a raised error is an Error object with a kind (an exception class "
                     "name) and a non-empty message",
    "result-type": "the result's type index is one the ABI defines or a registered type's",
    "object-header": "an object result points at an object whose header has the result's "
                     "type index",
    "result-padding": "a POD result (other than a small str/bytes) has zero_padding == 0, and "
                      "a None result an all-zero payload",
    "result-schema": "the result's type is one the declared return type accepts (as upstream's "
                     "conversions do: an int for a float, None for an Optional or a nullable "
                     "object type, a subclass for an object type)",
    "result-owned": "the result holds no borrowed-only kind: no raw C string, byte-array "
                    "pointer or rvalue reference",
    "small-str-length": "an inline small str/bytes result holds at most 7 bytes",
    "result-live": "an object result is alive: a strong count of at least 1 and a deleter",
    "result-reference": "an object result carries a reference of its own, which the caller "
                        "releases (returning an argument or a kept object needs an IncRef)",
    "arg-refcount": "the kernel releases no reference to a borrowed object argument that it "
                    "does not own (keeping one, as a registry does, is allowed: a note)",
    "args-written": "the argument array (and the memory after it) is not written",
    "memory-safety": "the function reads and writes only inside what it is given: each "
                     "tensor's data and the argument array's num_args slots (guard pages on "
                     "both sides catch an access past either end)",
    "leak": "repeated calls leave no references or objects behind (with --leaks: nor "
            "references kept to the same argument, growing with the number of calls)",
    "determinism": "identical calls give identical results (not ones that depend on memory "
                   "the function does not own, a global or the clock)",
    "thread-safety": "calls made concurrently from several threads give what serial calls "
                     "give (when serial calls agree with each other)",
    "crash": "the call returns: it does not kill the process",
    "timeout": "the call returns within the time limit",
}

_STR_LIKE = (int(TI.kTVMFFISmallStr), int(TI.kTVMFFISmallBytes))

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
        if rule not in RULES:
            raise ValueError(f"unknown ABI rule {rule!r}")
        super().__init__(f"ABI rule '{rule}' broken: {message}")
        self.rule = rule
        self.detail = message


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


#: Type indices found registered. A type is never unregistered, so each index is asked of the
#: runtime once rather than on every object a call returns.
_KNOWN_TYPES = set()


def _registered(type_index: int) -> bool:
    if type_index in _KNOWN_TYPES:
        return True
    if LIB.TVMFFIGetTypeInfo(type_index):
        _KNOWN_TYPES.add(type_index)
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
    if index in _STR_LIKE and result.small_str_len > 7:
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


def padding_violation(result: abi.TVMFFIAny) -> Optional[ABIViolation]:
    """The violation of a POD result whose ``zero_padding`` is not zero, or None."""
    index = result.type_index
    if 0 <= index < _OBJECT_BEGIN and index not in _STR_LIKE and result.zero_padding != 0:
        return ABIViolation("result-padding", f"the result (type index {index}) has "
                                              f"zero_padding 0x{result.zero_padding:x}; it must "
                                              "be 0")
    if index == TI.kTVMFFINone and result.v_int64 != 0:
        # A None with a payload is a value someone forgot to tag: a kernel that wrote
        # v_int64 and never set type_index (the caller's result starts as None).
        return ABIViolation("result-padding", f"the result is None (type index 0) but its "
                                              f"payload is 0x{result.v_int64 & (2**64 - 1):x}; "
                                              "a None carries 8 zero bytes (was the type index "
                                              "never set?)")
    return None


def result_violations(result: abi.TVMFFIAny) -> List[ABIViolation]:
    """Every rule an owned result breaks that its 16 bytes and header show.

    :func:`result_violation` (the front end's check) plus ``result-padding``;
    object liveness is :func:`object_liveness_violation`.
    """
    found = [v for v in (result_violation(result), padding_violation(result)) if v is not None]
    return found


def object_liveness_violation(address: int) -> Optional[ABIViolation]:
    """The violation of an object result that is not alive (call after the header checks)."""
    header = abi.TVMFFIObject.from_address(address)
    strong = header.combined_ref_count & 0xFFFFFFFF
    if strong == 0:
        return ABIViolation("result-live", "the result object has a strong reference count of 0: "
                                           "it is dead (released before it was returned?)")
    if not ctypes.c_void_p.from_address(address + 16).value:
        return ABIViolation("result-live", "the result object has no deleter: releasing the "
                                           "caller's reference would crash")
    return None


_KIND = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*\Z")


def error_content_violation(type_index: int, kind: str, message: str) -> Optional[ABIViolation]:
    """The violation of a raised error that is not an Error with a kind and message."""
    if type_index != TI.kTVMFFIError:
        return ABIViolation("error-content", f"the raised object has type index {type_index}, "
                                             "not an Error (kTVMFFIError)")
    if not _KIND.match(kind):
        return ABIViolation("error-content", f"the raised error's kind {kind!r} is not an "
                                             "exception class name")
    if not message:
        return ABIViolation("error-content", f"the raised {kind} has an empty message")
    return None
