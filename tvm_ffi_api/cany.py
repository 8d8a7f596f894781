"""``CAny``: one owned ``TVMFFIAny`` held from Python (upstream's ``core.CAny``).

A value converted once, as a call would convert it, and kept in that form:
an object stays referenced until the ``CAny`` dies. :func:`to_py_class_value`
reads it back as a Python value, each time anew.
"""

from __future__ import annotations

from typing import Any

from tvm_ffi_common import abi

from . import releases
from .convert import borrowed_to_python, to_owned_any
from .string import Bytes, String

TI = abi.TVMFFITypeIndex


class CAny:
    """An owned ``TVMFFIAny``: ``CAny(value)`` converts ``value``; ``CAny()`` holds None."""

    __slots__ = ("_value",)

    def __init__(self, value: Any = None) -> None:
        self._value = abi.TVMFFIAny()
        if value is not None:
            to_owned_any(value, self._value)

    def __del__(self) -> None:
        value = getattr(self, "_value", None)
        if value is not None:
            self._value = None
            if value.type_index >= TI.kTVMFFIStaticObjectBegin:
                releases.release(value.v_ptr)  # never the runtime from a finalizer (releases.py)

    @property
    def type_index(self) -> int:
        """The type index of the value held."""
        value = getattr(self, "_value", None)
        return TI.kTVMFFINone if value is None else value.type_index

    def __repr__(self) -> str:
        index = self.type_index
        if index == TI.kTVMFFINone:
            return "CAny(None)"
        if index == TI.kTVMFFIInt:
            return f"CAny(int={self._value.v_int64})"
        if index == TI.kTVMFFIFloat:
            return f"CAny(float={self._value.v_float64})"
        if index == TI.kTVMFFIBool:
            return f"CAny(bool={bool(self._value.v_int64)})"
        if index >= TI.kTVMFFIStaticObjectBegin:
            return f"CAny(object, type_index={index})"
        return f"CAny(type_index={index})"


def to_py_class_value(value: CAny) -> Any:
    """The Python value ``value`` holds (short str/bytes as ``String``/``Bytes``, as upstream)."""
    held = getattr(value, "_value", None)
    if held is None:
        return None
    result = borrowed_to_python(held)
    if held.type_index == TI.kTVMFFISmallStr:
        return String(result)
    if held.type_index == TI.kTVMFFISmallBytes:
        return Bytes(result)
    return result
