"""Function objects written in Python, and the global function table.

A Function object is ``TVMFFIObject`` + ``TVMFFIFunctionCell``. Whoever calls
it passes *the function object itself* as ``handle``:
``cell.safe_call(func, args, num_args, result)``. A function made from a C
callback with its own ``self`` (``TVMFFIFunctionCreate``) therefore needs a
trampoline in the cell that finds ``self`` in the object and forwards the call
(with neither ``self`` nor a deleter, the callback goes into the cell
directly). That trampoline sits on every call, so this runtime leaves
``TVMFFIFunctionCreate`` and ``TVMFFIFunctionCall`` to ``libtvm_ffi.so``'s
built-ins, which implement exactly that in C; a Python trampoline would
double the cost of every call of a kernel function.

The runtime also provides ``ffi.*`` global functions written in Python
(:func:`def_global`): they take and produce raw ``TVMFFIAny`` values, since
the runtime sits below any front end's notion of Python values.
"""

from __future__ import annotations

import ctypes
import threading
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence

from .. import abi
from . import memory, strings
from .slots import FFIError, implements

TI = abi.TVMFFITypeIndex
_CELL_AT = memory.HEADER_SIZE
_PRIVATE_AT = _CELL_AT + ctypes.sizeof(abi.TVMFFIFunctionCell)


def function_cell(address: int) -> abi.TVMFFIFunctionCell:
    """The cell of a Function object."""
    return abi.TVMFFIFunctionCell.from_address(address + _CELL_AT)


def call_function(func: int, args, num_args: int, result) -> int:
    """Calls a Function object: its cell's entry, with the function itself as handle."""
    return function_cell(func).safe_call(func, args, num_args, result)


# ------------------------------------------------ functions written in Python

#: A runtime-provided function: ``fn(args) -> None`` writing into ``result``.
PackedImpl = Callable[[Sequence[abi.TVMFFIAny], abi.TVMFFIAny], None]
_python_functions: Dict[int, object] = {}


def _destroy_python_function(address: int) -> None:
    _python_functions.pop(address, None)


def new_python_function(impl: PackedImpl) -> int:
    """A Function object whose body is ``impl(args, result)`` in Python.

    Exceptions inside ``impl`` become raised errors (kind = class name, or the
    kind of an :class:`FFIError`) and the call returns -1.
    """
    from . import errors

    @abi.TVMFFISafeCallType
    def safe_call(handle, args, num_args, result):
        try:
            impl([args[i] for i in range(num_args)], result.contents)
            return 0
        except FFIError as error:
            errors.raise_error(error.kind, error.message)
        except Exception as error:  # noqa: BLE001 - never let it reach C
            errors.raise_error(type(error).__name__, str(error))
        return -1

    address = memory.new_object(TI.kTVMFFIFunction, _PRIVATE_AT, _destroy_python_function)
    function_cell(address).safe_call = safe_call
    _python_functions[address] = safe_call
    return address


def expect_args(name: str, args: Sequence[abi.TVMFFIAny], count: int) -> None:
    """Raises the TypeError upstream raises for a wrong argument count."""
    if len(args) != count:
        raise FFIError("TypeError", f"Mismatched number of arguments when calling: `{name}`. "
                       f"Expected {count} but got {len(args)} arguments")


def arg_int(name: str, args: Sequence[abi.TVMFFIAny], i: int) -> int:
    """Argument ``i`` as an int (bools count)."""
    if args[i].type_index not in (TI.kTVMFFIInt, TI.kTVMFFIBool):
        raise FFIError("TypeError", f"{name}: argument {i} must be an int, got type index "
                                    f"{args[i].type_index}")
    return args[i].v_int64


def arg_str(name: str, args: Sequence[abi.TVMFFIAny], i: int) -> bytes:
    """Argument ``i`` as the bytes of a str."""
    if args[i].type_index not in (TI.kTVMFFISmallStr, TI.kTVMFFIStr, TI.kTVMFFIRawStr):
        raise FFIError("TypeError", f"{name}: argument {i} must be a str, got type index "
                                    f"{args[i].type_index}")
    return strings.view_bytes(args[i])


def set_object(result: abi.TVMFFIAny, address: int) -> None:
    """Stores an owned object reference as the result."""
    result.type_index = memory.type_index_of(address)
    result.zero_padding = 0
    result.v_ptr = address


def set_bool(result: abi.TVMFFIAny, value: bool) -> None:
    """Stores a bool result."""
    result.type_index = TI.kTVMFFIBool
    result.zero_padding = 0
    result.v_int64 = int(value)


# ------------------------------------------------------ the global table


@dataclass
class GlobalEntry:
    """A global function with the method info it was registered with."""

    func: int  # owned reference
    doc: bytes = b""
    metadata: bytes = b""
    flags: int = abi.TVMFFIFieldFlagBitMask.kTVMFFIFieldFlagBitMaskIsStaticMethod


class GlobalTable:
    """Name -> function, in registration order."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.entries: Dict[bytes, GlobalEntry] = {}

    def set(self, name: bytes, entry: GlobalEntry, allow_override: bool) -> None:
        with self.lock:
            old = self.entries.get(name)
            if old is not None and not allow_override:
                memory.dec_ref(entry.func)
                raise FFIError("RuntimeError",
                               f"Global Function `{name.decode()}` is already registered")
            self.entries[name] = entry
        if old is not None:
            memory.dec_ref(old.func)

    def get(self, name: bytes) -> Optional[GlobalEntry]:
        with self.lock:
            return self.entries.get(name)

    def remove(self, name: bytes) -> bool:
        with self.lock:
            entry = self.entries.pop(name, None)
        if entry is None:
            return False
        memory.dec_ref(entry.func)
        return True

    def names(self) -> List[bytes]:
        with self.lock:
            return list(self.entries)


#: The process's one global function table.
GLOBALS = GlobalTable()


def def_global(name: str) -> Callable[[PackedImpl], PackedImpl]:
    """Registers the decorated ``impl(args, result)`` as global function ``name``."""

    def register(impl: PackedImpl) -> PackedImpl:
        GLOBALS.set(name.encode(), GlobalEntry(new_python_function(impl)), allow_override=True)
        return impl

    return register


# ---------------------------------------------------------------- the slots


def _text(array) -> bytes:
    view = array.contents
    return ctypes.string_at(view.data, view.size) if view.size else b""


@implements("TVMFFIFunctionGetGlobal")
def function_get_global(name, out):
    entry = GLOBALS.get(_text(name))
    if entry is None:
        out[0] = None
    else:
        memory.inc_ref(entry.func)
        out[0] = entry.func


@implements("TVMFFIFunctionSetGlobal")
def function_set_global(name, func, allow_override):
    memory.inc_ref(func)
    GLOBALS.set(_text(name), GlobalEntry(func), bool(allow_override))


@implements("TVMFFIFunctionSetGlobalFromMethodInfo")
def function_set_global_from_method_info(info, allow_override):
    info = info.contents
    method = info.method
    if method.type_index != TI.kTVMFFIFunction:
        raise FFIError("TypeError", "TVMFFIMethodInfo.method must hold a Function, got type "
                                    f"index {method.type_index}")
    memory.inc_ref(method.v_ptr)
    view = lambda array: ctypes.string_at(array.data, array.size) if array.size else b""  # noqa
    entry = GlobalEntry(method.v_ptr, view(info.doc), view(info.metadata), info.flags)
    GLOBALS.set(view(info.name), entry, bool(allow_override))


# ------------------------------------------------------- ffi.* globals here


@def_global("ffi.FunctionRemoveGlobal")
def _remove_global(args, result):
    expect_args("ffi.FunctionRemoveGlobal", args, 1)
    set_bool(result, GLOBALS.remove(arg_str("ffi.FunctionRemoveGlobal", args, 0)))


@def_global("ffi.FunctionListGlobalNamesFunctor")
def _list_global_names_functor(args, result):
    names = GLOBALS.names()

    def functor(inner_args, inner_result):
        index = arg_int("ffi.FunctionListGlobalNamesFunctor", inner_args, 0)
        if index < 0:
            strings.store_int(inner_result, len(names))
        else:
            strings.store_str_or_bytes(inner_result, names[index], is_str=True)

    set_object(result, new_python_function(functor))


@def_global("ffi.GetGlobalFuncMetadata")
def _get_global_func_metadata(args, result):
    expect_args("ffi.GetGlobalFuncMetadata", args, 1)
    name = arg_str("ffi.GetGlobalFuncMetadata", args, 0)
    entry = GLOBALS.get(name)
    if entry is None:
        raise FFIError("RuntimeError", f"Global Function is not found: {name.decode()}")
    strings.store_str_or_bytes(result, entry.metadata, is_str=True)


@def_global("ffi.String")
def _string_identity(args, result):
    expect_args("ffi.String", args, 1)
    strings.store_str_or_bytes(result, arg_str("ffi.String", args, 0), is_str=True)


@def_global("ffi.Bytes")
def _bytes_identity(args, result):
    expect_args("ffi.Bytes", args, 1)
    strings.store_str_or_bytes(result, strings.view_bytes(args[0]), is_str=False)
