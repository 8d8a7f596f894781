"""Python imports and signatures: the pieces a stub block is made of.

A type reads in a stub as its last dotted component (``collections.abc.Sequence``
-> ``Sequence``) plus an import; the ``ty_map`` callables passed around here
do both (return the short name, record the import). Parameters are rendered
positional-only (``_0``, ``_1``, ..., then ``/``), as a TVM FFI function
takes them.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Dict, List, Optional, Tuple

from ..utils import FuncInfo, ObjectInfo
from . import consts as C

TyMap = Callable[[str], str]


@dataclasses.dataclass(frozen=True, eq=True)
class ImportItem:
    """One imported name: ``from <mod> import <name> [as <alias>]``.

    Built from a dotted full name; a module prefix of :data:`consts.MOD_MAP`
    is rewritten (``ffi.Object`` comes from ``tvm_ffi``).
    ``type_checking_only``: imported under ``if TYPE_CHECKING:``.
    """

    mod: str
    name: str
    type_checking_only: bool = False
    alias: Optional[str] = None

    def __init__(self, full_name: str, type_checking_only: bool = False,
                 alias: Optional[str] = None) -> None:
        """The import of ``full_name`` (``module.name``, or a bare module name)."""
        mod, _, name = full_name.rpartition(".")
        for prefix, replacement in C.MOD_MAP.items():
            if mod == prefix or mod.startswith(prefix + "."):
                mod = replacement + mod[len(prefix):]
                break
        object.__setattr__(self, "mod", mod)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "type_checking_only", type_checking_only)
        object.__setattr__(self, "alias", alias)

    @property
    def name_with_alias(self) -> str:
        """``name as alias``, or ``name``."""
        return f"{self.name} as {self.alias}" if self.alias else self.name

    @property
    def full_name(self) -> str:
        """``mod.name`` (``name`` when there is no module)."""
        return f"{self.mod}.{self.name}" if self.mod else self.name

    def __str__(self) -> str:
        """The import statement."""
        if self.mod:
            return f"from {self.mod} import {self.name_with_alias}"
        return f"import {self.name_with_alias}"

    __repr__ = __str__


@dataclasses.dataclass
class PythonImports:
    """The imports one file's blocks need, collected while they are generated.

    ``has_lib_load``: the file loads its library (so ``LIB`` is exported).
    """

    items: List[ImportItem] = dataclasses.field(default_factory=list)
    has_lib_load: bool = False


def _positional(types: List[str]) -> str:
    return ", ".join(f"_{i}: {t}" for i, t in enumerate(types))


def render_func_signature(func: FuncInfo, ty_map: TyMap, indent: int,
                          input_ty_map: Optional[TyMap] = None) -> str:
    """``def <name>(<params>, /) -> <return>: ...`` for ``func`` (a Callable schema).

    A member's first parameter is ``self``. A schema that names no parameters
    reads ``*args: Any``. ``ValueError`` for a schema that is no Callable.
    """
    input_ty_map = input_ty_map or ty_map
    schema = func.schema
    head = " " * indent + f"def {schema.name.rsplit('.', 1)[-1]}("
    if schema.origin != "Callable":
        raise ValueError(f"Expected Callable type schema, but got: {schema}")
    if not schema.named_args:
        ty_map("Any")
        return head + "*args: Any) -> Any: ..."
    returns = schema.named_args["return"][0].output_repr(ty_map)
    if "params" not in schema.named_args:
        ty_map("Any")
        return head + f"*args: Any) -> {returns}: ..."
    params = []
    for i, param in enumerate(schema.named_args["params"]):
        params.append("self" if func.is_member and i == 0
                      else f"_{i}: {param.input_repr(input_ty_map)}")
    if params:
        params.append("/")
    return head + ", ".join(params) + f") -> {returns}: ..."


def render_object_fields(info: ObjectInfo, ty_map: TyMap, indent: int) -> List[str]:
    """``<name>: <type>`` for each of the type's own fields."""
    return [f"{' ' * indent}{f.name}: {f.output_repr(ty_map)}" for f in info.fields]


def render_object_methods(info: ObjectInfo, ty_map: TyMap, indent: int,
                          input_ty_map: Optional[TyMap] = None) -> List[str]:
    """The methods, grouped by name (the group at its first appearance), ``@overload`` on
    each of several signatures, ``@staticmethod`` on the static ones. A reflected
    ``__ffi_init__`` reads as the instance method Python installs."""
    input_ty_map = input_ty_map or ty_map
    groups: Dict[Tuple[str, bool], List[FuncInfo]] = {}
    for method in info.methods:
        groups.setdefault((method.schema.name, method.is_member), []).append(method)
    lines = []
    for group in groups.values():
        for method in group:
            if len(group) > 1:
                lines.append(" " * indent + "@overload")
            if method.schema.name.rsplit(".", 1)[-1] == "__ffi_init__":
                lines.append(_ffi_init_from_method(method, ty_map, indent, input_ty_map))
                continue
            if not method.is_member:
                lines.append(" " * indent + "@staticmethod")
            lines.append(render_func_signature(method, ty_map, indent, input_ty_map))
    return lines


def _ffi_init_from_method(method: FuncInfo, ty_map: TyMap, indent: int,
                          input_ty_map: TyMap) -> str:
    """``def __ffi_init__(self, <params>, /) -> None: ...``, whatever the C++ registered."""
    prefix = " " * indent + "def __ffi_init__(self"
    named = method.schema.named_args if method.schema.origin == "Callable" else None
    if not named or "params" not in named:
        ty_map("Any")
        return prefix + ", *args: Any) -> None: ..."
    params = _positional([p.input_repr(input_ty_map) for p in named["params"]])
    return prefix + (f", {params}, /) -> None: ..." if params else ") -> None: ...")


def _field_params(info: ObjectInfo, input_ty_map: TyMap) -> str:
    """The constructor parameters: positional ones (required first), then ``*`` and the
    keyword-only ones (required first); a default reads ``= ...``."""
    parts: List[str] = []
    for kw_only in (False, True):
        fields = [f for f in info.init_fields if f.kw_only == kw_only]
        if kw_only and fields:
            parts.append("*")
        for has_default in (False, True):
            parts += [f"{f.name}: {f.schema.input_repr(input_ty_map)}"
                      + (" = ..." if has_default else "")
                      for f in fields if f.has_default == has_default]
    return ", ".join(parts)


def _init_from_fields(name: str, info: ObjectInfo, indent: int, input_ty_map: TyMap) -> List[str]:
    params = _field_params(info, input_ty_map)
    return [f"{' ' * indent}def {name}(self{', ' + params if params else ''}) -> None: ..."]


def render_object_ffi_init(info: ObjectInfo, ty_map: TyMap, indent: int,
                           input_ty_map: Optional[TyMap] = None) -> List[str]:
    """``__ffi_init__`` from the constructor's fields, for a type whose constructor is
    generated (a reflected ``__ffi_init__`` method is rendered with the methods)."""
    if not info.has_init or any(m.schema.name.rsplit(".", 1)[-1] == "__ffi_init__"
                                for m in info.methods):
        return []
    return _init_from_fields("__ffi_init__", info, indent, input_ty_map or ty_map)


def render_object_init(info: ObjectInfo, ty_map: TyMap, indent: int,
                       input_ty_map: Optional[TyMap] = None) -> List[str]:
    """``__init__`` from the constructor's fields, for a type that has a constructor."""
    if not info.has_init:
        return []
    return _init_from_fields("__init__", info, indent, input_ty_map or ty_map)
