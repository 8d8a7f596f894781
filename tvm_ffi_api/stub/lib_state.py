"""What the loaded libraries registered: global functions and object types, grouped by prefix.

The prefix of ``my_ext.sub.add`` is ``my_ext.sub``: one stub block (or one
generated module) covers a prefix. Read from the running registry, so
whatever ``--imports`` / ``--dlls`` loaded is included.
"""

from __future__ import annotations

import functools
import heapq
from typing import Dict, List

from ..core import TypeSchema, _lookup_or_register_type_info_from_type_key
from ..function import get_global_func
from ..registry import get_global_func_metadata, list_global_func_names
from . import consts as C
from .utils import FuncInfo, NamedTypeSchema, ObjectInfo


@functools.lru_cache(maxsize=None)
def object_info_from_type_key(type_key: str) -> ObjectInfo:
    """The :class:`ObjectInfo` of a registered type key (cached)."""
    type_info = _lookup_or_register_type_info_from_type_key(str(type_key))
    if type_info.type_key != type_key:
        raise ValueError(f"type key {type_key!r} resolved to {type_info.type_key!r}")
    return ObjectInfo.from_type_info(type_info)


@functools.lru_cache(maxsize=None)
def _func_info_from_global_name(name: str) -> FuncInfo:
    schema = TypeSchema.from_json_str(get_global_func_metadata(name)["type_schema"])
    return FuncInfo(schema=NamedTypeSchema(name=name, schema=schema), is_member=False)


def collect_global_funcs() -> Dict[str, List[FuncInfo]]:
    """The global functions with a type schema, by prefix, each list sorted by name.

    A name without a prefix, or a function without a schema, is reported and skipped.
    """
    by_prefix: Dict[str, List[FuncInfo]] = {}
    for name in list_global_func_names():
        prefix, dot, _ = name.rpartition(".")
        if not dot:
            print(f"{C.TERM_YELLOW}[Skipped] Invalid name in global function: {name}{C.TERM_RESET}")
            continue
        try:
            info = _func_info_from_global_name(name)
        except Exception:  # noqa: BLE001 - no metadata, or metadata without a schema
            print(f"{C.TERM_YELLOW}[Skipped] Function has no type schema: {name}{C.TERM_RESET}")
            continue
        by_prefix.setdefault(prefix, []).append(info)
    for funcs in by_prefix.values():
        funcs.sort(key=lambda f: f.schema.name)
    return by_prefix


def collect_type_keys() -> Dict[str, List[str]]:
    """The registered object type keys with a prefix, by prefix, each list sorted."""
    by_prefix: Dict[str, List[str]] = {}
    for type_key in get_global_func("ffi.GetRegisteredTypeKeys")():
        prefix, dot, _ = str(type_key).rpartition(".")
        if dot:
            by_prefix.setdefault(prefix, []).append(str(type_key))
    for keys in by_prefix.values():
        keys.sort()
    return by_prefix


def toposort_objects(type_keys: List[str]) -> List[ObjectInfo]:
    """The :class:`ObjectInfo` of each key (duplicates dropped), parents before children.

    Among the types ready at any point, the alphabetically first comes first,
    so the order is stable however the keys were listed.
    """
    infos = {key: object_info_from_type_key(key) for key in dict.fromkeys(type_keys)}
    children: Dict[str, List[str]] = {key: [] for key in infos}
    waiting: Dict[str, int] = {key: 0 for key in infos}
    for key, info in infos.items():
        if info.parent_type_key in infos:
            children[info.parent_type_key].append(key)
            waiting[key] += 1
    ready = [key for key, count in waiting.items() if count == 0]
    heapq.heapify(ready)
    ordered: List[ObjectInfo] = []
    while ready:
        key = heapq.heappop(ready)
        ordered.append(infos[key])
        for child in children[key]:
            waiting[child] -= 1
            if waiting[child] == 0:
                heapq.heappush(ready, child)
    return ordered
