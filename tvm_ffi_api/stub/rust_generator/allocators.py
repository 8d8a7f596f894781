"""What a *complete* type gets beyond its struct: allocators, ``ShallowCopy``, ``UnsafeInit``.

``<Leaf>Obj::new`` takes every field root to leaf, each as its own type (so
a parent's, generated or hand-written, takes what it is handed); the
wrapper's ``new`` takes a scalar as itself and anything else as ``impl Into``,
as ``#[rs_class]``'s does, converting on the way. ``custom-new`` names the
wrapper's one ``from_fields``. A type that is not final may be the parent of
a type defined in Rust: its ``<Leaf>Obj::new`` is public, and when every
ancestor below ``ffi.Object`` is generated too it implements ``ShallowCopy``
and ``UnsafeInit`` (a ``ty-map``'d ancestor is hand-written and may not).
Lines longer than rustfmt's width wrap as rustfmt wraps them.
"""

from __future__ import annotations

from typing import List, Optional, Tuple

from ..utils import ObjectInfo
from . import consts as C
from .utils import allow_non_snake_case, rust_ident

Params = List[Tuple[str, str]]


def call_lines(open_: str, items: List[str], close: str) -> List[str]:
    """``open_ + items + close`` on one line if it fits; else, for a ``let``, the call moved
    to the next line; else one item per line."""
    line = f"{open_}{', '.join(items)}{close}"
    if len(line) <= C.RUST_MAX_WIDTH:
        return [line]
    indent = open_[:len(open_) - len(open_.lstrip())]
    binding, eq, call = open_.partition(" = ")
    moved = f"{indent}    {call}{', '.join(items)}{close}"
    if eq and len(moved) <= C.RUST_MAX_WIDTH:
        return [f"{binding} =", moved]
    return [open_.rstrip(), *(f"{indent}    {item}," for item in items), indent + close.lstrip()]


def _exact(rust_type: str) -> bool:
    return rust_type in C.RUST_EXACT_PARAMS


def _chain_params(renderer, key: str, info: ObjectInfo) -> Params:
    """``(field, type)`` of every field from the root to ``key``, as ``<key>Obj::new`` takes."""
    parent = info.parent_type_key
    inherited: Params = []
    if parent is not None and renderer.provider(parent) != "crate":
        inherited = _chain_params(renderer, parent, renderer.lookup(parent))
    return _extend(renderer, key, info, inherited)


def _extend(renderer, key: str, info: ObjectInfo, inherited: Params) -> Params:
    """The parent's parameters (a ``field`` directive on one narrows it), then ``key``'s own."""
    field_types = renderer.imports.directives.field_types
    params = [(name, renderer.record_view(field_types[f"{key}.{name}"])
               if f"{key}.{name}" in field_types else rust_type) for name, rust_type in inherited]
    params += [(f.name, renderer.field_mirror(key, f, renderer.imports))
               for f in renderer.fields_by_offset(info)]
    return params


def _function(head: str, params: Params, call: Tuple[str, List[str]], init: List[str],
              wrapper: bool = False) -> List[str]:
    """``<head>(<params>) -> Self { let <call>; Self { <init> } }``, indented for an impl."""
    declared = [f"{rust_ident(name)}: "
                + (rust_type if not wrapper or _exact(rust_type) else f"impl Into<{rust_type}>")
                for name, rust_type in params]
    binding, args = call
    return [*(f"    {line}" for line in allow_non_snake_case(rust_ident(n) for n, _ in params)),
            *call_lines(f"    {head}(", declared, ") -> Self {"),
            *call_lines(f"        let {binding}(", args, ");"),
            *call_lines("        Self { ", init, " }"),
            "    }"]


def sections(renderer, base: str, has_parent: bool) -> List[List[str]]:
    """The allocators, then ``ShallowCopy`` and ``UnsafeInit`` when they apply."""
    inherited: Params = []
    if has_parent:
        parent = renderer.info.parent_type_key
        inherited = _chain_params(renderer, parent, renderer.lookup(parent))
    params = _extend(renderer, renderer.type_key, renderer.info, inherited)
    to_parent = [rust_ident(name) + ("" if rust_type == handed else ".into()")
                 for (name, rust_type), (_, handed) in zip(params, inherited)]
    own = [rust_ident(name) for name, _ in params[len(inherited):]]
    forward = [rust_ident(name) + ("" if _exact(rust_type) else ".into()")
               for name, rust_type in params]
    obj, leaf = renderer.obj_struct, renderer.leaf
    custom = renderer.type_key in renderer.imports.directives.custom_new
    out = [
        [f"impl {obj} {{",
         *_function("pub(crate) fn new" if renderer.info.is_final else "pub fn new", params,
                    (f"base = {base}::new", to_parent), ["base", *own]),
         "}"],
        [f"impl {leaf} {{", "    /// Lossless complete-field allocation.",
         *_function("pub fn from_fields" if custom else "pub fn new", params,
                    (f"obj = {obj}::new", forward), ["base: ObjectArc::new(obj)"], wrapper=True),
         "}"],
    ]
    copy = _shallow_copy(renderer)
    if copy is not None:
        out += [copy, _unsafe_init(renderer)]
    return out


def _shallow_copy(renderer) -> Optional[List[str]]:
    """The parent's shallow copy and a clone of each field, as ``derive(Object)`` makes it."""
    if renderer.info.is_final:
        return None
    ancestors = [key for key in renderer.info.ancestors if key != C.RUST_ROOT_TYPE_KEY]
    if not all(renderer.provider(key) == "generated" for key in ancestors):
        return None
    trait = renderer.imports.record("tvm_ffi::ShallowCopy")
    init = [f"base: {trait}::shallow_copy(&self.base)",
            *(f"{n}: Clone::clone(&self.{n})"
              for n in (rust_ident(f.name) for f in renderer.fields_by_offset()))]
    return [f"impl {trait} for {renderer.obj_struct} {{", "    fn shallow_copy(&self) -> Self {",
            *call_lines("        Self { ", init, " }"), "    }", "}"]


def _unsafe_init(renderer) -> List[str]:
    """Drops the defined fields of an all-zero object (the parent's first), as a subtype's
    creator makes it: a ``TVMFFIAny`` cell drops as it is (all-zero is None), an enum has
    nothing to drop, anything else goes through ``drop_if_defined``."""
    imports, directives = renderer.imports, renderer.imports.directives
    trait = imports.record("tvm_ffi::UnsafeInit")
    addr = imports.record("std::ptr::addr_of_mut")
    drops = [f"{trait}::drop_defined_fields({addr}!((*this).base));"]
    for field in renderer.fields_by_offset():
        target = f"{renderer.type_key}.{field.name}"
        if target in directives.enums:
            continue
        mirror = renderer.field_mirror(renderer.type_key, field, imports)
        cell = target not in directives.field_types and (
            field.origin == "Any" or (field.origin == "Optional" and not mirror.startswith("Option<")))
        drop = imports.record("std::ptr::drop_in_place" if cell
                              else "tvm_ffi::reflection::drop_if_defined")
        drops.append(f"{drop}({addr}!((*this).{rust_ident(field.name)}));")
    return [f"unsafe impl {trait} for {renderer.obj_struct} {{",
            "    unsafe fn drop_defined_fields(this: *mut Self) {", "        unsafe {",
            *(f"            {line}" for line in drops), "        }", "    }", "}"]
