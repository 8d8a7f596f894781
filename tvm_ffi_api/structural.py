"""Structural equality and hashing, structural keys, and structural walks over value graphs.

The runtime does the work (its ``ffi.Structural*`` globals, driven by
reflection: each type's ``structural_eq_hash_kind``, its fields' flags and
its ``__s_equal__`` / ``__s_hash__`` / ``__s_visit__`` / ``__s_mutate__``
hooks); this module is the Python face of it, as upstream's ``tvm_ffi``
offers it:

* :func:`structural_equal`, :func:`structural_hash` and
  :func:`get_first_structural_mismatch` compare and hash values by content;
  :class:`StructuralKey` wraps a value to key a dict or Map by structure.
* :func:`structural_walk` calls typed callbacks on every value of a graph,
  before or after its children; :func:`structural_visit` lets a callback own
  the descent into its value; :func:`structural_map` and
  :func:`structural_mutate` rebuild a graph with replacements, copying only
  what changes.

A callback entry is a callable (for every value), a ``(type, callback)``
pair, a ``((type1, type2, ...), callback)`` pair, or a sequence of pairs; the
first entry whose type matches a value is used. A type is a builtin (``int``,
``float``, ``bool``, ``str``, ``bytes``, ``None``, ...), a registered object
class, or ``typing.Any`` / ``object`` for every value.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Sequence
from enum import IntEnum
from typing import Any, Callable, List, Optional, Tuple, Union

from tvm_ffi_common import abi

from .container import Array, Dict, List as FFIList, Map
from .device import Device
from .dtype import dtype
from .function import Function, get_global_func
from .object import Object
from .registry import register_object
from .string import Bytes, String
from .tensor import Tensor

TI = abi.TVMFFITypeIndex
_MASK64 = 0xFFFFFFFFFFFFFFFF


def _ffi(name: str) -> Function:
    """The runtime's global ``ffi.<name>``."""
    return get_global_func(f"ffi.{name}")


class WalkOrder(IntEnum):
    """Whether a walk calls a value's callback before (PREORDER) or after its children."""

    PREORDER = 0
    POSTORDER = 1


class WalkResult(IntEnum):
    """What a walk callback returns: go into the value's children, or skip them."""

    ADVANCE = 0
    SKIP = 1


class InplaceMode(IntEnum):
    """Whether a mutation may change a uniquely owned value in place (ALLOW) or must copy."""

    DISALLOW = 0
    ALLOW = 1


class DefRegionKind(IntEnum):
    """The definition region a value is visited in (``TVMFFIDefRegionKind``)."""

    NONE = 0
    DEF_PATTERN = 1
    DEF_SIMPLE = 2


# ------------------------------------------------------------ equality and hashing


def structural_equal(lhs: Any, rhs: Any, map_free_vars: bool = False,
                     skip_tensor_content: bool = False) -> bool:
    """Whether two values are equal by structure (content), not identity.

    ``map_free_vars`` lets free variables bind to each other;
    ``skip_tensor_content`` compares tensors by shape and dtype only.
    """
    return _ffi("StructuralEqual")(lhs, rhs, map_free_vars, skip_tensor_content)


def structural_hash(value: Any, map_free_vars: bool = False,
                    skip_tensor_content: bool = False) -> int:
    """The structural hash of a value (an unsigned 64-bit int), consistent with
    :func:`structural_equal` under the same options."""
    return _ffi("StructuralHash")(value, map_free_vars, skip_tensor_content) & _MASK64


def get_first_structural_mismatch(lhs: Any, rhs: Any, map_free_vars: bool = False,
                                  skip_tensor_content: bool = False) -> Optional[Any]:
    """None when the values are structurally equal, else the pair of
    :class:`~.access_path.AccessPath` (lhs, rhs) to the first difference."""
    return _ffi("GetFirstStructuralMismatch")(lhs, rhs, map_free_vars, skip_tensor_content)


@register_object("ffi.StructuralKey")
class StructuralKey(Object):
    """A value wrapped to be a dict or Map key by structure; its hash is computed once.

    ``StructuralKey([1, 2]) == StructuralKey([1, 2])``, and both hash alike.
    """

    def __init__(self, key: Any) -> None:
        self.__init_handle_by_constructor__(_ffi("StructuralKey"), key)

    def __hash__(self) -> int:
        return self.hash_i64 & _MASK64

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, StructuralKey) and bool(_ffi("StructuralKeyEqual")(self, other))

    def __ne__(self, other: Any) -> bool:
        return not self.__eq__(other)


# ------------------------------------------------------------ visiting


@register_object("ffi.VisitInterrupt")
class VisitInterrupt(Object):
    """Returned by a walk or visit callback to stop the whole traversal; carries ``value``."""

    def __init__(self, value: Any = None) -> None:
        self.__init_handle_by_constructor__(_ffi("VisitInterrupt"), value)


@register_object("ffi.StructuralVisitor")
class StructuralVisitor(Object):
    """The traversal a :func:`structural_visit` callback receives (not made directly)."""

    def visit(self, value: Any) -> Optional[VisitInterrupt]:
        """Visits ``value`` as the traversal would: its callback, or its default descent."""
        return _ffi("StructuralVisitorVisit")(self, value)

    def default_visit(self, value: Any) -> Optional[VisitInterrupt]:
        """Descends into ``value``'s children (its ``__s_visit__`` hook or its fields),
        skipping the callbacks for ``value`` itself. Never call it on the value whose own
        ``__s_visit__`` hook is running: that recurses without end."""
        return _ffi("StructuralVisitorDefaultVisit")(self, value)

    def def_region_kind(self) -> DefRegionKind:
        """The definition region in force."""
        return DefRegionKind(_ffi("StructuralVisitorDefRegionKind")(self))

    def with_def_region_kind(self, kind: int, callback: Callable[[], Any]) -> Any:
        """Runs ``callback()`` with region ``kind`` in force (a Pattern region stays)."""
        return _ffi("StructuralVisitorWithDefRegionKind")(self, kind, callback)


@register_object("ffi.StructuralMutator")
class StructuralMutator(Object):
    """The mutation a :func:`structural_mutate` / :func:`structural_map` callback runs in."""

    def mutate(self, value: Any) -> Any:
        """``value`` mutated by the traversal (never in place); unchanged values come back."""
        return _ffi("StructuralMutatorMutate")(self, value)

    def default_mutate(self, value: Any) -> Any:
        """``value`` mutated by its default rule (hook or fields), bypassing its callback."""
        return _ffi("StructuralMutatorDefaultMutate")(self, value)

    def var_remap_get(self, var: Object) -> Optional[Any]:
        """The replacement recorded for a variable (or DAG node), or None."""
        return _ffi("StructuralMutatorVarRemapGet")(self, var)

    def var_remap_set(self, var: Object, mapped_value: Any) -> None:
        """Records ``mapped_value`` as the replacement of a variable (or DAG node)."""
        _ffi("StructuralMutatorVarRemapSet")(self, var, mapped_value)

    def def_region_kind(self) -> DefRegionKind:
        """The definition region in force."""
        return DefRegionKind(_ffi("StructuralMutatorDefRegionKind")(self))

    def with_def_region_kind(self, kind: int, callback: Callable[[], Any]) -> Any:
        """Runs ``callback()`` with region ``kind`` in force (a Pattern region stays)."""
        return _ffi("StructuralMutatorWithDefRegionKind")(self, kind, callback)


# ------------------------------------------------------------ callback entries

#: Builtin annotations and the type index a callback for them matches.
_BUILTIN_INDICES = ((type(None), TI.kTVMFFINone), (None, TI.kTVMFFINone),
                    (bool, TI.kTVMFFIBool), (int, TI.kTVMFFIInt), (float, TI.kTVMFFIFloat),
                    (str, TI.kTVMFFIStr), (bytes, TI.kTVMFFIBytes),
                    (list, TI.kTVMFFIList), (dict, TI.kTVMFFIDict), (tuple, -3))


def _annotation_index(annotation: Any) -> int:
    """The type index upstream's TypeSchema gives an annotation (TypeError if it has none)."""
    if annotation is Any:
        return -1
    for builtin, index in _BUILTIN_INDICES:
        if annotation is builtin:
            return index
    origin = typing.get_origin(annotation)
    if origin is Union:
        return -2
    if origin is not None:
        return _annotation_index(origin)
    if isinstance(annotation, type):
        for cls, index in ((String, TI.kTVMFFIStr), (Bytes, TI.kTVMFFIBytes),
                           (Device, TI.kTVMFFIDevice), (dtype, TI.kTVMFFIDataType),
                           (Function, TI.kTVMFFIFunction), (Tensor, TI.kTVMFFITensor),
                           (FFIList, TI.kTVMFFIList), (Dict, TI.kTVMFFIDict),
                           (Array, TI.kTVMFFIArray), (Map, TI.kTVMFFIMap)):
            if issubclass(annotation, cls):
                return index
        if issubclass(annotation, Object):
            return getattr(annotation, "_tvm_ffi_type_index", TI.kTVMFFIObject)
    raise TypeError(f"Cannot convert {annotation!r} to TypeSchema")


def _callback_type_index(callback_type: Any, api_name: str) -> int:
    annotation = Any if callback_type is object else callback_type
    try:
        type_index = _annotation_index(annotation)
    except TypeError as err:
        raise TypeError(f"{api_name} callback type must be a supported builtin, "
                        "typing.Any/object, or an FFI-registered object class") from err
    if type_index < 0 and annotation is not Any:
        raise TypeError(f"{api_name} callback type_index is negative, the only "
                        "acceptable negative type_index is -1 for Any")
    return type_index


def _normalize_callbacks(callbacks: Any, api_name: str) -> List[Tuple[Any, Callable]]:
    """``(type, callback)`` pairs, one type each, from any accepted callback form."""
    entries: List[Tuple[Any, Callable]] = []

    def add(entry: tuple) -> None:
        types, fn = entry
        entries.extend((t, fn) for t in (types if isinstance(types, tuple) else (types,)))

    if callable(callbacks):
        entries.append((Any, callbacks))
    elif isinstance(callbacks, tuple) and len(callbacks) == 2 and callable(callbacks[1]):
        add(callbacks)
    elif isinstance(callbacks, Sequence) and not isinstance(callbacks, (str, bytes)):
        for entry in callbacks:
            if not isinstance(entry, tuple) or len(entry) != 2 or not callable(entry[1]):
                raise TypeError(f"{api_name} callbacks within a sequence must be "
                                "(type, callback) tuples")
            add(entry)
    else:
        raise TypeError(f"{api_name} callbacks must be callbacks, (type, callback) entries, "
                        "((type1, type2, ...), callback) entries, or sequences of tuple entries")
    return entries


def _typed_entries(callbacks: Any, api_name: str,
                   wrap: Callable[[Callable], Callable] = lambda fn: fn) -> list:
    return [(_callback_type_index(t, api_name), wrap(fn))
            for t, fn in _normalize_callbacks(callbacks, api_name)]


def _with_region(fn: Callable) -> Callable:
    """A ``(value, kind)`` callback given its region as a :class:`DefRegionKind`."""
    return lambda value, kind: fn(value, DefRegionKind(kind))


def _order(order: Union[str, WalkOrder], what: str) -> int:
    if isinstance(order, WalkOrder):
        return int(order)
    if order in ("pre", "post"):
        return int(WalkOrder.PREORDER if order == "pre" else WalkOrder.POSTORDER)
    raise ValueError(f"Unknown structural {what} order: {order!r}")


def _accepts_inplace_mode(callback: Callable) -> bool:
    """Whether a structural_mutate callback takes the optional third ``inplace_mode``."""
    try:
        signature = inspect.signature(callback)
    except (TypeError, ValueError):
        return False
    try:
        signature.bind(None, None, InplaceMode.DISALLOW)
    except TypeError:
        try:
            signature.bind(None, None)
        except TypeError as err:
            raise TypeError("structural_mutate callback must accept (value, mutator) or "
                            "(value, mutator, inplace_mode)") from err
        return False
    return True


# ------------------------------------------------------------ traversals


def structural_walk(root: Any, callbacks: Any = (), with_def_region_kind: Any = (),
                    order: Union[str, WalkOrder] = "post") -> Optional[VisitInterrupt]:
    """Calls the first matching callback on every value of ``root``'s graph, as a tree.

    ``callbacks`` take ``(value)``; ``with_def_region_kind`` ones take
    ``(value, DefRegionKind)``. A pre-order callback may return
    :attr:`WalkResult.SKIP` to skip the value's children; any callback may
    return a :class:`VisitInterrupt` to stop, which the walk returns.
    """
    order_int = _order(order, "walk")
    return _ffi("StructuralWalk")(
        root, _typed_entries(callbacks, "structural_walk"),
        _typed_entries(with_def_region_kind, "structural_walk", _with_region), order_int)


def structural_visit(root: Any, callbacks: Any = ()) -> Optional[VisitInterrupt]:
    """Visits ``root``'s graph; a matched callback ``(value, visitor)`` owns the descent
    into its value (through ``visitor.visit`` / ``visitor.default_visit``)."""
    return _ffi("StructuralVisit")(root, _typed_entries(callbacks, "structural_visit"))


def structural_mutate(root: Any, callbacks: Any = ()) -> Any:
    """``root`` rebuilt by callbacks ``(value, mutator[, inplace_mode])`` that own the
    mutation of their value; unmatched values follow their default mutation. Pass
    ``root._move()`` to allow changes in place along uniquely owned paths."""
    entries = [(_callback_type_index(t, "structural_mutate"), fn, _accepts_inplace_mode(fn))
               for t, fn in _normalize_callbacks(callbacks, "structural_mutate")]
    return _ffi("StructuralMutate")(root, entries)


def structural_map(root: Any, callbacks: Any = (), with_def_region_kind: Any = (),
                   order: Union[str, WalkOrder] = "post") -> Any:
    """``root`` with every matching value replaced by its callback's result.

    A callback returns its input (unchanged) or a replacement and must not
    change its input. Pre-order callbacks run before the value's children are
    mapped (their result is then mapped), post-order ones after.
    """
    order_int = _order(order, "map")
    return _ffi("StructuralMap")(
        root, _typed_entries(callbacks, "structural_map"),
        _typed_entries(with_def_region_kind, "structural_map", _with_region), order_int)


__all__ = [
    "DefRegionKind", "InplaceMode", "StructuralKey", "StructuralMutator", "StructuralVisitor",
    "VisitInterrupt", "WalkOrder", "WalkResult", "get_first_structural_mismatch",
    "structural_equal", "structural_hash", "structural_map", "structural_mutate",
    "structural_visit", "structural_walk",
]
