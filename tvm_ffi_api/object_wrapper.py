"""The Python classes of TVM FFI objects the Python cores share: ``CObject``, ``Object``, ``TensorBase``.

The reference and the cffi core (``tvm_ffi_fast/cffi_core``) wrap objects in
these plain Python classes; their ``object`` modules re-export them with the
class registry (the compiled core has extension types of its own instead).

The hierarchy is upstream's: :class:`CObject` holds the handle and is the base
of every wrapper; :class:`Object` derives from it for the object types a
program registers and reflects (containers, modules, dataclasses...), while a
``Function``, ``Tensor``, ``Error`` or opaque Python object is a CObject and
not an Object. A :class:`CObject` owns exactly one strong reference to the object at
``_handle`` (the address of its header) and drops it when garbage collected,
through ``releases`` (never from inside a finalizer where collection is not
prompt).
"""

from __future__ import annotations

import sys
from typing import Any

from . import releases, upcalls
from .object_meta import ObjectMeta
from .object_methods import CObjectMethods, ObjectMethods

_set_slot = object.__setattr__


class CObject(CObjectMethods, metaclass=ObjectMeta):
    """Base class of every TVM FFI object wrapper seen from Python.

    Equality and hashing are by identity of the underlying object, unless a
    subclass defines value semantics (containers do). A subclass has no
    instance ``__dict__`` unless it declares ``__slots__ = ("__dict__",)``
    (see ``object_meta``).
    """

    __slots__ = ("_handle", "_exchange_api", "__weakref__")

    def __new__(cls, *args: Any, **kwargs: Any) -> "CObject":
        # Every wrapper starts empty, however it is made (``cls.__new__(cls)`` by
        # pickle, a subclass whose ``__init__`` never calls ours, ...). The handle is
        # always written past any ``__setattr__`` of a subclass, as upstream's C field
        # is: TVM's derived objects forward attribute writes to another instance.
        self = super().__new__(cls)
        _set_slot(self, "_handle", None)
        _set_slot(self, "_exchange_api", 0)
        return self

    def __init__(self) -> None:
        # A bare Object() holds nothing (__new__ left it empty); subclasses construct through
        # __init_handle_by_constructor__. An object already made is kept, so a subclass
        # __init__ may call super().__init__() after its object was allocated.
        pass

    # -- construction from handles --------------------------------------------

    @classmethod
    def _adopt(cls, handle: int) -> "CObject":
        """A wrapper taking over one owned reference to ``handle``."""
        obj = cls.__new__(cls)
        _set_slot(obj, "_handle", handle)
        return obj

    def __init_handle_by_constructor__(self, fconstructor: Any, *args: Any) -> None:
        """Initialises this wrapper with the object ``fconstructor(*args)`` returns.

        The wrapper is empty while the constructor runs; an object it held before
        is released afterwards (so the new object never reuses its address).
        """
        old = self._handle
        _set_slot(self, "_handle", None)
        try:
            result = fconstructor(*args)
            if not isinstance(result, CObject):
                raise TypeError(f"constructor returned {type(result).__name__}, not an object")
            self.__move_handle_from__(result)
        finally:
            if old:
                releases.decref_now(old)

    def __move_handle_from__(self, other: "CObject") -> None:
        """Takes ``other``'s reference, leaving ``other`` empty."""
        handle = other._handle
        _set_slot(other, "_handle", None)
        _set_slot(self, "_handle", handle)

    def __del__(self) -> None:
        try:  # past a subclass's __getattr__ (see __new__)
            handle = object.__getattribute__(self, "_handle")
        except AttributeError:
            return
        if handle and not sys.is_finalizing():
            _set_slot(self, "_handle", None)
            releases.release(handle)

    @property
    def _dlpack_exchange_api(self) -> int:
        """The DLPack exchange table a container result remembers (an address, 0: none)."""
        try:  # the slot itself: a subclass's __getattr__ (Module's) must not see the miss
            return _EXCHANGE_API_SLOT.__get__(self, type(self))
        except AttributeError:
            return 0

    @_dlpack_exchange_api.setter
    def _dlpack_exchange_api(self, address: int) -> None:
        self._exchange_api = address

    # -- identity ---------------------------------------------------------------

    def __chandle__(self) -> int:
        """The object's address (0 when empty)."""
        return self._handle or 0

    @property
    def id_(self) -> int:
        """Alias of :meth:`__chandle__`."""
        return self._handle or 0

    def same_as(self, other: object) -> bool:
        """Whether ``other`` wraps the very same object."""
        return isinstance(other, CObject) and self._handle == other._handle

    is_ = same_as

    def __eq__(self, other: object) -> bool:
        return self.same_as(other)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash(self._handle)



_EXCHANGE_API_SLOT = CObject.__dict__["_exchange_api"]


class Object(ObjectMethods, CObject):
    """Base class of the TVM FFI objects seen from Python but functions, tensors, errors and
    opaque Python objects (those are :class:`CObject` only, as upstream's are)."""

    __slots__ = ()

    @property
    def type_index(self) -> int:
        """The runtime type index of the object."""
        return upcalls.type_index_of(self._handle)


class TensorBase(CObject):
    """The base of ``tensor.Tensor``: a CObject that may instead view a borrowed DLTensor.

    ``_view`` holds the ``DLTensor*`` address of a view (a kernel's
    ``kTVMFFIDLTensorPtr``); ``tensor.TensorMethods`` reads the fields.
    """

    __slots__ = ("_view",)
