"""Object types whose layout a front end defines: field storage, accessors, constructors.

Its twin in C: ``tvm_ffi_fast/src/pyclass.c``.

A front end (a ``@py_class`` in Python) defines a type by registering a
``TVMFFIFieldInfo`` per field. It never compiles a struct, so the runtime
provides the pieces a C++ class would bring, as upstream's library does
(``src/ffi/extra/dataclass.cc``), through four global functions:

* ``ffi.MakeFieldGetter(field_static_type_index)`` returns the address of a
  ``TVMFFIFieldGetter`` that reads a field of that kind;
* ``ffi.MakeFieldSetter(field_static_type_index, converter, f_convert)``
  returns a Function ``(field address, value)`` for the field's ``setter``
  (flag ``kTVMFFIFieldFlagBitSetterIsFunctionObj``): it hands the value to the
  front end's C callback ``f_convert(converter, &value, &converted)``, which
  checks it against the field's declared type, then stores the result (a
  value already of a native field's exact type, an int for an int field say,
  is stored as it is: the converter would return it unchanged);
* ``ffi._PyClassRegisterTypeAttrColumns(type_index, total_size)`` registers
  the type's ``__ffi_new__`` (an empty object), ``__ffi_shallow_copy__`` and
  ``__ffi_init__`` (the generated constructor, below);
* ``ffi._RegisterFFIInit(type_index)`` registers only the generated
  ``__ffi_init__``; a C++ kernel's ``reflection::ObjectDef`` calls it for a
  class that declares no constructor of its own.

How a field is stored follows from its static type index and size:

=====================================  ======  =====================================
``field_static_type_index``            bytes   storage
=====================================  ======  =====================================
int, float, bool, void*, DataType,     8/8/1/  the C value (int64, double, bool, ...)
Device                                 8/4/8
Any (-1), None                         16      an owned ``TVMFFIAny`` (None when zero)
Any, but 8 bytes (a C++ parent's       8       an owned object pointer or NULL
``ObjectRef`` typed as Any)
an object type (64 and up)             8       an owned object pointer or NULL
=====================================  ======  =====================================

Zeroed memory is a valid empty value of every kind, so a fresh object is
zeroed; releasing one releases its Any and object fields (its ancestors'
too, as ``reflection::ForEachFieldInfo`` visits them: ancestors below
``ffi.Object`` first).

The generated ``__ffi_init__(*args)`` binds arguments to fields. Positional
arguments fill, in order, the fields that are in ``__init__`` and not
keyword-only, required ones first; if the marker object
``ffi.GetKwargsObject()`` is among the arguments, what follows it is
``name, value`` pairs. Fields left unset take their default (calling the
factory when the default is one); a required field left unset is an error.
Every value goes through the field's setter, and a setter's error is passed
on prefixed with ``<type key>.__ffi_init__() field '<name>'``.
"""

from __future__ import annotations

import ctypes
from typing import Dict, List, Optional, Tuple

from tvm_ffi_common import abi

from . import anyvalue, dtype, errors, memory, strings
from .functions import new_python_function, set_object
from .global_functions import kwargs_object
from .reflection import c_callback, convert_error, get_any, get_object, store_any, store_object
from .registry import TYPES
from .signatures import typed_function, typed_global
from .slots import ErrorAlreadyRaised, FFIError

TI = abi.TVMFFITypeIndex
FLAGS = abi.TVMFFIFieldFlagBitMask
ANY_SIZE = ctypes.sizeof(abi.TVMFFIAny)
OBJECT_BEGIN = int(TI.kTVMFFIStaticObjectBegin)

#: ``int (*)(void* converter, const TVMFFIAny* value, TVMFFIAny* result)``.
CONVERT_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p,
                                    ctypes.POINTER(abi.TVMFFIAny), ctypes.POINTER(abi.TVMFFIAny))


# ----------------------------------------------------------- storage kinds

POD, ANY, OBJECT = "pod", "any", "object"


def storage_of(field: abi.TVMFFIFieldInfo) -> str:
    """How a field's value is stored: ``POD``, ``ANY`` (16 bytes) or ``OBJECT`` (a pointer)."""
    index = field.field_static_type_index
    if index == TI.kTVMFFIAny:
        return OBJECT if field.size == ctypes.sizeof(ctypes.c_void_p) else ANY
    return OBJECT if index >= OBJECT_BEGIN else POD


def all_fields(info: abi.TVMFFITypeInfo) -> List[abi.TVMFFIFieldInfo]:
    """Every field of a type, ancestors below ``ffi.Object`` first (``ForEachFieldInfo``)."""
    owners = [info.type_ancestors[d].contents for d in range(1, info.type_depth)] + [info]
    return [owner.fields[i] for owner in owners for i in range(owner.num_fields)]


#: type index -> (its own field count when computed, [(offset, storage)] of the fields holding
#: references). Every dying object of a front-end type reads it (a chain of a million links is
#: a million lookups), so it is computed once per type; a field registered later (the count
#: changed) recomputes it.
_RELEASE_LAYOUTS: Dict[int, Tuple[int, List[Tuple[int, str]]]] = {}


def _release_layout(type_index: int) -> List[Tuple[int, str]]:
    info = TYPES.entry(type_index).info
    known = _RELEASE_LAYOUTS.get(type_index)
    if known is None or known[0] != info.num_fields:
        layout = [(field.offset, storage_of(field)) for field in all_fields(info)
                  if storage_of(field) != POD]
        known = _RELEASE_LAYOUTS[type_index] = (info.num_fields, layout)
    return known[1]


def _release_fields(address: int) -> None:
    for offset, storage in _release_layout(memory.type_index_of(address)):
        if storage == ANY:
            slot = abi.TVMFFIAny.from_address(address + offset)
            anyvalue.dec_ref_any(slot)
            slot.type_index, slot.v_int64 = TI.kTVMFFINone, 0
        else:
            slot = ctypes.c_void_p.from_address(address + offset)
            if slot.value:
                memory.dec_ref(slot.value)
            slot.value = None


def new_empty(type_index: int, total_size: int) -> int:
    """A zeroed object of a front-end-defined type (owned address)."""
    return memory.new_object(type_index, total_size, _release_fields)


# ------------------------------------------------------------- the getters

def _pod_getter(read, type_index: int, member: str):
    """A getter writing ``read(field address)`` into the result's ``member``."""

    @c_callback(abi.TVMFFIFieldGetter)
    def getter(field, result):
        out = result.contents
        out.type_index, out.zero_padding, out.v_int64 = type_index, 0, 0
        setattr(out, member, read(field))

    return getter


def _value_at(ctype):
    return lambda address: ctype.from_address(address).value


_GETTERS = {
    TI.kTVMFFIInt: _pod_getter(_value_at(ctypes.c_int64), TI.kTVMFFIInt, "v_int64"),
    TI.kTVMFFIFloat: _pod_getter(_value_at(ctypes.c_double), TI.kTVMFFIFloat, "v_float64"),
    TI.kTVMFFIBool: _pod_getter(_value_at(ctypes.c_bool), TI.kTVMFFIBool, "v_int64"),
    TI.kTVMFFIOpaquePtr: _pod_getter(_value_at(ctypes.c_void_p), TI.kTVMFFIOpaquePtr, "v_ptr"),
    TI.kTVMFFIDataType: _pod_getter(abi.DLDataType.from_address, TI.kTVMFFIDataType, "v_dtype"),
    TI.kTVMFFIDevice: _pod_getter(abi.DLDevice.from_address, TI.kTVMFFIDevice, "v_device"),
    TI.kTVMFFIAny: get_any,
    TI.kTVMFFINone: get_any,
}
_GETTER_ADDRESSES = {index: ctypes.cast(fn, ctypes.c_void_p).value
                     for index, fn in _GETTERS.items()}
_OBJECT_GETTER_ADDRESS = ctypes.cast(get_object, ctypes.c_void_p).value


def _by_static_index(table: dict, for_objects, index: int, what: str):
    """The entry of ``table`` for a field's static type index (object types share one)."""
    entry = table.get(index)
    if entry is not None:
        return entry
    if index >= OBJECT_BEGIN:
        return for_objects
    raise FFIError("ValueError", f"Unsupported field type index for {what}: {index}")


def getter_address(field_static_type_index: int) -> int:
    """The address of the getter for fields of a static type index."""
    return _by_static_index(_GETTER_ADDRESSES, _OBJECT_GETTER_ADDRESS, field_static_type_index,
                            "getter")


def _make_field_getter(result, field_static_type_index):
    strings.store_int(result, getter_address(field_static_type_index))


# ------------------------------------------------------------- the setters

def _as_number(value: abi.TVMFFIAny, target: str, allow_float: bool):
    if value.type_index in (TI.kTVMFFIInt, TI.kTVMFFIBool):
        return value.v_int64
    if allow_float and value.type_index == TI.kTVMFFIFloat:
        return value.v_float64
    raise convert_error(value, target)


def _write_int(address: int, value: abi.TVMFFIAny) -> None:
    ctypes.c_int64.from_address(address).value = _as_number(value, "int", False)


def _write_float(address: int, value: abi.TVMFFIAny) -> None:
    ctypes.c_double.from_address(address).value = _as_number(value, "float", True)


def _write_bool(address: int, value: abi.TVMFFIAny) -> None:
    ctypes.c_bool.from_address(address).value = bool(_as_number(value, "bool", False))


def _write_pointer(address: int, value: abi.TVMFFIAny) -> None:
    if value.type_index not in (TI.kTVMFFIOpaquePtr, TI.kTVMFFINone):
        raise convert_error(value, "void*")
    ctypes.c_void_p.from_address(address).value = \
        value.v_ptr if value.type_index == TI.kTVMFFIOpaquePtr else None


def _write_dtype(address: int, value: abi.TVMFFIAny) -> None:
    if value.type_index == TI.kTVMFFIDataType:
        code, bits, lanes = value.v_dtype.code, value.v_dtype.bits, value.v_dtype.lanes
    elif value.type_index in (TI.kTVMFFISmallStr, TI.kTVMFFIStr, TI.kTVMFFIRawStr):
        code, bits, lanes = dtype.parse_dtype(strings.view_bytes(value))
    else:
        raise convert_error(value, "DataType")
    target = abi.DLDataType.from_address(address)
    target.code, target.bits, target.lanes = code, bits, lanes


def _write_device(address: int, value: abi.TVMFFIAny) -> None:
    if value.type_index != TI.kTVMFFIDevice:
        raise convert_error(value, "Device")
    ctypes.memmove(address, ctypes.addressof(value.v_device), ctypes.sizeof(abi.DLDevice))


_WRITERS = {
    TI.kTVMFFIInt: _write_int, TI.kTVMFFIFloat: _write_float, TI.kTVMFFIBool: _write_bool,
    TI.kTVMFFIOpaquePtr: _write_pointer, TI.kTVMFFIDataType: _write_dtype,
    TI.kTVMFFIDevice: _write_device, TI.kTVMFFIAny: store_any, TI.kTVMFFINone: store_any,
}


def _writer(field_static_type_index: int):
    return _by_static_index(_WRITERS, store_object, field_static_type_index, "setter")


def _setter_function(field_static_type_index: int, converter: int, f_convert: int) -> int:
    convert = CONVERT_CALLBACK(f_convert)

    def setter(args, result):
        if len(args) < 2:
            raise FFIError("IndexError", f"Index 1 out of bounds {len(args)}")
        if args[0].type_index not in (TI.kTVMFFIOpaquePtr, TI.kTVMFFINone):
            raise convert_error(args[0], "void*")
        address = args[0].v_ptr if args[0].type_index == TI.kTVMFFIOpaquePtr else 0
        if TI.kTVMFFINone < field_static_type_index < OBJECT_BEGIN \
                and args[1].type_index == field_static_type_index:
            # Already of the native field's exact type: what the converter would return.
            _writer(field_static_type_index)(address, args[1])
            return
        converted = abi.TVMFFIAny()
        if convert(converter, ctypes.byref(args[1]), ctypes.byref(converted)) != 0:
            raise ErrorAlreadyRaised()
        try:
            _writer(field_static_type_index)(address, converted)
        finally:
            anyvalue.dec_ref_any(converted)

    return new_python_function(setter)


def _make_field_setter(result, field_static_type_index, converter, f_convert):
    set_object(result, _setter_function(field_static_type_index, converter, f_convert))


# ----------------------------------------------------- the generated init

class _InitPlan:
    """Which field each argument of a generated ``__ffi_init__`` goes to."""

    def __init__(self, type_index: int):
        info = TYPES.entry(type_index).info
        self.info = info
        self.type_key = TYPES.type_key(type_index)
        self.fields = all_fields(info)
        self.by_name: Dict[bytes, int] = {}
        positional = []
        for i, field in enumerate(self.fields):
            if field.flags & FLAGS.kTVMFFIFieldFlagBitMaskInitOff:
                continue
            self.by_name[ctypes.string_at(field.name.data, field.name.size)] = i
            if not field.flags & FLAGS.kTVMFFIFieldFlagBitMaskKwOnly:
                positional.append(i)
        # Required fields bind before those with defaults (a stable partition).
        self.positional = ([i for i in positional if not self._has_default(i)]
                           + [i for i in positional if self._has_default(i)])

    def _has_default(self, i: int) -> bool:
        return bool(self.fields[i].flags & FLAGS.kTVMFFIFieldFlagBitMaskHasDefault)

    def name(self, i: int) -> str:
        field = self.fields[i]
        return ctypes.string_at(field.name.data, field.name.size).decode()

    def _fail(self, message: str) -> FFIError:
        return FFIError("TypeError", f"{self.type_key}.__ffi_init__() {message}")

    def _set(self, address: int, i: int, what: str, value: Optional[abi.TVMFFIAny]) -> None:
        from . import reflection_make_object  # imported late: its global is listed last

        field = self.fields[i]
        try:
            if value is None:
                reflection_make_object.call_setter_to_default(field, address + field.offset)
            else:
                reflection_make_object.call_setter(field, address + field.offset, value)
        except (ErrorAlreadyRaised, FFIError) as error:
            if isinstance(error, dtype.DTypeError):
                kind, message = error.kind, error.raw_message
            elif isinstance(error, FFIError):
                kind, message = error.kind, error.message.encode()
            else:
                kind, message = _take_raised()
            # In bytes: the setter's message may carry a rejected value's bytes as they were
            # (a dtype given as bytes that are not UTF-8), and so does the error raised here.
            nested = message.replace(b"\n", b"\n  ")
            prefix = f"{self.type_key}.__ffi_init__() {what} '{self.name(i)}':\n  ".encode()
            errors.set_raised_owned(errors.new_error(kind.encode(), prefix + nested))
            raise ErrorAlreadyRaised() from None

    def bind(self, address: int, args) -> None:
        """Sets the fields of the empty object at ``address`` from packed ``args``."""
        marker = kwargs_object()
        kwargs_at = next((k for k, arg in enumerate(args)
                          if arg.type_index >= OBJECT_BEGIN and arg.v_ptr == marker), -1)
        done = [False] * len(self.fields)
        if kwargs_at >= 0:
            for k, i in enumerate(self.positional[:kwargs_at]):
                self._set(address, i, "field", args[k])
                done[i] = True
            if kwargs_at > len(self.positional):
                raise self._fail(f"takes at most {len(self.positional)} positional argument(s), "
                                 f"but {kwargs_at} were given")
            if (len(args) - kwargs_at - 1) % 2:
                raise self._fail("KWARGS requires an even number of key-value arguments")
            for k in range(kwargs_at + 1, len(args), 2):
                if args[k].type_index not in (TI.kTVMFFISmallStr, TI.kTVMFFIStr,
                                              TI.kTVMFFIRawStr):
                    raise convert_error(args[k], "ffi.String")
                key = strings.view_bytes(args[k])
                i = self.by_name.get(key)
                if i is None:
                    raise self._fail(f"got an unexpected keyword argument '{key.decode()}'")
                if done[i]:
                    raise self._fail(f"got multiple values for argument '{key.decode()}'")
                self._set(address, i, "field", args[k + 1])
                done[i] = True
        else:
            if len(args) > len(self.positional):
                raise self._fail(f"takes at most {len(self.positional)} positional argument(s), "
                                 f"but {len(args)} were given")
            for k, arg in enumerate(args):
                self._set(address, self.positional[k], "field", arg)
                done[self.positional[k]] = True
        for i, field in enumerate(self.fields):
            if done[i]:
                continue
            if self._has_default(i):
                self._set(address, i, "default for field", None)
            elif not field.flags & FLAGS.kTVMFFIFieldFlagBitMaskInitOff:
                keyword = ("keyword-only " if field.flags & FLAGS.kTVMFFIFieldFlagBitMaskKwOnly
                           else "")
                raise self._fail(f"missing required {keyword}argument: '{self.name(i)}'")


def _take_raised() -> Tuple[str, bytes]:
    """The kind and message (its exact bytes) of the error a callee raised (taken from the
    slot)."""
    error = errors.take_raised()
    if error is None:
        return "RuntimeError", b"unknown error"
    try:
        return errors.error_parts(error)[0], errors.error_raw_message(error)
    finally:
        memory.dec_ref(error)


def _init_function(type_index: int) -> int:
    plan = _InitPlan(type_index)

    def init(args, result):
        from . import reflection_make_object  # imported late: its global is listed last

        address = reflection_make_object.create_empty(plan.info)
        try:
            plan.bind(address, args)
        except BaseException:
            memory.dec_ref(address)
            raise
        set_object(result, address)

    return new_python_function(init)


def _register_function_attr(type_index: int, name: bytes, function: int) -> None:
    value = abi.TVMFFIAny(type_index=TI.kTVMFFIFunction)
    value.v_ptr = function
    try:
        TYPES.register_attr(type_index, name, value)  # the column keeps its own reference
    finally:
        memory.dec_ref(function)


def register_ffi_init(type_index: int) -> None:
    """Registers the generated ``__ffi_init__`` of a type (from its field records)."""
    _register_function_attr(type_index, b"__ffi_init__", _init_function(type_index))


def _register_ffi_init(result, type_index):
    register_ffi_init(type_index)


# ------------------------------------------------ new, shallow copy, init

def _copy_fields(info: abi.TVMFFITypeInfo, source: int, target: int) -> None:
    for field in all_fields(info):
        storage = storage_of(field)
        src, dst = source + field.offset, target + field.offset
        if storage == ANY:
            anyvalue.copy_any(abi.TVMFFIAny.from_address(src), abi.TVMFFIAny.from_address(dst))
            anyvalue.inc_ref_any(abi.TVMFFIAny.from_address(dst))
        elif storage == OBJECT:
            pointer = ctypes.c_void_p.from_address(src).value
            if pointer:
                memory.inc_ref(pointer)
            ctypes.c_void_p.from_address(dst).value = pointer
        else:
            ctypes.memmove(dst, src, field.size)


def register_type_attr_columns(type_index: int, total_size: int) -> None:
    """Registers ``__ffi_init__``, ``__ffi_new__`` and ``__ffi_shallow_copy__`` of a type."""
    info = TYPES.entry(type_index).info
    register_ffi_init(type_index)

    def new(result):
        set_object(result, new_empty(type_index, total_size))

    def shallow_copy(result, source):
        copy = new_empty(type_index, total_size)
        _copy_fields(info, source, copy)
        set_object(result, copy)

    _register_function_attr(type_index, b"__ffi_new__", typed_function([], "ffi.Object", new))
    _register_function_attr(type_index, b"__ffi_shallow_copy__",
                            typed_function(["ffi.Object"], "ffi.Object", shallow_copy))


def _register_columns(result, type_index, total_size):
    register_type_attr_columns(type_index, total_size)


# Registered in upstream's order, so the global table lists them as upstream's does.
for _name, _params, _returns, _impl in (
        ("ffi._RegisterFFIInit", ["int"], "void", _register_ffi_init),
        ("ffi.MakeFieldSetter", ["int", "int", "int"], "ffi.Function", _make_field_setter),
        ("ffi._PyClassRegisterTypeAttrColumns", ["int", "int"], "void", _register_columns),
        ("ffi.MakeFieldGetter", ["int"], "int", _make_field_getter)):
    typed_global(_name, _params, _returns)(_impl)
