"""Python values to TVMFFIAny and back: the cffi core's encoding.

The rules are the shared ones (``arg_setters.argument_kind`` is the dispatch
order; ``tvm_ffi_ref/convert.py`` states each encoding) and a kernel cannot
tell this core from the others. Values are written straight into cffi
``TVMFFIAny*`` slots, which PyPy's JIT compiles to plain stores: the exact
built-in types a call sees most (``int``, ``float``, ``str``, ``bool``,
``None``, wrappers) are tested first, every other class gets its encoder
chosen once (:data:`_ENCODERS`), and the rare kinds run the shared Python
setters on a ctypes view of the slot.

The interface the shared modules use (``set_arg``, ``to_python``, ...) takes
ctypes ``TVMFFIAny`` values, as every core's does; the core's own paths
(``function.py``, ``shortcuts.py``) use :func:`encode`, :func:`decode_owned`
and :func:`decode_borrowed` on cffi pointers.
"""

from __future__ import annotations

import ctypes
from typing import Any, Callable, Dict, List, Optional

from tvm_ffi_common import abi, pycapi

from . import arg_setters, dlpack, dlpack_exchange, rules, upcalls
from ._core import ffi, lib
from .arg_setters import PYTHON_SETTERS, argument_kind
from .device import Device
from .object import CObject, decref, incref, type_index_of, wrap_owned
from .pyobject import unwrap_pyobject

TI = abi.TVMFFITypeIndex
_OBJECT_BEGIN = int(TI.kTVMFFIStaticObjectBegin)
_NONE, _INT, _BOOL, _FLOAT = int(TI.kTVMFFINone), int(TI.kTVMFFIInt), int(TI.kTVMFFIBool), \
    int(TI.kTVMFFIFloat)
_OPAQUE_PTR, _DTYPE, _DEVICE = int(TI.kTVMFFIOpaquePtr), int(TI.kTVMFFIDataType), \
    int(TI.kTVMFFIDevice)
_DLTENSOR_PTR, _RAW_STR, _BYTE_ARRAY_PTR, _RVALUE_REF = int(TI.kTVMFFIDLTensorPtr), \
    int(TI.kTVMFFIRawStr), int(TI.kTVMFFIByteArrayPtr), int(TI.kTVMFFIObjectRValueRef)
_SMALL_STR, _SMALL_BYTES, _POD_END = int(TI.kTVMFFISmallStr), int(TI.kTVMFFISmallBytes), \
    int(TI.kTVMFFIUnchanged)
_BIGINT, _OPAQUE_PYOBJECT, _TENSOR = int(TI.kTVMFFIBigInt), int(TI.kTVMFFIOpaquePyObject), \
    int(TI.kTVMFFITensor)
_ARRAY, _MAP, _FUNCTION = int(TI.kTVMFFIArray), int(TI.kTVMFFIMap), int(TI.kTVMFFIFunction)
_LOCKED = abi.LOCKED_CONTAINER_TYPES
_CONTAINERS = frozenset({int(TI.kTVMFFIArray), int(TI.kTVMFFIList), int(TI.kTVMFFIMap),
                         int(TI.kTVMFFIDict)})
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
_cast = ffi.cast
_str_or_bytes = lib.tvm_ffi_cffi_str_or_bytes
_ndarray_managed_tensor = pycapi.ndarray_managed_tensor

#: The class devices are returned as (``set_device_class`` replaces it).
_device_class: type = Device


class CallScope(arg_setters.CallScope):
    """What must outlive one call (``arg_setters.CallScope``), released through cffi;
    whether a List or Dict may be among its arguments (``may_hold``: the call holds those);
    and the Functions of Python callables lent to the call (``lent``: see
    ``function.lend_callback``)."""

    __slots__ = ("may_hold", "lent")

    def __init__(self) -> None:
        super().__init__()
        self.may_hold = False
        self.lent: List[Any] = []

    def close(self) -> None:
        """Runs the fixups and drops the temporary references."""
        # Most calls have one temporary or none: no loop is entered for those (PyPy's JIT
        # compiles each loop apart, and entering one costs more than a reference dropped).
        if self.after:
            for action in self.after:
                action()
            self.after.clear()
        owned = self.owned
        if owned:
            decref(owned.pop())
            while owned:
                decref(owned.pop())
        if self.lent:
            _function.return_lent(self.lent)
        if self.keep:
            self.keep.clear()


def _raise_last_error() -> None:
    _function.raise_last_error()


#: ``void**`` out-parameters of C calls, pooled: on PyPy a cffi object made per call (it
#: escapes into C) costs more than the call it serves. ``take_out`` hands one to a single
#: call; ``give_back`` returns it once read (one lost to an exception is merely collected).
_OUT_SLOTS: List[Any] = []


def take_out() -> Any:
    """A ``void**`` for one C call's out-parameter (:func:`give_back` it once read)."""
    return _OUT_SLOTS.pop() if _OUT_SLOTS else ffi.new("void*[1]")


def give_back(out: Any) -> int:
    """Returns ``out`` to the pool; gives the address it holds."""
    address = address_of(out[0])
    _OUT_SLOTS.append(out)
    return address


def address_of(p: Any) -> int:
    """The address a cffi pointer holds."""
    return int(_cast("intptr_t", p))


def _any_at(value: abi.TVMFFIAny) -> Any:
    return _cast("TVMFFIAny*", ctypes.addressof(value))


# --------------------------------------------------------------- encoders


def _set_pod(p: Any, type_index: int, bits: int) -> None:
    p.type_index = type_index
    p.zero_padding = 0
    p.v_int64 = bits


def _enc_object(p, value, scope):
    handle = value._handle
    if not handle:
        view = getattr(value, "_view", None)
        if view:  # a Tensor viewing a borrowed DLTensor
            _set_pod(p, _DLTENSOR_PTR, view)
            return
        raise ValueError(f"cannot pass an empty {type(value).__name__} (its handle was moved)")
    index = _cast("TVMFFIObject*", handle).type_index
    _set_pod(p, index, handle)
    if index in _LOCKED:
        scope.may_hold = True
    exchange_api = value._dlpack_exchange_api
    if exchange_api:
        dlpack_exchange.note_container(scope, exchange_api, handle)


def _enc_owned_handle(p, handle, scope):
    """A reference made for the call: written, and dropped when the call ends."""
    scope.owned.append(handle)
    _set_pod(p, type_index_of(handle), handle)


def _enc_int(p, value, scope):
    value = int(value)
    if _INT64_MIN <= value <= _INT64_MAX:
        _set_pod(p, _INT, value)
        return
    size = 8 * (((value if value >= 0 else ~value).bit_length() + 64) // 64)
    data = value.to_bytes(size, "little", signed=True)
    array = ffi.new("TVMFFIByteArray*", (ffi.from_buffer(data), size))
    if lib.TVMFFIBigIntFromByteArray(array, p):
        _raise_last_error()
    scope.owned.append(p.v_int64)


def _enc_text(p, data: bytes, is_str: int, scope) -> None:
    size = len(data)
    if size <= 7:  # inline and NUL-padded, as TVMFFIStringFromByteArray makes it
        p.type_index = _SMALL_STR if is_str else _SMALL_BYTES
        p.small_str_len = size
        p.v_int64 = 0
        p.v_bytes = data
        return
    if _str_or_bytes(data, size, is_str, p):
        _raise_last_error()
    scope.owned.append(p.v_int64)


def _enc_str(p, value, scope):
    _enc_text(p, value.encode("utf-8"), 1, scope)


def _enc_bytes(p, value, scope):
    _enc_text(p, bytes(value), 0, scope)


def _enc_native(p, value, scope):
    cached = value._tvm_ffi_cached_object
    if cached is not None:
        _set_pod(p, type_index_of(cached._handle), cached._handle)
    elif isinstance(value, str):
        _enc_text(p, str.encode(value, "utf-8"), 1, scope)
    elif isinstance(value, bytes):
        _enc_text(p, bytes(value), 0, scope)
    else:
        raise ValueError("this Shape has no object behind it")


def _enc_float(p, value, scope):
    p.type_index = _FLOAT
    p.zero_padding = 0
    p.v_float64 = float(value)


def _enc_bool(p, value, scope):
    _set_pod(p, _BOOL, 1 if value else 0)


def _enc_none(p, value, scope):
    _set_pod(p, _NONE, 0)


def _enc_dtype(p, value, scope):
    code, bits, lanes = value._tvm_ffi_dtype_tuple
    _set_pod(p, _DTYPE, 0)
    # lanes is held signed (a scalable vector's is negative); the field is uint16
    p.v_dtype.code, p.v_dtype.bits, p.v_dtype.lanes = code, bits, lanes & 0xFFFF


def _enc_device(p, value, scope):
    _set_pod(p, _DEVICE, 0)
    p.v_device.device_type = value.dlpack_device_type() & 0xFFFFFFFF  # (see device_type_of)
    p.v_device.device_id = value.index


def device_type_of(device: Any) -> int:
    """The ``device_type`` of a cffi ``DLDevice`` as upstream reads it, an int32: DLPack's
    enum has no negative member, so the compiler (and cffi) make it unsigned."""
    device_type = device.device_type
    return device_type - (1 << 32) if device_type & 0x80000000 else device_type


def _enc_sequence(p, value, scope):
    _enc_owned_handle(p, _shortcuts.new_array_handle(list(value), scope), scope)


def _enc_dict(p, value, scope):
    _enc_owned_handle(p, _shortcuts.new_map_handle(list(value.items()), False, scope), scope)


def _enc_void_p(p, value, scope):
    _set_pod(p, _OPAQUE_PTR, 0)
    p.v_uint64 = value.value or 0  # an address may have the top bit set


def _enc_callable(p, value, scope):
    _set_pod(p, _FUNCTION, _function.lend_callback(value, scope))


def _enc_dlpack(p, value, scope):
    # arg_setters.dlpack_argument without a Tensor wrapper made and emptied (on PyPy the
    # finalizer of each wrapper costs the GC more than the call)
    handle = dlpack.import_tensor(value)
    scope.owned.append(handle)
    device = _cast("DLTensor*", handle + 24).device
    arg_setters.note_producer_device(scope, value, device.device_type, device.device_id)
    _set_pod(p, _TENSOR, handle)


def _enc_ndarray(p, value, scope):
    # An exact NumPy array: the managed tensor its __dlpack__() would give, read from its
    # header in one call (five calls into PyPy's C API emulation fewer); anything that call
    # would not describe the same way goes through __dlpack__ itself.
    managed = _ndarray_managed_tensor(value, _ndarray_convention)
    if managed is None:
        _enc_dlpack(p, value, scope)
        return
    try:
        handle = _shortcuts.import_managed_tensor(managed, False, 0, False)
    except BaseException:  # the managed tensor is still ours
        tensor = _cast("DLManagedTensor*", managed)
        tensor.deleter(tensor)
        raise
    scope.owned.append(handle)
    _set_pod(p, _TENSOR, handle)


#: How this NumPy's __dlpack__ leaves C-contiguous strides (``ndarray_tensor_convention``):
#: None if its arrays cannot go by their header; unset until the first array.
_ndarray_convention: Optional[bool] = None
_ndarray_checked = False


def _passes_by_header(cls: type) -> bool:
    global _ndarray_convention, _ndarray_checked
    if cls.__module__ != "numpy" or cls.__qualname__ != "ndarray":
        return False
    if not _ndarray_checked:
        import numpy

        _ndarray_convention = pycapi.ndarray_tensor_convention(numpy)
        _ndarray_checked = True
    return _ndarray_convention is not None


def _exchange_encoder(address: int) -> Callable:
    def encode_framework_tensor(p, value, scope):
        handle = dlpack_exchange.tensor_argument(address, value, scope)
        _set_pod(p, type_index_of(handle), handle)

    return encode_framework_tensor


def _python_setter(setter: Callable) -> Callable:
    def encode_in_python(p, value, scope):
        scope.may_hold = True  # a rare kind: whatever it writes, the call looks
        _set_pod(p, _NONE, 0)  # the slot may be a reused one: a setter writes only its fields
        setter(abi.TVMFFIAny.from_address(address_of(p)), value, scope)

    return encode_in_python


#: The encoder of each argument kind this core writes itself.
_ENCODER_OF_KIND: Dict[str, Callable] = {
    "none": _enc_none, "object": _enc_object, "dlpack": _enc_dlpack, "bool": _enc_bool,
    "int": _enc_int, "float": _enc_float, "dtype": _enc_dtype, "device": _enc_device,
    "native_str": _enc_native, "native_bytes": _enc_native, "native_shape": _enc_native,
    "str": _enc_str, "bytes": _enc_bytes, "sequence": _enc_sequence, "dict": _enc_dict,
    "void_p": _enc_void_p, "callable": _enc_callable,
}

#: The encoder of each Python class seen so far (chosen once per class, upstream's order).
_ENCODERS: Dict[type, Callable] = {}


def _choose_encoder(value: Any) -> Callable:
    kind = argument_kind(value)
    if kind == "dlpack_exchange":
        return _exchange_encoder(dlpack_exchange.class_api_address(type(value)))
    if kind == "dlpack" and _passes_by_header(type(value)):
        return _enc_ndarray
    encoder = _ENCODER_OF_KIND.get(kind)
    return encoder if encoder is not None else _python_setter(PYTHON_SETTERS[kind])


def encode(p: Any, value: Any, scope: CallScope) -> None:
    """Writes ``value`` into the cffi ``TVMFFIAny*`` ``p`` as a borrowed argument."""
    cls = type(value)
    if cls is int:
        if _INT64_MIN <= value <= _INT64_MAX:
            _set_pod(p, _INT, value)
            return
    elif cls is float:
        p.type_index = _FLOAT
        p.zero_padding = 0
        p.v_float64 = value
        return
    elif cls is str:
        _enc_text(p, value.encode("utf-8"), 1, scope)
        return
    encoder = _ENCODERS.get(cls)
    if encoder is None:
        encoder = _ENCODERS[cls] = _choose_encoder(value)
    encoder(p, value, scope)


# --------------------------------------------------------------- decoders


def _pod_value(p: Any, index: int) -> Any:
    if index == _NONE:
        return None
    if index == _BOOL:
        return p.v_int64 != 0
    if index == _SMALL_STR:
        return ffi.unpack(p.v_bytes, p.small_str_len).decode("utf-8")
    if index == _SMALL_BYTES:
        return ffi.unpack(p.v_bytes, p.small_str_len)
    if index == _OPAQUE_PTR:
        return ctypes.c_void_p(p.v_uint64 or None)
    if index == _DTYPE:
        return upcalls.dtype_from_tuple(p.v_dtype.code, p.v_dtype.bits, p.v_dtype.lanes)
    if index == _DEVICE:
        return _device_class._from_pair(device_type_of(p.v_device), p.v_device.device_id)
    if index == _DLTENSOR_PTR:
        return upcalls.tensor_class()._view_of_dltensor(p.v_int64)
    if index in (_RAW_STR, _BYTE_ARRAY_PTR, _RVALUE_REF):
        raise ValueError(f"Return value cannot be {TI(index).name[len('kTVMFFI'):]}")
    raise ValueError(f"Unhandled type index {index}")


def _framework_value(handle: int, index: int, exchange_api: int, strict: bool) -> Any:
    # tvm_ffi_ref/convert.py's _framework_value: a Tensor as the framework's, a container
    # remembering the table; None leaves the reference to the caller
    if index == _TENSOR:
        try:
            tensor = dlpack_exchange.framework_tensor_of(exchange_api, handle)
        except Exception:  # noqa: BLE001 - upstream keeps its own Tensor then
            if strict:
                decref(handle)
                raise
            return None
        if tensor is not None:
            decref(handle)
        return tensor
    if index in _CONTAINERS:
        container = wrap_owned(handle, index)
        if isinstance(container, CObject):
            container._dlpack_exchange_api = exchange_api
        return container
    return None


def _object_value(handle: int, index: int, exchange_api: int, strict: bool) -> Any:
    if exchange_api:
        made = _framework_value(handle, index, exchange_api, strict)
        if made is not None:
            return made
    if index == _BIGINT:
        try:
            any_view = ffi.new("TVMFFIAny*")
            any_view.type_index, any_view.v_int64 = index, handle
            content = lib.TVMFFIBigIntGetContentByteArray(any_view)
            return int.from_bytes(ffi.unpack(content.data, content.size), "little", signed=True)
        finally:
            decref(handle)
    if index == _OPAQUE_PYOBJECT:
        try:
            return unwrap_pyobject(handle)
        finally:
            decref(handle)
    return wrap_owned(handle, index)


def decode_owned(p: Any, exchange_api: int = 0, strict: bool = False) -> Any:
    """The Python value of the owned ``TVMFFIAny*`` ``p``; takes over its reference."""
    index = p.type_index
    if index == _INT:
        return p.v_int64
    if index == _FLOAT:
        return p.v_float64
    if index >= _OBJECT_BEGIN:
        return _object_value(p.v_int64, index, exchange_api, strict)
    return _pod_value(p, index)


def _take_moved(slot_address: int) -> int:
    slot = _cast("intptr_t*", slot_address)
    handle = slot[0]
    if not handle:
        raise ValueError("RValueRef already moved")
    slot[0] = 0
    return handle


def decode_borrowed(p: Any, exchange_api: int = 0, strict: bool = False) -> Any:
    """The Python value of the borrowed ``TVMFFIAny*`` ``p`` (a callback argument, an element)."""
    index = p.type_index
    if index == _INT:
        return p.v_int64
    if index >= _OBJECT_BEGIN:
        incref(p.v_int64)
        return _object_value(p.v_int64, index, exchange_api, strict)
    if index == _RAW_STR:
        return ffi.string(p.v_c_str).decode("utf-8")
    if index == _BYTE_ARRAY_PTR:
        array = _cast("TVMFFIByteArray*", p.v_int64)
        return ffi.unpack(array.data, array.size)
    if index == _RVALUE_REF:  # a moved argument: taken over
        handle = _take_moved(p.v_int64)
        return _object_value(handle, type_index_of(handle), 0, False)
    if index == _FLOAT:
        return p.v_float64
    return _pod_value(p, index)


#: Type indices whose objects are registered (types are never unregistered).
_REGISTERED = set(range(_OBJECT_BEGIN, int(TI.kTVMFFIStaticObjectEnd)))


def _registered(index: int) -> bool:
    if index in _REGISTERED:
        return True
    if lib.TVMFFIGetTypeInfo(index) != ffi.NULL:
        _REGISTERED.add(index)
        return True
    return False


def result_is_sound(p: Any) -> bool:
    """Whether the owned result ``p`` obeys the call rules ``rules.result_violation`` checks
    (it says which it breaks, when this says one is broken)."""
    index = p.type_index
    if index >= _OBJECT_BEGIN:
        handle = p.v_int64
        return (handle != 0 and _registered(index) and
                _cast("TVMFFIObject*", handle).type_index == index)
    if index == _SMALL_STR or index == _SMALL_BYTES:
        return p.small_str_len <= 7
    return 0 <= index <= _POD_END and index not in (_RAW_STR, _BYTE_ARRAY_PTR, _RVALUE_REF)


def result_violation(p: Any) -> Optional[rules.ABIViolation]:
    """The rule an unsound result breaks (the shared rules state them)."""
    return rules.result_violation(abi.TVMFFIAny.from_address(address_of(p)))


def encode_owned(value: Any, p: Any) -> None:
    """Writes ``value`` into ``p`` as an owned value (a callback's result)."""
    cls = type(value)
    if cls is int and _INT64_MIN <= value <= _INT64_MAX:
        _set_pod(p, _INT, value)
        return
    if cls is float or value is None:
        encode(p, value, None)  # nothing of theirs needs a scope
        return
    scope = CallScope()
    try:
        encode(p, value, scope)
        if p.type_index == _RVALUE_REF:  # ``return obj._move()``: obj's reference moves
            handle = _take_moved(p.v_int64)
            _set_pod(p, type_index_of(handle), handle)
        elif p.type_index >= _OBJECT_BEGIN:
            incref(p.v_int64)
    finally:
        scope.close()


# --------------------------------------------------------------- the core's interface


def set_arg(out: abi.TVMFFIAny, value: Any, scope: CallScope) -> None:
    """Writes ``value`` into ``out`` as a borrowed argument."""
    encode(_any_at(out), value, scope)


def pack_args(args, scope: CallScope) -> "ctypes.Array[abi.TVMFFIAny]":
    """A TVMFFIAny array holding ``args`` as borrowed arguments."""
    packed = (abi.TVMFFIAny * len(args))()
    slots = _cast("TVMFFIAny*", ctypes.addressof(packed))
    for i, value in enumerate(args):
        encode(slots + i, value, scope)
    return packed


def to_owned_any(value: Any, out: abi.TVMFFIAny) -> None:
    """Writes ``value`` into ``out`` as an owned value (a callback's result)."""
    encode_owned(value, _any_at(out))


def to_python(value: abi.TVMFFIAny, exchange_api: int = 0, strict: bool = False) -> Any:
    """The Python value of an *owned* TVMFFIAny; takes over its reference."""
    return decode_owned(_any_at(value), exchange_api, strict)


def borrowed_to_python(value: abi.TVMFFIAny, exchange_api: int = 0, strict: bool = False) -> Any:
    """The Python value of a *borrowed* TVMFFIAny (a callback argument, a container element)."""
    return decode_borrowed(_any_at(value), exchange_api, strict)


def release_any(value: abi.TVMFFIAny) -> None:
    """Drops the reference an owned TVMFFIAny holds, if any."""
    if value.type_index >= _OBJECT_BEGIN:
        decref(value.v_ptr)


def optional_handle(value: Optional[CObject]) -> Optional[int]:
    """The handle of an optional object argument."""
    return None if value is None else value._handle


def set_device_class(cls: type) -> None:
    """Makes ``cls`` (Device or a subclass) the class of devices returned from calls."""
    global _device_class
    _device_class = cls


# The function and shortcuts modules, which sit above this one (they import it): each binds
# itself here when it loads (see their last lines), and calls look their names up per call.
# (A function-level import would cost PyPy an importlib lookup with module locks per call.)
_function: Any = None
_shortcuts: Any = None

upcalls.install("convert", set_arg=set_arg, set_device_class=set_device_class)
