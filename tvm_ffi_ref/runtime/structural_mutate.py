"""Structural mutation: ``ffi.StructuralMap``, ``ffi.StructuralMutate`` and the mutator's methods.

Its twin in C: ``tvm_ffi_fast/src/structural_mutate.c``.

A mutation of a value yields a replacement or *unchanged* (``kTVMFFIUnchanged``,
"keep what you had"). It is copy-on-write: a container or object is copied
the first time one of its children changes, and the original is untouched --
except along a path the caller allows in place (``InplaceMode`` ALLOW, from a
root passed with ``_move()``) where every object is held once (strong count
1): there a container sets its changed children in place.

**Default mutation** of a value (``DefaultMutate``): the type's ``__s_mutate__``
hook (``__s_maybe_inplace_mutate__`` when in place is allowed and the type has
one), a Function ``(mutator, value)``. Without a hook: an inline value is
its own replacement; an object is shallow-copied (its ``__ffi_shallow_copy__``)
and each field not ``SEqHashIgnore`` mutated in its definition region, set on
the copy when it changed; no change gives unchanged. Free variables and DAG
nodes go through the *variable remap* first: a recorded replacement is used
as is; a free variable outside any region is a use (unchanged); the result
of descending into a free variable in a Pattern region, a changed one in a
Simple region, and every DAG node is recorded. The hooks registered at load:
Array/List mutate their elements, Map/Dict their values (keys never), String,
Bytes and BigInt are unchanged.

``ffi.StructuralMap(root, callbacks, callbacks_with_kind, order)``: at each
value, the first matching callback ``(value)`` -- or ``(value, region)`` --
returns the value (unchanged) or a replacement. Post-order (1): after the
value's default mutation, on its result. Pre-order (0): before it, and the
callback's result is then mutated by default.

``ffi.StructuralMutate(root, callbacks)``: a matched callback
``(value, mutator[, inplace_mode])`` owns the mutation of its value, its
result final; other values get their default mutation.
"""

from __future__ import annotations

import ctypes
from typing import Dict, List

from tvm_ffi_common import abi
from tvm_ffi_common.capi import LIB

from . import anyvalue, interrupts, memory, strings
from .any_hash import custom_entry
from .container_common import ANY_SIZE
from .dataclass_walk import Frame, object_view, read_field, reflected_fields, run_frames
from .map_storage import copy_map, entry_addresses
from .reflection import STRUCTURAL_MUTATOR
from .reflection_make_object import (
    _call as call_owned,  # the runtime's "call, owned result" helper
    call_setter,
)
from .registry import TYPES
from .sequence_edits import list_append, seq_set
from .sequences import array_from_anys, new_list, seq_items
from .signatures import typed_function, typed_global
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
    MUTATE_CALLBACKS,
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
from .structural_visit import with_region_global
from .type_index import TI

MUTATE_ATTR = b"__s_mutate__"
INPLACE_ATTR = b"__s_maybe_inplace_mutate__"
SHALLOW_COPY_ATTR = b"__ffi_shallow_copy__"
DISALLOW, ALLOW = 0, 1


def unchanged() -> abi.TVMFFIAny:
    """The *unchanged* marker."""
    return abi.TVMFFIAny(type_index=TI.kTVMFFIUnchanged)


def is_unchanged(result: abi.TVMFFIAny) -> bool:
    return result.type_index == TI.kTVMFFIUnchanged


def same_as(a: abi.TVMFFIAny, b: abi.TVMFFIAny) -> bool:
    """C++'s ``same_as``: the same type index and payload."""
    return a.type_index == b.type_index and a.v_int64 == b.v_int64


def _unique(value: abi.TVMFFIAny) -> bool:
    return value.type_index >= OBJECT_BEGIN and memory.strong_count(value.v_ptr) == 1


def _vtable_entry(mutator: "Mutator", op: int, value: abi.TVMFFIAny,
                  other) -> abi.TVMFFIAny:
    if op in (0, 1):  # mutate, maybe_inplace_mutate
        return mutator.mutate(value, ALLOW if op == 1 else DISALLOW)
    if op == 2:
        return mutator.remap_get(value)
    mutator.remap_set(value, other.contents)
    return abi.TVMFFIAny()


@ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int32, ctypes.POINTER(abi.TVMFFIAny),
                  ctypes.POINTER(abi.TVMFFIAny), ctypes.POINTER(abi.TVMFFIAny))
@interrupts.callback_entry
def _vtable_step(address, op, value, other, out):
    # A native __s_mutate__ hook's mutator->Mutate(child) (or remap), through libtvm_ffi.so's
    # vtable for our mutators (tvm_ffi_runtime_host_mutator_vtable).
    answer_vtable_call(out, lambda: _vtable_entry(TRAVERSALS[address], op, value.contents,
                                                  other))


_VTABLE = LIB.tvm_ffi_runtime_host_mutator_vtable(ctypes.cast(_vtable_step, ctypes.c_void_p))


class Mutator(Traversal):
    """A mutation: :meth:`dispatch` is the engine, the rest its default rules."""

    def __init__(self):
        super().__init__(STRUCTURAL_MUTATOR, vtable=_VTABLE)
        self.remap: Dict[int, abi.TVMFFIAny] = {}  # variable address -> owned replacement

    def release(self) -> None:
        for address, replacement in self.remap.items():
            memory.dec_ref(address)
            anyvalue.dec_ref_any(replacement)
        self.remap.clear()
        super().release()

    # ---------------------------------------------------------- entry points

    def mutate(self, value: abi.TVMFFIAny, inplace: int = DISALLOW) -> abi.TVMFFIAny:
        """An owned replacement or the unchanged marker (``MutateExpected``).

        One call mutates the whole graph below ``value`` over ``run_frames``' work list (a
        frame per value; containers' items and reflected fields are child frames), so depth
        costs neither Python's recursion limit nor the C stack. Hooks that are not ours (a
        Function or C++ ``__s_mutate__``, a callback) nest a new call, as upstream's do.
        """
        return run_frames(self.mutate_frame(value, inplace), "StructuralMutate", unwind=True)

    def mutate_frame(self, value: abi.TVMFFIAny, inplace: int = DISALLOW) -> Frame:
        """The frame of :meth:`mutate`."""
        return (yield from self.dispatch(value, bool(inplace == ALLOW and _unique(value))))

    def dispatch(self, value: abi.TVMFFIAny, inplace: bool) -> Frame:
        raise NotImplementedError

    def default_mutate(self, value: abi.TVMFFIAny, inplace: int) -> abi.TVMFFIAny:
        """The value's default mutation (see the module docstring)."""
        return run_frames(self.default_frame(value, inplace), "StructuralMutate", unwind=True)

    def default_frame(self, value: abi.TVMFFIAny, inplace: int) -> Frame:
        """The frame of :meth:`default_mutate`."""
        with self.on_path(value, "StructuralMutate"):
            return (yield from self.default_children(value, inplace))

    def default_children(self, value: abi.TVMFFIAny, inplace: int) -> Frame:
        """:meth:`default_frame` once ``value`` is on the path: its hook, or its fields."""
        if inplace == ALLOW:
            hook = custom_entry(INPLACE_ATTR, value.type_index)
            if hook is not None:
                with passing(value):
                    return (yield from self.call_hook(hook, value))
        hook = custom_entry(MUTATE_ATTR, value.type_index)
        with passing(value):
            if hook is not None:
                return (yield from self.call_hook(hook, value))
            if value.type_index < OBJECT_BEGIN:
                return owned_copy(value)
            return (yield from self.mutate_object(value))

    def call_hook(self, hook: abi.TVMFFIAny, value: abi.TVMFFIAny) -> Frame:
        if hook.type_index == TI.kTVMFFIFunction:
            if hook.v_ptr in _CONTAINER_HOOKS:  # ours: children as frames, no round trip
                return (yield from _CONTAINER_HOOKS[hook.v_ptr](self, value))
            return call_owned(hook.v_ptr, [self.view(), value])
        if hook.type_index == TI.kTVMFFIOpaquePtr:  # C++: steps through our vtable
            return run_native_hook(hook.v_ptr, self.address, value)
        raise FFIError("TypeError", "__s_mutate__ must be a direct hook pointer or ffi.Function")

    def mutate_object(self, value: abi.TVMFFIAny) -> Frame:
        metadata = TYPES.entry(value.type_index).info.metadata
        kind = metadata.contents.structural_eq_hash_kind if metadata \
            else KIND.kTVMFFISEqHashKindUnsupported
        free_var = kind == KIND.kTVMFFISEqHashKindFreeVar
        dag = kind == KIND.kTVMFFISEqHashKindDAGNode
        if free_var or dag:
            recorded = self.remap.get(value.v_ptr)
            if recorded is not None and recorded.type_index != TI.kTVMFFINone:
                return owned_copy(recorded)
        if free_var and self.region == REGION.kTVMFFIDefRegionKindNone:
            return unchanged()
        result = yield from self.mutate_fields(value, free_var)
        if dag or (free_var and (self.region == REGION.kTVMFFIDefRegionKindPattern
                                 or not is_unchanged(result))):
            self.remap_set(value, result)
        return result

    def mutate_fields(self, value: abi.TVMFFIAny, free_var: bool) -> Frame:
        """A shallow copy with the changed fields set, or unchanged."""
        shallow = custom_entry(SHALLOW_COPY_ATTR, value.type_index)
        if shallow is None or shallow.type_index != TI.kTVMFFIFunction:
            raise FFIError("TypeError", "__ffi_shallow_copy__ must be an ffi.Function")
        copy = call_owned(shallow.v_ptr, [value])
        if copy.type_index != value.type_index or copy.v_ptr == value.v_ptr:
            anyvalue.dec_ref_any(copy)
            raise FFIError("TypeError", "Shallow copy callback must return a distinct object "
                                        "with the same type as its input")
        saved = self.region
        try:
            if free_var and saved == REGION.kTVMFFIDefRegionKindSimple:
                self.region = REGION.kTVMFFIDefRegionKindNone
            changed = yield from self.mutate_copy_fields(copy.v_ptr)
        except BaseException:
            anyvalue.dec_ref_any(copy)
            raise
        finally:
            self.region = saved
        if not changed:
            anyvalue.dec_ref_any(copy)
            return unchanged()
        return copy

    def mutate_copy_fields(self, address: int) -> Frame:
        """Mutates a shallow copy's fields (child frames); returns whether one changed."""
        type_index = memory.type_index_of(address)
        changed = False
        for field in reflected_fields(type_index, IGNORE):
            child = read_field(address, field)
            outer = self.region
            try:
                if field.flags & (DEF_SIMPLE | DEF_PATTERN) and \
                        outer != REGION.kTVMFFIDefRegionKindPattern:
                    self.region = REGION.kTVMFFIDefRegionKindSimple \
                        if field.flags & DEF_SIMPLE else REGION.kTVMFFIDefRegionKindPattern
                try:
                    result = yield self.mutate_frame(child)
                finally:
                    self.region = outer
                try:
                    if is_unchanged(result) or same_as(child, result):
                        continue
                    if not field.setter:
                        name = ctypes.string_at(field.name.data, field.name.size).decode()
                        raise FFIError("TypeError", f"Cannot structurally mutate field `{name}` "
                                       f"of type `{TYPES.type_key(type_index)}` because it does "
                                       "not define a setter")
                    call_setter(field, address + field.offset, result)
                    changed = True
                finally:
                    anyvalue.dec_ref_any(result)
            finally:
                anyvalue.dec_ref_any(child)
        return changed

    # ---------------------------------------------------------- variable remap

    def remap_get(self, var: abi.TVMFFIAny) -> abi.TVMFFIAny:
        if var.type_index < OBJECT_BEGIN:
            raise FFIError("TypeError", "Variable-remap key must be an object-backed value")
        recorded = self.remap.get(var.v_ptr)
        return abi.TVMFFIAny() if recorded is None else owned_copy(recorded)

    def remap_set(self, var: abi.TVMFFIAny, replacement: abi.TVMFFIAny) -> None:
        if var.type_index < OBJECT_BEGIN:
            raise FFIError("TypeError", "Variable-remap key must be an object-backed value")
        old = self.remap.get(var.v_ptr)
        if old is None:
            memory.inc_ref(var.v_ptr)
        else:
            anyvalue.dec_ref_any(old)
        self.remap[var.v_ptr] = owned_copy(replacement)


class MapMutator(Mutator):
    """``ffi.StructuralMap``: replacement callbacks before or after default mutation."""

    def __init__(self, callbacks, with_kind, order: int):
        super().__init__()
        self.callbacks = callback_entries(callbacks, 2)
        self.with_kind = callback_entries(with_kind, 2)
        self.pre_order = order == 0

    def call(self, value: abi.TVMFFIAny):
        """The matching callback's result (owned), or None when no entry matches."""
        entry = find_entry(self.callbacks, value.type_index)
        args = [value]
        if entry is None:
            entry = find_entry(self.with_kind, value.type_index)
            if entry is None:
                return None
            kind = abi.TVMFFIAny()
            strings.store_int(kind, self.region)
            args.append(kind)
        with passing(value):
            return call_owned(entry[1], args)

    def dispatch(self, value: abi.TVMFFIAny, inplace: bool) -> Frame:
        mode = ALLOW if inplace else DISALLOW
        if not self.pre_order:
            out = yield from self.default_frame(value, mode)
            view = value if is_unchanged(out) else out
            try:
                mapped = self.call(view)
            except BaseException:
                anyvalue.dec_ref_any(out)
                raise
            if mapped is None or is_unchanged(mapped):
                return out
            anyvalue.dec_ref_any(out)
            return mapped
        mapped = self.call(value)
        if mapped is None:
            return (yield from self.default_frame(value, mode))
        try:
            descent = value if is_unchanged(mapped) else mapped
            if inplace and not same_as(descent, value):
                mode = ALLOW if _unique(descent) else DISALLOW
            out = yield from self.default_frame(descent, mode)
        except BaseException:
            anyvalue.dec_ref_any(mapped)
            raise
        if is_unchanged(out):
            return mapped
        anyvalue.dec_ref_any(mapped)
        return out


class CallbackMutator(Mutator):
    """``ffi.StructuralMutate``: a matched callback owns the mutation of its value."""

    def __init__(self, callbacks):
        super().__init__()
        self.callbacks = callback_entries(callbacks, 3)

    def dispatch(self, value: abi.TVMFFIAny, inplace: bool) -> Frame:
        entry = find_entry(self.callbacks, value.type_index)
        if entry is None:
            return (yield from self.default_frame(value, ALLOW if inplace else DISALLOW))
        args = [value, self.view()]
        if entry[2]:
            mode = abi.TVMFFIAny()
            strings.store_int(mode, ALLOW if inplace else DISALLOW)
            args.append(mode)
        with passing(value):
            return call_owned(entry[1], args)


# ------------------------------------------------------------ container hooks


def _mutate_sequence(mutator: Mutator, value: abi.TVMFFIAny) -> Frame:
    items = seq_items(value.v_ptr)
    for i, item in enumerate(items):
        result = yield mutator.mutate_frame(item)
        if is_unchanged(result) or same_as(result, item):
            anyvalue.dec_ref_any(result)
            continue
        replaced = [owned_copy(x) for x in items[:i]] + [result]
        for rest in items[i + 1:]:
            mapped = yield mutator.mutate_frame(rest)
            replaced.append(owned_copy(rest) if is_unchanged(mapped) else mapped)
        make = array_from_anys if value.type_index == TI.kTVMFFIArray else _list_exactly
        copy = make(replaced)
        for x in replaced:
            anyvalue.dec_ref_any(x)
        return object_view(copy)
    return unchanged()


def _list_exactly(values: List[abi.TVMFFIAny]) -> int:
    """A List of exactly ``len(values)`` slots, as ``ListObj::CreateRepeated`` makes it."""
    address = new_list(len(values))
    for value in values:
        list_append(address, value)
    return address


def _mutate_sequence_in_place(mutator: Mutator, value: abi.TVMFFIAny) -> Frame:
    i = 0
    while i < len(seq_items(value.v_ptr)):
        item = seq_items(value.v_ptr)[i]
        result = yield mutator.mutate_frame(item, ALLOW)
        if not is_unchanged(result) and not same_as(result, item):
            seq_set(value.v_ptr, i, result)
        anyvalue.dec_ref_any(result)
        i += 1
    return unchanged()


def _value_slots(address: int) -> List[abi.TVMFFIAny]:
    """The value slots of a map's entries (views into the map), in iteration order."""
    return [abi.TVMFFIAny.from_address(entry + ANY_SIZE) for entry in entry_addresses(address)]


def _mutate_map_values(mutator: Mutator, value: abi.TVMFFIAny) -> Frame:
    items = _value_slots(value.v_ptr)
    for i, item in enumerate(items):
        result = yield mutator.mutate_frame(item)
        if is_unchanged(result) or same_as(result, item):
            anyvalue.dec_ref_any(result)
            continue
        copy = copy_map(value.v_ptr)
        slots = _value_slots(copy)
        _replace_value(slots[i], result)
        for j in range(i + 1, len(items)):
            mapped = yield mutator.mutate_frame(items[j])
            if not is_unchanged(mapped) and not same_as(mapped, items[j]):
                _replace_value(slots[j], mapped)
            else:
                anyvalue.dec_ref_any(mapped)
        return object_view(copy)
    return unchanged()


def _mutate_map_values_in_place(mutator: Mutator, value: abi.TVMFFIAny) -> Frame:
    for slot in _value_slots(value.v_ptr):
        result = yield mutator.mutate_frame(slot, ALLOW)
        if not is_unchanged(result) and not same_as(result, slot):
            _replace_value(slot, result)
        else:
            anyvalue.dec_ref_any(result)
    return unchanged()


def _replace_value(slot: abi.TVMFFIAny, owned: abi.TVMFFIAny) -> None:
    """Stores an owned value into a map entry's value slot (in place), releasing the old one."""
    old = abi.TVMFFIAny()
    anyvalue.copy_any(slot, old)
    anyvalue.copy_any(owned, slot)
    anyvalue.dec_ref_any(old)


class _ForeignMutator:
    """A mutator made in C++ (TVM's, say), as the container rules above use one: each
    ``mutate`` goes through its vtable (mutate, or maybe_inplace_mutate when allowed)."""

    def __init__(self, address: int):
        self.steps = (foreign_step(address, 0), foreign_step(address, 1))

    def mutate_frame(self, value: abi.TVMFFIAny, inplace: int = DISALLOW) -> Frame:
        """A frame whose result is the C++ mutator's step (the rules' children go through it)."""
        return foreign_outcome(self.steps[int(inplace == ALLOW and _unique(value))](value))
        yield  # a generator: the container rules yield it as a child frame


def _hook_mutator(address: int):
    return _ForeignMutator(address) if foreign_step(address) else traversal_of(address,
                                                                               "mutator")


#: Our hooks' Functions, by address, and the Python function each runs.
_CONTAINER_HOOKS = {}


def _register_hooks() -> None:
    def keep(mutator, value):  # immutable leaves
        return unchanged()
        yield  # a frame like the other rules
    rules = {TI.kTVMFFIArray: (_mutate_sequence, _mutate_sequence_in_place),
             TI.kTVMFFIList: (_mutate_sequence, _mutate_sequence_in_place),
             TI.kTVMFFIMap: (_mutate_map_values, _mutate_map_values_in_place),
             TI.kTVMFFIDict: (_mutate_map_values, _mutate_map_values_in_place),
             TI.kTVMFFIStr: (keep, keep), TI.kTVMFFIBytes: (keep, keep),
             TI.kTVMFFIBigInt: (keep, keep)}
    for attr in (MUTATE_ATTR, INPLACE_ATTR):
        TYPES.register_attr(TI.kTVMFFINone, attr, abi.TVMFFIAny())
    for type_index, pair in rules.items():
        for attr, run in zip((MUTATE_ATTR, INPLACE_ATTR), pair):
            def hook(result, mutator, value, run=run):
                outcome = run_frames(run(_hook_mutator(mutator), value), "StructuralMutate",
                                     unwind=True)
                anyvalue.copy_any(outcome, result)

            function = typed_function(["ffi.StructuralMutator", "AnyView"], "Any", hook)
            _CONTAINER_HOOKS[function] = run
            TYPES.register_attr(type_index, attr,
                                abi.TVMFFIAny(type_index=TI.kTVMFFIFunction, v_ptr=function))
            memory.dec_ref(function)


_register_hooks()


# ------------------------------------------------------------ globals


def _result_or(result: abi.TVMFFIAny, mutated: abi.TVMFFIAny, original: abi.TVMFFIAny) -> None:
    """Writes the replacement, or (unchanged) a new reference to ``original``."""
    anyvalue.copy_any(owned_copy(original) if is_unchanged(mutated) else mutated, result)


def _mutator(address: int) -> Mutator:
    return traversal_of(address, "mutator")


@typed_global("ffi.StructuralMutatorMutate", ["ffi.StructuralMutator", "AnyView"], "Any")
def _mutator_mutate(result, mutator, value):
    _result_or(result, _mutator(mutator).mutate(value), value)


@typed_global("ffi.StructuralMutatorDefaultMutate", ["ffi.StructuralMutator", "AnyView"],
              "Any")
def _mutator_default_mutate(result, mutator, value):
    _result_or(result, _mutator(mutator).default_mutate(value, DISALLOW), value)


@typed_global("ffi.StructuralMutatorVarRemapGet", ["ffi.StructuralMutator", "AnyView"], "Any")
def _remap_get(result, mutator, var):
    anyvalue.copy_any(_mutator(mutator).remap_get(var), result)


@typed_global("ffi.StructuralMutatorVarRemapSet", ["ffi.StructuralMutator", "AnyView", "AnyView"],
              "void")
def _remap_set(result, mutator, var, replacement):
    _mutator(mutator).remap_set(var, replacement)


@typed_global("ffi.StructuralMutatorDefRegionKind", ["ffi.StructuralMutator"], "int")
def _mutator_region(result, mutator):
    strings.store_int(result, _mutator(mutator).region)


typed_global("ffi.StructuralMutatorWithDefRegionKind", ["ffi.StructuralMutator", "int",
                                                         "ffi.Function"], "Any")(
    with_region_global("mutator"))


def _run(mutator: Mutator, root: abi.TVMFFIAny, result: abi.TVMFFIAny) -> None:
    try:
        with deep_recursion():  # hooks that are not ours still nest
            _result_or(result, mutator.mutate(root, ALLOW), root)
    finally:
        mutator.release()


@typed_global("ffi.StructuralMap", ["Any", CALLBACKS, CALLBACKS, "int"], "Any")
def _structural_map(result, root, callbacks, with_kind, order):
    _run(MapMutator(callbacks, with_kind, order), root, result)


@typed_global("ffi.StructuralMutate", ["Any", MUTATE_CALLBACKS], "Any")
def _structural_mutate(result, root, callbacks):
    _run(CallbackMutator(callbacks), root, result)

