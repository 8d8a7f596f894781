"""``Array``, ``List``, ``Map`` and ``Dict``: TVM FFI containers that act like Python's.

``Array`` (immutable) and ``List`` (mutable) share one layout, a
``TVMFFISeqCell`` after the header pointing at owned ``TVMFFIAny`` slots, so
elements are read in place. ``Map`` (immutable) and ``Dict`` (mutable) are
hash tables whose layout and hashing belong to the runtime; they are used
through the runtime's ``ffi.Map*`` / ``ffi.Dict*`` global functions, exactly
as C++ code would use them.

Equality, hashing and repr follow upstream: values compare recursively and
type-strictly (``Array([1]) != [1.0]``), containers are hashed by content.
"""

from __future__ import annotations

import ctypes
import itertools
import operator
from collections.abc import (
    ItemsView as ItemsViewBase,
    KeysView as KeysViewBase,
    Mapping,
    MutableMapping,
    MutableSequence,
    Sequence,
    ValuesView as ValuesViewBase,
)
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Optional

from tvm_ffi_common import abi

from . import shortcuts
from .function import get_global_func
from .object import Object, register_class

TI = abi.TVMFFITypeIndex
_CELL_OFFSET = ctypes.sizeof(abi.TVMFFIObject)


class _GlobalFunctions:
    """The runtime's container functions, looked up once on first use (the ones the core
    serves itself, ``shortcuts.DIRECT_GLOBALS``, without the call path)."""

    def __getattr__(self, name: str):
        func = shortcuts.DIRECT_GLOBALS.get(name) or get_global_func("ffi." + name)
        setattr(self, name, func)
        return func


_ffi = _GlobalFunctions()


def normalize_index(length: int, idx: Any) -> int:
    """A bounds-checked, non-negative index (``IndexError`` / ``TypeError`` as lists raise)."""
    try:
        index = operator.index(idx)
    except TypeError as exc:
        raise TypeError(f"indices must be integers or slices, not {type(idx).__name__}") from exc
    if index < -length or index >= length:
        raise IndexError(f"Index out of range. size: {length}, got index {index}")
    return index + length if index < 0 else index


class ContainerBase(Object):
    """Base of the four containers (upstream's ``core.CContainerBase``)."""

    __slots__ = ()


class _Held:
    """``with _Held(container):`` one operation of several steps on a List or Dict.

    Threads (and kernels) sharing a List or Dict see each of its operations
    whole, as on Python's ``list`` and ``dict``: the runtime holds the
    container's lock during each of its functions, a call holds its List and
    Dict arguments, and an operation made of several steps here (``pop`` is a
    lookup and an erase) holds it across them. A thread may hold it again.
    """

    __slots__ = ("container",)

    def __init__(self, container: "ContainerBase") -> None:
        self.container = container

    def __enter__(self) -> None:
        shortcuts.hold(self.container)

    def __exit__(self, *exc_info: Any) -> None:
        shortcuts.release(self.container)


class _SeqBase(ContainerBase):
    """What Array and List share: the sequence cell and read access."""

    __slots__ = ()

    if TYPE_CHECKING:  # both subclasses are made from an iterable (``type(self)(...)`` below)
        def __init__(self, value: Iterable[Any] = ()) -> None: ...

    def _cell(self) -> abi.TVMFFISeqCell:
        return abi.TVMFFISeqCell.from_address(self._handle + _CELL_OFFSET)

    def __len__(self) -> int:
        return shortcuts.seq_size(self._handle)

    def _item(self, index: int) -> Any:
        # read in place; a Tensor element comes back as the framework tensor of the table
        # this container remembers, if any (dlpack_exchange.py)
        return shortcuts.seq_item(self, index)

    def __getitem__(self, idx):
        length = len(self)
        if isinstance(idx, slice):
            return [self._item(i) for i in range(*idx.indices(length))]
        return self._item(normalize_index(length, idx))

    def __iter__(self) -> Iterator[Any]:
        for i in range(len(self)):
            yield self._item(i)

    def __contains__(self, value: object) -> bool:
        if self._contains_function(self, value):
            return True
        if not isinstance(value, Sequence) or isinstance(value, (str, bytes)):
            return False
        try:
            candidate = type(self)(value)
        except (TypeError, ValueError):
            return False
        return any(item == candidate for item in self)

    def __eq__(self, other: object) -> bool:
        if not (isinstance(other, type(self)) or isinstance(self, type(other))):
            if isinstance(other, Sequence) and not isinstance(other, (str, bytes)):
                try:
                    other = type(self)(other)
                except (TypeError, ValueError):
                    return NotImplemented
            else:
                return NotImplemented
        return _ffi.RecursiveEq(self, other)

    def __ne__(self, other: object) -> bool:
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __hash__(self) -> int:
        return _ffi.RecursiveHash(self)

    def __bool__(self) -> bool:
        return len(self) > 0

    def __deepcopy__(self, memo: Any = None) -> Any:
        return _ffi.DeepCopy(self)

    def __add__(self, other: Iterable[Any]):
        return type(self)(itertools.chain(self, other))

    def __radd__(self, other: Iterable[Any]):
        return type(self)(itertools.chain(other, self))


class Array(_SeqBase, Sequence):
    """An immutable sequence (``ffi.Array``); ``convert`` turns lists and tuples into one."""

    __slots__ = ()

    @property
    def _contains_function(self):
        return _ffi.ArrayContains

    def __init__(self, input_list: Iterable[Any] = ()) -> None:
        self._handle = shortcuts.new_array_handle(list(input_list))


class List(_SeqBase, MutableSequence):
    """A mutable sequence (``ffi.List``), shared in place with C++."""

    __slots__ = ()

    @property
    def _contains_function(self):
        return _ffi.ListContains

    def __init__(self, input_list: Iterable[Any] = ()) -> None:
        self.__init_handle_by_constructor__(_ffi.List, *input_list)

    def __getitem__(self, idx):
        with _Held(self):  # the length and the read as one, as on a list
            return super().__getitem__(idx)

    def __iter__(self) -> Iterator[Any]:
        # as upstream iterates: the length when iteration starts, by index, so items appended
        # meanwhile are not visited and a List shrunk meanwhile raises IndexError
        for i in range(len(self)):
            try:
                item = self._item(i)  # checks the index with the List held
            except IndexError:  # upstream reads through ffi.ListGetItem, whose message this is
                raise IndexError(f"Index {i} out of bounds {len(self)}") from None
            yield item

    def __setitem__(self, index, value) -> None:
        replacement = list(value) if isinstance(index, slice) else None
        with _Held(self):
            if replacement is None:
                _ffi.ListSetItem(self, normalize_index(len(self), index), value)
                return
            start, stop, step = index.indices(len(self))
            if step != 1:
                targets = list(range(start, stop, step))
                if len(replacement) != len(targets):
                    raise ValueError(f"attempt to assign sequence of size {len(replacement)} to "
                                     f"extended slice of size {len(targets)}")
                for i, item in zip(targets, replacement):
                    _ffi.ListSetItem(self, i, item)
                return
            _ffi.ListReplaceSlice(self, start, max(stop, start), type(self)(replacement))

    def __delitem__(self, index) -> None:
        with _Held(self):
            if not isinstance(index, slice):
                _ffi.ListErase(self, normalize_index(len(self), index))
                return
            start, stop, step = index.indices(len(self))
            if step == 1:
                _ffi.ListEraseRange(self, start, max(stop, start))
                return
            indices = reversed(range(start, stop, step)) if step > 0 else range(start, stop, step)
            for i in indices:
                _ffi.ListErase(self, i)

    def insert(self, index: int, value: Any) -> None:
        """Inserts ``value`` before ``index`` (clamped like ``list.insert``)."""
        with _Held(self):
            length = len(self)
            index = max(0, index + length) if index < 0 else min(index, length)
            _ffi.ListInsert(self, index, value)

    def append(self, value: Any) -> None:
        """Appends ``value``."""
        _ffi.ListAppend(self, value)

    def clear(self) -> None:
        """Removes every element."""
        _ffi.ListClear(self)

    def reverse(self) -> None:
        """Reverses in place."""
        _ffi.ListReverse(self)

    def pop(self, index: int = -1) -> Any:
        """Removes and returns the element at ``index`` (the last by default)."""
        with _Held(self):
            length = len(self)
            if length == 0:
                raise IndexError("pop from empty list")
            return _ffi.ListPop(self, normalize_index(length, index))

    def extend(self, values: Iterable[Any]) -> None:
        """Appends every value of ``values``.

        One slice assignment at the end (a single ``ffi.ListReplaceSlice``), as
        upstream does: the capacity grows to exactly the new size, where
        appending one by one would double it.
        """
        values = list(values)
        with _Held(self):
            end = len(self)
            self[end:end] = values

    def remove(self, value: Any) -> None:
        """Removes the first element equal to ``value`` (``ValueError`` when there is none)."""
        with _Held(self):
            del self[self.index(value)]


# ------------------------------------------------------------------- maps


#: The runtime's "missing" marker object (``ffi.GetInvalidObject``), upstream's
#: ``MISSING``: lookups return it for an absent key.
MISSING = get_global_func("ffi.GetInvalidObject")()


def _iterate(backend: "_MapBase", pick: Callable[[Callable[[int], Any]], Any]) -> Iterator[Any]:
    # The iterator functor: 0 -> key, 1 -> value, 2 -> advance (false at the end).
    size = len(backend)
    functor = backend._iter_functor()
    for _ in range(size):
        yield pick(functor)
        if not functor(2):
            break


class KeysView(KeysViewBase):
    """The keys of a Map or Dict, in the container's iteration order."""

    def __init__(self, backend: "_MapBase") -> None:
        self._backend = backend

    def __len__(self) -> int:
        return len(self._backend)

    def __iter__(self) -> Iterator[Any]:
        return _iterate(self._backend, lambda f: f(0))

    def __contains__(self, key: object) -> bool:
        return key in self._backend


class ValuesView(ValuesViewBase):
    """The values of a Map or Dict, in the container's iteration order."""

    def __init__(self, backend: "_MapBase") -> None:
        self._backend = backend

    def __len__(self) -> int:
        return len(self._backend)

    def __iter__(self) -> Iterator[Any]:
        return _iterate(self._backend, lambda f: f(1))


class ItemsView(ItemsViewBase):
    """The ``(key, value)`` pairs of a Map or Dict, in iteration order."""

    def __init__(self, backend: "_MapBase") -> None:
        self._backend = backend

    def __len__(self) -> int:
        return len(self._backend)

    def __iter__(self) -> Iterator[Any]:
        return _iterate(self._backend, lambda f: (f(0), f(1)))

    def __contains__(self, item: object) -> bool:
        if not isinstance(item, tuple) or len(item) != 2:
            return False
        actual = self._backend.get(item[0], MISSING)
        return actual is not MISSING and actual == item[1]


class _MapBase(ContainerBase):
    """What Map and Dict share: lookups, views and value semantics."""

    __slots__ = ()
    _PREFIX = "Map"

    def _call(self, name: str, *args: Any) -> Any:
        return getattr(_ffi, self._PREFIX + name)(self, *args)

    def _iter_functor(self):
        return self._call("ForwardIterFunctor")

    def __getitem__(self, key: Any) -> Any:
        value = shortcuts.map_lookup(self, key, MISSING, self._PREFIX == "Dict")
        if value is MISSING:
            return self._call("GetItem", key)  # raises upstream's KeyError
        return value

    def __contains__(self, key: object) -> bool:
        return shortcuts.map_lookup(self, key, MISSING,
                                    self._PREFIX == "Dict") is not MISSING

    def __len__(self) -> int:
        return self._call("Size")

    def __bool__(self) -> bool:
        return len(self) > 0

    def __iter__(self) -> Iterator[Any]:
        return iter(self.keys())

    def keys(self) -> KeysView:
        """The keys, in iteration order."""
        return KeysView(self)

    def values(self) -> ValuesView:
        """The values, in iteration order."""
        return ValuesView(self)

    def items(self) -> ItemsView:
        """The ``(key, value)`` pairs, in iteration order."""
        return ItemsView(self)

    def get(self, key: Any, default: Any = None) -> Any:
        """The value for ``key``, or ``default`` when absent."""
        value = shortcuts.map_lookup(self, key, MISSING, self._PREFIX == "Dict")
        return default if value is MISSING else value

    def __eq__(self, other: object) -> bool:
        if not (isinstance(other, type(self)) or isinstance(self, type(other))):
            return NotImplemented
        return _ffi.RecursiveEq(self, other)

    def __ne__(self, other: object) -> bool:
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __hash__(self) -> int:
        return _ffi.RecursiveHash(self)

    def __deepcopy__(self, memo: Any = None) -> Any:
        return _ffi.DeepCopy(self)


class Map(_MapBase, Mapping):
    """An immutable mapping (``ffi.Map``); ``convert`` turns dicts into one."""

    __slots__ = ()

    def __init__(self, input_dict: Optional[Mapping] = None) -> None:
        items = [] if input_dict is None else list(input_dict.items())
        self._handle = shortcuts.new_map_handle(items, mutable=False)


class Dict(_MapBase, MutableMapping):
    """A mutable mapping (``ffi.Dict``), shared in place with C++ (no copy on write)."""

    __slots__ = ()
    _PREFIX = "Dict"

    def __init__(self, input_dict: Optional[Mapping] = None) -> None:
        items = [] if input_dict is None else list(input_dict.items())
        self._handle = shortcuts.new_map_handle(items, mutable=True)

    def __setitem__(self, key: Any, value: Any) -> None:
        _ffi.DictSetItem(self, key, value)

    def __delitem__(self, key: Any) -> None:
        with _Held(self):
            if _ffi.DictCount(self, key) == 0:
                raise KeyError(key)
            _ffi.DictErase(self, key)

    def pop(self, key: Any, *default: Any) -> Any:
        """Removes ``key`` and returns its value (or ``default`` when absent)."""
        if len(default) > 1:
            raise TypeError(f"pop expected at most 2 arguments, got {1 + len(default)}")
        with _Held(self):
            value = shortcuts.map_lookup(self, key, MISSING, mutable=True)
            if value is MISSING:
                if default:
                    return default[0]
                raise KeyError(key)
            _ffi.DictErase(self, key)
            return value

    def popitem(self) -> Any:
        """Removes and returns a ``(key, value)`` pair (``KeyError`` when empty)."""
        with _Held(self):
            return super().popitem()

    def setdefault(self, key: Any, default: Any = None) -> Any:
        """``self[key]``, set to ``default`` first when absent."""
        with _Held(self):
            return super().setdefault(key, default)

    def clear(self) -> None:
        """Removes every entry."""
        _ffi.DictClear(self)

    def update(self, other: Mapping) -> None:  # type: ignore[override]
        """Sets every pair of the mapping ``other``."""
        pairs = list(other.items())
        with _Held(self):
            for key, value in pairs:
                self[key] = value


register_class(TI.kTVMFFIArray, Array)
register_class(TI.kTVMFFIList, List)
register_class(TI.kTVMFFIMap, Map)
register_class(TI.kTVMFFIDict, Dict)

