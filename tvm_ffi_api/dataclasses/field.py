"""Fields of Python-defined types: :class:`Field`, :func:`field`, ``KW_ONLY``, :class:`init_property`.

``x: int = field(default=0, repr=False)`` in a ``@py_class`` body gives the
field its options; the decorator fills in the name and type from the
annotation. An :class:`init_property` is a field computed once, right after
construction, by the decorated function.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, ClassVar, Generic, Mapping, Optional, TypeVar

from ..sentinels import MISSING

_T = TypeVar("_T")

if sys.version_info >= (3, 10):
    from dataclasses import KW_ONLY
else:
    class KW_ONLY:
        """Annotations after ``_: KW_ONLY`` are keyword-only (``dataclasses.KW_ONLY`` before 3.10)."""


def _field_converter(value: Any) -> Any:
    """Marks a field as converted by FFI for type checkers; returns ``value`` unchanged."""
    return value


def _forward_annotations(obj: Any) -> dict:
    import annotationlib

    return annotationlib.get_annotations(obj, format=annotationlib.Format.FORWARDREF)


class init_property(Generic[_T]):  # noqa: N801 - upstream's name
    """A field computed at construction by the decorated function (not an ``__init__`` argument).

    The value is stored in the object like any field (so other languages see
    it) and read from there afterwards. The function's return annotation is
    the field's type (``Any`` without one).
    """

    def __init__(self, func: Callable[[Any], _T]) -> None:
        self.func = func
        self.name: Optional[str] = None
        annotations = (_forward_annotations(func) if sys.version_info >= (3, 14)
                       else func.__annotations__)
        self._return_annotation = annotations.get("return")

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name
        annotation = self._return_annotation if self._return_annotation is not None else Any
        # The decorator reads the owner's own annotations: add this field to them.
        if sys.version_info >= (3, 14):
            annotations = _forward_annotations(owner)
            annotations[name] = annotation
            owner.__annotations__ = annotations
        else:
            if "__annotations__" not in owner.__dict__:
                owner.__annotations__ = {}
            owner.__annotations__[name] = annotation


class Field:
    """One field of a Python-defined type and its options.

    ``name`` and ``_ty_schema`` (the field's :class:`~..type_schema.TypeSchema`)
    are filled in by ``@py_class``; ``type`` is the resolved annotation.
    ``default``/``default_factory`` (``MISSING`` when absent) give the default;
    ``frozen`` makes it read-only after ``__init__``; ``init``, ``repr``,
    ``hash`` (None: follow ``compare``), ``compare`` and ``kw_only`` (None:
    the decorator's) choose where it takes part; ``structural_eq`` is None,
    ``"ignore"``, ``"def-pattern"`` (alias ``"def"``) or ``"def-simple"``;
    ``metadata`` is a fresh dict for extensions; unknown keyword options are
    kept in ``extra_kwargs`` for field hooks to consume.
    """

    __slots__ = ("_ty_schema", "compare", "converter", "default", "default_factory", "doc",
                 "extra_kwargs", "frozen", "hash", "init", "kw_only", "metadata", "name", "repr",
                 "structural_eq", "type")

    _VALID_STRUCTURAL_EQ_VALUES: ClassVar[frozenset] = frozenset(
        {None, "ignore", "def", "def-pattern", "def-simple"})

    def __init__(self, name: Optional[str] = None, _ty_schema: Any = None, *,
                 default: Any = MISSING, default_factory: Any = MISSING, frozen: bool = False,
                 init: bool = True, repr: bool = True, hash: Optional[bool] = True,
                 compare: bool = False, kw_only: Optional[bool] = False,
                 metadata: Optional[Mapping[str, Any]] = None,
                 structural_eq: Optional[str] = None, doc: Optional[str] = None,
                 converter: Callable[[Any], Any] = _field_converter, **extra_kwargs: Any) -> None:
        if default_factory is not MISSING:
            if default is not MISSING:
                raise ValueError("cannot specify both default and default_factory")
            if not callable(default_factory):
                raise TypeError("default_factory must be a callable, got "
                                f"{type(default_factory).__name__}")
        if structural_eq not in Field._VALID_STRUCTURAL_EQ_VALUES:
            raise ValueError("structural_eq must be one of "
                             f"{sorted(Field._VALID_STRUCTURAL_EQ_VALUES, key=str)}, "
                             f"got {structural_eq!r}")
        self.name = name
        self._ty_schema = _ty_schema
        self.type = None
        self.default = default
        self.default_factory = default_factory
        self.frozen = frozen
        self.init = init
        self.repr = repr
        self.hash = hash
        self.compare = compare
        self.converter = converter
        self.kw_only = kw_only
        self.metadata = dict(metadata) if metadata is not None else {}
        self.structural_eq = structural_eq
        self.doc = doc
        self.extra_kwargs = dict(extra_kwargs)

    def __copy__(self) -> "Field":
        result = object.__new__(type(self))
        for klass in type(self).__mro__:
            slots = klass.__dict__.get("__slots__", ())
            for slot in (slots,) if isinstance(slots, str) else slots:
                if slot not in ("__dict__", "__weakref__") and hasattr(self, slot):
                    setattr(result, slot, getattr(self, slot))
        if hasattr(self, "__dict__"):
            result.__dict__.update(self.__dict__)
        result.metadata = dict(self.metadata)
        result.extra_kwargs = dict(self.extra_kwargs)
        return result


def field(*, default: Any = MISSING, default_factory: Any = MISSING, frozen: bool = False,
          init: bool = True, repr: bool = True, hash: Optional[bool] = None,
          compare: bool = True, kw_only: Optional[bool] = None,
          metadata: Optional[Mapping[str, Any]] = None, structural_eq: Optional[str] = None,
          doc: Optional[str] = None, converter: Callable[[Any], Any] = _field_converter,
          **extra_kwargs: Any) -> Any:
    """Options of one ``@py_class`` field (see :class:`Field`); e.g. ``x: int = field(default=0)``."""
    return Field(default=default, default_factory=default_factory, frozen=frozen, init=init,
                 repr=repr, hash=hash, compare=compare, kw_only=kw_only, metadata=metadata,
                 structural_eq=structural_eq, doc=doc, converter=converter, **extra_kwargs)
