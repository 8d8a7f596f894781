"""Calling TVM FFI functions from Python, and Python functions from anywhere: the cffi core.

The interface of every core's ``function`` module (``tvm_ffi_ref/function.py``
states its meaning). A call takes a *frame* from a pool (a cffi
``TVMFFIAny`` array for the arguments, one for the result, and the call's
scope), so the hot path allocates no C memory; frames are never shared
between two calls in flight, whatever the threads. The function's
``safe_call`` is called directly through its cffi pointer (cffi releases the
GIL around it), then the result is checked against the call rules and
decoded, or the raised error becomes the Python exception of its kind.

A Python callable becomes a Function whose ``safe_call`` is the ``extern
"Python"`` function :func:`tvm_ffi_cffi_safe_call`, its ``self`` a
number that keys the callable in :data:`_callbacks`, kept there until the
Function's deleter, the ``extern "Python"`` :func:`tvm_ffi_cffi_release_callback`,
drops it. A callable passed as an argument borrows such a Function from a pool
for the call (:func:`lend_callback`); the call's end gives it back unless C
kept it.
"""

from __future__ import annotations

import ctypes
import itertools
import sys
from typing import Any, Callable, Dict, List, Optional, Tuple

from tvm_ffi_common import abi
from tvm_ffi_common.gil import release_gil_by_default

from . import convert as _convert_module, dlpack_exchange, error_crossing, releases, rules, upcalls
from ._core import ffi, lib
from .convert import (
    CallScope,
    address_of,
    decode_borrowed,
    decode_owned,
    encode,
    encode_owned,
    give_back,
    result_is_sound,
    result_violation,
    take_out,
)
from .error import Error, exception_to_error_raised, raise_taken_error
from .extern_c import from_extern_c, from_mlir_packed_safe_call
from .object import CObject, decref, register_class, wrap_owned

TI = abi.TVMFFITypeIndex
_NULL = ffi.NULL
_cast = ffi.cast
_FRAME_SLOTS = 16  # a frame's first argument array; it grows for longer calls
_KEPT_SLOTS = 4096  # up to this many

__all__ = ["Function", "convert_to_function", "finish_call", "get_global_func",
           "raise_last_error", "take_last_error", "wrap_callable"]


class _Frame(CallScope):
    """The C memory and scope of one call in flight (taken from :data:`_FRAMES`)."""

    __slots__ = ("args", "capacity", "result")

    def __init__(self) -> None:
        super().__init__()
        self.args = ffi.new("TVMFFIAny[]", _FRAME_SLOTS)
        self.capacity = _FRAME_SLOTS
        self.result = ffi.new("TVMFFIAny*")

    def args_for(self, num_args: int) -> Any:
        """The frame's argument array, grown to hold ``num_args`` (a cffi array made per call
        costs PyPy more than the call: a list of 10 converted to an Array took twice as long)."""
        if num_args > _KEPT_SLOTS:  # a huge call: its array is not kept in the pool
            return ffi.new("TVMFFIAny[]", num_args)
        if num_args > self.capacity:
            self.capacity = min(max(num_args, 2 * self.capacity), _KEPT_SLOTS)
            self.args = ffi.new("TVMFFIAny[]", self.capacity)
        return self.args

    def reset(self) -> None:
        """Ready for the next call: temporaries dropped, no framework context."""
        if self.owned or self.keep or self.after or self.lent:
            self.close()
        self.may_hold = False
        self.exchange_api = 0
        self.device_type, self.device_id, self.stream = -1, 0, 0


#: Frames not in use (``list.pop``/``append`` are atomic: each call owns the frame it took).
_FRAMES: List[_Frame] = []


# ------------------------------------------------------------------- errors


def take_last_error() -> Optional[Error]:
    """Moves this thread's raised error out of the runtime."""
    out = take_out()
    lib.TVMFFIErrorMoveFromRaised(out)
    handle = give_back(out)
    return wrap_owned(handle, int(TI.kTVMFFIError)) if handle else None


def raise_last_error() -> None:
    """Raises the Python exception for this thread's raised error."""
    raise_taken_error(take_last_error())


def _finish(status: int, result: Any, exchange_api: int, raw: bool = False) -> Any:
    if status == 0:
        if not result_is_sound(result):
            raise result_violation(result)
        if error_crossing.threads_remembering:  # an Error C caught and dropped (its module)
            error_crossing.settle()
        return result.v_int64 if raw else decode_owned(result, exchange_api)
    if status == -1:
        raise_last_error()
    if status == -2:
        raise RuntimeError("a callee reported an error already set in Python")
    raise rules.status_violation(status)


def finish_call(status: int, result: abi.TVMFFIAny, exchange_api: int = 0) -> Any:
    """The Python value of a completed call, or the exception it raised (``exchange_api``: the
    DLPack exchange table the call's arguments brought, 0 for none)."""
    return _finish(status, _cast("TVMFFIAny*", ctypes.addressof(result)), exchange_api)


# ------------------------------------------------------------------- calls


def call_packed(safe_call: Any, handle: Any, args: Any, context: Optional[CallScope] = None,
                raw: bool = False) -> Any:
    """Calls a function's ``safe_call`` (a cffi pointer) on ``handle`` with Python ``args``.

    ``context``: a scope that takes up the framework context of the arguments (a nested
    conversion's); ``raw``: the result is an object whose owned handle is returned."""
    if releases.pending:  # references of collected wrappers (see releases.py)
        releases.drain()
    frame = _FRAMES.pop() if _FRAMES else _Frame()
    try:
        num_args = len(args)
        packed = frame.args if num_args <= frame.capacity else frame.args_for(num_args)
        if num_args <= 4:  # no loop entered: see _encode_all
            if num_args:
                encode(packed + 0, args[0], frame)
                if num_args > 1:
                    encode(packed + 1, args[1], frame)
                    if num_args > 2:
                        encode(packed + 2, args[2], frame)
                        if num_args > 3:
                            encode(packed + 3, args[3], frame)
        else:
            _encode_all(packed, args, num_args, frame)
        result = frame.result
        result.type_index = 0
        result.v_int64 = 0
        held = _hold_containers(packed, num_args) if frame.may_hold else None
        try:
            if frame.device_type == -1 and not frame.exchange_api:
                status = safe_call(handle, packed, num_args, result)
            else:  # the caller's framework: its stream and allocator serve the call
                environment = dlpack_exchange.CallEnvironment(frame)
                try:
                    environment.enter()
                    status = safe_call(handle, packed, num_args, result)
                finally:
                    environment.leave()
        except SystemError as error:
            raise _signal_handler_exception(error) from None
        finally:
            if held:
                for container in reversed(held):
                    lib.tvm_ffi_runtime_object_unlock(container)
        exchange_api = frame.exchange_api
        if context is not None:
            context.inherit(frame)
        frame.reset()
        return _finish(status, result, exchange_api, raw)
    finally:
        frame.reset()
        _FRAMES.append(frame)


def _signal_handler_exception(error: SystemError) -> BaseException:
    """The exception a call answered with ``error`` stands for.

    A Python signal handler that ``TVMFFIEnvCheckSignals`` ran inside the kernel (through
    ``PyErr_CheckSignals``) and that raised leaves its exception set in the interpreter;
    CPython then turns cffi's returned status into a ``SystemError`` caused by it. The call's
    answer is the handler's exception, as from the other front ends: the runtime's raised
    error (the kernel's ``EnvErrorAlreadySet``) is taken out and dropped with it.
    """
    cause = error.__cause__
    if cause is None or "returned a result with an exception set" not in str(error):
        return error
    take_last_error()
    return cause


def _encode_all(packed: Any, args: Any, num_args: int, frame: _Frame) -> None:
    """Encodes the arguments of a longer call. Shorter ones are encoded without a loop:
    PyPy's JIT compiles every loop apart, and a call that entered one (its back edge taken
    once per argument) cost two to three times as much: three ints 97 against 35 ns."""
    for i in range(num_args):
        encode(packed + i, args[i], frame)


_LOCKED = abi.LOCKED_CONTAINER_TYPES


def _hold_containers(packed: Any, num_args: int) -> Optional[List[Any]]:
    """Holds the List and Dict arguments of a call for the whole call, in address order (a
    kernel may mutate or iterate them in place: held, that is one operation among the threads
    sharing them, as each runtime container function is); None when there are none."""
    found = None
    for i in range(num_args):
        index = packed[i].type_index
        if index in _LOCKED:
            if found is None:
                found = set()
            found.add(address_of(packed[i].v_ptr))
    if found is None:
        return None
    held: List[Any] = []
    for address in sorted(found):
        pointer = ffi.cast("void*", address)
        if lib.tvm_ffi_runtime_object_lock(pointer) != 0:
            for taken in reversed(held):
                lib.tvm_ffi_runtime_object_unlock(taken)
            raise MemoryError("out of memory holding a call's containers")
        held.append(pointer)
    return held


class Function(CObject):
    """A TVM FFI function; calling it calls through the ABI."""

    # attributes may be set, as upstream; release_gil is kept in __dict__ too, so a Function
    # whose switch was set is one with an attribute set (get_global_func's cache reads that)
    __slots__ = ("_safe_call", "_self", "__dict__")

    @property
    def release_gil(self) -> bool:
        """Upstream's per-function switch (new Functions follow
        ``TVM_FFI_RELEASE_GIL_BY_DEFAULT``). Recorded only: cffi releases the GIL around
        every call of a C function pointer, so this core's calls always release it."""
        try:
            return self._release_gil
        except AttributeError:
            return release_gil_by_default()

    @release_gil.setter
    def release_gil(self, value: bool) -> None:
        self._release_gil = bool(value)

    @classmethod
    def _adopt(cls, handle: int) -> "Function":
        func = cls.__new__(cls)
        func._handle = handle
        func._bind()
        return func

    def _bind(self) -> None:
        handle = self._handle
        if handle:
            cell = _cast("TVMFFIFunctionCell*", handle + 24)
            self._safe_call, self._self = cell.safe_call, _cast("void*", handle)
        else:
            self._safe_call = self._self = None

    def __move_handle_from__(self, other: CObject) -> None:
        # a subclass instance made empty (``MyFunction(...)``) becomes callable here
        super().__move_handle_from__(other)
        self._bind()

    def __call__(self, *args: Any) -> Any:
        try:
            safe_call = self._safe_call
        except AttributeError:
            safe_call = None
        if not safe_call:
            raise AttributeError("cannot call an empty Function: it holds no function object")
        return call_packed(safe_call, self._self, args)


Function.__from_extern_c__ = staticmethod(from_extern_c)
Function.__from_mlir_packed_safe_call__ = staticmethod(from_mlir_packed_safe_call)
register_class(TI.kTVMFFIFunction, Function)


# ------------------------------------------------------ Python callables in C


#: key -> [callable, exchange table] of every Function made from a Python callable that C
#: still holds (or that waits to be lent, its callable None). The key is the Function's
#: ``self`` pointer: a plain number, not a cffi handle (``ffi.new_handle`` and
#: ``ffi.from_handle`` cost more than a dict on PyPy).
_callbacks: Dict[int, List[Any]] = {}
_next_key = itertools.count(1).__next__  # atomic: two threads never get the same key


def _unreported_callback_failure(kind: type, exception: BaseException, traceback: Any) -> int:
    """What cffi returns when an exception escapes :func:`tvm_ffi_cffi_safe_call`.

    At the recursion limit (nothing it calls has room): 0 with no result written, which the
    checked Function turns into a ``RecursionError``; that path calls nothing, so it has room.
    Anything else escaped before its ``try``: a signal handler's exception, raised at its
    first bytecode, reported as the callback's error (as when the callable raises it).
    """
    if kind is RecursionError:
        return 0
    try:
        exception_to_error_raised(exception)
    except BaseException:  # noqa: BLE001 - no room after all: the checked Function's error
        return 0
    return -1


@ffi.def_extern(onerror=_unreported_callback_failure)
def tvm_ffi_cffi_safe_call(handle, args, num_args, result):
    """The ``safe_call`` of every Function made from a Python callable."""
    try:
        func, exchange_api = _callbacks[address_of(handle)]
        if num_args == 1:  # the common case, without a list made
            value = func(decode_borrowed(args, exchange_api, True))
        else:
            value = func(*[decode_borrowed(args + i, exchange_api, True)
                           for i in range(num_args)])
        encode_owned(value, result)
        return 0
    except BaseException as exception:  # noqa: BLE001 - every error must cross as an Error
        exception_to_error_raised(exception)
        return -1


@ffi.def_extern()
def tvm_ffi_cffi_release_callback(handle):
    """The deleter of those Functions: C no longer holds the callable."""
    _callbacks.pop(address_of(handle), None)


def convert_to_function(func: Callable) -> Function:
    """A Function object that calls the Python callable ``func``."""
    if isinstance(func, Function):
        return func
    if not callable(func):
        raise TypeError(f"expected a callable, got {type(func).__name__}")
    return wrap_callable(func)


def _new_callback(entry: List[Any]) -> Tuple[int, Any, List[Any]]:
    """A new Function calling ``entry[0]``: its owned handle, its header (a cffi pointer) and
    ``entry``, which keys it in :data:`_callbacks`."""
    key = _next_key()
    _callbacks[key] = entry
    out = take_out()
    # checked: a callback that cannot even start (at the recursion limit, cffi returns 0 with
    # no result written) fails the call with a RecursionError, as one with little C stack left
    status = lib.tvm_ffi_runtime_checked_callback_function(_cast("void*", key), _SAFE_CALL,
                                                           _RELEASE_CALLBACK, out)
    handle = give_back(out)
    if status:
        _callbacks.pop(key, None)
        raise_last_error()
    return handle, _cast("TVMFFIObject*", handle), entry


_SAFE_CALL, _RELEASE_CALLBACK = lib.tvm_ffi_cffi_safe_call, lib.tvm_ffi_cffi_release_callback

#: (handle, header, entry) of callback Functions no one holds, ready to be lent again. Made
#: and dropped per call, a callable argument cost PyPy more than the callback: its deleter
#: is a C-to-Python crossing (270 ns), its creation a C allocation. ``list.pop``/``append``
#: are atomic, so each is lent to one call at a time, whatever the threads.
_IDLE_CALLBACKS: List[Tuple[int, Any, List[Any]]] = []
_IDLE_KEPT = 32
#: ``combined_ref_count`` of an object with one strong reference and no weak one.
_ONE_HOLDER = (1 << 32) | 1


def lend_callback(func: Callable, scope: CallScope) -> int:
    """The owned handle of a Function calling ``func`` (no wrapper made) for the call ``scope``
    serves, which gives it back when it ends (:func:`return_lent`)."""
    try:
        loan = _IDLE_CALLBACKS.pop()
    except IndexError:
        loan = _new_callback([func, 0])
    else:
        loan[2][0] = func
    scope.lent.append(loan)
    return loan[0]


def return_lent(lent: List[Tuple[int, Any, List[Any]]]) -> None:
    """Ends the loans of a call's scope: a Function C did not keep waits, its callable
    forgotten, to be lent again; one it kept (a registry, a closure) is merely released, as
    any argument is."""
    _return_loan(lent.pop())
    while lent:  # (the first without a loop: PyPy's JIT compiles each loop apart, and
        _return_loan(lent.pop())  # entering one costs more than the loan)


def _return_loan(loan: Tuple[int, Any, List[Any]]) -> None:
    if loan[1].combined_ref_count == _ONE_HOLDER and len(_IDLE_CALLBACKS) < _IDLE_KEPT:
        loan[2][0] = None
        _IDLE_CALLBACKS.append(loan)
    else:
        decref(loan[0])


def wrap_callable(func: Callable, exchange_api: int = 0) -> Function:
    """A new Function object whose call calls ``func``, even if ``func`` is a Function; with
    ``exchange_api`` (a DLPack exchange table's address), Tensor arguments reach ``func`` as
    that framework's tensors."""
    return wrap_owned(_new_callback([func, exchange_api])[0], int(TI.kTVMFFIFunction))


# ------------------------------------------------------------ global functions


def get_global_func(name: str, allow_missing: bool = False) -> Optional[Function]:
    """The global function ``name``; raises ``ValueError`` when absent unless ``allow_missing``."""
    if not isinstance(name, str):
        raise TypeError(f"get_global_func: name must be a str, got {type(name).__name__}")
    if releases.pending:
        releases.drain()
    data = name.encode("utf-8")
    out = take_out()
    status = lib.tvm_ffi_cffi_get_global(data, len(data), out)
    handle = give_back(out)
    if status:
        raise_last_error()
    if not handle:
        _LOOKED_UP.pop(name, None)
        if allow_missing:
            return None
        raise ValueError(f"Cannot find global function {name}")
    if releases.PROMPT:
        return wrap_owned(handle, int(TI.kTVMFFIFunction))
    # Where collection is not prompt (PyPy), a new wrapper per lookup costs its collector
    # more than the lookup (a finalizer's object is found dead only by a major collection):
    # the Function last made for a name is kept and handed back while the name still finds
    # that function and no attribute was set on it.
    func = _LOOKED_UP.get(name)
    if func is not None and func._handle == handle and not func.__dict__:
        decref(handle)
        return func
    func = _LOOKED_UP[name] = wrap_owned(handle, int(TI.kTVMFFIFunction))
    return func


#: name -> the Function :func:`get_global_func` last made for it, where collection is not
#: prompt (a lookup that finds the name missing forgets it).
_LOOKED_UP: Dict[str, Function] = {}

upcalls.install("function", Function=Function, get_global_func=get_global_func,
                raise_last_error=raise_last_error, take_last_error=take_last_error,
                convert_to_function=convert_to_function)
_convert_module._function = sys.modules[__name__]  # convert calls this module's functions
