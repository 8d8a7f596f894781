"""``ffi.MakeFieldGetter`` and ``ffi.MakeFieldSetter``: field access for objects defined in Python.

A type defined from Python (upstream's ``py_class``) lays its fields out like
a C++ one and needs the same C-callable accessors in its
``TVMFFIFieldInfo``. Both globals take the field's *storage type*, a type
index:

=======================  ===========================  =======================
storage type             the field holds              read as
=======================  ===========================  =======================
int (1)                  ``int64_t``                  int
float (3)                ``double``                   float
bool (2)                 ``bool`` (one byte)          bool
void* (4)                ``void*``                    opaque pointer
DataType (5)             ``DLDataType``               dtype
Device (6)               ``DLDevice``                 device
Any (-1) or None (0)     ``Any`` (16 bytes, owned)    the value
an object index (>= 64)  an object pointer or NULL    the object, or None
=======================  ===========================  =======================

``ffi.MakeFieldGetter(storage) -> int`` returns the address of a
``TVMFFIFieldGetter`` for that storage (any other index is ``ValueError``).
``ffi.MakeFieldSetter(storage, converter, f_convert) -> Function`` returns a
setter Function ``(field_address, value)``: it calls the C function
``int f_convert(void* converter, const TVMFFIAny* value, TVMFFIAny* out)``
(the front end's type converter; -1 means it raised an error), then stores
the converted value by the storage type (an int64 must be an int, and so on).
"""

from __future__ import annotations

import ctypes

from tvm_ffi_common import abi
from . import anyvalue, strings
from .functions import new_python_function, set_object
from .reflection import ANY, I64, OBJECT, c_callback, convert_error
from .signatures import typed_global
from .slots import ErrorAlreadyRaised, FFIError

TI = abi.TVMFFITypeIndex
_Converter = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(abi.TVMFFIAny),
                              ctypes.POINTER(abi.TVMFFIAny))


@c_callback(abi.TVMFFIFieldGetter)
def _get_float(field, result):
    result.contents.type_index = TI.kTVMFFIFloat
    result.contents.v_float64 = ctypes.c_double.from_address(field).value


@c_callback(abi.TVMFFIFieldGetter)
def _get_bool(field, result):
    result.contents.type_index = TI.kTVMFFIBool
    result.contents.v_int64 = int(ctypes.c_bool.from_address(field).value)


@c_callback(abi.TVMFFIFieldGetter)
def _get_pointer(field, result):
    address = ctypes.c_void_p.from_address(field).value
    result.contents.type_index = TI.kTVMFFIOpaquePtr if address else TI.kTVMFFINone
    result.contents.v_ptr = address


@c_callback(abi.TVMFFIFieldGetter)
def _get_dtype(field, result):
    result.contents.type_index = TI.kTVMFFIDataType
    result.contents.v_dtype = abi.DLDataType.from_address(field)


@c_callback(abi.TVMFFIFieldGetter)
def _get_device(field, result):
    result.contents.type_index = TI.kTVMFFIDevice
    result.contents.v_device = abi.DLDevice.from_address(field)


_GETTERS = {TI.kTVMFFIInt: I64[2], TI.kTVMFFIFloat: _get_float, TI.kTVMFFIBool: _get_bool,
            TI.kTVMFFIOpaquePtr: _get_pointer, TI.kTVMFFIDataType: _get_dtype,
            TI.kTVMFFIDevice: _get_device}


def getter_for(storage: int):
    """The C getter of a field stored as ``storage`` (see the module docstring)."""
    if storage in _GETTERS:
        return _GETTERS[storage]
    if storage in (TI.kTVMFFIAny, TI.kTVMFFINone):
        return ANY[2]
    if storage >= TI.kTVMFFIStaticObjectBegin:
        return OBJECT[2]
    raise FFIError("ValueError", f"Unsupported field type index for getter: {storage}")


def write_field(address: int, storage: int, value: abi.TVMFFIAny) -> None:
    """Stores an owned ``value`` (consumed) into a field stored as ``storage``."""
    index = value.type_index
    try:
        if storage in (TI.kTVMFFIInt, TI.kTVMFFIBool):
            if index not in (TI.kTVMFFIInt, TI.kTVMFFIBool):
                raise convert_error(value, "int" if storage == TI.kTVMFFIInt else "bool")
            ctype = ctypes.c_int64 if storage == TI.kTVMFFIInt else ctypes.c_bool
            ctype.from_address(address).value = value.v_int64
        elif storage == TI.kTVMFFIFloat:
            if index not in (TI.kTVMFFIFloat, TI.kTVMFFIInt, TI.kTVMFFIBool):
                raise convert_error(value, "float")
            ctypes.c_double.from_address(address).value = \
                value.v_float64 if index == TI.kTVMFFIFloat else value.v_int64
        elif storage == TI.kTVMFFIOpaquePtr:
            if index not in (TI.kTVMFFIOpaquePtr, TI.kTVMFFINone):
                raise convert_error(value, "void*")
            ctypes.c_void_p.from_address(address).value = value.v_ptr if index else None
        elif storage in (TI.kTVMFFIDataType, TI.kTVMFFIDevice):
            if index != storage:
                raise convert_error(value, "DataType" if storage == TI.kTVMFFIDataType
                                    else "Device")
            ctypes.memmove(address, ctypes.addressof(value) + 8,
                           4 if storage == TI.kTVMFFIDataType else 8)
        elif storage in (TI.kTVMFFIAny, TI.kTVMFFINone) \
                or storage >= TI.kTVMFFIStaticObjectBegin:
            setter = ANY[3] if storage < TI.kTVMFFIStaticObjectBegin else OBJECT[3]
            if setter(address, ctypes.byref(value)) != 0:
                raise ErrorAlreadyRaised()
        else:
            raise FFIError("ValueError", f"Unsupported field type index for setter: {storage}")
    finally:
        anyvalue.dec_ref_any(value)


@typed_global("ffi.MakeFieldGetter", ["int"], "int")
def _make_field_getter(result, storage):
    strings.store_int(result, ctypes.cast(getter_for(storage), ctypes.c_void_p).value)


@typed_global("ffi.MakeFieldSetter", ["int", "int", "int"], "ffi.Function")
def _make_field_setter(result, storage, converter, f_convert):
    convert = _Converter(f_convert)

    def setter(args, setter_result):
        if args[0].type_index not in (TI.kTVMFFIOpaquePtr, TI.kTVMFFINone):
            raise convert_error(args[0], "void*")
        converted = abi.TVMFFIAny()
        if convert(converter or None, ctypes.byref(args[1]), ctypes.byref(converted)) != 0:
            raise ErrorAlreadyRaised()
        write_field(args[0].v_ptr or 0, storage, converted)

    set_object(result, new_python_function(setter))
