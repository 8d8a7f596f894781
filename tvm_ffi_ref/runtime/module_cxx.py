"""Modules and C++: what ``libtvm_ffi.so``'s C++ face does for this runtime's modules.

Its twin in C: ``tvm_ffi_fast/src/module_cxx.c``.

Upstream's ``ModuleObj`` is a C++ class whose vtable pointer sits 8 bytes before
the object header. Every module made here carries there the vtable
``tvm_ffi_runtime_module_vtable()`` gives, whose virtual functions call this
runtime's ``ffi.Module*`` globals; a module C++ made (a ``ModuleObj`` subclass,
"foreign" here) carries its own, and the globals and import walks serve it by
calling its virtual functions through ``tvm_ffi_runtime_module_call``.
"""

from __future__ import annotations

import ctypes

from tvm_ffi_common import abi
from tvm_ffi_common.capi import LIB

from . import memory, strings
from .slots import ErrorAlreadyRaised

TI = abi.TVMFFITypeIndex

#: The bytes in front of a module's header: upstream's ModuleObj vtable pointer.
VTABLE_SIZE = ctypes.sizeof(ctypes.c_void_p)


def vtable() -> int:
    """The vtable pointer a module made here carries."""
    return LIB.tvm_ffi_runtime_module_vtable()


def is_foreign(module: int) -> bool:
    """Whether ``module`` was made by C++ (a ``ModuleObj`` subclass with its own vtable)."""
    return bool(LIB.tvm_ffi_runtime_module_is_foreign(module))


def _module_value(module: int) -> abi.TVMFFIAny:
    value = abi.TVMFFIAny(type_index=TI.kTVMFFIModule)
    value.v_ptr = module
    return value


def _bool_value(flag: bool) -> abi.TVMFFIAny:
    value = abi.TVMFFIAny(type_index=TI.kTVMFFIBool)
    value.v_int64 = int(flag)
    return value


def call_foreign(method: str, result: abi.TVMFFIAny, module: int, *rest) -> None:
    """``ffi.Module<method>`` on a foreign module: its virtual function, through libtvm_ffi.so.

    ``rest`` are the global's other arguments: module addresses (int), flags (bool) or
    values (``TVMFFIAny``, borrowed)."""
    args = [_module_value(module)]
    for arg in rest:
        if isinstance(arg, bool):
            args.append(_bool_value(arg))
        elif isinstance(arg, int):
            args.append(_module_value(arg))
        else:
            args.append(arg)
    array = (abi.TVMFFIAny * len(args))(*args)
    if LIB.tvm_ffi_runtime_module_call(method.encode(), array, len(args),
                                       ctypes.byref(result)) != 0:
        raise ErrorAlreadyRaised()


def foreign_lookup(method: str, module: int, name: bytes, query_imports: bool,
                   result: abi.TVMFFIAny) -> None:
    """``method`` (GetFunction, GetFunctionDoc, GetFunctionMetadata) of a foreign module
    for ``name`` into ``result`` (None when absent)."""
    text = abi.TVMFFIAny()
    strings.store_str_or_bytes(text, name, is_str=True)
    try:
        call_foreign(method, result, module, text, query_imports)
    finally:
        if text.type_index >= TI.kTVMFFIStaticObjectBegin:
            memory.dec_ref(text.v_ptr)
