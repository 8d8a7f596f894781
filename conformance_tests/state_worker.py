"""Worker operations on the runtime's state: the type registry and dtype strings.

Loaded by ``child.py`` (by file path, like ``structural_worker.py``) into its
table of operations: ``register_types`` (a ``TVMFFITypeGetOrAllocIndex``
sequence, then lookups and type info records), ``type_infos``,
``dtype_strings`` (``api.dtype`` and the C API round trip) and
``dtype_triples`` (``TVMFFIDataTypeToString`` of any code, bits and lanes).
Every C API error is taken from the raised slot and reported as
``[kind, first line of the message]``.
"""

from __future__ import annotations

import ctypes
from typing import Any, Callable, Dict, List

#: How the worker records a Python exception as a result (``child_results.raised``), set by
#: :func:`handlers`.
_raised: Callable[[BaseException], List[Any]] = None


def _byte_array(env: Any, data: bytes, keep: list):
    buffer = ctypes.create_string_buffer(data, len(data) + 1)
    keep.append(buffer)
    return env.abi.TVMFFIByteArray(ctypes.addressof(buffer), len(data))


def _take_error(env: Any) -> Any:
    handle = ctypes.c_void_p()
    env.lib.TVMFFIErrorMoveFromRaised(ctypes.byref(handle))
    if not handle.value:
        return None
    cell = env.abi.TVMFFIErrorCell.from_address(handle.value + 24)
    kind = ctypes.string_at(cell.kind.data, cell.kind.size).decode("utf-8", "replace")
    message = ctypes.string_at(cell.message.data, cell.message.size).decode("utf-8", "replace")
    env.lib.TVMFFIObjectDecRef(handle)
    return [kind, (message.splitlines() or [""])[0]]


def type_info_record(env: Any, index: int) -> Any:
    """A ``TVMFFITypeInfo`` as plain data (pointers by what they point at)."""
    pointer = env.lib.TVMFFIGetTypeInfo(index)
    if not pointer:
        return ["no-type-info", _take_error(env)]
    info = pointer.contents
    key = ctypes.string_at(info.type_key.data, info.type_key.size).decode()
    ancestors = [info.type_ancestors[i].contents.type_index for i in range(info.type_depth)]
    fields = []
    for i in range(info.num_fields):
        field = info.fields[i]
        fields.append([ctypes.string_at(field.name.data, field.name.size).decode(),
                       int(field.flags), int(field.size), int(field.alignment), int(field.offset),
                       int(field.field_static_type_index)])
    methods = []
    for i in range(info.num_methods):
        method = info.methods[i]
        methods.append([ctypes.string_at(method.name.data, method.name.size).decode(),
                        int(method.flags)])
    return {"type_index": info.type_index, "type_depth": info.type_depth, "type_key": key,
            "type_key_hash": info.type_key_hash, "ancestors": ancestors,
            "fields": fields, "methods": methods, "has_metadata": bool(info.metadata)}


def op_register_types(env: Any, job: Dict[str, Any]) -> Any:
    """Runs ``TVMFFITypeGetOrAllocIndex`` for each ``(key, parent, child_slots, overflow)``.

    Keys get ``job["prefix"]`` (unique per case, so earlier cases in the same
    worker cannot interfere). ``parent`` is a position in the list (-1:
    ``ffi.Object``); the parent's depth comes from its record. Dynamic indices
    are reported relative to the first index the sequence allocated, since
    the front ends' packages register different numbers of types at import
    (upstream's core loads libtvm_ffi_testing.so); static ones as they are.
    """
    keep: list = []
    indices: List[int] = []
    out: List[Any] = []
    prefix = job["prefix"]
    # An error an earlier request left in the raised slot is not this case's (what a front end
    # leaves there varies with the interpreter: Python 3.9's annotations look up fewer types).
    _take_error(env)
    for key, parent, child_slots, overflow in job["registrations"]:
        if parent < 0 or parent >= len(indices) or indices[parent] < 0:
            parent_index = 64
        else:
            parent_index = indices[parent]
        parent_info = env.lib.TVMFFIGetTypeInfo(parent_index).contents
        index = env.lib.TVMFFITypeGetOrAllocIndex(
            ctypes.byref(_byte_array(env, (prefix + key).encode(), keep)), -1,
            parent_info.type_depth + 1, child_slots, 1 if overflow else 0, parent_index)
        indices.append(index)
        out.append([key, index, _take_error(env)])
    dynamic = [i for i in indices if i >= 128]
    base = min(dynamic) if dynamic else 0

    def rel(index: int) -> Any:
        return ["dyn", index - base] if index >= 128 else index

    for record in out:
        record[1] = rel(record[1])
    lookups = []
    for key, _, _, _ in job["registrations"]:
        found = ctypes.c_int32(-7)
        status = env.lib.TVMFFITypeKeyToIndex(
            ctypes.byref(_byte_array(env, (prefix + key).encode(), keep)), ctypes.byref(found))
        lookups.append([status, rel(found.value), _take_error(env)])
    infos = []
    for index in sorted(set(i for i in indices if i >= 0)):
        info = type_info_record(env, index)
        info["type_index"] = rel(info["type_index"])
        info["ancestors"] = [rel(a) for a in info["ancestors"]]
        infos.append(info)
    return {"registered": out, "lookups": lookups, "infos": infos}


def op_type_infos(env: Any, indices: List[int]) -> Any:
    return [type_info_record(env, i) for i in indices]


def op_dtype_strings(env: Any, texts: List[str]) -> Any:
    """For each string: ``api.dtype`` (name, fields) and the C API parse/print round trip."""
    api = env.api
    out = []
    keep: list = []
    for text in texts:
        def via_api():
            d = api.dtype(text)
            return [str(d), int(d.type_code), int(d.bits), int(d.lanes)]
        try:
            api_result = ["ok", via_api()]
        except Exception as error:  # noqa: BLE001
            api_result = _raised(error)
        dt = env.abi.DLDataType()
        data = text.encode("utf-8", "surrogatepass")
        status = env.lib.TVMFFIDataTypeFromString(ctypes.byref(_byte_array(env, data, keep)),
                                                  ctypes.byref(dt))
        if status != 0:
            capi = ["error", status, _take_error(env)]
        else:
            capi = ["ok", [dt.code, dt.bits, dt.lanes], _dtype_to_string(env, dt)]
        out.append([api_result, capi])
    return out


def _dtype_to_string(env: Any, dt) -> Any:
    result = env.abi.TVMFFIAny()
    status = env.lib.TVMFFIDataTypeToString(ctypes.byref(dt), ctypes.byref(result))
    if status != 0:
        return ["error", status, _take_error(env)]
    index = result.type_index
    if index == 11:  # kTVMFFISmallStr
        text = bytes(result.v_bytes)[:result.small_str_len]
    elif index == 65:  # kTVMFFIStr
        cell = env.abi.TVMFFIByteArray.from_address(result.v_ptr + 24)
        text = ctypes.string_at(cell.data, cell.size)
        env.lib.TVMFFIObjectDecRef(result.v_ptr)
    else:
        return ["unexpected-type-index", index]
    return ["ok", index, text.decode("utf-8", "replace")]


def op_dtype_triples(env: Any, triples: List[Any]) -> Any:
    """``TVMFFIDataTypeToString`` of arbitrary (code, bits, lanes), and ``api.dtype`` back."""
    out = []
    for code, bits, lanes in triples:
        dt = env.abi.DLDataType(code, bits, lanes)
        printed = _dtype_to_string(env, dt)
        back = None
        if printed[0] == "ok":
            try:
                d = env.api.dtype(printed[2])
                back = ["ok", int(d.type_code), int(d.bits), int(d.lanes)]
            except Exception as error:  # noqa: BLE001
                back = _raised(error)
        out.append([printed, back])
    return out


def handlers(raised: Callable[[BaseException], List[Any]]) -> Dict[str, Callable]:
    """The worker operations this module adds (``child.OPS``)."""
    global _raised
    _raised = raised
    return {"register_types": op_register_types, "type_infos": op_type_infos,
            "dtype_strings": op_dtype_strings, "dtype_triples": op_dtype_triples}
