"""The operations the shared API layer asks of a core, done by the cffi core.

The interface of every core's ``shortcuts`` (``tvm_ffi_ref/shortcuts.py``
states each operation's meaning). Containers are built through the
runtime's ``ffi.*`` constructors and read in place through cffi pointers;
tensors' DLTensor fields are read the same way; DLPack capsules go through
``tvm_ffi_common.pycapi`` (the shared ``dlpack.py``); everything works over
whichever runtime serves the process, through the C ABI alone.
"""

from __future__ import annotations

import ctypes
import sys
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from tvm_ffi_common import abi, partial_call

from . import convert as _convert_module, python_core, releases, upcalls
from ._core import ffi, lib
from .convert import (
    CallScope,
    address_of,
    decode_borrowed,
    decode_owned,
    device_type_of,
    encode,
    encode_owned,
    give_back,
    take_out,
)
from .dlpack import export_capsule, from_dlpack, import_capsule  # noqa: F401 - the interface
from .error import exception_to_error_raised
from .function import call_packed, get_global_func, raise_last_error
from .object import decref, wrap_owned
from .python_core import DLTensorFields, field_address as _field_address, interpreter_pending_error

_cast = ffi.cast
_CELL = 24  # sizeof(TVMFFIObject): where an object's cell starts
_FUNCTIONS: Dict[str, Any] = {}


def _global(name: str) -> Any:
    func = _FUNCTIONS.get(name)
    if func is None:
        func = _FUNCTIONS[name] = get_global_func(name)
    return func


def store_str_or_bytes(out: abi.TVMFFIAny, data: bytes, is_str: bool, scope) -> None:
    """Writes ``data`` into ``out`` as an owned str/bytes value (inline when at most 7 bytes);
    an object made for it is added to ``scope.owned``."""
    p = _cast("TVMFFIAny*", ctypes.addressof(out))
    if lib.tvm_ffi_cffi_str_or_bytes(data, len(data), 1 if is_str else 0, p):
        raise_last_error()
    if p.type_index >= abi.TVMFFITypeIndex.kTVMFFIStaticObjectBegin:
        scope.owned.append(p.v_int64)


def _construct(name: str, values: Sequence[Any], context: Optional[CallScope]) -> int:
    """An owned handle from the constructor global ``name`` given ``values``; their framework
    context passes up to ``context``, the scope of the call a list or dict is converted for."""
    func = _global(name)
    return call_packed(func._safe_call, func._self, values, context, True)


def new_array_handle(values: Sequence[Any], context: Optional[CallScope] = None) -> int:
    """An owned Array handle holding ``values`` (converted as call arguments)."""
    return construct_nested("ffi.Array", list(values), context)


def new_map_handle(items: List[Tuple[Any, Any]], mutable: bool,
                   context: Optional[CallScope] = None) -> int:
    """An owned Map (or, when ``mutable``, Dict) handle holding the pairs ``items``."""
    flat = [x for pair in items for x in pair]
    return construct_nested("ffi.Dict" if mutable else "ffi.Map", flat, context)


#: Containers converted level by level (exact types, as the other cores): their constructor.
_NESTED = {list: "ffi.Array", tuple: "ffi.Array", dict: "ffi.Map"}
_MADE_TYPE = {"ffi.Array": int(abi.TVMFFITypeIndex.kTVMFFIArray),
              "ffi.Map": int(abi.TVMFFITypeIndex.kTVMFFIMap)}


def construct_nested(constructor: str, items: List[Any], context: Optional[CallScope]) -> int:
    """An owned handle of the container ``constructor`` makes of ``items``.

    Lists, tuples and dicts among them nest as deep as they go (upstream converts a list
    nested 20,000 deep): a stack of levels, not recursion, each level's children made first
    and passed to it as objects (released as soon as it exists); a container that contains
    itself is a ``RecursionError``."""
    for item in items:
        if type(item) in _NESTED:
            break
    else:  # flat, the usual case: one constructor call, no levels to keep
        return _construct(constructor, items, context)
    # each level: source, constructor, items, their values so far, next position, made children
    path: List[list] = [[None, constructor, items, [], 0, []]]
    on_path = set()
    try:
        while True:
            level = path[-1]
            source, name, level_items, done, position, made = level
            if position < len(level_items):
                item = level_items[position]
                nested = _NESTED.get(type(item))
                if nested is None:
                    done.append(item)
                    level[4] = position + 1
                    continue
                if id(item) in on_path:
                    raise RecursionError("maximum recursion depth exceeded while converting a "
                                         "container to TVM FFI: the container contains itself")
                on_path.add(id(item))
                children = [x for kv in item.items() for x in kv] if nested == "ffi.Map" \
                    else list(item)
                path.append([item, nested, children, [], 0, []])
                continue
            handle = _construct(name, done, context)
            _release_made(made)
            path.pop()
            on_path.discard(id(source))
            if not path:
                return handle
            child = wrap_owned(handle, _MADE_TYPE[name])
            path[-1][3].append(child)
            path[-1][5].append(child)
            path[-1][4] += 1
    finally:
        for level in path:
            _release_made(level[5])


def _release_made(made: List[Any]) -> None:
    """Releases at once the containers :func:`construct_nested` made for a level (a wrapper's
    own release may come late where collection is not prompt)."""
    for child in made:
        handle = child._handle
        if handle:
            child._handle = None
            decref(handle)
    made.clear()


def map_lookup(container: Any, key: Any, missing: Any, mutable: bool) -> Any:
    """The value for ``key`` in the Map (or Dict) ``container``, or ``missing``.

    The container is the call's first argument, so a table it remembers is the
    call's, and a Tensor value comes back through it."""
    func = _global("ffi.DictGetItemOrMissing" if mutable else "ffi.MapGetItemOrMissing")
    value = call_packed(func._safe_call, func._self, (container, key))
    sentinel = _FUNCTIONS.get("<missing>")
    if sentinel is None:
        sentinel = _FUNCTIONS["<missing>"] = _global("ffi.GetInvalidObject")()
    if getattr(value, "_handle", None) == sentinel._handle:
        return missing
    return value


def seq_size(handle: int) -> int:
    """The number of elements of the Array or List at ``handle`` (read in place)."""
    return _cast("TVMFFISeqCell*", handle + _CELL).size


def seq_item(container: Any, index: int) -> Any:
    """Element ``index`` (``0 <= index < size``) of the Array or List ``container``, read in
    place (through the DLPack exchange table the container remembers, if any).

    A List is held meanwhile (another thread may pop the element): an index the List no
    longer has is an ``IndexError``."""
    if releases.pending:
        releases.drain()
    handle = container._handle
    held = hold(container)
    try:
        cell = _cast("TVMFFISeqCell*", handle + _CELL)
        if not 0 <= index < cell.size:
            raise IndexError(f"Index out of range. size: {cell.size}, got index {index}")
        return decode_borrowed(_cast("TVMFFIAny*", cell.data) + index, container._exchange_api)
    finally:
        if held:
            lib.tvm_ffi_runtime_object_unlock(_cast("void*", handle))


def hold(container: Any) -> bool:
    """Waits until no other thread holds the List or Dict ``container``, then holds it; returns
    whether it holds it (other objects are not locked)."""
    handle = container._handle
    if not handle or _cast("TVMFFIObject*", handle).type_index not in abi.LOCKED_CONTAINER_TYPES:
        return False
    if lib.tvm_ffi_runtime_object_lock(_cast("void*", handle)) != 0:
        raise MemoryError("out of memory holding a container")
    return True


def release(container: Any) -> None:
    """Undoes one :func:`hold` of ``container`` (nothing for objects that are not locked)."""
    handle = container._handle
    if handle and _cast("TVMFFIObject*", handle).type_index in abi.LOCKED_CONTAINER_TYPES:
        lib.tvm_ffi_runtime_object_unlock(_cast("void*", handle))


def import_managed_tensor(managed: int, versioned: bool, require_alignment: int,
                          require_contiguous: bool) -> int:
    """An owned Tensor handle taking over the DLPack managed tensor at ``managed``; on failure
    the caller still owns ``managed``."""
    out = take_out()
    if versioned:
        status = lib.TVMFFITensorFromDLPackVersioned(
            _cast("DLManagedTensorVersioned*", managed), require_alignment,
            int(require_contiguous), out)
    else:
        status = lib.TVMFFITensorFromDLPack(_cast("DLManagedTensor*", managed),
                                            require_alignment, int(require_contiguous), out)
    handle = give_back(out)
    if status != 0:
        raise_last_error()
    return handle


def take_pending_signal_error():
    """The Python exception a failed ``TVMFFIEnvCheckSignals`` left pending in the interpreter
    (the registered ``PyErr_CheckSignals`` ran a handler that raised), or None."""
    return interpreter_pending_error()


# --------------------------------------------------------------- tensors


def dltensor(address: int) -> DLTensorFields:
    """The fields of the ``DLTensor`` at ``address``."""
    if not address:
        raise ValueError("an empty Tensor holds no DLTensor")
    t = _cast("DLTensor*", address)
    ndim = t.ndim
    strides = t.strides
    return DLTensorFields(
        address_of(t.data), device_type_of(t.device), t.device.device_id, ndim,
        (t.dtype.code, t.dtype.bits, t.dtype.lanes), tuple([t.shape[i] for i in range(ndim)]),
        tuple([strides[i] for i in range(ndim)]) if strides != ffi.NULL else None,
        t.byte_offset)


def new_shape(cls: type, content: Any) -> Any:
    """``tensor.Shape(content)`` (see ``python_core.new_shape``)."""
    return python_core.new_shape(cls, content, _global)


# --------------------------------------------------------------- dtype strings


def dtype_from_string(text: str) -> Tuple[int, int, int]:
    """``(code, bits, lanes)`` of a dtype string (``TVMFFIDataTypeFromString``)."""
    data = text.encode()
    out = ffi.new("DLDataType*")
    if lib.tvm_ffi_cffi_dtype_from_string(data, len(data), out):
        raise_last_error()
    return (out.code, out.bits, out.lanes)


def dtype_to_string(code: int, bits: int, lanes: int) -> str:
    """The runtime's spelling of ``(code, bits, lanes)`` (``TVMFFIDataTypeToString``)."""
    result = ffi.new("TVMFFIAny*")
    if lib.TVMFFIDataTypeToString(ffi.new("DLDataType*", (code, bits, lanes & 0xFFFF)), result):
        raise_last_error()
    return str(decode_owned(result))


# ------------------------------------------------------------ reflected fields


#: The C types a field access casts to, parsed once: a type given as a string is parsed
#: again at every cast on PyPy, where the JIT cannot fold it away.
_GETTER_T, _SETTER_T, _VOID_P = (ffi.typeof(t) for t in
                                 ("TVMFFIFieldGetter", "TVMFFIFieldSetter", "void*"))
_OPAQUE_PTR = int(abi.TVMFFITypeIndex.kTVMFFIOpaquePtr)
_SETTER_IS_FUNCTION = int(abi.TVMFFIFieldFlagBitMask.kTVMFFIFieldFlagBitSetterIsFunctionObj)

#: ``TVMFFIAny[2]`` buffers of field accesses, pooled (``list.pop``/``append`` are atomic, so
#: each access owns the one it took): an ``ffi.new`` per read cost PyPy a raw allocation and
#: memory pressure that brought its major collections forward (a field read took 110-420 ns,
#: half of it collecting). A getter writes ``[0]``; a setter reads its value from ``[1]``.
_FIELD_SLOTS: List[Any] = []


def field_get(getter: int, offset: int, obj: Any) -> Any:
    """A reflected field's value, through its ``TVMFFIFieldGetter`` (an address) at ``obj``'s
    handle + ``offset``."""
    if not getter:
        raise TypeError("the field has no getter")
    address = _field_address(obj, offset)
    slots = _FIELD_SLOTS.pop() if _FIELD_SLOTS else ffi.new("TVMFFIAny[2]")
    try:
        result = slots + 0
        result.type_index = 0
        result.v_int64 = 0
        if _cast(_GETTER_T, getter)(_cast(_VOID_P, address), result):
            raise_last_error()
        return decode_owned(result)
    finally:
        _FIELD_SLOTS.append(slots)


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
    args = _FIELD_SLOTS.pop() if _FIELD_SLOTS else ffi.new("TVMFFIAny[2]")
    try:
        args[0].type_index, args[0].v_int64 = _OPAQUE_PTR, address
        encode(args + 1, value, scope)
        if flags & _SETTER_IS_FUNCTION:
            result = ffi.new("TVMFFIAny*")
            status = lib.TVMFFIFunctionCall(_cast(_VOID_P, setter), args, 2, result)
        else:
            status = _cast(_SETTER_T, setter)(_cast(_VOID_P, address), args + 1)
    finally:
        scope.close()
        _FIELD_SLOTS.append(args)
    if status != 0:
        raise_last_error()


#: converter address -> its cffi handle (kept for the process: types are never unregistered).
_CONVERTERS: Dict[int, Any] = {}


@ffi.def_extern()
def tvm_ffi_cffi_field_convert(converter, value, result):
    """The ``f_convert`` of ``ffi.MakeFieldSetter``: the Python converter's result, stored."""
    try:
        encode_owned(ffi.from_handle(converter)(decode_borrowed(value)), result)
        return 0
    except Exception as err:  # noqa: BLE001 - must not cross into C
        exception_to_error_raised(err)
        return -1


#: The ``f_convert`` of ``ffi.MakeFieldSetter`` whose ``converter`` comes from
#: :func:`converter_address`.
FIELD_CONVERT_CALLBACK = address_of(lib.tvm_ffi_cffi_field_convert)


def converter_address(convert: Any) -> int:
    """The ``converter`` ``ffi.MakeFieldSetter`` is given with :data:`FIELD_CONVERT_CALLBACK`:
    a cffi handle of ``convert``."""
    handle = ffi.new_handle(convert)
    address = address_of(handle)
    _CONVERTERS[address] = handle
    return address

upcalls.install("shortcuts", import_managed_tensor=import_managed_tensor,
                take_pending_signal_error=take_pending_signal_error)
_convert_module._shortcuts = sys.modules[__name__]  # convert calls this module's functions

#: ``ffi.*`` container globals this core serves itself (none: the global functions are its
#: own C already).
DIRECT_GLOBALS: dict = {}
