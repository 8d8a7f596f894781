"""Structural visiting: ``ffi.StructuralWalk``, ``ffi.StructuralVisit`` and the visitor's methods.

Its twin in C: ``tvm_ffi_fast/src/structural_visit.c``.

A visit returns None when it completes, or the ``ffi.VisitInterrupt`` that
stopped it (``ffi.VisitInterrupt(value)`` makes one); an error stops it too.

**Default descent** of a value (``ffi.StructuralVisitorDefaultVisit``): the
type's ``__s_visit__`` hook (a Function called ``(visitor, value)``, returning
None or an interrupt, or a native function pointer of the same shape, which
descends through the visitor's vtable: see :mod:`.structural_traversal`); without one, nothing for an inline value, and for an
object each reflected field not ``SEqHashIgnore`` in order, visited in its
definition region (``SEqHashDefSimple`` / ``SEqHashDefPattern`` fields). A
free variable met in a Simple region has its fields visited in region None.
Array and List register hooks visiting their elements, Map and Dict their
values (keys are not visited).

``ffi.StructuralWalk(root, callbacks, callbacks_with_kind, order)`` visits
every occurrence of every value as a tree (None values excepted). At each
value, the first matching entry of ``callbacks`` -- else of
``callbacks_with_kind`` -- is called with ``(value)`` -- ``(value, region)``
for the second list -- before (order 0) or after (order 1) the value's
default descent. It returns None/``WalkResult`` 0 (go on), 1 (pre-order:
skip the children) or an interrupt.

``ffi.StructuralVisit(root, callbacks)``: at each value the first matching
callback ``(value, visitor)`` owns the descent (it may call
``visitor.visit(child)`` or ``visitor.default_visit(value)``); a value with no
matching callback gets its default descent.
"""

from __future__ import annotations

import ctypes
from typing import Callable, List, Optional, Tuple

from tvm_ffi_common import abi
from tvm_ffi_common.capi import LIB

from . import anyvalue, interrupts, memory, strings
from .any_hash import custom_entry
from .dataclass_walk import Frame, read_field, reflected_fields, run_frames
from .functions import set_object
from .maps import map_items
from .reflection import STRUCTURAL_VISITOR, new_reflected
from .reflection_make_object import _call as call_owned  # the runtime's "call, owned result" helper
from .registry import TYPES
from .sequences import seq_items
from .signatures import type_key_of, typed_function, typed_global
from .slots import FFIError
from .structural_rules import (
    DEF_PATTERN,
    DEF_SIMPLE,
    IGNORE,
    KIND,
    REGION,
    deep_recursion,
)
from .structural_traversal import (
    CALLBACKS,
    OBJECT_BEGIN,
    TRAVERSALS,
    Traversal,
    answer_vtable_call,
    callback_entries,
    find_entry,
    foreign_outcome,
    foreign_step,
    owned_copy,
    passing,
    run_native_hook,
    traversal_of,
)
from .type_index import TI

VISIT_ATTR = b"__s_visit__"
ADVANCE, SKIP = 0, 1

#: A visit's outcome: None (go on) or an owned VisitInterrupt address.
Outcome = Optional[int]


def _interrupt_of(result: abi.TVMFFIAny, expected: str) -> Outcome:
    """A callback's Optional<VisitInterrupt> result (consumed)."""
    if result.type_index == TI.kTVMFFINone:
        return None
    if result.type_index == TI.kTVMFFIVisitInterrupt:
        return result.v_ptr
    anyvalue.dec_ref_any(result)
    raise FFIError("TypeError", f"Cannot convert from type `{type_key_of(result)}` to "
                                f"`{expected}`")


def _as_any(outcome: Outcome) -> abi.TVMFFIAny:
    if outcome is None:
        return abi.TVMFFIAny()
    return abi.TVMFFIAny(type_index=TI.kTVMFFIVisitInterrupt, v_ptr=outcome)


@ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.POINTER(abi.TVMFFIAny),
                  ctypes.POINTER(abi.TVMFFIAny))
@interrupts.callback_entry
def _vtable_visit(address, value, out):
    # A C++ hook's ``visitor->Visit(child)``, through libtvm_ffi.so's vtable.
    answer_vtable_call(out, lambda: _as_any(TRAVERSALS[address].visit(value.contents)))


#: The vtable our visitors carry at offset 24 (``host_callbacks.c``).
_VTABLE = LIB.tvm_ffi_runtime_host_visitor_vtable(ctypes.cast(_vtable_visit, ctypes.c_void_p))


class Visitor(Traversal):
    """A visit: :meth:`visit` is the engine, :meth:`default_visit` the descent.

    One call of either walks the whole graph below its value over ``run_frames``' work list
    (a frame per value; containers and reflected fields hand out children as frames), so
    depth costs neither Python's recursion limit nor the C stack. Only hooks that are not
    ours (a Function or C++ ``__s_visit__``, a ``StructuralVisit`` callback) call back into a
    nested engine, as they nest calls upstream.
    """

    def __init__(self):
        super().__init__(STRUCTURAL_VISITOR, vtable=_VTABLE)

    def visit(self, value: abi.TVMFFIAny) -> Outcome:
        return run_frames(self.visit_frame(value), "StructuralVisit", unwind=True)

    def default_visit(self, value: abi.TVMFFIAny) -> Outcome:
        """The value's ``__s_visit__`` hook, or its reflected fields (module docstring)."""
        return run_frames(self.descend(value), "StructuralVisit", unwind=True)

    def visit_frame(self, value: abi.TVMFFIAny) -> Frame:
        """The frame visiting ``value`` (the engine's rules; the subclass's)."""
        raise NotImplementedError

    def descend(self, value: abi.TVMFFIAny) -> Frame:
        """The frame of ``value``'s default descent: its children are yielded as frames."""
        with self.on_path(value, "StructuralVisit"):
            return (yield from self.descend_children(value))

    def descend_children(self, value: abi.TVMFFIAny) -> Frame:
        """:meth:`descend` once ``value`` is on the path: its hook, or its children."""
        hook = custom_entry(VISIT_ATTR, value.type_index)
        if hook is not None:
            if hook.type_index == TI.kTVMFFIFunction:
                items = _CONTAINER_HOOKS.get(hook.v_ptr)
                if items is not None:  # ours: the items as frames, without the round trip
                    for item in items(value.v_ptr):
                        outcome = yield self.visit_frame(item)
                        if outcome is not None:
                            return outcome
                    return None
                result = call_owned(hook.v_ptr, [self.view(), value])
                return _interrupt_of(result, "Optional<ffi.VisitInterrupt>")
            if hook.type_index == TI.kTVMFFIOpaquePtr:  # C++: descends through our vtable
                outcome = run_native_hook(hook.v_ptr, self.address, value)
                return _interrupt_of(outcome, "Optional<ffi.VisitInterrupt>")
            raise FFIError("TypeError",
                           "__s_visit__ must be an opaque function pointer or ffi.Function")
        if value.type_index < OBJECT_BEGIN:
            return None
        address = value.v_ptr
        type_index = memory.type_index_of(address)
        metadata = TYPES.entry(type_index).info.metadata
        saved = self.region
        if saved == REGION.kTVMFFIDefRegionKindSimple and metadata and \
                metadata.contents.structural_eq_hash_kind == KIND.kTVMFFISEqHashKindFreeVar:
            self.region = REGION.kTVMFFIDefRegionKindNone
        try:
            for field in reflected_fields(type_index, IGNORE):
                child = read_field(address, field)
                outer = self.region
                try:
                    if outer != REGION.kTVMFFIDefRegionKindPattern:
                        if field.flags & DEF_SIMPLE:
                            self.region = REGION.kTVMFFIDefRegionKindSimple
                        elif field.flags & DEF_PATTERN:
                            self.region = REGION.kTVMFFIDefRegionKindPattern
                    outcome = yield self.visit_frame(child)
                finally:
                    self.region = outer
                    anyvalue.dec_ref_any(child)
                if outcome is not None:
                    return outcome
            return None
        finally:
            self.region = saved


class WalkVisitor(Visitor):
    """``ffi.StructuralWalk``: callbacks before or after each value's default descent."""

    def __init__(self, callbacks, with_kind, order: int):
        super().__init__()
        self.callbacks = callback_entries(callbacks, 2)
        self.with_kind = callback_entries(with_kind, 2)
        self.pre_order = order == 0

    def call(self, value: abi.TVMFFIAny) -> Tuple[int, Outcome]:
        """The matching callback's ``WalkResult``: (ADVANCE or SKIP, None) or (_, interrupt)."""
        entry = find_entry(self.callbacks, value.type_index)
        args = [value]
        if entry is None:
            entry = find_entry(self.with_kind, value.type_index)
            if entry is None:
                return ADVANCE, None
            kind = abi.TVMFFIAny()
            strings.store_int(kind, self.region)
            args.append(kind)
        result = call_owned(entry[1], args)
        if result.type_index in (TI.kTVMFFIInt, TI.kTVMFFIBool):
            return (SKIP if result.v_int64 == SKIP else ADVANCE), None
        return ADVANCE, _interrupt_of(result, "WalkResult")

    def visit_frame(self, value: abi.TVMFFIAny) -> Frame:
        if value.type_index == TI.kTVMFFINone:
            return None
        with passing(value):
            if self.pre_order:
                control, outcome = self.call(value)
                if outcome is not None or control == SKIP:
                    return outcome
            outcome = yield from self.descend(value)
            if outcome is not None or self.pre_order:
                return outcome
            return self.call(value)[1]


class CallbackVisitor(Visitor):
    """``ffi.StructuralVisit``: a matched callback owns the descent into its value."""

    def __init__(self, callbacks):
        super().__init__()
        self.callbacks = callback_entries(callbacks, 2)

    def visit_frame(self, value: abi.TVMFFIAny) -> Frame:
        if value.type_index == TI.kTVMFFINone:
            return None
        with passing(value):
            entry = find_entry(self.callbacks, value.type_index)
            if entry is None:
                return (yield from self.descend(value))
            return _interrupt_of(call_owned(entry[1], [value, self.view()]),
                                 "Optional<ffi.VisitInterrupt>")


# ------------------------------------------------------------ container hooks


def _visit_items(visitor: Visitor, items: List[abi.TVMFFIAny]) -> Outcome:
    for item in items:
        outcome = visitor.visit(item)
        if outcome is not None:
            return outcome
    return None


def _foreign_visit_items(step: Callable, items: List[abi.TVMFFIAny]) -> Outcome:
    """Visits items with a C++ visitor's step: None to go on, an interrupt, or an error."""
    for item in items:
        out = foreign_outcome(step(item))
        if out.type_index != TI.kTVMFFINone:
            return out.v_ptr
    return None


#: Our containers' ``__s_visit__`` Functions, by address: the items each visits.
_CONTAINER_HOOKS = {}


def _register_container_hooks() -> None:
    TYPES.register_attr(TI.kTVMFFINone, VISIT_ATTR, abi.TVMFFIAny())
    for type_index, items in ((TI.kTVMFFIArray, seq_items), (TI.kTVMFFIList, seq_items),
                              (TI.kTVMFFIMap, lambda a: [v for _, v in map_items(a)]),
                              (TI.kTVMFFIDict, lambda a: [v for _, v in map_items(a)])):
        def hook(result, visitor, value, items=items):
            step = foreign_step(visitor)
            if step is not None:  # a visitor made in C++: each item through its vtable
                _store(result, _foreign_visit_items(step, items(value.v_ptr)))
                return
            _store(result, _visit_items(traversal_of(visitor, "visitor"), items(value.v_ptr)))

        function = typed_function(["ffi.StructuralVisitor", "AnyView"],
                                  "Optional<ffi.VisitInterrupt>", hook)
        _CONTAINER_HOOKS[function] = items
        TYPES.register_attr(type_index, VISIT_ATTR,
                            abi.TVMFFIAny(type_index=TI.kTVMFFIFunction, v_ptr=function))
        memory.dec_ref(function)


def _store(result: abi.TVMFFIAny, outcome: Outcome) -> None:
    if outcome is not None:
        set_object(result, outcome)


_register_container_hooks()


# ------------------------------------------------------------ globals


@typed_global("ffi.VisitInterrupt", ["Any"], "ffi.VisitInterrupt")
def _visit_interrupt(result, value):
    interrupt = new_reflected(TI.kTVMFFIVisitInterrupt)
    slot = abi.TVMFFIAny.from_address(interrupt + 24)
    anyvalue.copy_any(owned_copy(value), slot)
    set_object(result, interrupt)


@typed_global("ffi.StructuralVisitorVisit", ["ffi.StructuralVisitor", "AnyView"],
              "Optional<ffi.VisitInterrupt>")
def _visitor_visit(result, visitor, value):
    _store(result, traversal_of(visitor, "visitor").visit(value))


@typed_global("ffi.StructuralVisitorDefaultVisit", ["ffi.StructuralVisitor", "AnyView"],
              "Optional<ffi.VisitInterrupt>")
def _visitor_default_visit(result, visitor, value):
    traversal = traversal_of(visitor, "visitor")
    with passing(value):
        _store(result, traversal.default_visit(value))


@typed_global("ffi.StructuralVisitorDefRegionKind", ["ffi.StructuralVisitor"], "int")
def _visitor_region(result, visitor):
    strings.store_int(result, traversal_of(visitor, "visitor").region)


def with_region_global(what: str) -> Callable:
    """``ffi.Structural<What>WithDefRegionKind(traversal, kind, callback)``'s body."""
    def body(result, traversal, kind, callback):
        value = traversal_of(traversal, what).with_region(kind, lambda: call_owned(callback, []))
        anyvalue.copy_any(value, result)

    return body


typed_global("ffi.StructuralVisitorWithDefRegionKind", ["ffi.StructuralVisitor", "int",
                                                         "ffi.Function"], "Any")(
    with_region_global("visitor"))


def _run(visitor: Visitor, root: abi.TVMFFIAny, result: abi.TVMFFIAny) -> None:
    try:
        with deep_recursion():
            _store(result, visitor.visit(root))
    finally:
        visitor.release()


@typed_global("ffi.StructuralWalk", ["AnyView", CALLBACKS, CALLBACKS, "int"],
              "Optional<ffi.VisitInterrupt>")
def _structural_walk(result, root, callbacks, with_kind, order):
    _run(WalkVisitor(callbacks, with_kind, order), root, result)


@typed_global("ffi.StructuralVisit", ["AnyView", CALLBACKS], "Optional<ffi.VisitInterrupt>")
def _structural_visit(result, root, callbacks):
    _run(CallbackVisitor(callbacks), root, result)

