"""The methods every object wrapper has that need no speed, written once.

Each core defines ``CObject`` (a Python class in the reference, an extension
type in the fast core) with the handle, identity and lifetime methods, and
``Object`` under it; :class:`CObjectMethods` adds the rest of ``CObject``'s
and :class:`ObjectMethods` the two that only an ``Object`` has (as upstream,
a Function, Tensor, Error or opaque Python object has no ``type_key`` and no
``_move``). The Python cores' classes derive from them; the compiled core
copies their members onto its C types (:func:`install_onto`).

Copying and pickling go through the value, never the handle: a wrapper owns
exactly one reference, so a copy that duplicated ``_handle`` would make two
owners of one reference (and free the object twice). ``__reduce__`` turns an
object into its JSON graph (``ffi.ToJSONGraphString``) and back
(``ffi.FromJSONGraphString``), as upstream does, so ``copy.copy``,
``copy.deepcopy`` and ``pickle`` of any subclass make a new object or raise.
"""

from __future__ import annotations

import ctypes
from typing import Any, Dict, Optional

from . import upcalls
from .object_protocols import ObjectRValueRef
from .type_info import type_key


def new_object(cls: type) -> Any:
    """An empty wrapper of ``cls``, which ``__setstate__`` then fills (pickle's constructor)."""
    return cls.__new__(cls)


def _json_graph_function(name: str) -> Any:
    func = upcalls.get_global_func(name, allow_missing=True)
    if func is None:
        raise RuntimeError(f"{name} is not registered: this runtime cannot copy or pickle "
                           "objects by value")
    return func


class CObjectMethods:
    """Mixin of ``CObject``: repr, ctypes handle, copying and pickling."""

    __slots__ = ()

    def __ctypes_handle__(self) -> ctypes.c_void_p:
        """The object's address as a ``ctypes.c_void_p``."""
        return ctypes.c_void_p(self._handle)

    def __repr__(self) -> str:
        if not self._handle:
            return f"{type(self).__name__}(chandle=None)"
        try:
            return str(upcalls.get_global_func("ffi.ReprPrint")(self))
        except Exception:  # noqa: BLE001 - repr must never raise
            return f"{type(self).__name__}({self._handle})"

    def __reduce__(self) -> Any:
        return (new_object, (type(self),), self.__getstate__())

    def __getstate__(self) -> Dict[str, Optional[str]]:
        """``{"handle": <the object's JSON graph>}`` (``None`` for an empty wrapper)."""
        to_json = _json_graph_function("ffi.ToJSONGraphString")
        if not self._handle:
            return {"handle": None}
        return {"handle": str(to_json(self, None))}

    def __setstate__(self, state: Dict[str, Optional[str]]) -> None:
        """Makes this (empty) wrapper hold the object ``state`` describes."""
        graph = state["handle"]
        if graph is None:
            self._handle = None
            return
        self.__init_handle_by_constructor__(_json_graph_function("ffi.FromJSONGraphString"),
                                            graph)


class ObjectMethods(CObjectMethods):
    """Mixin of ``Object``: the type key and moving."""

    __slots__ = ()

    @property
    def type_key(self) -> str:
        """The registered type key of the object, e.g. ``"ffi.Array"``."""
        return type_key(self.type_index)

    def _move(self) -> ObjectRValueRef:
        """Passes this object so the callee may take over its reference."""
        return ObjectRValueRef(self)


#: The special methods :func:`install_onto` copies too.
_INSTALLED_DUNDERS = ("__repr__", "__ctypes_handle__", "__reduce__", "__getstate__",
                      "__setstate__")


def install_onto(cls: type, mixin: type) -> None:
    """Copies the members ``mixin`` itself defines onto ``cls`` (a type that cannot derive
    from it)."""
    for name, member in vars(mixin).items():
        if not name.startswith("__") or name in _INSTALLED_DUNDERS:
            setattr(cls, name, member)
