"""One ``object/<type key>`` block as Rust: the object struct, its reference wrapper and more.

What the struct holds follows the layout verdict (:mod:`..layout`): a
*complete* type mirrors every field at its offset (its size and alignment
asserted), with allocators (:mod:`.allocators`); an *opaque* one embeds only
its parent and reads each field through the C ABI getter. A field the crate
has no type for (``Optional<Any>``, ``Union``, ``void*``, an ``ffi.*`` key
off the default ``ty-map``) makes the type opaque and reads as ``Any``.

Every type key the binding names must be provided in the run: ``ffi.*`` by
the crate, a ``ty-map`` entry by a hand-written binding (whose object struct
is ``<Name>Obj``), anything else by an ``object/`` block of some file;
otherwise the block is refused, naming the missing keys. A generated type is
spelled from the module of the file holding its block: its bare name in that
module, its ``crate::`` path elsewhere. A builtin parent below ``ffi.Object``
(``ffi.IntEnum``) has no struct in the crate: the import section defines a
stand-in per builtin ancestor, and the types under it stay opaque.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Dict, List, Mapping, Optional, Set, Tuple

from ..layout import Verdict, classify
from ..utils import NamedTypeSchema, ObjectInfo
from . import allocators, consts as C
from .directives import EnumSpec
from .utils import (
    RustImports,
    allow_non_snake_case,
    is_crate_type_key,
    render_rust_type,
    rust_ident,
)


def _check_width(target: str, field: NamedTypeSchema, rust_type: str, width: int) -> None:
    if field.size is not None and field.size != width:
        raise ValueError(f"Directive on `{target}` maps a {field.size}-byte field to "
                         f"`{rust_type}` ({width} bytes)")


def _deref(source: str, target: str) -> List[str]:
    return [f"impl Deref for {source} {{", f"    type Target = {target};",
            f"    fn deref(&self) -> &{target} {{", "        &self.base", "    }", "}"]


@dataclasses.dataclass
class ObjectRenderer:
    """Renders one object's block (see the module docstring); :meth:`body` gives the lines.

    ``module`` is the module of the block's file, ``declared`` each type key with
    a block in the run to its file's module, ``lookup`` the registry's
    :class:`ObjectInfo` of a type key. Keys the binding names and nobody
    provides gather in :attr:`missing`.
    """

    info: ObjectInfo
    imports: RustImports
    ty_map: Dict[str, str]
    module: Tuple[str, ...]
    declared: Mapping[str, Tuple[str, ...]]
    lookup: Callable[[str], ObjectInfo]
    missing: Set[str] = dataclasses.field(default_factory=set)

    def __post_init__(self) -> None:
        if self.info.type_key is None:
            raise ValueError("an object block needs an ObjectInfo with a type key")
        self.type_key: str = self.info.type_key
        self.leaf = self.type_key.rsplit(".", 1)[-1]
        self.obj_struct = f"{self.leaf}Obj"

    # ------------------------------------------------------------------- names

    def provider(self, type_key: str) -> Optional[str]:
        """``"crate"`` (``ffi.*``), ``"mapped"`` (a ``ty-map`` entry), ``"generated"`` (a block
        of the run), or None, after noting ``type_key`` in :attr:`missing`."""
        if is_crate_type_key(type_key):
            return "crate"
        if type_key in self.ty_map:
            return "mapped"
        if type_key in self.declared:
            return "generated"
        self.missing.add(type_key)
        return None

    def generated_path(self, type_key: str) -> str:
        """How this file spells a generated type: its leaf in the same module (or when the
        key is missing), its ``crate::`` path from another."""
        if type_key.partition(".")[0] in C.RUST_MOD_MAP:
            return type_key
        leaf = type_key.rpartition(".")[2]
        module = self.declared[type_key] if type_key in self.declared else self.module
        return leaf if module == self.module else "::".join((*module, leaf))

    def record_mapped(self, path: str) -> str:
        """A ``ty-map`` target: in scope when it is in this file's own module, else ``use``d."""
        module, _, name = path.rpartition("::")
        return name if module == "::".join(self.module) else self.imports.record(path)

    def record_view(self, rust_type: str) -> str:
        """A Rust type a directive names: ``use``d when it is a path."""
        return self.imports.record(rust_type) if "::" in rust_type else rust_type

    def resolve(self, origin: str, imports: RustImports,
                type_key: Optional[str] = None) -> Optional[str]:
        """The in-scope name of a leaf origin (its ``use`` recorded in ``imports``), or None.
        A ``ty-map`` entry for the key the schema was parsed from wins over the origin."""
        key = type_key if type_key in self.ty_map else origin
        mapped = self.ty_map.get(key)
        if mapped is not None:
            module, _, name = mapped.rpartition("::")
            return name if module == "::".join(self.module) else imports.record(mapped)
        if "." not in origin or origin.startswith("ctypes."):
            return None
        if self.provider(origin) == "crate":  # an ffi.* key off the ty-map: no crate type
            return None
        return imports.record(self.generated_path(origin))

    def render(self, schema, imports: Optional[RustImports] = None) -> Optional[str]:
        """``schema`` as a Rust type, names resolved (and recorded) through :meth:`resolve`."""
        into = self.imports if imports is None else imports
        return render_rust_type(schema, lambda origin, key: self.resolve(origin, into, key))

    def base_type(self) -> Tuple[str, bool]:
        """The struct the object embeds as ``base``, and whether it is a generated or
        ``ty-map``'d parent (rather than the header or a builtin stand-in)."""
        parent = self.info.parent_type_key
        if parent is not None:
            provider = self.provider(parent)
            if provider == "mapped":
                return self.record_mapped(self.ty_map[parent] + "Obj"), True
            if provider != "crate":  # generated, or missing (reported after the body)
                return self.imports.record(self.generated_path(parent) + "Obj"), True
        chain = [key for key in self.info.ancestors if key != C.RUST_ROOT_TYPE_KEY]
        if parent not in (None, C.RUST_ROOT_TYPE_KEY, *chain):
            chain.append(parent)
        return self.imports.record_builtin_base(chain), False

    # ------------------------------------------------------------------ verdict

    def classify(self) -> Verdict:
        """The layout verdict, with the ancestors, under the file's directives."""
        infos = {key: self.lookup(key) for key in self.info.ancestors}
        infos[self.type_key] = self.info
        owners = {id(f): key for key, owner in infos.items() for f in owner.fields}
        scratch = RustImports()  # renderability is asked without recording anything
        unmirrored = {key for key in self.info.ancestors
                      if key != C.RUST_ROOT_TYPE_KEY and self.provider(key) == "crate"}
        verdicts = classify(
            infos, forced_opaque=self.imports.directives.opaque, unmirrored=unmirrored,
            field_renderable=lambda f: self.field_mirror(owners[id(f)], f, scratch) is not None)
        return verdicts[self.type_key]

    # ------------------------------------------------------------------- fields

    def field_mirror(self, owner: str, field: NamedTypeSchema,
                     imports: RustImports) -> Optional[str]:
        """The ``#[repr(C)]`` type of ``owner``'s ``field``, or None: a directive's, else a
        scalar by its reflected width, an ``Optional`` by its C++ layout, else the schema's."""
        directives = self.imports.directives
        target = f"{owner}.{field.name}"
        if target in directives.enums:
            spec = directives.enums[target]
            _check_width(target, field, spec.repr, C.RUST_SCALAR_WIDTHS[spec.repr])
            return spec.name
        override = directives.field_types.get(target)
        if override is not None:
            if override in C.RUST_SCALAR_WIDTHS:
                _check_width(target, field, override, C.RUST_SCALAR_WIDTHS[override])
            mirror = imports.record(override) if "::" in override else override
        elif field.origin == "Optional":
            mirror = self._optional_mirror(field, imports)
        else:
            mirror = (C.RUST_SCALAR_BY_SIZE.get((field.origin, field.size))
                      or self.render(field, imports))
        if mirror is not None and target in directives.nullable and not mirror.startswith("Option<"):
            if field.size not in (None, C.RUST_POINTER_SIZE):
                raise ValueError(f"`nullable` directive on `{target}`: the field is {field.size} "
                                 "bytes, not a pointer-sized object reference")
            mirror = f"Option<{mirror}>"
        return mirror

    def _optional_mirror(self, field: NamedTypeSchema, imports: RustImports) -> Optional[str]:
        """``Optional<T>`` in place: a nullable pointer (``Option<T>``) for an object payload,
        else the 16-byte ``TVMFFIAny`` cell (``tvm_ffi::Optional<T>``); ``Optional<Any>`` and a
        size that is neither have no mirror."""
        payload = field.args[0]
        if payload.origin == "Any":
            return None
        inner = self.render(payload, imports)
        if inner is None:
            return None
        in_cell = payload.origin in C.RUST_ANY_BACKED_OPTIONAL_PAYLOADS or payload.origin == "Optional"
        size = C.RUST_OPTIONAL_FIELD_SIZE if in_cell else C.RUST_OBJECT_OPTIONAL_FIELD_SIZE
        if field.size not in (None, size):
            return None
        return f"{imports.record(C.RUST_OPTIONAL_PATH)}<{inner}>" if in_cell else f"Option<{inner}>"

    def _accessor(self, field: NamedTypeSchema) -> List[str]:
        """``pub fn <field>(&self) -> Result<T>`` through the C ABI getter (``Any`` when the
        field has no Rust type; an enum converted from its raw integer)."""
        directives = self.imports.directives
        target = f"{self.type_key}.{field.name}"
        name = rust_ident(field.name)
        getter = f'FieldGetter::new(Self::type_index(), "{field.name}")?'
        lines = allow_non_snake_case([name])
        if target in directives.enums:
            enum = directives.enums[target].name
            return lines + [f"pub fn {name}(&self) -> Result<{enum}> {{",
                            f"    let raw: i64 = {getter}.get(self)?;",
                            f"    {enum}::try_from(raw)", "}"]
        override = directives.field_types.get(target)
        if override is not None:
            rust_type = self.record_view(override)
        else:  # an `Any` field: `FieldGetter::get` does not take the infallible Any -> Any
            rust_type = None if field.origin == "Any" else self.render(field)
        if rust_type is None:
            any_type = self.imports.record("tvm_ffi::Any")
            return lines + [f"pub fn {name}(&self) -> Result<{any_type}> {{",
                            f"    {getter}.get_any(self)", "}"]
        if target in directives.nullable and not rust_type.startswith("Option<"):
            rust_type = f"Option<{rust_type}>"
        return lines + [f"pub fn {name}(&self) -> Result<{rust_type}> {{",
                        f"    {getter}.get(self)", "}"]

    # ------------------------------------------------------------------- pieces

    def _enum(self, spec: EnumSpec) -> List[str]:
        """The open integer newtype an ``enum`` directive declares."""
        error = self.imports.record("tvm_ffi::Error")
        value_error = self.imports.record("tvm_ffi::VALUE_ERROR")
        result = self.imports.record("tvm_ffi::Result")
        return [
            "#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]", "#[repr(transparent)]",
            f"pub struct {spec.name}({spec.repr});", "",
            "#[allow(non_upper_case_globals)]", f"impl {spec.name} {{",
            *(f"    pub const {member}: Self = Self({value});" for member, value in spec.members),
            f"    pub const fn from_raw(value: {spec.repr}) -> Self {{", "        Self(value)", "    }",
            f"    pub const fn as_raw(self) -> {spec.repr} {{", "        self.0", "    }", "}", "",
            f"impl TryFrom<i64> for {spec.name} {{", f"    type Error = {error};",
            f"    fn try_from(value: i64) -> {result}<Self> {{",
            f"        {spec.repr}::try_from(value).map(Self).map_err(|_| {{",
            f'            {error}::new({value_error}, &format!("{spec.name} value {{value}} does not '
            f'fit {spec.repr}"), "")',
            "        })", "    }", "}",
        ]

    def _struct(self, verdict: Verdict, base: str) -> List[str]:
        """The object struct: every field when complete, the parent alone when opaque."""
        head = ["#[repr(C)]", "#[derive(tvm_ffi::derive::Object)]", f'#[type_key = "{self.type_key}"]',
                *(["#[type_final]"] if self.info.is_final else []),
                f"pub struct {self.obj_struct} {{", f"    base: {base},"]
        if not verdict.is_complete:
            return [f"/// Opaque: {verdict.detail}. Fields are read through the C ABI getters.",
                    *head, "}"]
        fields = self.fields_by_offset()
        members = [f"    pub {rust_ident(f.name)}: {self.field_mirror(self.type_key, f, self.imports)},"
                   for f in fields]
        return [f"/// Complete: {verdict.detail}.",
                *allow_non_snake_case(rust_ident(f.name) for f in self.info.fields),
                *head, *members, "}", "", "const _: () = {",
                f"    assert!(::core::mem::size_of::<{self.obj_struct}>() == {verdict.total_size});",
                f"    assert!(::core::mem::align_of::<{self.obj_struct}>() == {verdict.alignment});",
                "};"]

    def fields_by_offset(self, info: Optional[ObjectInfo] = None) -> List[NamedTypeSchema]:
        """The own fields of ``info`` (this object's by default), by offset."""
        return sorted((info or self.info).fields, key=lambda f: f.offset or 0)

    def _upcasts(self) -> List[str]:
        """``impl_object_upcast!`` to each generated or mapped ancestor, then to each view an
        ``upcast`` directive names."""
        targets = []
        for key in self.info.ancestors:
            provider = self.provider(key)
            if provider == "mapped":
                targets.append(self.record_mapped(self.ty_map[key]))
            elif provider != "crate":
                targets.append(self.imports.record(self.generated_path(key)))
        targets += [self.record_view(v) for v in self.imports.directives.upcasts.get(self.type_key, [])]
        if not targets:
            return []
        return [f"tvm_ffi::impl_object_upcast!({', '.join(f'{self.leaf} => {t}' for t in targets)});"]

    def body(self) -> List[str]:
        """The block's lines."""
        self.imports.reserved.update((self.leaf, self.obj_struct))
        verdict = self.classify()
        self.imports.record("std::ops::Deref")
        self.imports.record("tvm_ffi::ObjectArc")
        base, has_parent = self.base_type()
        fields = self.info.fields
        accessors = bool(fields) and not verdict.is_complete
        if accessors:
            for name in ("tvm_ffi::ObjectCore", "tvm_ffi::FieldGetter", "tvm_ffi::Result"):
                self.imports.record(name)
        enums = self.imports.directives.enums
        sections = [self._enum(enums[f"{self.type_key}.{f.name}"]) for f in fields
                    if f"{self.type_key}.{f.name}" in enums]
        sections.append(self._struct(verdict, base))
        # The derive macros are spelled in full: their leaves would clash with Object/ObjectRef.
        sections.append(["#[repr(C)]", "#[derive(tvm_ffi::derive::ObjectRef, Clone)]",
                         f"pub struct {self.leaf} {{", f"    base: ObjectArc<{self.obj_struct}>,", "}"])
        sections.append(_deref(self.leaf, self.obj_struct))
        if has_parent:
            sections.append(_deref(self.obj_struct, base))
        if accessors:
            lines: List[str] = []
            for field in fields:
                lines += ([""] if lines else []) + self._accessor(field)
            sections.append([f"impl {self.obj_struct} {{",
                             *(f"    {line}" if line else "" for line in lines), "}"])
        elif verdict.is_complete:
            sections += allocators.sections(self, base, has_parent)
        upcasts = self._upcasts()
        if upcasts:
            sections.append(upcasts)
        out: List[str] = []
        for section in sections:
            out += ([""] if out else []) + section
        return out
