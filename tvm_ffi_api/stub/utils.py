"""What ``tvm-ffi-stubgen`` knows about a library, independent of any target language.

The reflection registry describes each global function by a type schema and
each object type by its fields (with their native byte facts), methods and
constructor; these records hold that, plus the run's options. Turning them
into source text is a generator's job (:mod:`.python_generator`).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Dict, List, Optional, Set, Tuple, Union

from ..core import MISSING, TypeInfo, TypeSchema, _lookup_type_attr
from . import consts as C


def _parse_type_schema(raw: Union[str, Dict[str, Any]]) -> TypeSchema:
    """A schema from its JSON text or its already-parsed JSON object."""
    return TypeSchema.from_json_obj(raw) if isinstance(raw, dict) else TypeSchema.from_json_str(raw)


@dataclasses.dataclass
class InitConfig:
    """What ``--init-*`` scaffolds a package for.

    For the package ``my-ext`` whose CMake target ``my_ext_shared`` builds
    the library registering ``my_ext.*``: ``--init-pypkg my-ext
    --init-lib my_ext_shared --init-prefix my_ext.``
    """

    #: The distribution name (``apache-tvm-ffi``, not ``tvm_ffi``).
    pkg: str
    #: The CMake target of the shared library (``lib<target>.so`` is loaded).
    shared_target: str
    #: Only functions and types under this prefix get files (``my_ext.``).
    prefix: str


@dataclasses.dataclass
class Options:
    """The command line of a run."""

    imports: List[str] = dataclasses.field(default_factory=list)
    dlls: List[str] = dataclasses.field(default_factory=list)
    init: Optional[InitConfig] = None
    indent: int = 4
    files: List[str] = dataclasses.field(default_factory=list)
    verbose: bool = False
    dry_run: bool = False
    check: bool = False
    target: str = "python"
    coverage_out: Optional[str] = None


@dataclasses.dataclass(init=False, repr=False)
class NamedTypeSchema(TypeSchema):
    """A type schema with a name: a function, a parameter or a reflected field.

    A field also carries what the C++ registry recorded about it: ``size``,
    ``alignment`` and ``offset`` (bytes, the offset counted from the start of
    the ``TVMFFIObject`` header), its static ``default`` (:data:`MISSING`
    when none; ``default_is_factory`` when it is a factory to call), the
    structural-equality flag (``"ignore"``, ``"def-pattern"``,
    ``"def-simple"`` or None) and ``frozen`` (read-only). Function
    parameters and hand-made schemas have none of these.
    """

    name: str
    size: Optional[int] = None
    alignment: Optional[int] = None
    offset: Optional[int] = None
    default: Any = MISSING
    default_is_factory: bool = False
    structural_eq: Optional[str] = None
    frozen: bool = False

    def __init__(self, name: str, schema: TypeSchema, *, size: Optional[int] = None,
                 alignment: Optional[int] = None, offset: Optional[int] = None,
                 default: Any = MISSING, default_is_factory: bool = False,
                 structural_eq: Optional[str] = None, frozen: bool = False) -> None:
        """``schema`` named ``name``, with the field facts given (see the class)."""
        super().__init__(origin=schema.origin, args=schema.args,
                         origin_type_index=schema.origin_type_index, fallback=schema.fallback,
                         named_args=schema.named_args, type_key=schema.type_key)
        self.name = name
        self.size = size
        self.alignment = alignment
        self.offset = offset
        self.default = default
        self.default_is_factory = default_is_factory
        self.structural_eq = structural_eq
        self.frozen = frozen

    @staticmethod
    def from_type_field(field: Any) -> "NamedTypeSchema":
        """The schema and facts of a reflected field (a ``TypeField``)."""
        factory = field.c_default_factory is not MISSING
        return NamedTypeSchema(
            field.name, _parse_type_schema(field.metadata["type_schema"]), size=field.size,
            alignment=field.alignment, offset=field.offset,
            default=field.c_default_factory if factory else field.c_default,
            default_is_factory=factory, structural_eq=field.c_structural_eq,
            frozen=field.frozen)


@dataclasses.dataclass
class FuncInfo:
    """A function (global or a method); ``is_member``: called on an instance."""

    schema: NamedTypeSchema
    is_member: bool

    @staticmethod
    def from_schema(name: str, schema: TypeSchema, *, is_member: bool = False) -> "FuncInfo":
        """The function ``name`` of type ``schema``."""
        return FuncInfo(schema=NamedTypeSchema(name=name, schema=schema), is_member=is_member)


@dataclasses.dataclass
class InitFieldInfo:
    """A field that is a parameter of the generated ``__init__``."""

    name: str
    schema: NamedTypeSchema
    kw_only: bool
    has_default: bool


@dataclasses.dataclass
class ObjectInfo:
    """An object type: its own fields (inherited ones live on the ancestors), methods,
    constructor parameters and layout facts.

    ``ancestors`` lists the type keys from the root down to the parent.
    ``total_size`` is the native ``sizeof`` (header included) when the type
    registered metadata of its own; a type without its own ``ObjectDef``
    inherits its parent's entry, so None. ``is_final``: no subtype allowed
    (None when the type does not say).
    """

    fields: List[NamedTypeSchema]
    methods: List[FuncInfo]
    type_key: Optional[str] = None
    parent_type_key: Optional[str] = None
    init_fields: List[InitFieldInfo] = dataclasses.field(default_factory=list)
    has_init: bool = False
    ancestors: List[str] = dataclasses.field(default_factory=list)
    total_size: Optional[int] = None
    is_final: Optional[bool] = None

    def has_overloaded_methods(self) -> bool:
        """Whether a method name appears with several signatures (same static-ness)."""
        seen: Set[Tuple[str, bool]] = set()
        for method in self.methods:
            key = (method.schema.name, method.is_member)
            if key in seen:
                return True
            seen.add(key)
        return False

    @staticmethod
    def from_type_info(type_info: TypeInfo) -> "ObjectInfo":
        """What the registry says about a type (its :class:`TypeInfo`)."""
        chain: List[TypeInfo] = []
        ancestor = type_info.parent_type_info
        while ancestor is not None:
            chain.append(ancestor)
            ancestor = ancestor.parent_type_info
        chain.reverse()  # root first

        # A constructor is a reflected method or, when generated, a type attribute.
        has_init = (any(m.name == "__ffi_init__" for m in type_info.methods)
                    or _lookup_type_attr(type_info.type_index, "__ffi_init__") is not None)
        init_fields = [
            InitFieldInfo(name=f.name, schema=NamedTypeSchema.from_type_field(f),
                          kw_only=f.c_kw_only, has_default=f.c_has_default)
            for declaring in ([*chain, type_info] if has_init else [])
            for f in declaring.fields if f.c_init
        ]
        methods = [
            FuncInfo(schema=NamedTypeSchema(C.FN_NAME_MAP.get(m.name, m.name),
                                            _parse_type_schema(m.metadata["type_schema"])),
                     is_member=not m.is_static)
            for m in type_info.methods
        ]
        return ObjectInfo(
            # `fields` is None while a py_class registration is still pending.
            fields=[NamedTypeSchema.from_type_field(f) for f in type_info.fields or []],
            methods=methods, type_key=type_info.type_key,
            parent_type_key=chain[-1].type_key if chain else None,
            init_fields=init_fields, has_init=has_init,
            ancestors=[info.type_key for info in chain],
            total_size=type_info.total_size if type_info._has_type_metadata else None,
            is_final=_lookup_type_attr(type_info.type_index, "__ffi_type_final__"))
