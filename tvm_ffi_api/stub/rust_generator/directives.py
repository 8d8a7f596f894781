"""The Rust target's one-line directives, parsed and kept per file.

Three name a field (``<type key>.<field>``), three a type::

    // tvm-ffi-stubgen(field): tirx.Add.a -> PrimExpr          the field's Rust type
    // tvm-ffi-stubgen(nullable): ir.Expr.span                 wrapped in Option
    // tvm-ffi-stubgen(enum): tirx.For.kind -> ForKind(i32) { Serial=0, Parallel=1 }
    // tvm-ffi-stubgen(opaque): ir.SourceName                  never mirrored by value
    // tvm-ffi-stubgen(upcast): tirx.Add -> PrimExpr           an extra typed view
    // tvm-ffi-stubgen(custom-new): tirx.Add                   `new` is hand-written

A ``field`` on an inherited field narrows the allocator's parameter. An
``enum`` declares an open integer newtype (its member list is optional).
``custom-new`` renames the generated allocator ``from_fields``.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Dict, List, Set, Tuple

_ENUM = re.compile(r"^(?P<target>\S+)\s*->\s*(?P<name>[A-Za-z_]\w*)\((?P<repr>[iu](?:8|16|32|64))\)"
                   r"\s*(?:\{(?P<body>[^{}]*)\})?$")
_MEMBER = re.compile(r"^(?P<name>[A-Za-z_]\w*)\s*=\s*(?P<value>-?\d+)$")
_ENUM_FORM = "<type_key>.<field> -> Name(i32) { A=0, B=1 }"


@dataclasses.dataclass(frozen=True)
class EnumSpec:
    """An ``enum`` directive: the newtype, its integer representation, its named values."""

    name: str
    repr: str
    members: Tuple[Tuple[str, int], ...]


def _malformed(name: str, lineno: int, form: str) -> ValueError:
    return ValueError(f"Invalid `{name}` directive at line {lineno}. Expected `{form}`")


def _type_key(name: str, text: str, lineno: int) -> str:
    key = text.strip()
    if not key or " " in key:
        raise _malformed(name, lineno, "<type_key>")
    return key


def _field_key(name: str, text: str, lineno: int) -> str:
    key = text.strip()
    if not key or " " in key or "." not in key.strip("."):
        raise _malformed(name, lineno, "<type_key>.<field>")
    return key


def _arrow(name: str, payload: str, lineno: int, form: str) -> Tuple[str, str]:
    left, arrow, right = payload.partition("->")
    if not arrow or not right.strip():
        raise _malformed(name, lineno, form)
    return left, right.strip()


def _enum(payload: str, lineno: int) -> Tuple[str, EnumSpec]:
    found = _ENUM.match(payload.strip())
    if found is None:
        raise _malformed("enum", lineno, _ENUM_FORM)
    members = []
    for item in filter(None, (part.strip() for part in (found.group("body") or "").split(","))):
        member = _MEMBER.match(item)
        if member is None:
            raise _malformed("enum", lineno, _ENUM_FORM)
        members.append((member.group("name"), int(member.group("value"))))
    target = _field_key("enum", found.group("target"), lineno)
    return target, EnumSpec(found.group("name"), found.group("repr"), tuple(members))


@dataclasses.dataclass
class Directives:
    """One file's Rust directives, by ``<type key>.<field>`` or ``<type key>``."""

    field_types: Dict[str, str] = dataclasses.field(default_factory=dict)
    nullable: Set[str] = dataclasses.field(default_factory=set)
    enums: Dict[str, EnumSpec] = dataclasses.field(default_factory=dict)
    opaque: Set[str] = dataclasses.field(default_factory=set)
    upcasts: Dict[str, List[str]] = dataclasses.field(default_factory=dict)
    custom_new: Set[str] = dataclasses.field(default_factory=set)

    def add(self, name: str, payload: str, lineno: int) -> None:
        """Parses and keeps one directive; ``ValueError`` names a malformed one."""
        if name == "field":
            left, rust_type = _arrow(name, payload, lineno, "<type_key>.<field> -> <RustType>")
            self.field_types[_field_key(name, left, lineno)] = rust_type
        elif name == "nullable":
            self.nullable.add(_field_key(name, payload, lineno))
        elif name == "enum":
            target, spec = _enum(payload, lineno)
            self.enums[target] = spec
        elif name == "opaque":
            self.opaque.add(_type_key(name, payload, lineno))
        elif name == "upcast":
            left, rust_type = _arrow(name, payload, lineno, "<type_key> -> <RustType>")
            self.upcasts.setdefault(_type_key(name, left, lineno), []).append(rust_type)
        elif name == "custom-new":
            self.custom_new.add(_type_key(name, payload, lineno))
        else:
            raise ValueError(f"Unknown directive `{name}` at line {lineno}")
