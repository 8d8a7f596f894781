"""The metaclass of ``CObject`` and ``Object``: a subclass carries no per-instance ``__dict__`` unless it asks.

A wrapper is a handle and nothing more; its fields live in the FFI object,
read through descriptors on the class. So a subclass whose body declares no
``__slots__`` is given ``__slots__ = ()``, as upstream's are: a wrapper costs
no dictionary, and a misspelt attribute assignment (``obj.vlaue = 1``)
raises ``AttributeError`` instead of silently creating an attribute the
object never sees. A class that wants instance attributes says so with
``__slots__ = ("__dict__",)`` (``Module`` does, to cache its functions).

It derives from :class:`abc.ABCMeta`, the metaclass upstream's ``Object``
has, so a subclass may also derive from an abstract base class (whose
metaclass is ``ABCMeta``) without a metaclass conflict.

The reference and cffi cores create their ``CObject`` with it; the compiled
core's ``CObject`` and ``Object`` are extension types, which ``tvm_ffi_fast/compiled_core/object.py``
gives this metaclass right after the core is loaded (``_frontend.set_metaclass``),
before any Python subclass exists.
"""

from __future__ import annotations

import abc
from typing import Any, Dict, Tuple


class ObjectMeta(abc.ABCMeta):
    """Gives every class body that declares no ``__slots__`` an empty one."""

    def __new__(mcls, name: str, bases: Tuple[type, ...], namespace: Dict[str, Any],
                **kwargs: Any) -> "ObjectMeta":
        namespace.setdefault("__slots__", ())
        return super().__new__(mcls, name, bases, namespace, **kwargs)

    def adopt_extension_type(cls) -> None:
        """Sets up ``cls``, an extension type just given this metaclass, as ``__new__`` would
        have: the bookkeeping ``ABCMeta`` keeps per class (its registry and caches)."""
        abc._abc_init(cls)  # type: ignore[attr-defined]  # CPython's, as the compiled core
