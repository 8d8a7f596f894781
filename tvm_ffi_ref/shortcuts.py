"""The operations the shared API layer asks of a package's core, done the quickest way.

The Python API modules (containers, tensors, ...) are written once and serve
both front ends; for the few operations that sit on hot paths they call this
module, which each package implements for its own core. Here, in the
reference front end, an operation may have two ways:

* ``_<name>_direct``: when the reference runtime itself serves the process
  (:data:`ENABLED`), the same Python functions that implement the C API slots
  and ``ffi.*`` globals are called directly: identical semantics, two ctypes
  crossings fewer per operation;
* ``_<name>_through_abi``: otherwise the operation goes through the C ABI (a
  global function or a C API call), which works over any runtime.

Which way is taken is decided once, at import: the table under "The way each
operation goes" binds each public name to one of its two functions, so a call
pays no test. The container globals the shared classes call
(:data:`DIRECT_GLOBALS`) follow the same rule: there the way through the ABI is
the global function itself, which the shared classes look up when the table
has no entry. The other operations have one way only.
"""

from __future__ import annotations

import ctypes
from typing import Any, Callable, Dict, List, NoReturn, Sequence, Tuple

from tvm_ffi_common import abi, partial_call, pycapi
from tvm_ffi_common.capi import LIB
from tvm_ffi_common.installed_later import installed_later

from . import error, python_core, releases, runtime, upcalls
from .arg_setters import CallScope
from .error import exception_to_error_raised
from .object import CObject
from .python_core import DLTensorFields, field_address as _field_address, interpreter_pending_error
from .runtime import env, maps, sequence_edits, sequences, strings, tensor
from .runtime.slots import FFIError

# ``convert``'s functions this module calls: convert sits above it (it imports this module)
# and binds them here when it loads (its last lines).
_construct_nested = installed_later("shortcuts.construct_nested", "convert")
_borrowed_to_python = installed_later("shortcuts.borrowed_to_python", "convert")
_to_python = installed_later("shortcuts.to_python", "convert")
_to_owned_any = installed_later("shortcuts.to_owned_any", "convert")

#: Whether the reference runtime serves the C API in this process.
ENABLED = runtime.installed()

_OBJECT_BEGIN = int(abi.TVMFFITypeIndex.kTVMFFIStaticObjectBegin)  # (an IntEnum compares slower)


def _raise(exc: FFIError) -> NoReturn:
    raise error.make_exception(exc.kind, exc.message, "") from None


def _global(name: str):
    return upcalls.get_global_func(name)


# ------------------------------------------------------------ str and bytes


def _store_str_or_bytes_direct(out: abi.TVMFFIAny, data: bytes, is_str: bool, scope) -> None:
    """Writes ``data`` into ``out`` as an owned str/bytes value (inline when at most 7 bytes).

    An object made for it is added to ``scope.owned``, to be released after the call.
    """
    strings.store_str_or_bytes(out, data, is_str)
    if out.type_index >= _OBJECT_BEGIN:
        scope.owned.append(out.v_ptr)


def _store_str_or_bytes_through_abi(out: abi.TVMFFIAny, data: bytes, is_str: bool,
                                    scope) -> None:
    """:func:`_store_str_or_bytes_direct` through ``TVMFFIStringFromByteArray`` /
    ``TVMFFIBytesFromByteArray``."""
    buffer = ctypes.c_char_p(data)
    scope.keep.append(buffer)
    array = abi.TVMFFIByteArray(ctypes.cast(buffer, ctypes.c_void_p), len(data))
    make = LIB.TVMFFIStringFromByteArray if is_str else LIB.TVMFFIBytesFromByteArray
    if make(ctypes.byref(array), ctypes.byref(out)):
        upcalls.raise_last_error()
    if out.type_index >= _OBJECT_BEGIN:
        scope.owned.append(out.v_ptr)


# -------------------------------------------------------------- containers


def _make_map(packed, mutable: bool) -> int:
    pairs = [(packed[i], packed[i + 1]) for i in range(0, len(packed), 2)]
    return (maps.dict_from_pairs if mutable else maps.map_from_pairs)(pairs)


#: The runtime's constructor of each container global, called directly when it serves.
_MAKERS = {
    "ffi.Array": sequences.array_from_anys,
    "ffi.Map": lambda packed: _make_map(packed, False),
    "ffi.Dict": lambda packed: _make_map(packed, True),
}


def _construct_packed_direct(name: str, packed: "ctypes.Array[abi.TVMFFIAny]") -> int:
    """An owned handle from the constructor global ``name`` (``ffi.Array``, ``ffi.Map``,
    ``ffi.Dict``) given the already converted arguments ``packed``."""
    try:
        return _MAKERS[name](packed)
    except FFIError as exc:
        _raise(exc)


def _construct_packed_through_abi(name: str, packed: "ctypes.Array[abi.TVMFFIAny]") -> int:
    """:func:`_construct_packed_direct` through the global function ``name``."""
    func = _global(name)
    result = abi.TVMFFIAny()
    if func._safe_call(func._handle, packed, len(packed), ctypes.byref(result)):
        upcalls.raise_last_error()
    return result.v_ptr


def new_array_handle(values: Sequence[Any], context=None) -> int:
    """An owned Array handle holding ``values`` (converted as call arguments).

    The elements' framework context passes up to ``context``, the scope of the
    call a list argument is converted for. Nested lists, tuples and dicts
    convert without recursion (``convert.construct_nested``).
    """
    return _construct_nested("ffi.Array", values, context)


def new_map_handle(items: List[Tuple[Any, Any]], mutable: bool, context=None) -> int:
    """An owned Map (or, when ``mutable``, Dict) handle holding ``items``."""
    flat = [x for kv in items for x in kv]
    return _construct_nested("ffi.Dict" if mutable else "ffi.Map", flat, context)


def _map_lookup_direct(container: Any, key: Any, missing: Any, mutable: bool) -> Any:
    """The value for ``key`` in the Map (or Dict) ``container``, or ``missing``.

    A value read from a container that remembers a framework's DLPack exchange
    table is seen through it (a Tensor comes back as the framework's tensor).
    """
    handle, exchange_api = container._handle, container._dlpack_exchange_api
    scope = CallScope()
    held = False
    try:
        view = abi.TVMFFIAny()
        upcalls.set_arg(view, key, scope)
        held = mutable and hold(container)  # as the runtime's own DictGetItem holds it
        value = maps.map_lookup(handle, view)
        return missing if value is None else _borrowed_to_python(value, exchange_api)
    except FFIError as exc:
        _raise(exc)
    finally:
        if held:
            LIB.tvm_ffi_runtime_object_unlock(handle)
        scope.close()


def _map_lookup_through_abi(container: Any, key: Any, missing: Any, mutable: bool) -> Any:
    """:func:`_map_lookup_direct` through ``ffi.MapGetItemOrMissing`` /
    ``ffi.DictGetItemOrMissing`` (the global function converts what it returns)."""
    value = _global("ffi.DictGetItemOrMissing" if mutable else
                    "ffi.MapGetItemOrMissing")(container, key)
    sentinel = _global("ffi.GetInvalidObject")()
    return missing if isinstance(value, CObject) and value.same_as(sentinel) else value


def _list_append_direct(container: Any, value: Any) -> None:
    """``ffi.ListAppend(container, value)``: the runtime's own ``list_append``, called directly.

    What the global does, without its call path (argument packing, the signature's checks,
    the safe-call frame: ~80% of an append's time): ``value`` converts as a call argument,
    the List is held while it grows (as the global holds its ``List<Any>`` argument), and
    the runtime takes an owned copy. An empty List wrapper goes through the global, which
    names the problem.
    """
    handle = container._handle
    if not handle:
        _global("ffi.ListAppend")(container, value)
        return
    if releases.pending:  # as before a call: references of collected wrappers (releases.py)
        releases.drain()
    scope = CallScope()
    try:
        view = abi.TVMFFIAny()
        upcalls.set_arg(view, value, scope)
        held = hold(container)
        try:
            sequence_edits.list_append(handle, view)
        finally:
            if held:
                LIB.tvm_ffi_runtime_object_unlock(handle)
    except FFIError as exc:
        _raise(exc)
    finally:
        scope.close()


_CELL_OFFSET = ctypes.sizeof(abi.TVMFFIObject)
_ANY_SIZE = ctypes.sizeof(abi.TVMFFIAny)


def seq_size(handle: int) -> int:
    """The number of elements of the Array or List at ``handle`` (read in place)."""
    return abi.TVMFFISeqCell.from_address(handle + _CELL_OFFSET).size


def seq_item(container: Any, index: int) -> Any:
    """Element ``index`` (``0 <= index < size``) of the Array or List ``container``, read in
    place (through the DLPack exchange table the container remembers, if any).

    A List is held meanwhile (another thread may pop the element): an index the
    List no longer has is an ``IndexError``.
    """
    handle = container._handle
    held = hold(container)
    try:
        cell = abi.TVMFFISeqCell.from_address(handle + _CELL_OFFSET)
        if not 0 <= index < cell.size:
            raise IndexError(f"Index out of range. size: {cell.size}, got index {index}")
        return _borrowed_to_python(abi.TVMFFIAny.from_address(cell.data + index * _ANY_SIZE),
                                  container._dlpack_exchange_api)
    finally:
        if held:
            LIB.tvm_ffi_runtime_object_unlock(handle)


def hold(container: Any) -> bool:
    """Waits until no other thread holds the List or Dict ``container``, then holds it
    (``tvm_ffi_runtime.h``'s container locks; ctypes releases the GIL while it waits).

    Returns whether it holds it: other objects are not locked.
    """
    handle = container._handle
    index = abi.TVMFFIObject.from_address(handle).type_index if handle else None
    if index not in abi.LOCKED_CONTAINER_TYPES:
        return False
    if LIB.tvm_ffi_runtime_object_lock(handle) != 0:
        raise MemoryError("out of memory holding a container")
    return True


def release(container: Any) -> None:
    """Undoes one :func:`hold` of ``container`` (nothing for objects that are not locked)."""
    handle = container._handle
    if handle and abi.TVMFFIObject.from_address(handle).type_index in abi.LOCKED_CONTAINER_TYPES:
        LIB.tvm_ffi_runtime_object_unlock(handle)


# ---------------------------------------------------------- tensors, signals


def _import_managed_tensor_direct(managed: int, versioned: bool, require_alignment: int,
                                  require_contiguous: bool) -> int:
    """An owned Tensor handle taking over the DLPack managed tensor at ``managed``.

    On failure the caller still owns ``managed`` (the producer's deleter has not run).
    """
    try:
        return tensor.new_tensor_from_managed(managed, versioned, require_alignment,
                                               require_contiguous)
    except FFIError as exc:
        _raise(exc)


def _import_managed_tensor_through_abi(managed: int, versioned: bool, require_alignment: int,
                                       require_contiguous: bool) -> int:
    """:func:`_import_managed_tensor_direct` through ``TVMFFITensorFromDLPack[Versioned]``."""
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
        upcalls.raise_last_error()
    return out.value


# ------------------------------------------------- the way each operation goes

# Bound once, here: the direct way when the reference runtime serves the process, the way
# through the C ABI otherwise (the module's docstring says why). The contract's docstrings
# are in tvm_ffi_api/shortcuts.pyi.
store_str_or_bytes = (_store_str_or_bytes_direct if ENABLED else
                      _store_str_or_bytes_through_abi)
construct_packed = _construct_packed_direct if ENABLED else _construct_packed_through_abi
map_lookup = _map_lookup_direct if ENABLED else _map_lookup_through_abi
import_managed_tensor = (_import_managed_tensor_direct if ENABLED else
                         _import_managed_tensor_through_abi)
# (a failed TVMFFIEnvCheckSignals leaves its exception, KeyboardInterrupt say, with the
# reference runtime, or set in the interpreter under another runtime)
take_pending_signal_error = (env.take_pending_signal_error if ENABLED else
                             interpreter_pending_error)
#: ``ffi.*`` container globals (by the name after ``ffi.``) that this core serves itself; the
#: shared container classes call these instead of the global functions.
DIRECT_GLOBALS: Dict[str, Callable[..., Any]] = (
    {"ListAppend": _list_append_direct} if ENABLED else {})


# --------------------------------------------------------------- tensors and DLPack


def dltensor(address: int) -> DLTensorFields:
    """The fields of the ``DLTensor`` at ``address``."""
    if not address:
        raise ValueError("an empty Tensor holds no DLTensor")
    t = abi.DLTensor.from_address(address)
    ndim, device, dtype, strides = t.ndim, t.device, t.dtype, t.strides
    # (a pointer's slice reads its ndim integers in one step)
    return DLTensorFields(
        t.data or 0, device.device_type, device.device_id, ndim,
        (dtype.code, dtype.bits, dtype.lanes), tuple(t.shape[:ndim]),
        tuple(strides[:ndim]) if strides else None, t.byte_offset)


#: ``from_dlpack``, ``import_capsule(capsule, require_alignment, require_contiguous)`` and
#: ``export_capsule(handle, versioned)``: DLPack in and out (see ``dlpack.py`` for the rules).
from .dlpack import export_capsule, from_dlpack, import_capsule  # noqa: E402,F401 - the core contract


def new_shape(cls: type, content: Any) -> Any:
    """``tensor.Shape(content)`` (see ``python_core.new_shape``)."""
    return python_core.new_shape(cls, content, _global)


# --------------------------------------------------------------- dtype strings


def dtype_from_string(text: str) -> Tuple[int, int, int]:
    """``(code, bits, lanes)`` of a dtype string (``TVMFFIDataTypeFromString``)."""
    data = text.encode()
    array = abi.TVMFFIByteArray(ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p), len(data))
    out = abi.DLDataType()
    if LIB.TVMFFIDataTypeFromString(ctypes.byref(array), ctypes.byref(out)):
        upcalls.raise_last_error()
    return (out.code, out.bits, out.lanes)


def dtype_to_string(code: int, bits: int, lanes: int) -> str:
    """The runtime's spelling of ``(code, bits, lanes)`` (``TVMFFIDataTypeToString``)."""
    result = abi.TVMFFIAny()
    if LIB.TVMFFIDataTypeToString(ctypes.byref(abi.DLDataType(code, bits, lanes)),
                                  ctypes.byref(result)):
        upcalls.raise_last_error()
    return str(_to_python(result))


# ------------------------------------------------------------ reflected fields


#: A ``TVMFFIFieldGetter`` as :func:`field_get` calls it: with the GIL held, as upstream does,
#: and no declared argument types (converting them costs more than the call): the field's
#: address goes as a ``c_void_p``, the result by reference.
_FieldGetterCall = ctypes.PYFUNCTYPE(ctypes.c_int)
#: getter address -> its callable pointer (made once per getter).
_field_getters: Dict[int, Any] = {}


def field_get(getter: int, offset: int, obj: Any) -> Any:
    """A reflected field's value, through its ``TVMFFIFieldGetter`` (an address) at ``obj``'s
    handle + ``offset``."""
    call = _field_getters.get(getter)
    if call is None:
        if not getter:
            raise TypeError("the field has no getter")
        call = _field_getters[getter] = _FieldGetterCall(getter)
    result = abi.TVMFFIAny()
    if call(ctypes.c_void_p(_field_address(obj, offset)), ctypes.byref(result)) != 0:
        upcalls.raise_last_error()
    return _to_python(result)


def field_getter(getter: int, offset: int) -> Callable[[Any], Any]:
    """``field_get(getter, offset, obj)`` as a callable of ``obj`` (bound as each interpreter
    calls fastest: ``tvm_ffi_common.partial_call``)."""
    return partial_call.bind(field_get, getter, offset)


def field_set(setter: int, flags: int, offset: int, obj: Any, value: Any) -> None:
    """Writes a reflected field through its setter: a C setter's address, or (``flags`` with
    ``kTVMFFIFieldFlagBitSetterIsFunctionObj``) a Function handle called ``(address, value)``."""
    address = _field_address(obj, offset)
    if not setter:
        raise AttributeError("the field has no setter")
    scope = CallScope()
    try:
        args = (abi.TVMFFIAny * 2)()
        args[0].type_index, args[0].v_ptr = abi.TVMFFITypeIndex.kTVMFFIOpaquePtr, address
        upcalls.set_arg(args[1], value, scope)
        if flags & abi.TVMFFIFieldFlagBitMask.kTVMFFIFieldFlagBitSetterIsFunctionObj:
            result = abi.TVMFFIAny()
            status = LIB.TVMFFIFunctionCall(setter, args, 2, ctypes.byref(result))
        else:
            status = abi.TVMFFIFieldSetter(setter)(address, ctypes.byref(args[1]))
    finally:
        scope.close()
    if status != 0:
        upcalls.raise_last_error()


@ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(abi.TVMFFIAny),
                  ctypes.POINTER(abi.TVMFFIAny))
def _field_convert(converter, value, result):
    try:
        convert = pycapi.object_at(converter)
        _to_owned_any(convert(_borrowed_to_python(value.contents)), result.contents)
        return 0
    except Exception as err:  # noqa: BLE001 - must not cross into C
        exception_to_error_raised(err)
        return -1


#: The ``f_convert`` of ``ffi.MakeFieldSetter`` whose ``converter`` is a Python callable
#: (a ``PyObject*`` from :func:`converter_address`): the value is given to it, and its result
#: stored.
FIELD_CONVERT_CALLBACK = ctypes.cast(_field_convert, ctypes.c_void_p).value


def converter_address(convert: Any) -> int:
    """What ``ffi.MakeFieldSetter`` is given as the ``converter`` of :data:`FIELD_CONVERT_CALLBACK`:
    a ``PyObject*`` of ``convert``, kept for the process (a registered type is never dropped)."""
    return pycapi.new_reference(convert)

upcalls.install("shortcuts", import_managed_tensor=import_managed_tensor,
                take_pending_signal_error=take_pending_signal_error)
