"""Function objects written in Python, and the global function table.

Its twin in C: ``tvm_ffi_fast/src/functions.c``.

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
the runtime sits below any front end's notion of Python values. Most are
typed (``signatures.typed_global``); the global table's own functions are in
``global_functions.py``.
"""

from __future__ import annotations

import ctypes
import threading
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence

from tvm_ffi_common import abi, pycapi

from . import interrupts, memory, strings
from .slots import ErrorAlreadyRaised, FFIError, implements

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


def _entry_error(error: BaseException) -> int:
    from . import errors

    errors.raise_error(type(error).__name__, str(error))
    return -1


def new_python_function(impl: PackedImpl, on_destroy: Optional[Callable[[], None]] = None) -> int:
    """A Function object whose body is ``impl(args, result)`` in Python.

    Exceptions inside ``impl`` become raised errors (kind = class name, or the
    kind of an :class:`FFIError`) and the call returns -1. ``on_destroy()``,
    if given, runs when the function dies (to release what ``impl`` holds).
    """
    from . import errors

    @interrupts.callback_entry
    def body(handle, args, num_args, result):
        try:
            impl([args[i] for i in range(num_args)], result.contents)
            return 0
        except ErrorAlreadyRaised:
            pass
        except FFIError as error:
            errors.raise_error(error.kind, error.message)
        except Exception as error:  # noqa: BLE001 - never let it reach C
            errors.raise_error(type(error).__name__, str(error))
        return -1

    # C calls the body through pycapi.entry_guard (a signal handler raising at its first
    # bytecode, before its try, is the call's error: see slots.py).
    safe_call = abi.TVMFFISafeCallType(pycapi.entry_guard(body, _entry_error))

    destroy = _destroy_python_function
    if on_destroy is not None:
        def destroy(address):
            _destroy_python_function(address)
            on_destroy()

    address = memory.new_object(TI.kTVMFFIFunction, _PRIVATE_AT, destroy)
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


#: The metadata of a function written against raw packed arguments: its type
#: schema is just ``{"type":"ffi.Function"}`` (see ``signatures.py``).
PACKED_METADATA = b'{"type_schema":"{\\"type\\":\\"ffi.Function\\"}"}'


@dataclass
class GlobalEntry:
    """A global function with the method info it was registered with."""

    func: int  # owned reference
    doc: bytes = b""
    metadata: bytes = b""
    flags: int = abi.TVMFFIFieldFlagBitMask.kTVMFFIFieldFlagBitMaskIsStaticMethod


class GlobalTable:
    """Name -> function, listed in the order upstream's table lists them.

    Upstream keeps its table in a Map and lists names by walking it. The table
    is always in the Map's dense form (the runtime's own globals already
    outnumber a small map's four slots), which walks in insertion order and
    moves an entry to the end when its key is set again; a dict that re-inserts
    on every set lists the same way.
    """

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.entries: Dict[bytes, GlobalEntry] = {}

    def set(self, name: bytes, entry: GlobalEntry, allow_override: bool,
            detailed_message: bool = False) -> None:
        with self.lock:
            old = self.entries.get(name)
            if old is not None and not allow_override:
                memory.dec_ref(entry.func)
                message = f"Global Function `{name.decode()}` is already registered"
                if detailed_message:  # what upstream says when the method-info form collides
                    message += (", possible causes:\n- Two GlobalDef().def registrations for "
                                "the same function \nPlease remove the duplicate registration.")
                raise FFIError("RuntimeError", message)
            self.entries.pop(name, None)
            self.entries[name] = entry
        if old is not None:
            memory.dec_ref(old.func)

    def reorder(self, names: Sequence[bytes]) -> None:
        """Lists ``names`` first, in that order (each must be registered), then the rest."""
        with self.lock:
            missing = [name for name in names if name not in self.entries]
            if missing:
                raise RuntimeError(f"reorder: no global registered as {missing[0]!r}")
            ordered = {name: self.entries[name] for name in names}
            ordered.update((name, entry) for name, entry in self.entries.items()
                           if name not in ordered)
            self.entries = ordered

    def get(self, name: bytes) -> Optional[GlobalEntry]:
        """The entry of ``name`` (its function borrowed: a concurrent set may drop it)."""
        with self.lock:
            return self.entries.get(name)

    def new_ref(self, name: bytes) -> Optional[int]:
        """The function registered as ``name`` with a new strong reference, or None.

        The reference is taken under the lock: taken after it, a concurrent set or
        remove could drop the table's reference first and free the function.
        """
        with self.lock:
            entry = self.entries.get(name)
            if entry is None:
                return None
            memory.inc_ref(entry.func)
            return entry.func

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


def def_global(name: str, metadata: bytes = PACKED_METADATA) -> Callable[[PackedImpl], PackedImpl]:
    """Registers the decorated ``impl(args, result)`` as global function ``name``.

    ``metadata`` is what ``ffi.GetGlobalFuncMetadata`` reports: by default the
    schema of a function taking packed arguments.
    """

    def register(impl: PackedImpl) -> PackedImpl:
        GLOBALS.set(name.encode(), GlobalEntry(new_python_function(impl), metadata=metadata),
                    allow_override=True)
        return impl

    return register


# ---------------------------------------------------------------- the slots


def _text(array) -> bytes:
    view = array.contents
    return ctypes.string_at(view.data, view.size) if view.size else b""


@implements("TVMFFIFunctionGetGlobal")
def function_get_global(name, out):
    out[0] = GLOBALS.new_ref(_text(name))


@implements("TVMFFIFunctionSetGlobal")
def function_set_global(name, func, allow_override):
    if memory.type_index_of(func) != TI.kTVMFFIFunction:
        # Upstream stores it and crashes when it is called; refuse it here instead.
        from .registry import TYPES

        try:
            got = TYPES.type_key(memory.type_index_of(func))
        except FFIError:
            got = f"type index {memory.type_index_of(func)}"
        raise FFIError("TypeError", f"TVMFFIFunctionSetGlobal: expected a ffi.Function, got {got}")
    memory.inc_ref(func)
    GLOBALS.set(_text(name), GlobalEntry(func), bool(allow_override))


@implements("TVMFFIFunctionSetGlobalFromMethodInfo")
def function_set_global_from_method_info(info, allow_override):
    info = info.contents
    method = info.method
    if method.type_index != TI.kTVMFFIFunction:
        from .registry import TYPES

        raise FFIError("TypeError", f"Cannot convert from type `{TYPES.type_key(method.type_index)}`"
                                    " to `ffi.Function`")
    memory.inc_ref(method.v_ptr)
    view = lambda array: ctypes.string_at(array.data, array.size) if array.size else b""  # noqa
    entry = GlobalEntry(method.v_ptr, view(info.doc), view(info.metadata), info.flags)
    GLOBALS.set(view(info.name), entry, bool(allow_override), detailed_message=True)
