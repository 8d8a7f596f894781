"""``ffi.MakeObjectFromPackedArgs``: an object of any reflected type, made by field names.

Its twin in C: ``tvm_ffi_fast/src/reflection_make_object.c``.

Works from the type's records alone (:mod:`.reflection` says what they hold):
it makes an empty object through the type's ``creator`` or its ``__ffi_new__``
attribute, then sets each named field through its setter and every other one
to its default. Apart from the records this runtime registers at load, since it
serves every reflected type, a kernel's as much as upstream's.
"""

from __future__ import annotations

import ctypes
from typing import List

from tvm_ffi_common import abi

from . import anyvalue, memory, strings
from .functions import call_function, def_global, set_object
from .reflection import convert_error
from .registry import TYPES
from .slots import ErrorAlreadyRaised, FFIError

TI = abi.TVMFFITypeIndex
FLAGS = abi.TVMFFIFieldFlagBitMask


def _text(array: abi.TVMFFIByteArray) -> str:
    return ctypes.string_at(array.data, array.size).decode() if array.size else ""


def _str_of(value: abi.TVMFFIAny) -> bytes:
    if value.type_index not in (TI.kTVMFFISmallStr, TI.kTVMFFIStr, TI.kTVMFFIRawStr):
        raise convert_error(value, "str")
    return strings.view_bytes(value)


def _call(function: int, args: List[abi.TVMFFIAny]) -> abi.TVMFFIAny:
    """Calls a Function object; an owned result, or the callee's error passed on."""
    array = (abi.TVMFFIAny * max(1, len(args)))(*args)
    result = abi.TVMFFIAny()
    if call_function(function, array, len(args), ctypes.byref(result)) != 0:
        raise ErrorAlreadyRaised()
    return result


def call_setter(field: abi.TVMFFIFieldInfo, address: int, value: abi.TVMFFIAny) -> None:
    """``reflection::CallFieldSetter``: a C setter, or a setter Function given the address."""
    if field.flags & FLAGS.kTVMFFIFieldFlagBitSetterIsFunctionObj:
        pointer = abi.TVMFFIAny(type_index=TI.kTVMFFIOpaquePtr, v_ptr=address)
        anyvalue.dec_ref_any(_call(field.setter, [pointer, value]))
        return
    if not field.setter:
        raise FFIError("TypeError", f"Field `{_text(field.name)}` has no setter")
    if abi.TVMFFIFieldSetter(field.setter)(address, ctypes.byref(value)) != 0:
        raise ErrorAlreadyRaised()


def call_setter_to_default(field: abi.TVMFFIFieldInfo, address: int) -> None:
    """``reflection::CallFieldSetterToDefault``: the default value, or the factory's result."""
    default = field.default_value_or_factory
    if field.flags & FLAGS.kTVMFFIFieldFlagBitMaskDefaultFromFactory:
        if default.type_index != TI.kTVMFFIFunction:
            raise convert_error(default, "ffi.Function")
        value = _call(default.v_ptr, [])
        try:
            call_setter(field, address, value)
        finally:
            anyvalue.dec_ref_any(value)
    else:
        call_setter(field, address, default)


def create_empty(info: abi.TVMFFITypeInfo) -> int:
    """An empty object: the type's native creator, else its ``__ffi_new__`` attribute."""
    if info.metadata and info.metadata.contents.creator:
        out = ctypes.c_void_p()
        if info.metadata.contents.creator(ctypes.byref(out)) != 0:
            raise ErrorAlreadyRaised()
        return out.value
    column = TYPES.attr_column(b"__ffi_new__")
    if column is not None and info.type_index < len(column.values) \
            and column.values[info.type_index].type_index == TI.kTVMFFIFunction:
        made = _call(column.values[info.type_index].v_ptr, [])
        if made.type_index < TI.kTVMFFIStaticObjectBegin:
            raise FFIError("TypeError", f"__ffi_new__ of `{_text(info.type_key)}` "
                                        "did not return an object")
        return made.v_ptr
    raise FFIError("RuntimeError", f"Type `{_text(info.type_key)}` does not "
                                   "support reflection creation (no native creator or "
                                   "__ffi_new__ type attr)")


@def_global("ffi.MakeObjectFromPackedArgs")
def _make_object_from_packed_args(args, result):
    """``(type, name0, value0, name1, value1, ...)``: an object with those fields set.

    ``type`` is a type index or key. Fields are filled in declaration order,
    ancestors' first (below ``ffi.Object``); a field not named takes its
    default, and one without a default is an error, as is a name that no
    field has.
    """
    if args and args[0].type_index in (TI.kTVMFFIInt, TI.kTVMFFIBool):
        type_index = args[0].v_int64
    else:
        if not args:
            raise FFIError("TypeError", "Cannot convert from type `None` to `str`")
        type_index = TYPES.key_to_index(_str_of(args[0]))
    if len(args) % 2 != 1:
        raise FFIError("InternalError", "Check failed: (args.size() % 2 == 1) is false: ")
    info = TYPES.entry(type_index).info
    names = [_str_of(args[k]) for k in range(1, len(args), 2)]
    address = create_empty(info)
    try:
        used = set()
        owners = [info.type_ancestors[d].contents for d in range(1, info.type_depth)] + [info]
        for owner in owners:
            for i in range(owner.num_fields):
                field = owner.fields[i]
                name = _text(field.name).encode()
                match = next((k for k, given in enumerate(names)
                              if k not in used and given == name), None)
                if match is not None:
                    call_setter(field, address + field.offset, args[2 * match + 2])
                    used.add(match)
                elif field.flags & FLAGS.kTVMFFIFieldFlagBitMaskHasDefault:
                    call_setter_to_default(field, address + field.offset)
                else:
                    raise FFIError("TypeError", f"Required field `{name.decode()}` not set in type "
                                                f"`{_text(info.type_key)}`")
        for k, name in enumerate(names):
            if k not in used:
                raise FFIError("TypeError", f"Type `{_text(info.type_key)}` does "
                                            f"not have field `{name.decode()}`")
    except BaseException:
        memory.dec_ref(address)
        raise
    set_object(result, address)
