"""The object pool: objects the library's own functions returned, reused as arguments.

Many types of a library have no constructor the checker can call, yet other
functions of the same library return them (``Grammar.builtin_json_grammar()``
returns the Grammar that ``Grammar.to_string`` wants as ``self``). The pool
keeps, per type key, a few *recipes*: a call that passed every rule and
returned an object of that type (:class:`~tvm_ffi_check.values.PooledArg`).
An argument of that type (or of an ancestor type, or ``ffi.Object``) is then
made in the worker by making that call again. Objects live in the worker,
which starts afresh for each function, so a recipe, not an object, is what
the pool holds.

:func:`missing_types` tells the runner which functions to check later: the
ones that need a type nothing can make yet.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

from .values import ObjectArg, PooledArg

#: Recipes kept per type: enough variety, few enough to keep a strategy small.
PER_TYPE = 4
#: How deep a recipe may nest recipes among its arguments.
MAX_DEPTH = 6
#: Types the generator makes itself (never pooled).
BUILT_IN = {"ffi.String", "ffi.Bytes", "ffi.Array", "ffi.List", "ffi.Map", "ffi.Dict",
            "ffi.Shape", "ffi.Tensor", "ffi.Function", "ffi.Error", "ffi.BigInt", "ffi.Object"}


def _depth(value: Any) -> int:
    if isinstance(value, (PooledArg, ObjectArg)):
        return 1 + max((_depth(v) for v in value.args), default=0)
    if isinstance(value, (list, tuple)):
        return max((_depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return max((_depth(v) for v in value.values()), default=0)
    return 0


class Pool:
    """Recipes by type key, and each library type's ancestors (to serve a base type)."""

    def __init__(self, catalog: Optional[Dict[str, dict]] = None) -> None:
        self.recipes: Dict[str, List[PooledArg]] = {}
        self.ancestors: Dict[str, List[str]] = {
            key: list(kind.get("ancestors", ())) for key, kind in (catalog or {}).items()}

    def offer(self, type_key: str, target: Tuple[str, str, Optional[str]], name: str,
              args: Sequence[Any]) -> bool:
        """Keeps a call that returned a ``type_key`` object; False when it is not kept."""
        if type_key in BUILT_IN:
            return False
        kept = self.recipes.setdefault(type_key, [])
        recipe = PooledArg(type_key, tuple(target), name, tuple(args))
        if len(kept) >= PER_TYPE or recipe in kept or _depth(recipe) > MAX_DEPTH:
            return False
        kept.append(recipe)
        return True

    def serving(self, key: str) -> List[PooledArg]:
        """Recipes of objects a ``key`` parameter accepts: that type or a subclass
        (``ffi.Object``: any)."""
        if key == "ffi.Object":
            return [r for kept in self.recipes.values() for r in kept]
        return [r for type_key, kept in self.recipes.items()
                if type_key == key or key in self.ancestors.get(type_key, ())
                for r in kept]

    def types(self) -> Set[str]:
        return set(self.recipes)


def library_types(schema: Optional[dict], catalog: Dict[str, dict]) -> Set[str]:
    """The library's own type keys a parameter schema names, containers looked into."""
    if not schema:
        return set()
    found = {schema["type"]} if schema.get("type") in catalog else set()
    for arg in schema.get("args") or ():
        found |= library_types(arg, catalog)
    return found


def takes_objects(schema: Optional[dict], catalog: Dict[str, dict]) -> bool:
    """Whether a parameter takes one of the library's objects (or any, ``ffi.Object``)."""
    return bool(library_types(schema, catalog)) or _generic(schema)


def missing_types(params: Sequence[Optional[dict]], catalog: Dict[str, dict], pool: Pool
                  ) -> Set[str]:
    """The library types a function's parameters need that nothing can make yet (no
    constructor, nothing in the pool). Optional ones count: their calls would all be None."""
    from .objects import constructor

    needed: Set[str] = set()
    for param in params:
        needed |= library_types(param, catalog)
    return {key for key in needed
            if constructor(catalog[key]) is None and not pool.serving(key)}


#: Object types tried in turn in an ``ffi.Object`` parameter before hypothesis runs.
EXPLORED_TYPES = 8


def _generic(schema: Optional[dict]) -> bool:
    if not schema:
        return False
    return schema.get("type") == "ffi.Object" or any(_generic(a) for a in schema.get("args")
                                                     or ())


def simplest(schema: Optional[dict], pool: Pool, generic: Optional[PooledArg]) -> Any:
    """The simplest value a caller passes for ``schema``; ``generic`` in ``ffi.Object``
    places, the first pooled object of a library type in its places (None if none)."""
    from .values import (
        DeviceArg,
        DictArg,
        DTypeArg,
        FunctionArg,
        ListArg,
        OpaquePtrArg,
        ShapeArg,
        TensorArg,
    )

    if not schema:
        return None
    key = schema.get("type")
    args = schema.get("args") or []
    inner = args[0] if args else None
    plain = {"int": 0, "float": 0.0, "bool": False, "ffi.String": "", "std::string": "",
             "const char*": "", "ffi.Bytes": b"", "ffi.BigInt": 0, "ffi.Map": {}}
    if key in plain:
        return plain[key]
    made = {"DataType": lambda: DTypeArg("float32"), "Device": DeviceArg,
            "DLTensor*": lambda: TensorArg("float32", (4,)), "ffi.Shape": lambda: ShapeArg(()),
            "ffi.Tensor": lambda: TensorArg("float32", (4,)), "ffi.List": lambda: ListArg(()),
            "ffi.Function": FunctionArg, "void*": OpaquePtrArg, "ffi.Dict": lambda: DictArg(())}
    if key in made:
        return made[key]()
    if key == "ffi.Object":
        return generic
    if key in ("ffi.Array", "std::vector"):
        return [simplest(inner, pool, generic)] if _generic(inner) else []
    if key == "Tuple":
        return tuple(simplest(a, pool, generic) for a in args)
    if key in ("Optional", "std::optional") and _generic(inner):
        return simplest(inner, pool, generic)
    served = pool.serving(key) if isinstance(key, str) and key not in BUILT_IN else []
    return served[0] if served else None


def explore_calls(params: Sequence[Optional[dict]], pool: Pool) -> List[Tuple[Any, ...]]:
    """The simplest calls with one pooled object of each type in the ``ffi.Object`` places
    (none when no parameter takes an unchecked object)."""
    if not any(_generic(p) for p in params):
        return []
    calls = []
    for type_key in sorted(pool.recipes)[:EXPLORED_TYPES]:
        generic = pool.recipes[type_key][0]
        calls.append(tuple(simplest(p, pool, generic) for p in params))
    return calls
