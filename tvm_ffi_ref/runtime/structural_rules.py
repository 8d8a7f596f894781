"""What structural equality, hashing, visiting and mutation share: kinds, regions, hooks.

Its twin in C: ``tvm_ffi_fast/src/structural_rules.c``.

Structural equality (:mod:`.structural_equal`) and hashing
(:mod:`.structural_hash`) treat an object by the ``structural_eq_hash_kind``
its type declares in ``TVMFFITypeMetadata`` (``TVMFFISEqHashKind``):

==================  ==========================================================
kind                meaning
==================  ==========================================================
Unsupported (0)     structural equality and hashing refuse the type
                    (``TypeError``), as they refuse a type with no metadata
TreeNode (1)        compared by content; sharing is invisible
FreeVar (2)         a variable: equal to another only when the two are bound
                    to each other, which happens in a *definition region* (or
                    when they are the same object)
DAGNode (3)         compared by content, and once equal the pair stays bound:
                    sharing must match (hashing counts DAG nodes in order)
ConstTreeNode (4)   a tree with no variables inside: the same object is equal
                    to itself without looking further
UniqueInstance (5)  compared by identity alone (hashed by content, as upstream)
==================  ==========================================================

A field's flags steer the walk: ``SEqHashIgnore`` leaves the field out;
``SEqHashDefPattern`` / ``SEqHashDefSimple`` make the field a definition
region (``TVMFFIDefRegionKind`` Pattern / Simple) while it is compared. The
region in force decides whether a free variable met there binds. Regions nest
with one precedence rule: inside a Pattern region everything stays Pattern. A
Simple region covers the variable itself but not the variable's own fields,
which are compared as uses (region None).

A type may replace the field walk with a hook, a Function in a type attribute
column: ``__s_equal__(lhs, rhs, eq_cb) -> bool`` and
``__s_hash__(obj, init_hash, hash_cb) -> int`` (details in each module).

Equality, hashing, visiting and mutation walk the value graph depth first, as
upstream's C++ recursion does, but over an explicit work list (``run_frames``):
any depth costs heap only, and a cycle (a value met again inside itself) is a
``ValueError`` naming it (equality, hashing), where upstream overflows its
stack and dies. Only hooks that are not built in nest Python calls
(:func:`deep_recursion` lifts Python's limit while a visit or mutation runs).
"""

from __future__ import annotations

import contextlib
import sys
from typing import Iterator

from tvm_ffi_common import abi

from .dataclass_walk import HOOK_SIGNATURES
from .registry import TYPES
from .signatures import SCHEMAS, register_object_type
from .slots import FFIError
from .type_index import TI

FLAGS = abi.TVMFFIFieldFlagBitMask
KIND = abi.TVMFFISEqHashKind
REGION = abi.TVMFFIDefRegionKind

#: Fields structural operations skip, and the two flags that open a definition region.
#: (Plain ints: a flag test runs once per field of every object walked, and IntFlag's
#: operators are Python functions.)
IGNORE = int(FLAGS.kTVMFFIFieldFlagBitMaskSEqHashIgnore)
DEF_PATTERN = int(FLAGS.kTVMFFIFieldFlagBitMaskSEqHashDefPattern)
DEF_SIMPLE = int(FLAGS.kTVMFFIFieldFlagBitMaskSEqHashDefSimple)

#: The hook columns of structural equality and hashing (created at load, as upstream).
S_EQUAL_ATTR = b"__s_equal__"
S_HASH_ATTR = b"__s_hash__"
HOOK_SIGNATURES[S_EQUAL_ATTR] = ("(0: ffi.Object, 1: ffi.Object, 2: (0: AnyView, 1: AnyView, "
                                 "2: int, 3: AnyView) -> bool) -> bool")
HOOK_SIGNATURES[S_HASH_ATTR] = "(0: ffi.Object, 1: int, 2: (0: AnyView, 1: int, 2: int) -> int) -> int"

def _schema(type_key: str, *args: dict) -> dict:
    return {"type": type_key, "args": list(args)} if args else {"type": type_key}


#: The C++ types the structural globals are declared with (their type schemas).
for _key in ("ffi.StructuralKey", "ffi.VisitInterrupt", "ffi.StructuralVisitor",
             "ffi.StructuralMutator", "ffi.VisitErrorContext"):
    register_object_type(_key, TYPES.key_to_index(_key.encode()))
_PATH = _schema("ffi.reflection.AccessPath")
SCHEMAS["Optional<Tuple<ffi.reflection.AccessPath, ffi.reflection.AccessPath>>"] = _schema(
    "Optional", _schema("Tuple", _PATH, _PATH))
SCHEMAS["Optional<ffi.VisitInterrupt>"] = _schema("Optional", _schema("ffi.VisitInterrupt"))

#: Nested values one walk may descend through before it gives up (see the module docstring).
MAX_DEPTH = 1 << 14

#: The Python frames one nesting level of the deepest walk takes, with room to spare.
_FRAMES_PER_LEVEL = 16


def seq_hash_kind(type_index: int, who: str = "StructuralHash") -> int:
    """The ``structural_eq_hash_kind`` of an object type; ``TypeError`` when it has none.

    Upstream names StructuralHash in both messages, from equality too.
    """
    info = TYPES.entry(type_index).info
    key = TYPES.type_key(type_index)
    if not info.metadata:
        raise FFIError("TypeError", f"Type metadata is not set for type `{key}`, so {who} "
                                    "is not supported for this type")
    kind = info.metadata.contents.structural_eq_hash_kind
    if kind == KIND.kTVMFFISEqHashKindUnsupported:
        raise FFIError("TypeError", f"_type_s_eq_hash_kind is not set for type `{key}`, so {who} "
                                    "is not supported for this type")
    return kind


def field_region(flags: int, current: int) -> int:
    """The region a field with ``flags`` is walked in, entered from region ``current``.

    A field without a definition flag keeps ``current``. A Pattern region
    propagates: entering any region inside it stays Pattern.
    """
    if not flags & (DEF_PATTERN | DEF_SIMPLE):
        return current
    return hook_region(REGION.kTVMFFIDefRegionKindSimple if flags & DEF_SIMPLE
                       else REGION.kTVMFFIDefRegionKindPattern, current)


def hook_region(requested: int, current: int) -> int:
    """The region a hook callback runs a sub-value in: ``requested`` (None keeps ``current``),
    unless ``current`` is Pattern, which propagates."""
    if current == REGION.kTVMFFIDefRegionKindPattern:
        return current
    return current if requested == REGION.kTVMFFIDefRegionKindNone else requested


@contextlib.contextmanager
def deep_recursion() -> Iterator[None]:
    """Lets one walk recurse :data:`MAX_DEPTH` levels deep in Python."""
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(before + MAX_DEPTH * _FRAMES_PER_LEVEL)
    try:
        yield
    finally:
        sys.setrecursionlimit(before)


def register_columns() -> None:
    """Creates the structural hook columns (empty), as upstream's library does at load."""
    for attr in (S_EQUAL_ATTR, S_HASH_ATTR):
        TYPES.register_attr(TI.kTVMFFINone, attr, abi.TVMFFIAny())


register_columns()
