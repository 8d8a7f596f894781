"""The operations the shared API layer asks of a package's core, done the quickest way.

The Python API modules (containers, tensors, ...) are written once and serve
both front ends; for the few operations that sit on hot paths they call this
module, which each package implements for its own core. Here, in the
reference front end, each operation has two ways:

* when the reference runtime itself serves the process (:data:`ENABLED`),
  the same Python functions that implement the C API slots and ``ffi.*``
  globals are called directly: identical semantics, two ctypes crossings
  fewer per operation;
* otherwise the operation goes through the C ABI (a global function or a C
  API call), which works over any runtime.
"""

from __future__ import annotations

import ctypes
from typing import Any, List, NamedTuple, Optional, Sequence, Tuple

from tvm_ffi_common import abi

from . import error, runtime
from tvm_ffi_common.capi import LIB
from .runtime import containers, maps, strings, tensors
from .runtime.slots import FFIError

#: Whether the reference runtime serves the C API in this process.
ENABLED = runtime.installed()


def _raise(exc: FFIError) -> None:
    raise error.make_exception(exc.kind, exc.message, "") from None


def _global(name: str):
    from .function import get_global_func

    return get_global_func(name)


def store_str_or_bytes(out: abi.TVMFFIAny, data: bytes, is_str: bool, scope) -> None:
    """Writes ``data`` into ``out`` as an owned str/bytes value (inline when at most 7 bytes).

    An object made for it is added to ``scope.owned``, to be released after the call.
    """
    if ENABLED:
        strings.store_str_or_bytes(out, data, is_str)
    else:
        buffer = ctypes.c_char_p(data)
        scope.keep.append(buffer)
        array = abi.TVMFFIByteArray(ctypes.cast(buffer, ctypes.c_void_p), len(data))
        make = LIB.TVMFFIStringFromByteArray if is_str else LIB.TVMFFIBytesFromByteArray
        if make(ctypes.byref(array), ctypes.byref(out)):
            from .function import raise_last_error

            raise_last_error()
    if out.type_index >= abi.TVMFFITypeIndex.kTVMFFIStaticObjectBegin:
        scope.owned.append(out.v_ptr)


def new_array_handle(values: Sequence[Any]) -> int:
    """An owned Array handle holding ``values`` (converted as call arguments)."""
    if not ENABLED:
        array = _global("ffi.Array")(*values)
        handle, array._handle = array._handle, None
        return handle
    from .convert import CallScope, pack_args

    scope = CallScope()
    try:
        return containers.array_from_anys(pack_args(values, scope))
    except FFIError as exc:
        _raise(exc)
    finally:
        scope.close()


def new_map_handle(items: List[Tuple[Any, Any]], mutable: bool) -> int:
    """An owned Map (or, when ``mutable``, Dict) handle holding ``items``."""
    flat = [x for kv in items for x in kv]
    if not ENABLED:
        made = _global("ffi.Dict" if mutable else "ffi.Map")(*flat)
        handle, made._handle = made._handle, None
        return handle
    from .convert import CallScope, pack_args

    scope = CallScope()
    try:
        packed = pack_args(flat, scope)
        pairs = [(packed[i], packed[i + 1]) for i in range(0, len(packed), 2)]
        return (maps.dict_from_pairs if mutable else maps.map_from_pairs)(pairs)
    except FFIError as exc:
        _raise(exc)
    finally:
        scope.close()


def map_lookup(handle: int, key: Any, missing: Any, mutable: bool) -> Any:
    """The value for ``key`` in the Map (or Dict) at ``handle``, or ``missing``."""
    if not ENABLED:
        from .object import Object

        container = Object._adopt(handle)
        LIB.TVMFFIObjectIncRef(handle)  # the temporary wrapper owns a reference of its own
        value = _global("ffi.DictGetItemOrMissing" if mutable else
                        "ffi.MapGetItemOrMissing")(container, key)
        sentinel = _global("ffi.GetInvalidObject")()
        return missing if isinstance(value, Object) and value.same_as(sentinel) else value
    from .convert import CallScope, borrowed_to_python, set_arg

    scope = CallScope()
    try:
        view = abi.TVMFFIAny()
        set_arg(view, key, scope)
        value = maps.map_lookup(handle, view)
        return missing if value is None else borrowed_to_python(value)
    except FFIError as exc:
        _raise(exc)
    finally:
        scope.close()


_CELL_OFFSET = ctypes.sizeof(abi.TVMFFIObject)
_ANY_SIZE = ctypes.sizeof(abi.TVMFFIAny)


def seq_size(handle: int) -> int:
    """The number of elements of the Array or List at ``handle`` (read in place)."""
    return abi.TVMFFISeqCell.from_address(handle + _CELL_OFFSET).size


def seq_item(handle: int, index: int) -> Any:
    """Element ``index`` (``0 <= index < size``) of the Array or List at ``handle``."""
    from .convert import borrowed_to_python

    cell = abi.TVMFFISeqCell.from_address(handle + _CELL_OFFSET)
    return borrowed_to_python(abi.TVMFFIAny.from_address(cell.data + index * _ANY_SIZE))


def import_managed_tensor(managed: int, versioned: bool, require_alignment: int,
                          require_contiguous: bool) -> int:
    """An owned Tensor handle taking over the DLPack managed tensor at ``managed``.

    On failure the caller still owns ``managed`` (the producer's deleter has not run).
    """
    if ENABLED:
        try:
            return tensors.new_tensor_from_managed(managed, versioned, require_alignment,
                                                   require_contiguous)
        except FFIError as exc:
            _raise(exc)
    out = ctypes.c_void_p()
    if versioned:
        pointer = ctypes.cast(managed, ctypes.POINTER(abi.DLManagedTensorVersioned))
        status = LIB.TVMFFITensorFromDLPackVersioned(pointer, require_alignment,
                                                     int(require_contiguous), ctypes.byref(out))
    else:
        pointer = ctypes.cast(managed, ctypes.POINTER(abi.DLManagedTensor))
        status = LIB.TVMFFITensorFromDLPack(pointer, require_alignment, int(require_contiguous),
                                            ctypes.byref(out))
    if status != 0:
        from .function import raise_last_error

        raise_last_error()
    return out.value


_py_err_occurred = ctypes.PYFUNCTYPE(ctypes.c_void_p)(("PyErr_Occurred", ctypes.pythonapi))


def take_pending_signal_error():
    """The Python exception a failed ``TVMFFIEnvCheckSignals`` left for this thread, or None.

    A kernel that sees the check fail returns an ``EnvErrorAlreadySet``
    error: the real error (``KeyboardInterrupt``, say) is Python's own. The
    reference runtime keeps it aside; another runtime leaves it set in the
    interpreter, where a ctypes call that checks for errors picks it up.
    """
    if ENABLED:
        from .runtime import env

        return env.take_pending_signal_error()
    try:
        _py_err_occurred()
    except BaseException as pending:  # noqa: BLE001 - it is what we are looking for
        return pending
    return None


# --------------------------------------------------------------- tensors and DLPack


class DLTensorFields(NamedTuple):
    """A snapshot of the ``DLTensor`` fields a Tensor reports."""

    data: int  # 0 for NULL
    device_type: int
    device_id: int
    ndim: int
    dtype: Tuple[int, int, int]  # (code, bits, lanes)
    shape: Tuple[int, ...]
    strides: Optional[Tuple[int, ...]]  # None when the DLTensor stores none (compact)
    byte_offset: int


def dltensor(address: int) -> DLTensorFields:
    """The fields of the ``DLTensor`` at ``address``."""
    if not address:
        raise ValueError("an empty Tensor holds no DLTensor")
    t = abi.DLTensor.from_address(address)
    ndim = t.ndim
    return DLTensorFields(
        t.data or 0, t.device.device_type, t.device.device_id, ndim,
        (t.dtype.code, t.dtype.bits, t.dtype.lanes), tuple(t.shape[i] for i in range(ndim)),
        tuple(t.strides[i] for i in range(ndim)) if t.strides else None, t.byte_offset)


_capi = ctypes.pythonapi
_capi.PyCapsule_IsValid.restype = ctypes.c_int
_capi.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capi.PyCapsule_GetPointer.restype = ctypes.c_void_p
_capi.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capi.PyCapsule_SetName.restype = ctypes.c_int
_capi.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capi.PyCapsule_SetDestructor.restype = ctypes.c_int
_capi.PyCapsule_SetDestructor.argtypes = [ctypes.py_object, ctypes.c_void_p]
_capi.PyCapsule_New.restype = ctypes.py_object
_capi.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]

# Capsule names are compared as C strings for the capsule's whole life: keep them static.
_DLTENSOR = b"dltensor"
_DLTENSOR_VERSIONED = b"dltensor_versioned"
_USED_DLTENSOR = b"used_dltensor"
_USED_DLTENSOR_VERSIONED = b"used_dltensor_versioned"
_DLTENSOR_NAME = ctypes.c_char_p(_DLTENSOR)
_DLTENSOR_VERSIONED_NAME = ctypes.c_char_p(_DLTENSOR_VERSIONED)

_CapsuleDestructor = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
# The same two calls on a raw PyObject*: a dying capsule must not be referenced anew.
_raw_is_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_IsValid", _capi))
_raw_get_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", _capi))


def _capsule_deleter(name: bytes, managed_type):
    @_CapsuleDestructor
    def destructor(capsule_address):
        # An unconsumed capsule still owns its managed tensor: release it.
        if _raw_is_valid(capsule_address, name):
            managed = managed_type.from_address(_raw_get_pointer(capsule_address, name))
            if managed.deleter:
                managed.deleter(ctypes.pointer(managed))

    return destructor


_DELETE_DLTENSOR = _capsule_deleter(_DLTENSOR, abi.DLManagedTensor)
_DELETE_DLTENSOR_VERSIONED = _capsule_deleter(_DLTENSOR_VERSIONED, abi.DLManagedTensorVersioned)


def import_capsule(capsule: Any, require_alignment: int, require_contiguous: bool) -> int:
    """Hands a DLPack capsule's managed tensor to the runtime; returns the new Tensor handle.

    The versioned form is taken first; a consumed capsule is renamed ``used_...``.
    """
    for versioned, name, used in ((True, _DLTENSOR_VERSIONED, _USED_DLTENSOR_VERSIONED),
                                  (False, _DLTENSOR, _USED_DLTENSOR)):
        if _capi.PyCapsule_IsValid(capsule, name):
            handle = import_managed_tensor(_capi.PyCapsule_GetPointer(capsule, name), versioned,
                                           require_alignment, require_contiguous)
            # The runtime owns the managed tensor now; the capsule must not release it.
            _capi.PyCapsule_SetDestructor(capsule, None)
            _capi.PyCapsule_SetName(capsule, used)
            return handle
    raise ValueError("Expect a dltensor field, PyCapsule can only be consumed once")


def export_capsule(handle: int, versioned: bool) -> Any:
    """A DLPack capsule of the Tensor at ``handle`` (which it keeps alive until consumed)."""
    if versioned:
        out = ctypes.POINTER(abi.DLManagedTensorVersioned)()
        status = LIB.TVMFFITensorToDLPackVersioned(handle, ctypes.byref(out))
        name, destructor = _DLTENSOR_VERSIONED_NAME, _DELETE_DLTENSOR_VERSIONED
    else:
        out = ctypes.POINTER(abi.DLManagedTensor)()
        status = LIB.TVMFFITensorToDLPack(handle, ctypes.byref(out))
        name, destructor = _DLTENSOR_NAME, _DELETE_DLTENSOR
    if status:
        from .function import raise_last_error

        raise_last_error()
    address = ctypes.cast(out, ctypes.c_void_p).value
    return _capi.PyCapsule_New(address, name, ctypes.cast(destructor, ctypes.c_void_p))


# --------------------------------------------------------------- dtype strings


def dtype_from_string(text: str) -> Tuple[int, int, int]:
    """``(code, bits, lanes)`` of a dtype string (``TVMFFIDataTypeFromString``)."""
    data = text.encode()
    array = abi.TVMFFIByteArray(ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p), len(data))
    out = abi.DLDataType()
    if LIB.TVMFFIDataTypeFromString(ctypes.byref(array), ctypes.byref(out)):
        from .function import raise_last_error

        raise_last_error()
    return (out.code, out.bits, out.lanes)


def dtype_to_string(code: int, bits: int, lanes: int) -> str:
    """The runtime's spelling of ``(code, bits, lanes)`` (``TVMFFIDataTypeToString``)."""
    from .convert import to_python

    result = abi.TVMFFIAny()
    if LIB.TVMFFIDataTypeToString(ctypes.byref(abi.DLDataType(code, bits, lanes)),
                                  ctypes.byref(result)):
        from .function import raise_last_error

        raise_last_error()
    return str(to_python(result))


# ------------------------------------------------------------ reflected fields


def _field_address(obj: Any, offset: int) -> int:
    handle = obj._handle
    if not handle:
        raise ValueError(f"cannot access a field of an empty {type(obj).__name__} (no object)")
    return handle + offset


def field_get(getter: int, offset: int, obj: Any) -> Any:
    """A reflected field's value, through its ``TVMFFIFieldGetter`` (an address) at ``obj``'s
    handle + ``offset``."""
    from .convert import to_python

    if not getter:
        raise TypeError("the field has no getter")
    result = abi.TVMFFIAny()
    if abi.TVMFFIFieldGetter(getter)(_field_address(obj, offset), ctypes.byref(result)) != 0:
        from .function import raise_last_error

        raise_last_error()
    return to_python(result)


def field_set(setter: int, flags: int, offset: int, obj: Any, value: Any) -> None:
    """Writes a reflected field through its setter: a C setter's address, or (``flags`` with
    ``kTVMFFIFieldFlagBitSetterIsFunctionObj``) a Function handle called ``(address, value)``."""
    from .convert import CallScope, set_arg
    from .function import raise_last_error

    address = _field_address(obj, offset)
    if not setter:
        raise AttributeError("the field has no setter")
    scope = CallScope()
    try:
        args = (abi.TVMFFIAny * 2)()
        args[0].type_index, args[0].v_ptr = abi.TVMFFITypeIndex.kTVMFFIOpaquePtr, address
        set_arg(args[1], value, scope)
        if flags & abi.TVMFFIFieldFlagBitMask.kTVMFFIFieldFlagBitSetterIsFunctionObj:
            result = abi.TVMFFIAny()
            status = LIB.TVMFFIFunctionCall(setter, args, 2, ctypes.byref(result))
        else:
            status = abi.TVMFFIFieldSetter(setter)(address, ctypes.byref(args[1]))
    finally:
        scope.close()
    if status != 0:
        raise_last_error()


@ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(abi.TVMFFIAny),
                  ctypes.POINTER(abi.TVMFFIAny))
def _field_convert(converter, value, result):
    from .convert import borrowed_to_python, to_owned_any
    from .error import exception_to_error_raised

    try:
        convert = ctypes.cast(converter, ctypes.py_object).value
        to_owned_any(convert(borrowed_to_python(value.contents)), result.contents)
        return 0
    except Exception as err:  # noqa: BLE001 - must not cross into C
        exception_to_error_raised(err)
        return -1


#: The ``f_convert`` of ``ffi.MakeFieldSetter`` whose ``converter`` is a Python callable
#: (``id`` of it): the value is given to it, and its result stored.
FIELD_CONVERT_CALLBACK = ctypes.cast(_field_convert, ctypes.c_void_p).value
