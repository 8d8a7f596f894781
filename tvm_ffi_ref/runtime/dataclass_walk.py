"""The object-graph walk that repr, hash and comparison share.

Each of the three operations visits a value depth first (the rules are in
:mod:`.dataclass_ops`). What they have in common is here: :func:`run_frames`,
which runs the walk's frames (generators) on an explicit stack rather than by
Python recursion; :class:`Children`, what the frame of a container or an
object visits; and the hook columns, with how a type's hook is called with a
``fn_*`` callback. Kept apart so that each operation's module holds only that
operation's rules.
"""

from __future__ import annotations

import ctypes
from typing import Any, Callable, Generator, List, Optional, Sequence

from tvm_ffi_common import abi

from . import anyvalue, errors, functions, memory
from .any_hash import custom_entry
from .maps import map_items
from .registry import TYPES
from .sequences import seq_items
from .slots import FFIError
from .type_index import TI

#: The hook columns of the walk (:mod:`.dataclass_ops` creates them).
REPR_ATTR = b"__ffi_repr__"
HASH_ATTR = b"__ffi_hash__"
EQ_ATTR = b"__ffi_eq__"
COMPARE_ATTR = b"__ffi_compare__"

#: Frames allowed on the stack at once (upstream's ``kMaxTraversalStackDepth``).
MAX_STACK_DEPTH = 1 << 20

#: Type indices, by the kind the operations treat alike.
SEQUENCES = (TI.kTVMFFIArray, TI.kTVMFFIList)
MAPS = (TI.kTVMFFIMap, TI.kTVMFFIDict)
CONTAINERS = SEQUENCES + MAPS
STRS = (TI.kTVMFFIStr, TI.kTVMFFISmallStr)
BYTES = (TI.kTVMFFIBytes, TI.kTVMFFISmallBytes)
INTS = (TI.kTVMFFIInt, TI.kTVMFFIBigInt)


# ----------------------------------------------------------------- the walk

#: A frame: a generator that yields child frames and returns its result.
Frame = Generator["Frame", object, Any]  # Any: a frame with no result may fall off its end


def run_frames(first: Frame, limit_message: str, unwind: bool = False) -> object:
    """Runs ``first`` to completion; a frame yields a child frame to get its result.

    This is a recursive walk without Python recursion: the stack holds the
    suspended frames. If a frame raises, the frames below it are closed (their
    ``finally`` blocks release what they hold) and the error propagates; with
    ``unwind`` the error is thrown into each frame below in turn instead, as a
    recursive call would raise it in its caller (so a frame's ``with`` blocks
    see it: the structural visits record the path an error passed through).
    """
    stack: List[Frame] = [first]
    value: object = None
    error: Optional[Exception] = None
    try:
        while stack:
            try:
                if error is None:
                    child = stack[-1].send(value)
                else:
                    thrown, error = error, None
                    child = stack[-1].throw(thrown)
            except StopIteration as done:
                stack.pop()
                value = done.value
                continue
            except Exception as raised:
                if not unwind or len(stack) == 1:
                    raise
                stack.pop()
                error = raised
                continue
            if len(stack) >= MAX_STACK_DEPTH:
                raise FFIError("ValueError", f"{limit_message}: maximum stack depth "
                                             f"({MAX_STACK_DEPTH}) exceeded")
            stack.append(child)
            value = None
    except BaseException:
        for frame in reversed(stack):
            frame.close()
        raise
    return value


# ------------------------------------------------------- values and objects


def object_view(address: int) -> abi.TVMFFIAny:
    """A borrowed value holding the object at ``address`` (how C++ passes ``const Object*``)."""
    value = abi.TVMFFIAny()
    value.type_index = memory.type_index_of(address)
    value.v_ptr = address
    return value


def _owned(view: abi.TVMFFIAny) -> abi.TVMFFIAny:
    """An owned copy of a value (a raw C string becomes a str, as C++'s ``Any(view)``)."""
    owned = abi.TVMFFIAny()
    anyvalue.view_to_owned(view, owned)
    return owned


def release_all(values: Sequence[abi.TVMFFIAny]) -> None:
    for value in values:
        anyvalue.dec_ref_any(value)


def _reraise_raised() -> None:
    """Turns the error a failed C call left in the raised slot into an :class:`FFIError`."""
    raised = errors.take_raised()
    if not raised:
        raise FFIError("RuntimeError", "a call failed without raising an error")
    kind, message, _ = errors.error_parts(raised)
    memory.dec_ref(raised)
    raise FFIError(kind, message)


def reflected_fields(type_index: int, skip: int) -> List[abi.TVMFFIFieldInfo]:
    """The fields of a type, ancestors' first (from depth 1), without those flagged ``skip``."""
    info = TYPES.entry(type_index).info
    records = [info.type_ancestors[d].contents for d in range(1, info.type_depth)] + [info]
    return [record.fields[i] for record in records for i in range(record.num_fields)
            if not record.fields[i].flags & skip]


def read_field(address: int, field: abi.TVMFFIFieldInfo) -> abi.TVMFFIAny:
    """The value of one reflected field of the object at ``address``, owned."""
    result = abi.TVMFFIAny()
    if field.getter(address + field.offset, ctypes.byref(result)) != 0:
        _reraise_raised()
    return result


class Children:
    """What a frame visits: owned copies of the children, released when the frame ends.

    ``kind`` is ``"sequence"``, ``"map"`` (keys and values interleaved) or
    ``"object"`` (with ``fields``, the field records in the same order).
    """

    def __init__(self, value: abi.TVMFFIAny, skip: int):
        index = value.type_index
        self.fields: List[abi.TVMFFIFieldInfo] = []
        self.values: List[abi.TVMFFIAny] = []
        if index in SEQUENCES:
            self.kind = "sequence"
            borrowed = seq_items(value.v_ptr)
        elif index in MAPS:
            self.kind = "map"
            borrowed = [v for pair in map_items(value.v_ptr) for v in pair]
        else:
            self.kind = "object"
            self.fields = reflected_fields(index, skip)
            borrowed = []
            try:
                for field in self.fields:
                    self.values.append(read_field(value.v_ptr, field))
            except BaseException:
                self.release()
                raise
        for item in borrowed:
            anyvalue.inc_ref_any(item)
            self.values.append(item)

    @property
    def size(self) -> int:
        """Elements, entries, or fields visited."""
        return len(self.values) // 2 if self.kind == "map" else len(self.values)

    def release(self) -> None:
        release_all(self.values)
        self.values = []

    def results(self, walker) -> Frame:
        """Each child's result in order, then releases the children (``yield from`` it).

        A child ``walker.immediate`` answers is answered on the spot; any other
        gets ``walker.frame``, yielded to :func:`run_frames`.
        """
        results: List[object] = []
        try:
            for child in self.values:
                result = walker.immediate(child)
                if result is None:
                    result = yield walker.frame(child)
                results.append(result)
        finally:
            self.release()
        return results


#: The C++ type upstream converts each hook column's entry to (named when it is no Function).
HOOK_SIGNATURES = {
    REPR_ATTR: "(0: ffi.Object, 1: (0: AnyView) -> str) -> str",
    HASH_ATTR: "(0: ffi.Object, 1: (0: AnyView) -> int) -> int",
    EQ_ATTR: "(0: ffi.Object, 1: ffi.Object, 2: (0: AnyView, 1: AnyView) -> bool) -> bool",
    COMPARE_ATTR: "(0: ffi.Object, 1: ffi.Object, 2: (0: AnyView, 1: AnyView) -> int) -> int",
}

#: The typed ``fn_*`` callbacks as upstream spells them in an argument-count error.
CALLBACK_SIGNATURES = {
    REPR_ATTR: "(0: AnyView) -> str",
    HASH_ATTR: "(0: AnyView) -> int",
    EQ_ATTR: "(0: AnyView, 1: AnyView) -> bool",
    COMPARE_ATTR: "(0: AnyView, 1: AnyView) -> int",
}


def find_hook(attr: bytes, type_index: int) -> Optional[int]:
    """The Function registered for ``type_index`` in column ``attr``, or None."""
    entry = custom_entry(attr, type_index)
    if entry is None:
        return None
    if entry.type_index != TI.kTVMFFIFunction:
        raise FFIError("TypeError", f"Cannot treat type `{TYPES.type_key(entry.type_index)}` "
                                    f"as type `{HOOK_SIGNATURES[attr]}`")
    return entry.v_ptr


def call_hook(func: int, args: Sequence[abi.TVMFFIAny]) -> abi.TVMFFIAny:
    """Calls a Function with borrowed ``args``; returns its owned result or raises its error."""
    packed = (abi.TVMFFIAny * max(1, len(args)))(*args)
    result = abi.TVMFFIAny()
    if functions.call_function(func, packed, len(args), ctypes.byref(result)) != 0:
        _reraise_raised()
    return result


def hook_int(result: abi.TVMFFIAny, target: str) -> int:
    """The int (or bool) a hook returned, converted to ``target`` ("int" or "bool") as
    upstream's typed call converts it; its result is consumed."""
    if result.type_index in (TI.kTVMFFIInt, TI.kTVMFFIBool):
        return result.v_int64
    anyvalue.dec_ref_any(result)
    raise FFIError("TypeError", f"Cannot convert from type `{TYPES.type_key(result.type_index)}` "
                                f"to `{target}`")


def make_callback(impl: Callable[..., object], store, attr: bytes) -> int:
    """The ``fn_*`` handed to the hook of column ``attr``: a typed Function of one or two
    values that runs ``impl`` on owned copies of them (as C++ turns each AnyView into
    an Any) and writes ``impl``'s result with ``store(result, value)``. Returns an owned
    address."""
    signature = CALLBACK_SIGNATURES[attr]
    arity = signature.count("AnyView")

    def callback(args, result):
        functions.expect_args(signature, args, arity)
        values = [_owned(arg) for arg in args]
        try:
            store(result, impl(*values))
        finally:
            release_all(values)

    return functions.new_python_function(callback)

