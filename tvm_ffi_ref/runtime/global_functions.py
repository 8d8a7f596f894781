"""The ``ffi.*`` functions about functions, the global table and the type registry.

Its twin in C: ``tvm_ffi_fast/src/global_functions.c``.

All are typed, so their argument errors and their metadata are upstream's
(see ``signatures.py``):

* ``ffi.FunctionListGlobalNamesFunctor()`` returns a function ``f``: ``f(-1)``
  is the number of global names, ``f(i)`` the i-th name (a snapshot taken when
  the functor was made, in the table's listing order);
* ``ffi.FunctionRemoveGlobal(name)``, ``ffi.GetGlobalFuncMetadata(name)``;
* ``ffi.FunctionFromExternC(self, safe_call, deleter)`` is
  ``TVMFFIFunctionCreate`` for callers that hold only pointers;
* ``ffi.String`` and ``ffi.Bytes`` return their argument (a raw C string or a
  byte-array pointer arrives converted);
* ``ffi.GetRegisteredTypeKeys()`` lists every type key, by index;
* ``ffi.GetKwargsObject()`` returns the marker object a front end passes
  before keyword arguments (a plain ``ffi.Object``, the same one every time).
"""

from __future__ import annotations

import ctypes
import threading

from tvm_ffi_common import abi
from tvm_ffi_common.capi import LIB

from . import memory, sequences, strings
from .functions import GLOBALS, set_bool, set_object
from .registry import TYPES
from .signatures import typed_function, typed_global
from .slots import ErrorAlreadyRaised, FFIError

TI = abi.TVMFFITypeIndex


def _return_copy(result: abi.TVMFFIAny, value: abi.TVMFFIAny) -> None:
    ctypes.memmove(ctypes.addressof(result), ctypes.addressof(value), ctypes.sizeof(value))
    if value.type_index >= TI.kTVMFFIStaticObjectBegin:
        memory.inc_ref(value.v_ptr)


@typed_global("ffi.GetRegisteredTypeKeys", [], "Array<str>")
def _get_registered_type_keys(result):
    keys = []
    for key in TYPES.registered_keys():
        value = abi.TVMFFIAny()
        strings.store_str_or_bytes(value, key.encode(), is_str=True)
        keys.append(value)
    try:
        set_object(result, sequences.array_from_anys(keys))
    finally:
        for value in keys:
            if value.type_index >= TI.kTVMFFIStaticObjectBegin:
                memory.dec_ref(value.v_ptr)


_singletons = {}
_singletons_lock = threading.Lock()


def _singleton(name: str) -> int:
    """A plain ``ffi.Object`` made once for the process (owned by this module)."""
    with _singletons_lock:
        if name not in _singletons:
            _singletons[name] = memory.new_object(TI.kTVMFFIObject, memory.HEADER_SIZE)
        return _singletons[name]


def kwargs_object() -> int:
    """The process's "keyword arguments follow" marker (a bare ``ffi.Object``), borrowed.

    ``ffi.GetKwargsObject`` returns it; a generated ``__ffi_init__`` finds it
    among positional arguments, and ``ffi.ReprPrint`` prints it as ``<KWARGS>``.
    """
    return _singleton("kwargs")


@typed_global("ffi.GetKwargsObject", [], "ffi.Object")
def _get_kwargs_object(result):
    address = kwargs_object()
    memory.inc_ref(address)
    set_object(result, address)


@typed_global("ffi.FunctionRemoveGlobal", ["str"], "bool")
def _remove_global(result, name):
    set_bool(result, GLOBALS.remove(strings.view_bytes(name)))


@typed_global("ffi.FunctionListGlobalNamesFunctor", [], "ffi.Function")
def _list_global_names_functor(result):
    names = []
    for name in GLOBALS.names():
        value = abi.TVMFFIAny()
        strings.store_str_or_bytes(value, name, is_str=True)
        names.append(value)
    snapshot = sequences.array_from_anys(names)  # the functor owns it
    for value in names:
        if value.type_index >= TI.kTVMFFIStaticObjectBegin:
            memory.dec_ref(value.v_ptr)

    def functor(inner_result, index):
        size = sequences.seq_size(snapshot)
        if index < 0:
            strings.store_int(inner_result, size)
        elif index >= size:
            raise FFIError("IndexError", f"Index {index} out of bounds {size}")
        else:
            _return_copy(inner_result, sequences.seq_get(snapshot, index))

    set_object(result, typed_function(["int"], "Any", functor,
                                      on_destroy=lambda: memory.dec_ref(snapshot)))


@typed_global("ffi.String", ["str"], "str")
def _string_identity(result, value):
    _return_copy(result, value)


@typed_global("ffi.Bytes", ["bytes"], "bytes")
def _bytes_identity(result, value):
    _return_copy(result, value)


@typed_global("ffi.GetGlobalFuncMetadata", ["str"], "str")
def _get_global_func_metadata(result, name):
    entry = GLOBALS.get(strings.view_bytes(name))
    if entry is None:
        raise FFIError("RuntimeError",
                       f"Global Function is not found: {strings.view_bytes(name).decode()}")
    strings.store_str_or_bytes(result, entry.metadata, is_str=True)


@typed_global("ffi.FunctionFromExternC", ["void*", "void*", "void*"], "ffi.Function")
def _function_from_extern_c(result, self, safe_call, deleter):
    out = ctypes.c_void_p()
    if LIB.TVMFFIFunctionCreate(self or None, safe_call or None, deleter or None,
                                ctypes.byref(out)) != 0:
        raise ErrorAlreadyRaised()
    set_object(result, out.value)
