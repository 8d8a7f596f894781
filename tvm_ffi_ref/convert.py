"""Python values to TVMFFIAny and back: the encoding every call uses.

Going in, each Python value is written as a *borrowed* TVMFFIAny (an
AnyView). Values that need an object created for the call (a long str, a
list, a callable, ...) get one, and the :class:`CallScope` releases it when
the call returns. The rules, in the order they are tried (first match wins):

=====================================  ==========================================
Python value                           TVMFFIAny
=====================================  ==========================================
``None``                               ``kTVMFFINone``
a TVM FFI :class:`Object`              the object itself (borrowed)
``obj._move()``                        ``kTVMFFIObjectRValueRef`` to its slot
``__tvm_ffi_object__()`` provider      the object it provides
a framework tensor whose class         a Tensor made through the table (zero
publishes a DLPack exchange table      copy; see ``dlpack_exchange.py``)
``__cuda_stream__()`` provider         ``kTVMFFIOpaquePtr`` (the stream's address)
anything with ``__dlpack__``           a Tensor made by DLPack import (zero copy)
``bool``                               ``kTVMFFIBool``
an integer (``numbers.Integral``)      ``kTVMFFIInt``; a BigInt beyond int64
a real (``numbers.Real``)              ``kTVMFFIFloat``
``dtype``                              ``kTVMFFIDataType``
``Device``                             ``kTVMFFIDevice``
``String``/``Bytes``/``Shape`` (ours)  the object they came from, else as below
``str``                                ``kTVMFFISmallStr`` if <= 7 UTF-8 bytes,
                                       else a String object
``bytes``/``bytearray``                ``kTVMFFISmallBytes`` or a Bytes object
``tuple``, ``list``                    an Array (elements converted recursively)
``dict``                               a Map
``ctypes.c_void_p``                    ``kTVMFFIOpaquePtr``
``__tvm_ffi_opaque_ptr__()`` provider  ``kTVMFFIOpaquePtr``
a class in ``OPAQUE_PTR_HANDLERS``     ``kTVMFFIOpaquePtr`` (its handler's address)
any other callable                     a Function calling it
``torch.dtype``                        ``kTVMFFIDataType`` (upstream's torch table)
``numpy.dtype``                        ``kTVMFFIDataType`` (upstream's 11 NumPy
                                       types, and ml_dtypes'; else ValueError)
``__dlpack_data_type__()`` provider    ``kTVMFFIDataType``
``__dlpack_device__()`` provider       ``kTVMFFIDevice``
``__tvm_ffi_int__/float__/value__``    what the method returns, converted
an ``Exception``                       an Error object
an ``ObjectConvertible``               ``asobject()``
anything else                          an OpaquePyObject holding it
=====================================  ==========================================

Coming back, an owned TVMFFIAny becomes a Python value: POD kinds become
``None``/``int``/``bool``/``float``/``str``/``bytes``/``dtype``/``Device``,
a BigInt an ``int``, an OpaquePyObject the original Python object, and every
other object the wrapper class of its type index. Where the call met a
framework's DLPack exchange table, a Tensor comes back as that framework's
tensor and a container remembers the table (``dlpack_exchange.py``).

The public ``convert`` is not this round trip: it follows upstream's own
rules, written once for both front ends in ``api_convert.py``.
"""

from __future__ import annotations

import ctypes
from typing import Any, Callable, Dict, List, Optional

from tvm_ffi_common import abi
from tvm_ffi_common.capi import LIB

from . import dlpack_exchange, shortcuts, upcalls
from .arg_setters import (
    PYTHON_SETTERS,
    CallScope,
    argument_kind,
    dl_data_type,
    dl_device,
    dlpack_argument,
    set_made_object,
    set_object,
    set_object_kind_arg,
)
from .device import Device
from .object import CObject, type_index_of, wrap_owned
from .pyobject import unwrap_pyobject
from .runtime.strings import int_to_words
from .runtime.type_index import TI
from .string import Bytes, String  # noqa: F401 - kept for its load order (string.py's classes)

#: The class devices are returned as (``set_device_class`` replaces it).
_device_class: type = Device

_OBJECT_BEGIN = TI.kTVMFFIStaticObjectBegin
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
_LOCKED_CONTAINER_TYPES = abi.LOCKED_CONTAINER_TYPES

# The type indices read or written for every value, bound as module globals (one dict lookup
# each on the hot path; runtime/type_index.py says why TI holds plain ints).
_NONE, _INT, _BOOL, _FLOAT = TI.kTVMFFINone, TI.kTVMFFIInt, TI.kTVMFFIBool, TI.kTVMFFIFloat
_SMALL_STR, _SMALL_BYTES = TI.kTVMFFISmallStr, TI.kTVMFFISmallBytes
_RAW_STR, _BYTE_ARRAY_PTR = TI.kTVMFFIRawStr, TI.kTVMFFIByteArrayPtr
_RVALUE_REF = TI.kTVMFFIObjectRValueRef
_TENSOR, _BIG_INT, _OPAQUE_PY = TI.kTVMFFITensor, TI.kTVMFFIBigInt, TI.kTVMFFIOpaquePyObject


def _check(status: int) -> None:
    if status != 0:
        upcalls.raise_last_error()


def _byte_array(data: bytes, scope: CallScope) -> abi.TVMFFIByteArray:
    buffer = ctypes.c_char_p(data)
    scope.keep.append(buffer)
    return abi.TVMFFIByteArray(ctypes.cast(buffer, ctypes.c_void_p), len(data))


def _set_str_or_bytes(out: abi.TVMFFIAny, data: bytes, is_str: bool, scope: CallScope) -> None:
    shortcuts.store_str_or_bytes(out, data, is_str, scope)


# --------------------------------------------------------------- setters


def _set_none(out, value, scope):
    out.type_index = _NONE
    out.v_int64 = 0


def _set_dlpack(out, value, scope):
    set_object(out, dlpack_argument(value, scope))


def _dlpack_exchange_setter(address: int) -> Callable:
    """The setter of a framework tensor type publishing the table at ``address``."""

    def set_framework_tensor(out, value, scope):
        set_object(out, dlpack_exchange.tensor_argument(address, value, scope))

    return set_framework_tensor


def _set_bool(out, value, scope):
    out.type_index = _BOOL
    out.v_int64 = 1 if value else 0


def _set_int(out, value, scope):
    value = int(value)
    if _INT64_MIN <= value <= _INT64_MAX:
        out.type_index = _INT
        out.v_int64 = value
        return

    words = int_to_words(value)
    _check(LIB.TVMFFIBigIntFromByteArray(ctypes.byref(_byte_array(words, scope)),
                                         ctypes.byref(out)))
    if out.type_index >= _OBJECT_BEGIN:
        scope.owned.append(out.v_ptr)


def _set_float(out, value, scope):
    out.type_index = _FLOAT
    out.v_float64 = float(value)


def _set_dtype(out, value, scope):
    out.type_index = TI.kTVMFFIDataType
    out.v_dtype = dl_data_type(*value._tvm_ffi_dtype_tuple)


def _set_device(out, value, scope):
    out.type_index = TI.kTVMFFIDevice
    out.v_device = dl_device(value.dlpack_device_type(), value.index)


def _set_native_str(out, value, scope):
    cached = value._tvm_ffi_cached_object
    if cached is not None:
        set_object(out, cached._handle)
    else:
        _set_str_or_bytes(out, str.encode(value, "utf-8"), True, scope)


def _set_native_bytes(out, value, scope):
    cached = value._tvm_ffi_cached_object
    if cached is not None:
        set_object(out, cached._handle)
    else:
        _set_str_or_bytes(out, bytes(value), False, scope)


def _set_native_shape(out, value, scope):
    cached = value._tvm_ffi_cached_object
    if cached is None:
        raise ValueError("this Shape has no object behind it")
    set_object(out, cached._handle)


def _set_str(out, value, scope):
    _set_str_or_bytes(out, value.encode("utf-8"), True, scope)


def _set_bytes(out, value, scope):
    _set_str_or_bytes(out, bytes(value), False, scope)


def _set_sequence(out, value, scope):
    # the elements' framework context becomes the call's (passed up to scope)
    _set_made_handle(out, construct_nested("ffi.Array", list(value), scope), scope)


def _set_dict(out, value, scope):
    _set_made_handle(out, shortcuts.new_map_handle(list(value.items()), False, scope), scope)


def _set_made_handle(out, handle: int, scope: CallScope) -> None:
    # an object made for the call: passed borrowed, released with the scope
    scope.owned.append(handle)
    set_object(out, handle)


# ------------------------------------------------------------ nested containers


#: Containers converted level by level (exact types, as the fast core): their constructor.
_NESTED_CONSTRUCTORS = {list: "ffi.Array", tuple: "ffi.Array", dict: "ffi.Map"}


class _Level:
    """One container being converted: its items, their encodings so far, its scope."""

    __slots__ = ("source", "constructor", "items", "packed", "next", "scope")

    def __init__(self, source: Any, constructor: str, items: List[Any]) -> None:
        self.source, self.constructor, self.items = source, constructor, items
        self.packed = (abi.TVMFFIAny * len(items))()
        self.next = 0
        self.scope = CallScope()


def _nested_level(item: Any) -> _Level:
    constructor = _NESTED_CONSTRUCTORS[type(item)]
    items = [x for kv in item.items() for x in kv] if type(item) is dict else list(item)
    return _Level(item, constructor, items)


def construct_nested(constructor: str, items: List[Any], context: Optional[CallScope]) -> int:
    """An owned handle of the container ``constructor`` (``ffi.Array``, ``ffi.Map``,
    ``ffi.Dict``) makes of ``items``, converted as call arguments.

    Lists, tuples and dicts among them nest as deep as they go (upstream converts
    a list nested 20,000 deep): they are walked with a stack of levels, not by
    recursion, in the order a recursive conversion takes, and one that contains
    itself is a ``RecursionError``. Each level's temporaries are released once
    its container exists; their framework context passes up, finally to
    ``context``.
    """
    path = [_Level(None, constructor, items)]
    on_path = set()
    try:
        while True:
            level = path[-1]
            items, packed, i = level.items, level.packed, level.next
            # the run of items that nest nothing (most) is set in one loop
            while i < len(items) and type(items[i]) not in _NESTED_CONSTRUCTORS:
                set_arg(packed[i], items[i], level.scope)
                i += 1
            level.next = i
            if i < len(items):  # a list, tuple or dict: its level goes on the path
                item = items[i]
                if id(item) in on_path:
                    raise RecursionError("maximum recursion depth exceeded while converting a "
                                         "container to TVM FFI: the container contains itself")
                on_path.add(id(item))
                path.append(_nested_level(item))
                continue
            handle = shortcuts.construct_packed(level.constructor, level.packed)
            path.pop()
            on_path.discard(id(level.source))
            parent = path[-1].scope if path else context
            level.scope.close()
            if parent is not None:
                parent.inherit(level.scope)
            if not path:
                return handle
            _set_made_handle(path[-1].packed[path[-1].next], handle, path[-1].scope)
            path[-1].next += 1
    finally:
        for level in path:
            level.scope.close()


def _set_void_p(out, value, scope):
    out.type_index = TI.kTVMFFIOpaquePtr
    out.v_ptr = value.value


def _set_callable(out, value, scope):
    set_made_object(out, upcalls.convert_to_function(value), scope)


#: The reference's setter of each argument kind (:func:`arg_setters.argument_kind`).
_SETTER_OF_KIND: Dict[str, Callable] = {
    **PYTHON_SETTERS,
    "none": _set_none,
    "object": set_object_kind_arg,
    "dlpack": _set_dlpack,
    "bool": _set_bool,
    "int": _set_int,
    "float": _set_float,
    "dtype": _set_dtype,
    "device": _set_device,
    "native_str": _set_native_str,
    "native_bytes": _set_native_bytes,
    "native_shape": _set_native_shape,
    "str": _set_str,
    "bytes": _set_bytes,
    "sequence": _set_sequence,
    "dict": _set_dict,
    "void_p": _set_void_p,
    "callable": _set_callable,
}


def _choose_setter(value: Any) -> Callable:
    """The setter for ``value``, by upstream's dispatch order; decided once per Python type."""
    kind = argument_kind(value)
    if kind == "dlpack_exchange":
        return _dlpack_exchange_setter(dlpack_exchange.class_api_address(type(value)))
    return _SETTER_OF_KIND[kind]


_SETTERS: Dict[type, Callable] = {}


def set_arg(out: abi.TVMFFIAny, value: Any, scope: CallScope) -> None:
    """Writes ``value`` into ``out`` as a borrowed argument."""
    cls = type(value)
    setter = _SETTERS.get(cls)
    if setter is None:
        setter = _SETTERS[cls] = _choose_setter(value)
    setter(out, value, scope)


#: TVMFFIAny array types by length (``TVMFFIAny * n`` looks its type up anew each time).
_ANY_ARRAYS = [abi.TVMFFIAny * n for n in range(9)]


def pack_args(args, scope: CallScope) -> "ctypes.Array[abi.TVMFFIAny]":
    """A TVMFFIAny array holding ``args`` as borrowed arguments."""
    return _pack_call_args(args, scope, None)


def _pack_call_args(args, scope: CallScope,
                   containers: Optional[List[int]]) -> "ctypes.Array[abi.TVMFFIAny]":
    """:func:`pack_args`; also appends the handles of the List and Dict arguments to
    ``containers`` (unless None): a call holds those (``function._hold_containers``)."""
    count = len(args)
    packed = (_ANY_ARRAYS[count] if count < len(_ANY_ARRAYS) else abi.TVMFFIAny * count)()
    for i, value in enumerate(args):
        slot = packed[i]
        set_arg(slot, value, scope)
        if containers is not None and slot.type_index in _LOCKED_CONTAINER_TYPES:
            containers.append(slot.v_ptr)
    return packed


def _take_moved(slot_address: int) -> int:
    """The reference a ``kTVMFFIObjectRValueRef`` points at, taken over (its slot left NULL)."""
    slot = ctypes.c_void_p.from_address(slot_address)
    handle = slot.value
    if not handle:
        raise ValueError("RValueRef already moved")
    slot.value = None
    return handle


def to_owned_any(value: Any, out: abi.TVMFFIAny) -> None:
    """Writes ``value`` into ``out`` as an owned value (a callback's result)."""
    scope = CallScope()
    try:
        set_arg(out, value, scope)
        if out.type_index == _RVALUE_REF:
            # ``return obj._move()``: the result takes over obj's reference (the
            # scope's fixup then empties obj), as upstream's AnyView -> Any does.
            handle = _take_moved(out.v_ptr)
            out.type_index = type_index_of(handle)
            out.v_ptr = handle
        elif out.type_index >= _OBJECT_BEGIN:
            LIB.TVMFFIObjectIncRef(out.v_ptr)
    finally:
        scope.close()


# --------------------------------------------------------------- results


def _small_content(value: abi.TVMFFIAny) -> bytes:
    return ctypes.string_at(ctypes.addressof(value) + 8, value.small_str_len)


def pod_to_python(value: abi.TVMFFIAny) -> Any:
    """The Python value of an inline (type index < 64) TVMFFIAny."""
    index = value.type_index
    if index == _NONE:
        return None
    if index == _INT:
        return value.v_int64
    if index == _BOOL:
        return bool(value.v_int64)
    if index == _FLOAT:
        return value.v_float64
    if index == _SMALL_STR:
        return _small_content(value).decode("utf-8")
    if index == _SMALL_BYTES:
        return _small_content(value)
    if index == TI.kTVMFFIOpaquePtr:
        return ctypes.c_void_p(value.v_ptr)
    if index == TI.kTVMFFIDataType:
        dt = value.v_dtype
        return upcalls.dtype_from_tuple(dt.code, dt.bits, dt.lanes)
    if index == TI.kTVMFFIDevice:
        return _device_class._from_pair(value.v_device.device_type, value.v_device.device_id)
    if index == TI.kTVMFFIDLTensorPtr:
        return upcalls.tensor_class()._view_of_dltensor(value.v_ptr)
    if index in (TI.kTVMFFIRawStr, TI.kTVMFFIByteArrayPtr, TI.kTVMFFIObjectRValueRef):
        name = abi.TVMFFITypeIndex(index).name[len("kTVMFFI"):]
        raise ValueError(f"Return value cannot be {name}")
    raise ValueError(f"Unhandled type index {index}")


def set_device_class(cls: type) -> None:
    """Makes ``cls`` (Device or a subclass) the class of devices returned from calls."""
    global _device_class
    _device_class = cls


_CONTAINERS = frozenset({TI.kTVMFFIArray, TI.kTVMFFIList, TI.kTVMFFIMap, TI.kTVMFFIDict})


def _framework_value(handle: int, index: int, exchange_api: int, strict: bool) -> Any:
    """The value of an owned Tensor or container reference seen through a framework's table,
    or None when the table does not apply (the reference is then left to the caller).

    A Tensor becomes the framework's tensor; when the framework cannot make one
    we keep ours, or, ``strict`` (a callback's argument), raise.
    """
    if index == _TENSOR:
        try:
            tensor = dlpack_exchange.framework_tensor_of(exchange_api, handle)
        except Exception:  # noqa: BLE001 - upstream keeps its own Tensor then
            if strict:
                LIB.TVMFFIObjectDecRef(handle)
                raise
            return None
        if tensor is not None:
            LIB.TVMFFIObjectDecRef(handle)  # the framework tensor holds its own reference
        return tensor
    if index in _CONTAINERS:
        container = wrap_owned(handle, index)
        if isinstance(container, CObject):
            container._dlpack_exchange_api = exchange_api
        return container
    return None


def to_python(value: abi.TVMFFIAny, exchange_api: int = 0, strict: bool = False) -> Any:
    """The Python value of an *owned* TVMFFIAny; takes over its reference.

    ``exchange_api``: the DLPack exchange table of the call this is the result
    of (or of the container it was read from), 0 for none.
    """
    index = value.type_index
    if index < _OBJECT_BEGIN:
        return pod_to_python(value)
    handle = value.v_ptr
    if exchange_api:
        made = _framework_value(handle, index, exchange_api, strict)
        if made is not None:
            return made
    if index == _BIG_INT:
        try:
            content = LIB.TVMFFIBigIntGetContentByteArray(ctypes.byref(value))
            return int.from_bytes(ctypes.string_at(content.data, content.size), "little",
                                  signed=True)
        finally:
            LIB.TVMFFIObjectDecRef(handle)
    if index == _OPAQUE_PY:
        try:
            return unwrap_pyobject(handle)
        finally:
            LIB.TVMFFIObjectDecRef(handle)
    return wrap_owned(handle, index)


def borrowed_to_python(value: abi.TVMFFIAny, exchange_api: int = 0,
                       strict: bool = False) -> Any:
    """The Python value of a *borrowed* TVMFFIAny (a callback argument, a container element)."""
    if value.type_index >= _OBJECT_BEGIN:
        LIB.TVMFFIObjectIncRef(value.v_ptr)
        return to_python(value, exchange_api, strict)
    if value.type_index == _RAW_STR:
        return ctypes.string_at(value.v_ptr).decode("utf-8")
    if value.type_index == _BYTE_ARRAY_PTR:
        array = abi.TVMFFIByteArray.from_address(value.v_ptr)
        return ctypes.string_at(array.data, array.size)
    if value.type_index == _RVALUE_REF:  # a moved argument: taken over
        handle = _take_moved(value.v_ptr)
        owned = abi.TVMFFIAny()
        owned.type_index = type_index_of(handle)
        owned.v_ptr = handle
        return to_python(owned)
    return pod_to_python(value)


def round_trip(value: Any) -> Any:
    """The value ``value`` becomes once it has crossed into TVM FFI and back.

    What a kernel returning ``value`` hands back (``tvm-ffi-explain`` shows
    it): lists and tuples become ``Array``, dicts ``Map``, callables
    ``Function``, long strings ``String``; values that stay inline come back
    equal. (The public ``convert`` is ``api_convert.convert``.)
    """
    out = abi.TVMFFIAny()
    to_owned_any(value, out)
    return to_python(out)


def release_any(value: abi.TVMFFIAny) -> None:
    """Drops the reference an owned TVMFFIAny holds, if any."""
    if value.type_index >= _OBJECT_BEGIN:
        LIB.TVMFFIObjectDecRef(value.v_ptr)


def optional_handle(value: Optional[CObject]) -> Optional[int]:
    """The handle of an optional object argument."""
    return None if value is None else value._handle

upcalls.install("convert", set_arg=set_arg, set_device_class=set_device_class)
# shortcuts sits below this module and calls these (see its slots)
shortcuts._construct_nested, shortcuts._borrowed_to_python = construct_nested, borrowed_to_python
shortcuts._to_python, shortcuts._to_owned_any = to_python, to_owned_any
