"""Registering a ``@py_class`` in two phases, so annotations may name classes not yet defined.

Phase 1 (:func:`register_type_without_fields`) gives the class its type
index at once, so that annotations naming it (itself, or a sibling class of
the same module) resolve. Phase 2 evaluates the annotations
(:func:`resolve_type_hints_by_owner`) and hands them to
``py_class.on_fields_resolved``. When an annotation names something that
does not exist yet, phase 2 waits: the class goes on a pending list, retried
after every later successful registration (:func:`flush_pending`), and at the
latest on the class's first construction (a temporary ``__init__``). When
phase 2 fails, phase 1 is undone on the Python side
(:func:`rollback_registration`) so the key may be registered again.
"""

from __future__ import annotations

import sys
import typing
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple

from tvm_ffi_common.installed_later import installed_later

from .. import type_registry
from ..class_annotations import own_annotations
from ..type_records import TypeInfo
from ..type_registry import _register_py_class, _rollback_py_class
from .field import KW_ONLY

ResolvedFields = Tuple[List[type], Dict[type, Dict[str, Any]]]

#: Phase 2's end, given a type and its resolved annotations: ``py_class.on_fields_resolved``,
#: installed here by ``py_class`` when it loads (it sits above this module, and only a
#: ``@py_class`` puts a class through phase 2).
on_fields_resolved: Callable[[TypeInfo, ResolvedFields], None] = installed_later(
    "_resolve_fields.on_fields_resolved", "dataclasses.py_class")


@dataclass
class _PendingClass:
    """A class whose annotations do not resolve yet."""

    cls: type
    type_info: TypeInfo
    globalns: Dict[str, Any]


_PENDING_CLASSES: List[_PendingClass] = []

#: ``module name -> {class name: class}`` of every ``@py_class``: the names annotations
#: may use before the module binds them.
_PY_CLASS_BY_MODULE: Dict[str, Dict[str, type]] = {}


class _KWOnlyAnnotation:
    """Stands for ``KW_ONLY`` while ``typing.get_type_hints`` runs (it rejects the singleton)."""


def _is_kw_only_annotation(annotation: Any) -> bool:
    if annotation is KW_ONLY or annotation is _KWOnlyAnnotation:
        return True
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__forward_arg__",
                                                                  None)
    return isinstance(text, str) and (text == "KW_ONLY" or text.endswith(".KW_ONLY"))


def _registered_type_info(cls: type) -> Optional[TypeInfo]:
    """The info registered for exactly ``cls`` (not one it inherits)."""
    info = type_registry._type_cls_to_type_info(cls)
    return info if info is not None else cls.__dict__.get("__tvm_ffi_type_info__")


def register_type_without_fields(cls: type, type_key: Optional[str]) -> TypeInfo:
    """Phase 1: allocates the type (a child of the nearest registered base) and binds ``cls``."""

    parent = next((info for base in cls.__mro__[1:]
                   if (info := _registered_type_info(base)) is not None), None)
    if parent is None:
        raise TypeError(f"{cls.__name__} must inherit from a registered FFI Object type "
                        "(e.g. tvm_ffi.Object)")
    if type_key is None:
        type_key = f"{cls.__module__}.{cls.__qualname__}"
    info = _register_py_class(parent, type_key, cls)
    cls.__tvm_ffi_type_info__ = info
    _PY_CLASS_BY_MODULE.setdefault(cls.__module__, {})[cls.__name__] = cls
    return info


def rollback_registration(cls: type, type_info: TypeInfo) -> None:
    """Undoes phase 1 on the Python side (the type index itself stays taken)."""

    _rollback_py_class(type_info)
    _PY_CLASS_BY_MODULE.get(cls.__module__, {}).pop(cls.__name__, None)
    for attr in ("__tvm_ffi_type_info__", "__ffi_is_dataclass__"):
        if attr in cls.__dict__:
            delattr(cls, attr)


def _field_owner_classes(cls: type) -> List[type]:
    """The classes whose annotations become ``cls``'s own fields: ``cls`` and the mixins between
    it and its nearest registered base, root first."""
    registered = next((b for b in cls.__mro__[1:] if _registered_type_info(b) is not None),
                      object)
    represented = set(registered.__mro__)
    return [b for b in reversed(cls.__mro__)
            if b is not object and b not in represented and own_annotations(b)]


def _build_localns(cls: type, *, cross_module: bool = False) -> Dict[str, Any]:
    """Names annotations of ``cls`` may use: its module's ``@py_class`` classes (and, with
    ``cross_module``, every module's, for imports only done under ``TYPE_CHECKING``)."""
    localns = dict(_PY_CLASS_BY_MODULE.get(cls.__module__, {}))
    localns[cls.__name__] = cls
    if cross_module:
        for module, classes in list(_PY_CLASS_BY_MODULE.items()):
            if module != cls.__module__:
                for name, klass in classes.items():
                    localns.setdefault(name, klass)
    return localns


def _resolve_own_type_hints(owner: type, globalns: Dict[str, Any],
                            localns: Dict[str, Any]) -> Dict[str, Any]:
    annotations = own_annotations(owner)
    if not annotations:
        return {}
    shim = dict(annotations)
    kw_only_names = [name for name, ann in annotations.items() if _is_kw_only_annotation(ann)]
    for name in kw_only_names:
        shim[name] = _KWOnlyAnnotation
    holder = type(f"_{owner.__name__}OwnAnnotations", (),
                  {"__annotations__": shim, "__module__": owner.__module__})
    kwargs: Dict[str, Any] = {"globalns": globalns, "localns": localns}
    if sys.version_info >= (3, 11):
        kwargs["include_extras"] = True
    hints = typing.get_type_hints(holder, **kwargs)
    for name in kw_only_names:
        hints[name] = KW_ONLY
    return hints


def _resolve_all(cls: type, owners: List[type], globalns: Dict[str, Any],
                 cross_module: bool) -> Dict[type, Dict[str, Any]]:
    localns = _build_localns(cls, cross_module=cross_module)
    localns.update({owner.__name__: owner for owner in owners})
    return {owner: _resolve_own_type_hints(
        owner, getattr(sys.modules.get(owner.__module__), "__dict__", globalns), localns)
        for owner in owners}


def resolve_type_hints_by_owner(cls: type, globalns: Dict[str, Any]) -> Optional[ResolvedFields]:
    """Phase 2's input: each owner class's resolved annotations, or None to wait.

    A parent still waiting for its own fields is finished first (the child's
    layout starts where the parent's ends).
    """
    info = _registered_type_info(cls)
    parent = info.parent_type_info if info is not None else None
    if parent is not None and parent.fields is None:
        resolved_parent = resolve_type_hints_by_owner(parent.type_cls, globalns)
        if resolved_parent is None:
            return None
        on_fields_resolved(parent, resolved_parent)
        _remove_from_pending(parent.type_cls)
    owners = _field_owner_classes(cls)
    for cross_module in (False, True):
        try:
            return owners, _resolve_all(cls, owners, globalns, cross_module)
        except (NameError, AttributeError):
            continue
    return None


def flush_pending() -> None:
    """Retries the waiting classes until no more of them resolve."""
    progress = True
    while progress:
        progress = False
        waiting = []
        for entry in _PENDING_CLASSES:
            resolved = resolve_type_hints_by_owner(entry.cls, entry.globalns)
            if resolved is None:
                waiting.append(entry)
            else:
                on_fields_resolved(entry.type_info, resolved)
                progress = True
        _PENDING_CLASSES[:] = waiting


def _unresolved_error(cls: type, globalns: Dict[str, Any]) -> TypeError:
    localns = _build_localns(cls, cross_module=True)
    owners = _field_owner_classes(cls)
    localns.update({owner.__name__: owner for owner in owners})
    unresolved = []
    for owner in owners:
        for name, text in own_annotations(owner).items():
            if isinstance(text, str):
                try:
                    eval(text, globalns, localns)  # noqa: S307 - an annotation, as typing does
                except Exception as err:  # noqa: BLE001 - listed in the message
                    unresolved.append(f"{name}: {text} ({err})")
    return TypeError(f"Cannot instantiate {cls.__name__}: unresolved forward references: "
                     f"{unresolved}")


def _remove_from_pending(cls: type) -> None:
    _PENDING_CLASSES[:] = [p for p in _PENDING_CLASSES if p.cls is not cls]


def _make_temporary_init(cls: type, type_info: TypeInfo, globalns: Dict[str, Any]):
    """The ``__init__`` of a waiting class: finishes registration, then runs the real one."""

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if type_info.fields is None:
            try:
                resolved = resolve_type_hints_by_owner(cls, globalns)
                if resolved is None:
                    raise _unresolved_error(cls, globalns)
                on_fields_resolved(type_info, resolved)
                _remove_from_pending(cls)
                flush_pending()
            except Exception:
                _remove_from_pending(cls)
                rollback_registration(cls, type_info)
                raise
        cls.__init__(self, *args, **kwargs)

    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    __init__.__module__ = cls.__module__
    return __init__


def defer_field_registration(cls: type, type_info: TypeInfo, globalns: Dict[str, Any]) -> None:
    """Puts ``cls`` on the waiting list with a temporary ``__init__`` (keeping a user one)."""
    _PENDING_CLASSES.append(_PendingClass(cls, type_info, globalns))
    user_init = cls.__dict__.get("__init__")
    if user_init is not None:
        cls._py_class_user_init = user_init
    cls.__init__ = _make_temporary_init(cls, type_info, globalns)
    cls.__ffi_py_class_is_deferred_init__ = True
