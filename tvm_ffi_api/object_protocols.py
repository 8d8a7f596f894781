"""How a Python value asks to pass as an object: moved, or converted.

* ``obj._move()`` gives an :class:`ObjectRValueRef`: the callee may take
  over the reference (``kTVMFFIObjectRValueRef``), leaving ``obj`` empty.
* A subclass of :class:`ObjectConvertible` passes as what ``asobject()``
  returns.
"""

from __future__ import annotations

from typing import Any


class ObjectRValueRef:
    """Marks an argument whose reference the callee may take over (see ``Object._move``)."""

    __slots__ = ("obj",)

    def __init__(self, obj: Any):
        self.obj = obj


class ObjectConvertible:
    """Base of Python classes that convert themselves to an object when passed."""

    def asobject(self) -> Any:
        """The object this value stands for."""
        raise NotImplementedError()
