"""The methods every ``Object`` has that need no speed, written once.

Each core defines ``Object`` (a Python class in the reference, an extension
type in the fast core) with the handle, identity and lifetime methods;
:class:`ObjectMethods` adds the rest. The reference's ``Object`` derives from
it; the fast core copies its members onto the C type (:func:`install_onto`).
"""

from __future__ import annotations

import ctypes

from .object_protocols import ObjectRValueRef
from .type_info import type_key


class ObjectMethods:
    """Mixin of ``Object``: type key, repr, ctypes handle and moving."""

    __slots__ = ()

    def __ctypes_handle__(self) -> ctypes.c_void_p:
        """The object's address as a ``ctypes.c_void_p``."""
        return ctypes.c_void_p(self._handle)

    @property
    def type_key(self) -> str:
        """The registered type key of the object, e.g. ``"ffi.Array"``."""
        return type_key(self.type_index)

    def __repr__(self) -> str:
        if not self._handle:
            return f"{type(self).__name__}(chandle=None)"
        try:
            from .function import get_global_func

            return str(get_global_func("ffi.ReprPrint")(self))
        except Exception:  # noqa: BLE001 - repr must never raise
            return f"{type(self).__name__}({self._handle})"

    def _move(self) -> ObjectRValueRef:
        """Passes this object so the callee may take over its reference."""
        return ObjectRValueRef(self)


def install_onto(cls: type) -> None:
    """Copies :class:`ObjectMethods`' members onto ``cls`` (a type that cannot derive from it)."""
    for name, member in vars(ObjectMethods).items():
        if not name.startswith("__") or name in ("__repr__", "__ctypes_handle__"):
            setattr(cls, name, member)
