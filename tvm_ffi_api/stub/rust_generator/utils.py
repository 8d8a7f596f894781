"""Rust names: ``use`` paths, the per-file collector, type rendering, identifiers, modules.

A dotted FFI name reads as a Rust path (``ffi.String`` -> ``tvm_ffi::String``,
the ``ffi`` namespace being the crate's root); a name without ``::`` is in
scope already (``i64``) and needs no ``use``.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Set, Tuple

from . import consts as C
from .directives import Directives

#: Names a leaf origin, given the type key it was parsed from (None when the same).
TyRender = Callable[[str, Optional[str]], Optional[str]]


@dataclasses.dataclass(frozen=True, eq=True)
class RustUse:
    """``use <path>;`` for a name given as a Rust path or a dotted FFI name."""

    path: str

    def __init__(self, name: str) -> None:
        """The path of ``name`` (dots become ``::``; the ``ffi`` namespace the crate)."""
        if "::" not in name and "." in name:
            head, _, rest = name.partition(".")
            name = f"{C.RUST_MOD_MAP.get(head, head)}.{rest}"
        object.__setattr__(self, "path", name.replace(".", "::"))

    @property
    def leaf(self) -> str:
        """The name the ``use`` brings into scope (the last segment)."""
        return self.path.rsplit("::", 1)[-1]

    def as_use_line(self) -> str:
        """``use <path>;``, or ``""`` for a name that needs none."""
        return f"use {self.path};" if "::" in self.path else ""


def is_crate_type_key(type_key: str) -> bool:
    """Whether the ``tvm_ffi`` crate binds ``type_key`` itself (every ``ffi.*`` key)."""
    return type_key.partition(".")[0] in C.RUST_MOD_MAP


@functools.lru_cache(maxsize=None)
def rust_module_path(path: Path) -> Tuple[str, ...]:
    """The module a ``.rs`` file is, from where it sits under its crate's ``src/``.

    The crate is the nearest folder above with a ``Cargo.toml``. ``src/lib.rs``
    and ``src/main.rs`` are ``crate``; ``src/ir.rs`` and ``src/ir/mod.rs`` are
    ``crate::ir``; a keyword segment is a raw identifier (``r#type``).
    ``ValueError`` for a file in no crate's ``src/``.
    """
    path = path.resolve()
    crate = next((folder for folder in path.parents if (folder / "Cargo.toml").is_file()), None)
    if crate is None:
        raise ValueError(f"{path} is in no Cargo crate: no `Cargo.toml` above it")
    src = crate / "src"
    if src not in path.parents:
        raise ValueError(f"{path} is not under `{src}`, so it is in no module of the crate")
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "mod" or (len(parts) == 1 and parts[0] in ("lib", "main")):
        parts.pop()
    return ("crate", *(f"r#{part}" if part in C.RUST_KEYWORDS else part for part in parts))


def builtin_mirror_name(type_key: str) -> str:
    """The stand-in struct of a builtin ancestor (``ffi.IntEnum`` -> ``FfiIntEnumObj``).

    ``derive(Object)`` counts ``TYPE_DEPTH`` from the embedded base, so a type
    under a builtin needs a base as deep as that builtin, which the crate lacks.
    """
    namespace, _, leaf = type_key.rpartition(".")
    return f"{namespace.replace('.', '_').capitalize()}{leaf}Obj"


@dataclasses.dataclass
class RustImports:
    """One file's collector: its ``use`` items, its directives, the builtin stand-ins it
    defines (type key -> the base each embeds, root first), and the names its own
    ``object/`` blocks define (which no import may take)."""

    items: List[RustUse] = dataclasses.field(default_factory=list)
    directives: Directives = dataclasses.field(default_factory=Directives)
    builtin_mirrors: Dict[str, str] = dataclasses.field(default_factory=dict)
    reserved: Set[str] = dataclasses.field(default_factory=set)

    def record_builtin_base(self, chain: List[str]) -> str:
        """Records a stand-in per builtin of ``chain`` (root side first); returns the name
        of the last one, or the crate's ``Object`` for an empty chain."""
        base = self.record("tvm_ffi::Object")
        for key in chain:
            self.builtin_mirrors.setdefault(key, base)
            base = builtin_mirror_name(key)
        return base

    def record(self, name: str) -> str:
        """Records the ``use`` of ``name`` (once) and returns how to spell it: the leaf, or
        the whole path when another path or a local definition has that leaf."""
        wanted = RustUse(name)
        if not wanted.as_use_line():
            return wanted.leaf
        if wanted in self.items:
            return wanted.leaf
        if wanted.leaf in self.reserved or any(item.leaf == wanted.leaf for item in self.items):
            return wanted.path
        self.items.append(wanted)
        return wanted.leaf


def _generic(base: Optional[str], *params: Optional[str]) -> Optional[str]:
    if base is None or None in params:
        return None
    return f"{base}<{', '.join(p for p in params if p is not None)}>"


def render_rust_type(schema: Any, ty_render: TyRender) -> Optional[str]:
    """``schema`` as a Rust value type, or None when some part has no Rust type."""
    origin, args = schema.origin, schema.args
    if origin in C.RUST_UNSUPPORTED_ORIGINS:
        return None
    if origin in ("Array", "List"):
        return _generic(ty_render(origin, None), render_rust_type(args[0], ty_render))
    if origin == "Map":
        return _generic(ty_render("Map", None), render_rust_type(args[0], ty_render),
                        render_rust_type(args[1], ty_render))
    if origin == "Optional":
        return _generic("Option", render_rust_type(args[0], ty_render))
    if origin == "Callable":
        return ty_render("Callable", None)  # the crate's Function carries no signature
    return ty_render(origin, schema.type_key)


#: A path's module part (``crate::ir::``, ``super::super::``, ``::core::mem::``).
_MODULE_PART = re.compile(r"(?<![\w:])(?:::)?(?:[a-z_][a-z0-9_]*::)+(?=[A-Za-z_])")


def check_tokens(lines: Iterable[str]) -> Tuple[str, ...]:
    """The tokens of generated Rust that ``--check`` compares: without ``use`` and comment
    lines, module parts of paths and commas before a closing bracket, so neither where a
    name is imported from nor how rustfmt wraps a line makes a file stale."""
    kept = (line.strip() for line in lines)
    text = " ".join(line for line in kept if not line.startswith(("use ", "//")))
    tokens = re.findall(r"\w+|\S", _MODULE_PART.sub("", text))
    return tuple(token for token, following in zip(tokens, tokens[1:] + [""])
                 if not (token == "," and following in (")", "]", "}")))


def rust_ident(name: str) -> str:
    """A reflected field name spelled in Rust.

    Two conventions are unwrapped: one trailing underscore of a C++ member
    (``map_`` -> ``map``) and the pairs of a dunder (``__dict__`` -> ``dict``).
    A keyword becomes a raw identifier (``r#type``); the four that cannot, and
    ``base`` (the generated structs' own member), take a trailing underscore.
    """
    if len(name) > 4 and name.startswith("__") and name.endswith("__"):
        name = name[2:-2]
    elif len(name) > 1 and name.endswith("_") and not name.endswith("__"):
        name = name[:-1]
    if name in C.RUST_NOT_RAW_IDENTIFIERS or name in C.RUST_RESERVED_MEMBERS:
        return f"{name}_"
    return f"r#{name}" if name in C.RUST_KEYWORDS else name


def allow_non_snake_case(idents: Iterable[str]) -> List[str]:
    """``#[allow(non_snake_case)]`` when rustc would warn about one of the Rust ``idents``."""
    bare = [ident[2:] if ident.startswith("r#") else ident for ident in idents]
    return ["#[allow(non_snake_case)]"] if any(i != i.lower() for i in bare) else []
