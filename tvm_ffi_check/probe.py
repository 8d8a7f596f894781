"""The checks that run next to the kernel, in a disposable worker process.

Each function here calls a kernel function through its Function object (the
library module's, so the kernel gets ``self == NULL`` as under upstream),
with arguments packed exactly as the ``tvm_ffi_ref`` front end packs them,
and watches what the ABI lets a caller watch:

* the status, the raised error, the 16 bytes of the result and the header of
  an object result (:mod:`tvm_ffi_ref.rules`);
* the strong reference count of every borrowed object argument (and of the
  elements of Array/List arguments) before the call, right after it and after
  the result is released; a guard reference keeps each one alive whatever the
  kernel does to it;
* the bytes of the argument array, which ends against a guard page (a kernel
  reading or writing ``args[n]`` of an ``n``-argument call faults there);
* the objects the reference runtime allocated and has not yet freed (every
  ``TVMFFIStringFromByteArray``, error, Array... a kernel makes goes through
  it) and the C API functions the kernel called (``runtime.observers``).

It never releases a reference the kernel may not have given, so a broken
kernel leaks in the worker instead of corrupting it. Results are returned as
plain data: ``(rule, message)`` violations and a canonical *outcome* of the
call, comparable across calls and threads.
"""

from __future__ import annotations

import ctypes
import re
import struct
from collections import Counter
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

import tvm_ffi_ref as api
from tvm_ffi_common import abi
from tvm_ffi_common.capi import LIB
from tvm_ffi_ref import rules
from tvm_ffi_ref.convert import CallScope, set_arg, to_python
from tvm_ffi_ref.runtime import memory, slots
from tvm_ffi_ref.type_info import type_key

from . import deadline, guard, result_schema
from .values import RawStrArg, TensorArg, materialize

TI = abi.TVMFFITypeIndex
OBJECT_BEGIN = int(TI.kTVMFFIStaticObjectBegin)
ANY_SIZE = ctypes.sizeof(abi.TVMFFIAny)
_SEQ_TYPES = (int(TI.kTVMFFIArray), int(TI.kTVMFFIList))
#: POD kinds whose payload is a borrowed pointer rather than the value itself.
_POINTER_TYPES = (int(TI.kTVMFFIOpaquePtr), int(TI.kTVMFFIDLTensorPtr), int(TI.kTVMFFIRawStr),
                  int(TI.kTVMFFIByteArrayPtr), int(TI.kTVMFFIObjectRValueRef))

Violation = Tuple[str, str]

if TYPE_CHECKING:  # the core contract's Function (tvm_ffi_api/function.pyi)
    from tvm_ffi_api.function import Function


# ------------------------------------------------------ runtime bookkeeping

#: Objects the reference runtime allocated and has not freed: address -> type index.
LIVE: Dict[int, int] = {}
_tracking = [False]


def install_tracking() -> None:
    """Counts the reference runtime's live objects (call before anything is loaded)."""
    if _tracking[0]:
        return
    _tracking[0] = True
    memory.track_lifetimes(LIVE.__setitem__, lambda address: LIVE.pop(address, None))


class _ApiTrace:
    """The C API functions called while recording (the runtime's slot observer)."""

    def __init__(self) -> None:
        self.recording = False
        self.calls: List[str] = []

    def __call__(self, name: str, args) -> None:
        if self.recording:
            self.calls.append(name)

    def summary(self) -> List[str]:
        return [f"{name} x{count}" if count > 1 else name
                for name, count in Counter(self.calls).items()]


TRACE = _ApiTrace()
if TRACE not in slots.observers:
    slots.observers.append(TRACE)


def strong_count(address: int) -> int:
    """The strong reference count in an object's header."""
    return ctypes.c_uint64.from_address(address).value & 0xFFFFFFFF


#: Type keys by index: an index names one type for the life of the process (every
#: argument of every call is named, for the report of a crash).
_NAMES: Dict[int, str] = {}


def _type_name(index: int) -> str:
    name = _NAMES.get(index)
    if name is None:
        try:
            name = _NAMES[index] = type_key(index)
        except Exception:  # noqa: BLE001 - an unregistered index (not cached: it may come)
            return f"type {index}"
    return name


def clear_raised() -> None:
    """Drops whatever an earlier call left in this thread's raised-error slot."""
    handle = ctypes.c_void_p()
    LIB.TVMFFIErrorMoveFromRaised(ctypes.byref(handle))
    if handle.value:
        LIB.TVMFFIObjectDecRef(handle.value)


def take_raised() -> Optional[int]:
    """Moves this thread's raised error out (an owned handle), or None."""
    handle = ctypes.c_void_p()
    LIB.TVMFFIErrorMoveFromRaised(ctypes.byref(handle))
    return handle.value or None


#: A logging library's time stamp (``[13:41:31] file.cc:179: Check failed``): the same error
#: raised a second later must still compare equal.
_TIME_STAMP = re.compile(r"\[\d{2}:\d{2}:\d{2}(?:\.\d+)?\] ")


def error_parts(handle: int) -> Tuple[str, str]:
    """``(kind, message)`` of an Error object (time stamps in the message blanked)."""
    cell = abi.TVMFFIErrorCell.from_address(handle + memory.HEADER_SIZE)
    kind, message = (ctypes.string_at(part.data, part.size).decode("utf-8", "replace")
                     if part.data and part.size else "" for part in (cell.kind, cell.message))
    return kind, _TIME_STAMP.sub("[time] ", message)


# ------------------------------------------------------------------ packing


class Packed:
    """One call's argument array: ``n`` arguments, its end against a guard page."""

    def __init__(self, values: Sequence[Any]) -> None:
        self.scope = CallScope()
        self.n = len(values)
        memory = guard.guarded_bytes(self.n * ANY_SIZE, "the argument array")
        self.scope.keep.append(memory)
        self.address = memory.ctypes.data
        self.array = (abi.TVMFFIAny * max(self.n, 1)).from_address(self.address)
        self.pointer = ctypes.cast(self.address, ctypes.POINTER(abi.TVMFFIAny))
        #: The guarded buffers of this call (guard.py), for a fault's report: the
        #: argument array itself, then each tensor's data.
        self.regions: List[guard.Region] = [dict(guard.last_region(), item=ANY_SIZE)]
        self.interrupted = False
        self.strings = [v.text if isinstance(v, RawStrArg) else v for v in values
                        if isinstance(v, (str, RawStrArg))]
        try:
            with guard.recording() as regions:
                for i, value in enumerate(values):
                    guard.label(f"args[{i}]")
                    self._pack(self.array[i], value)
            self.regions += regions
            self._forms: Optional[List[Tuple[int, str, str]]] = None
            self.forms()
        except BaseException:
            self.scope.close()
            raise

    def _pack(self, out: abi.TVMFFIAny, value: Any) -> None:
        keep = self.scope.keep
        if isinstance(value, RawStrArg):
            buffer = ctypes.create_string_buffer(value.text.encode("utf-8"))
            keep.append(buffer)
            out.type_index = TI.kTVMFFIRawStr
            out.v_ptr = ctypes.addressof(buffer)
            return
        if isinstance(value, TensorArg) and value.as_pointer:
            array = materialize(value, keep)
            ndim = array.ndim
            shape = (ctypes.c_int64 * max(ndim, 1))(*array.shape)
            strides = (ctypes.c_int64 * max(ndim, 1))(*(s // array.itemsize
                                                        for s in array.strides))
            dtype = api.dtype(str(array.dtype))
            code, bits, lanes = dtype._tvm_ffi_dtype_tuple
            tensor = abi.DLTensor(
                data=array.ctypes.data, device=abi.DLDevice(abi.DLDeviceType.kDLCPU, 0),
                ndim=ndim, dtype=abi.DLDataType(code, bits, lanes), shape=shape,
                strides=strides, byte_offset=0)
            keep.extend([shape, strides, tensor])
            out.type_index = TI.kTVMFFIDLTensorPtr
            out.v_ptr = ctypes.addressof(tensor)
            return
        value = materialize(value, keep)
        keep.append(value)  # arguments are borrowed: what they point into must outlive the call
        set_arg(out, value, self.scope)

    def forms(self) -> List[Tuple[int, str, str]]:
        """How each argument crosses the ABI: ``(type index, type name, form)``, where the
        form is ``inline`` (the value sits in the Any: a POD, a small str/bytes),
        ``pointer`` (a borrowed C pointer) or ``object`` (a pointer to an object)."""
        if self._forms is None:  # once, before the call: naming a type calls the C API
            self._forms = self._read_forms()
        return self._forms

    def _read_forms(self) -> List[Tuple[int, str, str]]:
        found = []
        for i in range(self.n):
            index = self.array[i].type_index
            form = ("object" if index >= OBJECT_BEGIN else
                    "pointer" if index in _POINTER_TYPES else "inline")
            found.append((index, _type_name(index), form))
        return found

    def raw(self) -> bytes:
        """The bytes of the argument array."""
        return ctypes.string_at(self.address, self.n * ANY_SIZE)

    def objects(self) -> List[int]:
        """Every object the arguments borrow: top-level ones and Array/List elements."""
        found: List[int] = []
        for i in range(self.n):
            self._collect(self.array[i], found, depth=0)
        return found

    def _collect(self, value: abi.TVMFFIAny, found: List[int], depth: int) -> None:
        if value.type_index < OBJECT_BEGIN or not value.v_ptr:
            return
        if value.v_ptr not in found:
            found.append(value.v_ptr)
        if depth < 2 and value.type_index in _SEQ_TYPES:
            cell = abi.TVMFFISeqCell.from_address(value.v_ptr + memory.HEADER_SIZE)
            if cell.data and 0 < cell.size < 1024:
                items = (abi.TVMFFIAny * cell.size).from_address(cell.data)
                for item in items:
                    self._collect(item, found, depth + 1)

    def close(self) -> None:
        """Releases what the arguments needed."""
        self.scope.close()


#: Called with the Packed arguments before every kernel call (the worker reports
#: progress, which keeps a per-call timeout per call, and the call's tensor regions).
BEFORE_CALL: List[Any] = []


def invoke(func: Function, packed: Packed) -> Tuple[int, abi.TVMFFIAny]:
    """Calls the kernel function once: ``(status, result)``.

    A call that runs past the soft limit is interrupted through
    ``TVMFFIEnvCheckSignals`` (:mod:`.deadline`); ``packed.interrupted`` says so.
    """
    for hook in BEFORE_CALL:
        hook(packed)
    result = abi.TVMFFIAny()
    with deadline.soft_limit(deadline.LIMIT[0]):
        status = func._safe_call(func._handle, packed.pointer, packed.n, ctypes.byref(result))
    packed.interrupted = status != 0 and deadline.interrupted()
    return status, result


# ------------------------------------------------------------------ outcomes


def canonical(value: Any, depth: int = 0) -> Any:
    """A comparable, picklable form of a Python value made from a result."""
    if depth > 6:
        return ("...",)
    if value is None or isinstance(value, bool):
        return ("value", value)
    if isinstance(value, int):
        return ("int", int(value))
    if isinstance(value, float):
        return ("float", struct.pack("<d", value).hex())
    if isinstance(value, str):
        return ("str", str(value))
    if isinstance(value, bytes):
        return ("bytes", bytes(value))
    if isinstance(value, ctypes.c_void_p):  # an address says nothing across calls: only NULL does
        return ("void*", "NULL" if not value.value else "non-NULL")
    if isinstance(value, api.Shape):
        return ("Shape", tuple(int(d) for d in value))
    if isinstance(value, (api.Array, api.List)):
        return (type(value).__name__, tuple(canonical(v, depth + 1) for v in value))
    if isinstance(value, (api.Map, api.Dict)):
        items = [(canonical(k, depth + 1), canonical(v, depth + 1)) for k, v in value.items()]
        return (type(value).__name__, tuple(sorted(items, key=repr)))
    if isinstance(value, api.Tensor):
        data = b""
        try:
            import numpy as np

            if value.device.dlpack_device_type() == 1:
                data = np.ascontiguousarray(np.from_dlpack(value)).tobytes()
        except Exception:  # noqa: BLE001 - a dtype NumPy cannot show
            data = b"?"
        return ("Tensor", tuple(value.shape), str(value.dtype), data)
    if isinstance(value, api.Error):
        return ("Error", value.kind, value.message)
    if isinstance(value, api.Function):
        return ("Function",)
    if isinstance(value, api.OpaquePyObject):
        return ("OpaquePyObject", type(value.pyobject).__name__)
    if isinstance(value, api.Object):
        return ("Object", value.type_key)
    if isinstance(value, (api.Device,)):
        return ("Device", str(value))
    return (type(value).__name__, repr(value))


def display(outcome: Any, limit: int = 160) -> str:
    """A short reading of a canonical outcome."""
    kind = outcome[0]
    if kind == "error":
        text = f"raised {outcome[1]}: {outcome[2]}"
    elif kind == "result":
        text = "returned " + _display_value(outcome[1])
    else:
        text = " ".join(map(str, outcome))
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _display_value(value: Any) -> str:
    tag = value[0]
    if tag in ("value", "int", "str", "bytes"):
        return repr(value[1])
    if tag == "float":
        return repr(struct.unpack("<d", bytes.fromhex(value[1]))[0])
    if tag in ("Array", "List"):
        return f"{tag}([{', '.join(_display_value(v) for v in value[1])}])"
    if tag in ("Map", "Dict"):
        return f"{tag}({{{', '.join(f'{_display_value(k)}: {_display_value(v)}' for k, v in value[1])}}})"
    if tag == "Tensor":
        return f"Tensor({value[2]}{list(value[1])})"
    return f"{tag}({', '.join(map(repr, value[1:]))})" if len(value) > 1 else tag


def _result_outcome(result: abi.TVMFFIAny) -> Any:
    """The canonical outcome of an owned, rule-abiding result; takes its reference."""
    try:
        value = to_python(result)
    except Exception as exc:  # noqa: BLE001 - a value the front end cannot read
        if result.type_index >= OBJECT_BEGIN:
            LIB.TVMFFIObjectDecRef(result.v_ptr)
        return ("result", ("unreadable", f"{type(exc).__name__}: {exc}"))
    outcome = ("result", canonical(value))
    del value
    return outcome


def _error_outcome(violations: List[Violation], strings: Sequence[str] = ()) -> Any:
    handle = take_raised()
    if handle is None:
        violations.append(("error-raised", rules.missing_error_violation().detail))
        return ("error", "?", "(nothing raised)")
    try:
        index = ctypes.c_int32.from_address(handle + 8).value
        kind, message = error_parts(handle) if index == TI.kTVMFFIError else ("?", "?")
        violation = rules.error_content_violation(index, kind, message)
        # An error made of what the caller passed (a function raising the kind and
        # message it is given) shows the caller's strings, not the function's fault.
        if violation is not None and not (index == TI.kTVMFFIError and
                                          (kind in strings or message in strings)):
            violations.append((violation.rule, violation.detail))
        return ("error", kind, message)
    finally:
        LIB.TVMFFIObjectDecRef(handle)


# ------------------------------------------------------------ checked call


def _args_written(before: bytes, after: bytes, n: int) -> List[Violation]:
    found = []
    for i in range(n):
        old, new = before[i * ANY_SIZE:(i + 1) * ANY_SIZE], after[i * ANY_SIZE:(i + 1) * ANY_SIZE]
        if old != new:
            found.append(("args-written", f"the kernel overwrote borrowed argument args[{i}]: "
                                          f"{old.hex()} became {new.hex()}"))
    return found


def _describe(handle: int) -> str:
    return f"{_type_name(ctypes.c_int32.from_address(handle + 8).value)} at 0x{handle:x}"


class _Call:
    """One call with guards: the counts and bytes a checked call compares.

    ``also_watch`` are more objects whose counts are recorded right before
    the call (``before_extra``): a result kept from an earlier call.
    """

    def __init__(self, func: Function, values: Sequence[Any], also_watch=()) -> None:
        clear_raised()
        self.packed = Packed(values)
        self.watched = self.packed.objects()
        for handle in self.watched:  # the guard: no kernel mistake frees an argument
            LIB.TVMFFIObjectIncRef(handle)
        self.before = {h: strong_count(h) for h in self.watched}
        self.before_extra = {h: strong_count(h) for h in also_watch}
        raw_before = self.packed.raw()
        TRACE.calls.clear()
        TRACE.recording = True
        try:
            self.status, self.result = invoke(func, self.packed)
        finally:
            TRACE.recording = False
        self.api_calls = TRACE.summary()
        self.after_call = {h: strong_count(h) for h in self.watched}
        self.violations = _args_written(raw_before, self.packed.raw(), self.packed.n)
        #: (type name, count) of references the kernel kept to borrowed arguments.
        self.kept: List[Tuple[str, int]] = []

    def result_object(self) -> Optional[int]:
        """The object a successful call returned, if any."""
        if self.status == 0 and self.result.type_index >= OBJECT_BEGIN and self.result.v_ptr:
            return self.result.v_ptr
        return None

    def result_problems(self) -> List[Violation]:
        """The rules a successful call's result breaks by itself (its bytes and header)."""
        found = [(v.rule, v.detail) for v in rules.result_violations(self.result)]
        handle = self.result_object()
        if handle and not found:
            live = rules.object_liveness_violation(handle)
            if live is not None:
                found.append((live.rule, live.detail))
        return found

    def finish(self) -> List[Violation]:
        """Checks status, error and result without keeping anything; releases what is safe.

        For the calls after the first (a kernel may misbehave only later): a
        result that breaks a rule is never released.
        """
        violation = rules.status_violation(self.status)
        if self.packed.interrupted:
            clear_raised()
            return []
        if violation is not None:
            clear_raised()
            return [(violation.rule, violation.detail)]
        if self.status == 0:
            problems = self.result_problems()
            if not problems and self.result_object():
                LIB.TVMFFIObjectDecRef(self.result_object())
            return problems
        if self.status == -1:
            found: List[Violation] = []
            _error_outcome(found, self.packed.strings)
            return found
        clear_raised()
        return []

    def settle(self, result_handle: Optional[int] = None, results_held: bool = False) -> None:
        """Checks the arguments' counts once the result is gone, then releases the guards.

        ``result_handle`` is a result object the caller could not release
        (it broke a rule); when it is an argument it accounts for one count.
        With ``results_held`` the checker still holds results that may
        reference the arguments, so only references the kernel dropped count.
        """
        for handle in self.watched:
            now = strong_count(handle)
            expected = self.before[handle]
            if handle == result_handle and now == expected + 1:
                expected += 1
            if now < expected:
                self.violations.append((
                    "arg-refcount", f"the kernel dropped {expected - now} reference(s) it did not "
                                    f"own to borrowed argument {_describe(handle)} (strong count "
                                    f"{expected} before, {now} after)"))
                for _ in range(expected - now):  # undo the kernel's DecRef
                    LIB.TVMFFIObjectIncRef(handle)
            elif now > expected and not results_held:
                # Allowed by the ABI: a kernel may keep what it is given (a registry, a
                # cache). Only growth with every call is a leak (--leaks shows that).
                self.kept.append((_type_name(ctypes.c_int32.from_address(handle + 8).value),
                                  now - expected))
        for handle in self.watched:
            LIB.TVMFFIObjectDecRef(handle)
        self.packed.close()


def checked_call(func: Function, values: Sequence[Any],
                 returns: Optional[dict] = None) -> Dict[str, Any]:
    """Calls once with every per-call rule checked; twice when it returns an object.

    The second call (same arguments, while the checker still holds a
    reference to the first result) shows whether a kernel that hands out the
    same object again adds a reference for each caller.

    ``returns`` is the declared return type (a type schema): a result it does
    not accept breaks ``result-schema``.

    Returns ``{"status", "outcome", "violations", "api_calls", "kept"}``, and
    ``result_type`` (the type key) when the result is an object.
    """
    call = _Call(func, values)
    violations = call.violations
    status, result = call.status, call.result
    outcome: Any = ("status", status)
    unreleasable: Optional[int] = None  # a result object the caller may not release
    probe: Optional[int] = None  # our reference to the first result, held over a second call
    result_type: Optional[str] = None

    violation = rules.status_violation(status)
    if call.packed.interrupted:  # stopped through TVMFFIEnvCheckSignals: it honoured the check
        outcome = ("interrupted",)
        clear_raised()
    elif violation is not None:
        violations.append((violation.rule, violation.detail))
        clear_raised()
    elif status == -1:
        outcome = _error_outcome(violations, call.packed.strings)
    elif status == -2:
        outcome = ("error", "(pending in the frontend)", "")
        clear_raised()
    else:
        found = call.result_problems()
        if all(rule == "result-padding" for rule, _ in found):  # the type index is readable
            wrong = result_schema.mismatch(returns, result.type_index, _type_name)
            if wrong is not None:
                violations.append(("result-schema", wrong))
        handle = call.result_object()
        if handle and not found:
            if handle in call.before and call.after_call[handle] < call.before[handle] + 1:
                found.append(("result-reference",
                              f"the result is borrowed argument {_describe(handle)}, returned "
                              f"without a reference of its own (strong count "
                              f"{call.before[handle]} before and after the call; it must go up "
                              f"by one)"))
        violations.extend(found)
        if found:
            unreleasable = handle
            outcome = ("broken-result", result.type_index)
        else:
            if handle:
                result_type = _type_name(result.type_index)
            if handle and handle not in call.before:
                LIB.TVMFFIObjectIncRef(handle)
                probe = handle
            outcome = _result_outcome(result)  # takes (and releases) the caller's reference

    if probe is not None:
        second = _Call(func, values, also_watch=(probe,))
        if second.result_object() == probe and \
                strong_count(probe) < second.before_extra[probe] + 1:
            violations.append((
                "result-reference",
                f"the kernel returned the same {_describe(probe)} on two calls without adding "
                f"a reference for the caller (strong count {strong_count(probe)} after the "
                "second call, as before it): the first caller's release freed, or will free, an "
                "object the kernel still hands out"))
            second.settle(probe)  # neither the second result nor our probe is released
        else:
            second.violations.extend(second.finish())
            second.settle()
            violations.extend(v for v in second.violations if v not in violations)
            LIB.TVMFFIObjectDecRef(probe)
    call.settle(unreleasable)
    answer = {"status": status, "outcome": outcome, "violations": violations,
              "api_calls": call.api_calls, "kept": call.kept}
    if result_type is not None:
        answer["result_type"] = result_type
    return answer
