"""Access paths: where in a value graph something is, step by step from the root.

``ffi.reflection.AccessPath`` objects are made by the runtime (each is a
parent path plus one ``ffi.reflection.AccessStep``) and returned by
:func:`get_first_structural_mismatch`; Python builds them from
:meth:`AccessPath.root`. A path prints as ``<root>.field[3]["key"]``.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any

from .object import Object
from .registry import register_object


class AccessKind(IntEnum):
    """What one step of a path does (``AccessStep.kind``)."""

    ATTR = 0
    ARRAY_ITEM = 1
    MAP_ITEM = 2
    ATTR_MISSING = 3
    ARRAY_ITEM_MISSING = 4
    MAP_ITEM_MISSING = 5


@register_object("ffi.reflection.AccessStep")
class AccessStep(Object):
    """One step of an access path: its ``kind`` and ``key`` (a name, an index or a map key)."""


@register_object("ffi.reflection.AccessPath")
class AccessPath(Object):
    """A path from a root value to a nested attribute, element or map entry.

    ``AccessPath.root().attr("layer").array_item(2)`` reaches
    ``root.layer[2]``; the ``*_missing`` steps name an attribute, element or
    key that one side of a comparison lacks.
    """

    def __init__(self) -> None:
        raise ValueError("AccessPath can't be initialized directly. "
                         "Use AccessPath.root() to create a path to the root object")

    @staticmethod
    def root() -> "AccessPath":
        """The empty path, naming the root value itself."""
        return AccessPath._root()

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, AccessPath) and self._path_equal(other)

    def __ne__(self, other: Any) -> bool:
        return not self.__eq__(other)

    def is_prefix_of(self, other: "AccessPath") -> bool:
        """Whether ``other`` starts with every step of this path."""
        return self._is_prefix_of(other)

    def attr(self, attr_key: str) -> "AccessPath":
        """This path extended to attribute ``attr_key``."""
        return self._attr(attr_key)

    def attr_missing(self, attr_key: str) -> "AccessPath":
        """This path extended by an attribute ``attr_key`` that is missing."""
        return self._attr_missing(attr_key)

    def array_item(self, index: int) -> "AccessPath":
        """This path extended to element ``index``."""
        return self._array_item(index)

    def array_item_missing(self, index: int) -> "AccessPath":
        """This path extended by an element ``index`` that is missing."""
        return self._array_item_missing(index)

    def map_item(self, key: Any) -> "AccessPath":
        """This path extended to the map entry of ``key``."""
        return self._map_item(key)

    def map_item_missing(self, key: Any) -> "AccessPath":
        """This path extended by a map entry ``key`` that is missing."""
        return self._map_item_missing(key)

    def to_steps(self) -> Any:
        """The steps from the root, in order (an Array of :class:`AccessStep`)."""
        return self._to_steps()

    __hash__ = Object.__hash__  # by identity, as any object


__all__ = ["AccessKind", "AccessPath", "AccessStep"]
