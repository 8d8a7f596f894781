"""What every type converter shares: the error, the converter record, messages, packing.

See :mod:`.type_converter` for the rules the converters implement. Every
conversion step returns ``(result, changed)``: the value converted, and
whether it differs from the input.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Tuple

from .cany import CAny, to_py_class_value as _to_py_class_value
from .object import CObject, type_index_of
from .type_registry import _lookup_type_attr, type_index_to_key

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
#: How many protocol values may stand for one another before it counts as a cycle.
VALUE_PROTOCOL_MAX_DEPTH = 64

Result = Tuple[Any, bool]


class ConvertError(Exception):
    """A value does not fit a schema (internal; reported as ``TypeError``)."""

    @property
    def message(self) -> str:
        """The description of the mismatch."""
        return self.args[0]


def describe(value: Any) -> str:
    """How messages name the type of ``value`` (an object by its type key)."""
    if value is None:
        return "None"
    for kind, name in ((bool, "bool"), (int, "int"), (float, "float"), (str, "str"),
                       ((bytes, bytearray), "bytes")):
        if isinstance(value, kind):
            return name
    if isinstance(value, CObject):
        info = getattr(type(value), "__tvm_ffi_type_info__", None)
        if info is not None:
            return info.type_key

        return type_index_to_key(type_index_of(value._handle))
    return type(value).__qualname__


def _indent(message: Any, prefix: str) -> str:
    return prefix + str(message).replace("\n", "\n" + prefix)


def pack_checked(value: Any, expected: str, original: Any) -> CAny:
    """``value`` packed as a kernel receives it; a packing failure is a :class:`ConvertError`."""
    try:
        return CAny(value)
    except ConvertError:
        raise
    except Exception as err:  # noqa: BLE001 - any packing failure is a mismatch
        raise ConvertError(f"expected {expected}, got {describe(original)}: {err}") from None


def materialize(value: Any, expected: str, original: Any) -> Any:
    """The Python value ``value`` becomes once packed (protocol values are resolved)."""
    return _to_py_class_value(pack_checked(value, expected, original))


def _mismatch(expected: str, value: Any) -> ConvertError:
    return ConvertError(f"expected {expected}, got {describe(value)}")


class Converter:
    """The converter of one schema: a step function and the converters of its arguments."""

    __slots__ = ("step", "hint", "type_index", "subs", "_hook", "_hook_ready")

    def __init__(self, step: Callable[["Converter", Any], Result], hint: str,
                 type_index: int = -1, subs: Optional[tuple] = None):
        self.step = step
        self.hint = hint
        self.type_index = type_index
        self.subs = subs
        self._hook_ready = False
        self._hook = None

    @property
    def convert_hook(self) -> Any:
        """The target type's ``__ffi_convert__`` Function, if it has one (looked up once)."""
        if not self._hook_ready:

            self._hook = _lookup_type_attr(self.type_index, "__ffi_convert__")
            self._hook_ready = True
        return self._hook


