"""What structural visiting and mutation share: traversal objects, callback entries, errors.

Its twin in C: ``tvm_ffi_fast/src/structural_traversal.c``.

A traversal in progress is an object: ``ffi.StructuralVisitor`` (visits) or
``ffi.StructuralMutator`` (mutations). Its layout is upstream's, since C++
hooks read it inline: the header, a pointer to the traversal's vtable (offset
24; left NULL here, see below) and the definition region in force
(``TVMFFIDefRegionKind`` as int32, offset 32). The rest of the traversal --
its callbacks, its variable remap -- lives in a Python :class:`Traversal`
found by the object's address, for as long as the object lives.

``with_region(kind, fn)`` runs ``fn`` with region ``kind`` in force, except
inside a Pattern region, which propagates (the rule of
:mod:`.structural_rules`).

A callback entry list arrives as an Array of Arrays ``[type_index, Function]``
(``[type_index, Function, bool]`` for ``ffi.StructuralMutate``). An entry
matches a value when its index is the value's, or -1 (any value), or 64
(``ffi.Object``: any object), or ``ffi.String``/``ffi.Bytes`` for the small
inline strings/bytes, or an ancestor of the value's object type.

An error that leaves a traversal through an object records it: the Error's
``extra_context`` becomes (or grows) an ``ffi.VisitErrorContext`` whose
``reverse_visit_pattern`` lists the objects it passed, innermost first.

C++ hooks registered as native function pointers (``kTVMFFIOpaquePtr``
entries of ``__s_visit__`` / ``__s_mutate__``) call back into the traversal
through its vtable, whose entries return a 16-byte ``TVMFFIAny``, which a ctypes
callback cannot. So a visitor made here carries a vtable of ``libtvm_ffi.so``'s
(``tvm_ffi_runtime_host_visitor_vtable``) whose entry calls back into Python with
an out pointer, and native ``__s_visit__`` hooks run (TVM's Relax passes register
them); a mutator likewise carries ``tvm_ffi_runtime_host_mutator_vtable`` (its four
entries: mutate, maybe_inplace_mutate, var_remap_get, var_remap_set), so native
``__s_mutate__`` hooks run too (TVM's ``LegalizeOps``). The other way round works:
a traversal made in C++ (TVM's passes make them) handed to our containers' hooks is
stepped through its own vtable (``foreign_step``), since ctypes can call a C
function returning a ``TVMFFIAny``.
"""

from __future__ import annotations

import contextlib
import ctypes
from typing import Callable, Dict, Iterator, List, Literal, Optional, Tuple

from tvm_ffi_common import abi

from . import anyvalue, errors, memory
from .reflection import VISIT_ERROR_CONTEXT, new_reflected
from .registry import TYPES
from .sequence_edits import list_append
from .sequences import new_list, seq_items
from .signatures import OBJECT_PARAMS, SCHEMAS
from .slots import ErrorAlreadyRaised, FFIError
from .structural_rules import REGION
from .type_index import TI

OBJECT_BEGIN = TI.kTVMFFIStaticObjectBegin
_VTABLE_AT, _REGION_AT = 24, 32
_TRAVERSAL_SIZE = 40
#: The path length from which, at each power of two, a descent looks for a cycle.
CYCLE_CHECK_FROM = 1 << 14
CYCLE_MESSAGE = "the value graph has a cycle (a value contains itself)"

#: Live traversals by the address of their object.
TRAVERSALS: Dict[int, "Traversal"] = {}

# The callback entry lists are Arrays checked here (their declared C++ types, for metadata).
_INT, _FUNCTION, _BOOL = {"type": "int"}, {"type": "ffi.Function"}, {"type": "bool"}
CALLBACKS = "Array<Tuple<int, ffi.Function>>"
MUTATE_CALLBACKS = "Array<Tuple<int, ffi.Function, bool>>"
for _spelling, _items in ((CALLBACKS, [_INT, _FUNCTION]), (MUTATE_CALLBACKS,
                                                           [_INT, _FUNCTION, _BOOL])):
    OBJECT_PARAMS[_spelling] = TI.kTVMFFIArray
    SCHEMAS[_spelling] = {"type": "ffi.Array", "args": [{"type": "Tuple", "args": _items}]}


def _forget(address: int) -> None:
    TRAVERSALS.pop(address, None)


class Traversal:
    """A visit or mutation in progress, and its object."""

    def __init__(self, type_index: int, vtable: int = 0):
        self.address = memory.new_object(type_index, _TRAVERSAL_SIZE, _forget)
        ctypes.c_void_p.from_address(self.address + _VTABLE_AT).value = vtable or None
        TRAVERSALS[self.address] = self
        self.path: List[int] = []  # the objects whose descents are in progress, root first

    @contextlib.contextmanager
    def on_path(self, value: abi.TVMFFIAny, who: str) -> Iterator[None]:
        """Keeps ``value``'s object on :attr:`path` while its descent runs.

        The path spells the way from the root, so an object met twice on it closes a cycle
        and the walk would never end. It is checked when the path's length reaches a power
        of two from :data:`CYCLE_CHECK_FROM` on (amortised O(1) a step; the fast runtime's
        rule): ``ValueError("<who>: the value graph has a cycle ...")`` is raised then,
        rather than the walk running until its frame limit.
        """
        if value.type_index < OBJECT_BEGIN:
            yield
            return
        path = self.path
        path.append(value.v_ptr)
        try:
            depth = len(path)
            if depth >= CYCLE_CHECK_FROM and depth & (depth - 1) == 0 and \
                    len(set(path)) < depth:
                raise FFIError("ValueError", f"{who}: {CYCLE_MESSAGE}")
            yield
        finally:
            path.pop()

    @property
    def region(self) -> int:
        return ctypes.c_int32.from_address(self.address + _REGION_AT).value

    @region.setter
    def region(self, kind: int) -> None:
        ctypes.c_int32.from_address(self.address + _REGION_AT).value = kind

    def view(self) -> abi.TVMFFIAny:
        """The traversal object as a borrowed value."""
        value = abi.TVMFFIAny(type_index=memory.type_index_of(self.address))
        value.v_ptr = self.address
        return value

    def with_region(self, kind: int, fn: Callable[[], object]) -> object:
        """``fn()`` with region ``kind`` in force (a Pattern region stays Pattern)."""
        if self.region == REGION.kTVMFFIDefRegionKindPattern:
            return fn()
        saved, self.region = self.region, kind
        try:
            return fn()
        finally:
            self.region = saved

    def release(self) -> None:
        """Drops the reference the traversal's creator holds."""
        memory.dec_ref(self.address)


#: A C++ traversal's step: ``TVMFFIAny fn(traversal, AnyView value)``, the first slot of the
#: vtable a traversal made in C++ (a visitor of TVM's, say) points to at offset 24.
_FOREIGN_STEP = ctypes.CFUNCTYPE(abi.TVMFFIAny, ctypes.c_void_p, abi.TVMFFIAny)


def foreign_step(address: int, slot: int = 0) -> Optional[Callable[[abi.TVMFFIAny],
                                                                abi.TVMFFIAny]]:
    """For a traversal object made in C++ (not here, with a vtable), its vtable entry
    ``slot`` (a visitor's visit; a mutator's mutate, then maybe_inplace_mutate) as a
    callable returning the raw outcome; None for a traversal made here."""
    vtable = ctypes.c_void_p.from_address(address + _VTABLE_AT).value
    if address in TRAVERSALS or not vtable:
        return None
    step = _FOREIGN_STEP(ctypes.c_void_p.from_address(vtable + slot * ctypes.sizeof(
        ctypes.c_void_p)).value)
    return lambda value: step(address, value)


#: A native hook (``__s_visit__``, ``__s_mutate__``): ``TVMFFIAny hook(traversal, AnyView)``.
_NATIVE_HOOK = _FOREIGN_STEP


def run_native_hook(hook: int, traversal: int, value: abi.TVMFFIAny) -> abi.TVMFFIAny:
    """Calls the native hook at ``hook`` on ``value``: its owned outcome, its Error raised."""
    return foreign_outcome(_NATIVE_HOOK(hook)(traversal, value))


def answer_vtable_call(out, step: Callable[[], abi.TVMFFIAny]) -> None:
    """Writes ``step()``'s owned outcome to ``out`` (a ``POINTER(TVMFFIAny)``) for an entry of
    our traversals' vtables; an error is written as the Error, never raised into C."""
    try:
        anyvalue.copy_any(step(), out.contents)
    except BaseException as error:  # noqa: BLE001 - every error must cross as an Error
        as_raised(error)
        out.contents.type_index = TI.kTVMFFIError
        out.contents.v_ptr = errors.take_raised()


def foreign_outcome(out: abi.TVMFFIAny) -> abi.TVMFFIAny:
    """A C++ step's outcome, its Error raised (owned) instead of returned."""
    if out.type_index == TI.kTVMFFIError:
        errors.set_raised_owned(out.v_ptr)
        raise ErrorAlreadyRaised()
    return out


def traversal_of(address: int, what: str) -> Traversal:
    """The traversal behind a visitor or mutator object made here."""
    traversal = TRAVERSALS.get(address)
    if traversal is None:
        raise FFIError("RuntimeError", f"this {what} was not made by this runtime; a traversal "
                                       "made in C++ is driven through its own vtable")
    return traversal


def type_matches(actual: int, target: int) -> bool:
    """Whether a value of type index ``actual`` matches a callback for ``target``."""
    if actual == target or target == TI.kTVMFFIAny:
        return True
    if target == TI.kTVMFFIStr:
        return actual == TI.kTVMFFISmallStr
    if target == TI.kTVMFFIBytes:
        return actual == TI.kTVMFFISmallBytes
    if target == TI.kTVMFFIObject:
        return actual >= OBJECT_BEGIN
    if actual < OBJECT_BEGIN or target < OBJECT_BEGIN or actual < target:
        return False
    return TYPES.is_instance(actual, target)


def callback_entries(array: int, width: int) -> List[Tuple]:
    """The entries of a callback list: ``(type_index, function[, flag])`` tuples."""
    entries = []
    for i, item in enumerate(seq_items(array)):
        parts = seq_items(item.v_ptr) if item.type_index == TI.kTVMFFIArray else []
        kinds = [TI.kTVMFFIInt, TI.kTVMFFIFunction, TI.kTVMFFIBool][:width]
        if len(parts) != width or any(
                part.type_index != kind and not (kind != TI.kTVMFFIFunction and part.type_index in
                                                 (TI.kTVMFFIInt, TI.kTVMFFIBool))
                for part, kind in zip(parts, kinds)):
            raise FFIError("TypeError", f"callback entry {i} must be a tuple of "
                                        f"{'(type_index, callback, bool)' if width == 3 else '(type_index, callback)'}")
        entries.append(tuple(part.v_ptr if kind == TI.kTVMFFIFunction else part.v_int64
                             for part, kind in zip(parts, kinds)))
    return entries


def find_entry(entries: List[Tuple], type_index: int) -> Optional[Tuple]:
    """The first entry matching a value of ``type_index``."""
    for entry in entries:
        if type_matches(type_index, entry[0]):
            return entry
    return None


# ------------------------------------------------------------ errors


def as_raised(error: BaseException) -> None:
    """Makes sure the error being handled sits in the raised slot (as an Error object)."""
    if isinstance(error, ErrorAlreadyRaised):
        return
    if isinstance(error, FFIError):
        errors.raise_error(error.kind, error.message)
    else:
        errors.raise_error(type(error).__name__, str(error))


def record_visit(node: abi.TVMFFIAny) -> None:
    """Adds ``node`` (an object) to the raised Error's ``ffi.VisitErrorContext``."""
    if node.type_index < OBJECT_BEGIN:
        return
    raised = errors.take_raised()
    if raised is None:
        return
    cell = abi.TVMFFIErrorCell.from_address(raised + memory.HEADER_SIZE)
    context = cell.extra_context
    if context and memory.type_index_of(context) == VISIT_ERROR_CONTEXT:
        pattern = ctypes.c_void_p.from_address(context + 24).value
        list_append(pattern, node)
    else:
        fresh = new_reflected(VISIT_ERROR_CONTEXT)
        pattern = new_list(0)
        list_append(pattern, node)
        ctypes.c_void_p.from_address(fresh + 24).value = pattern
        ctypes.c_void_p.from_address(fresh + 32).value = context or None  # moves the old one
        cell.extra_context = fresh
    errors.set_raised_owned(raised)


class passing:
    """``with passing(node):`` records ``node`` in the context of any error leaving the block."""

    def __init__(self, node: abi.TVMFFIAny):
        self.node = node

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, error, traceback) -> Literal[False]:
        if error is None or not isinstance(error, Exception):
            return False
        as_raised(error)
        record_visit(self.node)
        raise ErrorAlreadyRaised() from None


def owned_copy(value: abi.TVMFFIAny) -> abi.TVMFFIAny:
    copied = abi.TVMFFIAny()
    anyvalue.copy_any(value, copied)
    anyvalue.inc_ref_any(copied)
    return copied

