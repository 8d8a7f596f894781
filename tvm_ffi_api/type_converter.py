"""Checking and converting Python values against a :class:`~.type_schema.TypeSchema`.

The rules are C++'s (``TypeTraits<T>::TryCastFromAnyView``) seen from Python:
an ``int`` field takes ints and bools (and integral numbers such as numpy
scalars), a ``float`` field also ints, a ``str`` field only strings, a
``List[T]`` field a list, tuple, Array or List whose every element converts
to ``T``, an object field an object of that type or a derived one (or what
the type's ``__ffi_convert__`` hook turns the value into), and so on. A
converter is built once per schema (:func:`build_converter`) and cached on
it; the scalar steps are in :mod:`.scalar_converters`, the compound ones
(containers, ``Optional``, ``Union``, objects, payload enums) here.

Every step returns ``(result, changed)``, so that a container whose elements
all fit is passed on as the very same object. Before a value reaches a step,
the protocols that stand for another value are followed
(``__tvm_ffi_object__``, ``__tvm_ffi_value__``, ``ObjectConvertible``), at
most 64 deep. A failure is a :class:`~.converter_base.ConvertError` naming
what was expected and what was given (``expected int, got str``), prefixed
by where in a container it happened (``element [1]: ...``,
``value for key 'a': ...``); the schema's ``check_value`` and ``convert``
report it as ``TypeError``.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from numbers import Integral
from typing import Any, Optional

from tvm_ffi_common import abi

from . import scalar_converters as scalars, upcalls
from .cany import CAny, to_py_class_value as _to_py_class_value
from .container import Array, Dict, List, Map
from .converter_base import (
    INT64_MAX,
    INT64_MIN,
    VALUE_PROTOCOL_MAX_DEPTH,
    Converter,
    ConvertError,
    Result,
    _indent,
    _mismatch,
    describe,
    pack_checked,
)
from .function import get_global_func
from .object import CObject, ObjectConvertible, ObjectRValueRef, type_index_of
from .string import Bytes, String
from .type_registry import (
    _lookup_type_attr,
    _object_type_key_to_index,
    class_of_type_index,
    type_ancestor_at,
    type_depth,
)

TI = abi.TVMFFITypeIndex
_OBJECT_BEGIN = int(TI.kTVMFFIStaticObjectBegin)


# ------------------------------------------------------------- containers


def _convert_each(pairs, items) -> tuple:
    """Converts ``items[i]`` by ``pairs[i]``'s converter (None: as is); returns the new items
    and whether any changed. A failure names the element."""
    out, changed = [], False
    for position, (conv, item) in enumerate(zip(pairs, items)):
        if conv is None:
            out.append(item)
            continue
        try:
            result, item_changed = dispatch(conv, item)
        except ConvertError as err:
            raise ConvertError(f"element [{position}]: {err.message}") from None
        out.append(result if item_changed else item)
        changed = changed or item_changed
    return out, changed


def _sequence(conv: Converter, value: Any) -> Result:

    target = Array if conv.hint == "Array" else List
    if not isinstance(value, (Array, List, list, tuple)):
        raise _mismatch(target.__name__, value)
    element = conv.subs[0] if conv.subs else None
    if element is None and isinstance(value, target):
        return value, False
    items, changed = _convert_each(itertools.repeat(element), value)
    if isinstance(value, target) and not changed:
        return value, False
    return target(items), True


def _tuple(conv: Converter, value: Any) -> Result:

    if not isinstance(value, (Array, List, list, tuple)):
        raise _mismatch("tuple", value)
    if conv.subs is None:
        return (value, False) if isinstance(value, Array) else (Array(value), True)
    if len(value) != len(conv.subs):
        raise ConvertError(f"expected tuple of length {len(conv.subs)}, got "
                           f"{type(value).__name__} of length {len(value)}")
    items, changed = _convert_each(conv.subs, value)
    if isinstance(value, Array) and not changed:
        return value, False
    return Array(items), True


def _mapping(conv: Converter, value: Any) -> Result:

    target = Map if conv.hint == "Map" else Dict
    if not isinstance(value, Mapping):
        raise _mismatch(target.__name__, value)
    key_conv, value_conv = conv.subs if conv.subs else (None, None)
    if key_conv is None and value_conv is None and isinstance(value, target):
        return value, False
    flat, changed = [], False
    for key, item in value.items():
        new_key, new_item = key, item
        for sub, raw, what in ((key_conv, key, "key"), (value_conv, item, "value for key")):
            if sub is None:
                continue
            try:
                result, item_changed = dispatch(sub, raw)
            except ConvertError as err:
                raise ConvertError(f"{what} {key!r}: {err.message}") from None
            if item_changed:
                changed = True
                if what == "key":
                    new_key = result
                else:
                    new_item = result
        flat += [new_key, new_item]
    if isinstance(value, target) and not changed:
        return value, False
    try:
        return get_global_func(f"ffi.{target.__name__}")(*flat), True
    except Exception as err:  # noqa: BLE001 - e.g. an unhashable key
        raise ConvertError(f"expected {target.__name__}, got {describe(value)}: {err}") from None


# ------------------------------------------------------ optional and union


def _optional(conv: Converter, value: Any) -> Result:
    if value is None:
        return None, False
    return dispatch(conv.subs[0], value)


def _union(conv: Converter, value: Any) -> Result:
    for alternative in conv.subs:
        try:
            return alternative.step(alternative, value)
        except ConvertError:
            pass
    raise _mismatch(conv.hint, value)


# ------------------------------------------------------------------ objects


def is_instance_index(actual: int, target: int) -> bool:
    """Whether type index ``actual`` is ``target`` or derives from it."""
    if actual == target:
        return True

    depth = type_depth(target)
    return depth is not None and type_ancestor_at(actual, depth) == target


def _marshal_object(conv: Converter, value: Any) -> Result:
    """``value`` packed, then passed through the target's ``__ffi_convert__`` hook if any; it
    fits when the packed result is an object of the target type (judged on the packed value:
    a Shape or an opaque Python object is not an ``Object`` in Python)."""
    packed = pack_checked(value, conv.hint, value)
    hook = conv.convert_hook
    try:
        if hook is not None:
            packed = CAny(hook(packed_value(packed)))
    except Exception as err:  # noqa: BLE001 - reported with the mismatch
        raise ConvertError(f"expected {conv.hint}, got {describe(value)}\n"
                           f"  __ffi_convert__ failed:\n{_indent(err, '    ')}") from None
    if packed.type_index >= _OBJECT_BEGIN and is_instance_index(packed.type_index,
                                                                conv.type_index):
        return packed_value(packed), True
    raise _mismatch(conv.hint, value)


def packed_value(packed: Any) -> Any:
    """The Python value of a packed value (a :class:`~.cany.CAny`)."""
    return _to_py_class_value(packed)


def _already(conv: Converter, value: Any) -> bool:
    return isinstance(value, CObject) and is_instance_index(type_index_of(value._handle),
                                                            conv.type_index)


def _object(conv: Converter, value: Any) -> Result:
    if _already(conv, value):
        return value, False
    return _marshal_object(conv, value)


def _int_payload(value: Any) -> Optional[int]:

    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        if not INT64_MIN <= value <= INT64_MAX:
            raise ConvertError(f"integer {value} out of int64 range [{INT64_MIN}, {INT64_MAX}]")
        return value
    if isinstance(value, Integral):
        payload = scalars._builtin(int, value)
        if not INT64_MIN <= payload <= INT64_MAX:
            raise ConvertError(f"integer {payload} out of int64 range [{INT64_MIN}, {INT64_MAX}]")
        return payload
    return None


def _payload_enum(conv: Converter, value: Any) -> Result:
    """An IntEnum/StrEnum field: a variant, or its payload (int or str) looked up."""
    if _already(conv, value):
        return value, False

    payload = None
    if class_of_type_index(conv.type_index) is not None:
        payload = _int_payload(value) if conv.subs == (int,) else (
            value if isinstance(value, str) else None)
    if payload is not None:
        state = _lookup_type_attr(conv.type_index, "__ffi_enum__")
        variant = None if state is None else state.indexes.get(payload)
        if variant is not None:
            return variant, True
    return _marshal_object(conv, value)


# ------------------------------------------------------------ dispatching


def _unwrap_protocol(value: Any) -> tuple:
    """One step of following value protocols: ``(next value, stalled)``."""
    if isinstance(value, (CObject, ObjectRValueRef, String, Bytes)):
        return value, False
    kind = type(value)
    if hasattr(kind, "__tvm_ffi_object__"):
        try:
            return value.__tvm_ffi_object__(), False
        except Exception:  # noqa: BLE001 - reported as the mismatch
            raise ConvertError(f"__tvm_ffi_object__() failed for {describe(value)}") from None
    if hasattr(kind, "__tvm_ffi_value__"):
        try:
            inner = value.__tvm_ffi_value__()
        except Exception:  # noqa: BLE001 - reported as the schema's mismatch instead
            return value, True
        return inner, inner is value
    if isinstance(value, ObjectConvertible):
        try:
            inner = value.asobject()
        except Exception:  # noqa: BLE001 - reported as the mismatch
            raise ConvertError(f"asobject() failed for {describe(value)}") from None
        if not isinstance(inner, CObject):
            raise ConvertError(f"asobject() returned {describe(inner)} for {describe(value)}")
        return inner, False
    return value, False


def _stalled(conv: Converter, value: Any) -> ConvertError:
    while conv.step is _optional:
        conv = conv.subs[0]
    if conv.hint == "Any":
        return ConvertError(f"failed to convert Any from {describe(value)}")
    return _mismatch(conv.hint, value)


#: Built-in types: their instances stand for no other value (no protocol to follow).
_PLAIN_TYPES = frozenset({int, float, bool, str, bytes, type(None), list, tuple, dict})


def dispatch(conv: Converter, value: Any) -> Result:
    """Follows value protocols, then runs the converter: ``(result, changed)``."""
    if type(value) in _PLAIN_TYPES:
        return conv.step(conv, value)
    followed = False
    for _ in range(VALUE_PROTOCOL_MAX_DEPTH + 1):
        inner, stalled = _unwrap_protocol(value)
        if stalled:
            raise _stalled(conv, value)
        if inner is value:
            result, changed = conv.step(conv, value)
            return result, changed or followed
        followed, value = True, inner
    raise ConvertError("infinite __tvm_ffi_value__ cycle detected")


def run_converter(schema: Any, value: Any, failure: str) -> Any:
    """Converts ``value`` by ``schema`` into a CAny; a mismatch is ``TypeError(failure ...)``."""
    try:
        result, _ = dispatch(schema._converter, value)
        return pack_checked(result, schema._converter.hint, value)
    except RecursionError:
        raise TypeError(f"{failure} for {schema!r}: infinite __tvm_ffi_value__ cycle detected") \
            from None
    except ConvertError as err:
        raise TypeError(f"{failure} for {schema!r}: {err.message}") from None


# --------------------------------------------------------------- building

_SCALAR_STEPS = {
    "int": scalars._int, "float": scalars._float, "bool": scalars._bool,
    "None": scalars._none, "str": scalars._str, "bytes": scalars._bytes,
    "Device": scalars._device, "dtype": scalars._dtype,
    "ctypes.c_void_p": scalars._opaque_ptr, "Tensor": scalars._tensor,
    "Callable": scalars._callable,
}


def _argument(schema: Any) -> Optional[Converter]:
    """The converter of a type argument; None for ``Any`` (nothing to check)."""
    return None if schema.origin == "Any" else schema._converter


def _object_converter(type_index: int, hint: str) -> Converter:

    payload = getattr(class_of_type_index(type_index), "__tvm_ffi_payload_enum__", None)
    if payload is not None:
        return Converter(_payload_enum, hint, type_index, (payload,))
    return Converter(_object, hint, type_index)


def build_converter(schema: Any) -> Converter:
    """The converter of ``schema`` (``TypeError`` for an origin that names no type)."""
    origin, args = schema.origin, schema.args
    if origin == "Any" or schema.origin_type_index == TI.kTVMFFIAny:
        return Converter(scalars._any, "Any")
    if origin == "Optional":
        return Converter(_optional, origin, subs=(args[0]._converter,))
    if origin == "Union":
        return Converter(_union, " | ".join(repr(a) for a in args),
                         subs=tuple(a._converter for a in args))
    if origin in _SCALAR_STEPS:
        return Converter(_SCALAR_STEPS[origin], origin)
    if origin in ("Array", "List", "list"):
        element = _argument(args[0]) if args else None
        return Converter(_sequence, "Array" if origin == "Array" else "List",
                         subs=None if element is None else (element,))
    if origin in ("Map", "Dict", "dict"):
        subs = (_argument(args[0]), _argument(args[1])) if len(args) == 2 else (None, None)
        return Converter(_mapping, "Map" if origin == "Map" else "Dict",
                         subs=None if subs == (None, None) else subs)
    if origin == "tuple":
        return Converter(_tuple, origin,
                         subs=None if args is None else tuple(a._converter for a in args))
    if origin == "Object":
        return Converter(_object, "Object", int(TI.kTVMFFIObject))
    if schema.origin_type_index >= _OBJECT_BEGIN:
        return _object_converter(schema.origin_type_index, origin)

    index = _object_type_key_to_index(origin)
    if index is not None:
        return _object_converter(index, origin)
    raise TypeError(f"unknown TypeSchema origin: {origin!r}")

upcalls.install("type_converter", build_converter=build_converter, run_converter=run_converter)
