"""What a library offers to be checked: exported symbols, registered globals, methods.

A library built on TVM FFI reaches its callers three ways:

* ``__tvm_ffi_<name>`` symbols it exports (read from its ELF symbol table);
* global functions it registers while it loads (``TVMFFIFunctionSetGlobal``,
  upstream's ``refl::GlobalDef().def(...)``);
* methods of the object types it registers (``refl::ObjectDef<T>().def(...)``,
  ``__ffi_init__`` constructors and static methods among them).

The worker snapshots the global table and the type registry right before it
loads the library and diffs them right after (:func:`snapshot`,
:func:`registered_since`), so everything the library's load added is a
:class:`Target`, with the type schema its registration carries. The
worker's child turns a target back into the Function to call
(:func:`resolve`).
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Set, Tuple

EXPORT, GLOBAL, METHOD = "export", "global", "method"
#: The library's module in the worker (set when it is loaded): what exports resolve in.
LOADED: List[Any] = [None]


@dataclass(frozen=True)
class Target:
    """One function to check.

    ``name`` is what the report shows and ``--functions``/``--skip`` match:
    the export's name, the global's name, or ``<type key>.<method>``.
    """

    kind: str
    symbol: str
    type_key: Optional[str] = None
    static: bool = True

    @property
    def name(self) -> str:
        return f"{self.type_key}.{self.symbol}" if self.kind == METHOD else self.symbol

    def ref(self) -> Tuple[str, str, Optional[str]]:
        """What a request names the target by (plain data for the pipe)."""
        return (self.kind, self.symbol, self.type_key)


# ------------------------------------------------------------- worker side


def _global_names() -> Set[str]:
    import tvm_ffi_ref as api

    return set(api.registry.list_global_func_names())


def _type_keys() -> Set[str]:
    import tvm_ffi_ref as api

    return {str(key) for key in api.get_global_func("ffi.GetRegisteredTypeKeys")()}


def snapshot() -> Tuple[Set[str], Set[str]]:
    """The names of every global function and type key, before the library loads."""
    return _global_names(), _type_keys()


def _text(array) -> str:
    return ctypes.string_at(array.data, array.size).decode("utf-8", "replace") \
        if array.size else ""


def _global_metadata(name: str) -> str:
    import tvm_ffi_ref as api

    return str(api.get_global_func("ffi.GetGlobalFuncMetadata")(name) or "")


def describe_type(key: str) -> Dict[str, Any]:
    """A registered type's methods, fields (its ancestors' first) and whether it can be made."""
    from tvm_ffi_common import abi
    from tvm_ffi_ref import reflection
    from tvm_ffi_ref.type_info import type_info, type_key_to_index

    static_bit = abi.TVMFFIFieldFlagBitMask.kTVMFFIFieldFlagBitMaskIsStaticMethod
    default_bit = abi.TVMFFIFieldFlagBitMask.kTVMFFIFieldFlagBitMaskHasDefault
    index = type_key_to_index(key)
    info = type_info(index)
    methods = [{"name": _text(m.name), "static": bool(m.flags & static_bit),
                "metadata": _text(m.metadata), "doc": _text(m.doc)}
               for m in (info.methods[i] for i in range(info.num_methods))]
    owners = [info.type_ancestors[d].contents for d in range(1, info.type_depth)] + [info]
    fields = [{"name": _text(f.name), "metadata": _text(f.metadata),
               "has_default": bool(f.flags & default_bit)}
              for owner in owners for f in (owner.fields[i] for i in range(owner.num_fields))]
    creatable = bool(info.metadata and info.metadata.contents.creator) or \
        reflection.lookup_type_attr(index, "__ffi_new__") is not None
    ancestors = [_text(info.type_ancestors[d].contents.type_key) for d in range(info.type_depth)]
    return {"key": key, "methods": methods, "fields": fields, "creatable": creatable,
            "ancestors": ancestors}


def registered_since(before: Tuple[Set[str], Set[str]]) -> Dict[str, Any]:
    """The globals (name, metadata text) and types the library's load added."""
    globals_before, types_before = before
    names = sorted(_global_names() - globals_before)
    return {"globals": [{"name": name, "metadata": _global_metadata(name)} for name in names],
            "types": [describe_type(key) for key in sorted(_type_keys() - types_before)]}


def resolve(module, ref: Tuple[str, str, Optional[str]]):
    """The Function a target names (in the worker, where the library is loaded)."""
    import tvm_ffi_ref as api

    kind, symbol, type_key = ref
    if kind == EXPORT:
        return module.get_function(symbol)
    if kind == GLOBAL:
        return api.get_global_func(symbol)
    from tvm_ffi_ref import reflection
    from tvm_ffi_ref.type_info import type_key_to_index

    for method in reflection.type_methods(type_key_to_index(type_key)):
        if method.name == symbol:
            return method.func
    raise LookupError(f"type {type_key} has no method {symbol}")


# ------------------------------------------------------------- parent side


def targets_of(exports: List[str], registered: Dict[str, Any]) -> List[Tuple[Target, str]]:
    """Every target with its metadata text: exports (metadata read later), globals, methods."""
    found: List[Tuple[Target, str]] = [(Target(EXPORT, name), "") for name in exports]
    found += [(Target(GLOBAL, entry["name"]), entry["metadata"])
              for entry in registered.get("globals", ())]
    for kind in registered.get("types", ()):
        for method in kind["methods"]:
            found.append((Target(METHOD, method["name"], kind["key"], method["static"]),
                          method["metadata"]))
    return found


def type_catalog(registered: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
    """The library's types by key (what :mod:`.objects` builds arguments from)."""
    return {kind["key"]: kind for kind in registered.get("types", ())}
