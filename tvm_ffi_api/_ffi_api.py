"""The runtime's ``ffi.*`` global functions as module attributes: ``_ffi_api.MapSize``.

Upstream's ``tvm_ffi._ffi_api``. Each name is looked up on first use, so a
global registered later (by a library loaded after this module) is found too;
a name the runtime does not know raises ``AttributeError``.
"""

from __future__ import annotations

from typing import Any, List

from .function import get_global_func
from .registry import list_global_func_names

_PREFIX = "ffi."


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    func = get_global_func(_PREFIX + name, allow_missing=True)
    if func is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}: the runtime "
                             f"has no global function {_PREFIX}{name}")
    func.__name__ = name
    globals()[name] = func
    return func


def __dir__() -> List[str]:
    return sorted({name[len(_PREFIX):] for name in list_global_func_names()
                   if name.startswith(_PREFIX) and "." not in name[len(_PREFIX):]} |
                  set(globals()))
