"""The registries: global functions by name, and Python classes by type key.

* :func:`register_global_func` and its companions manage the runtime's
  global function table (``TVMFFIFunctionSetGlobal`` and the ``ffi.*``
  functions that list, remove and describe entries).
* :func:`register_object` binds a Python class to a registered type key: the
  class becomes the wrapper of every object of that type (and of descendants
  nobody registered), and gains the type's reflected fields, methods and
  ``__ffi_init__`` constructor (:mod:`.class_attrs`).
"""

from __future__ import annotations

import ctypes
import json
import sys
from typing import Any, Callable, List, Optional, Sequence, TypeVar, Union

from tvm_ffi_common import abi
from tvm_ffi_common.capi import LIB

from ._dunder import _install_init
from .class_attrs import (  # noqa: F401
    _add_class_attrs,
    _add_type_attr_class_attrs,
    _install_ffi_init_attr,
    _warn_missing_field_annotations,
)
from .function import convert_to_function, get_global_func, raise_last_error
from .object import type_key_to_index
from .type_registry import _register_object_by_index

_T = TypeVar("_T", bound=type)


def register_object(type_key: Union[str, type, None] = None, *, init: bool = True):
    """Registers the decorated class for ``type_key`` (default: the class name).

    The class becomes the wrapper of every object of that type (and of
    descendants nobody registered) and gains the type's reflected fields,
    methods and, with ``init``, an ``__init__`` calling its ``__ffi_init__``
    (or refusing construction when the type has none). Raises ``ValueError``
    when no runtime type has that key: the kernel library defining it must be
    loaded first.
    """

    def register(cls: _T, key: str) -> _T:
        type_index = type_key_to_index(key)
        if type_index is None:
            raise ValueError(f"Cannot find object type index for {key}")
        info = _register_object_by_index(type_index, cls)
        _add_class_attrs(cls, info)
        cls.__tvm_ffi_type_info__ = info
        if init:
            _install_init(cls, info)
        return cls

    if isinstance(type_key, str):
        return lambda cls: register(cls, type_key)
    if type_key is None:
        return lambda cls: register(cls, cls.__name__)
    if isinstance(type_key, type):
        return register(type_key, type_key.__name__)
    raise TypeError("type_key must be a string, type, or None")


# ------------------------------------------------------------ global functions


def _name_array(name: str):
    data = name.encode()
    return abi.TVMFFIByteArray(ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p), len(data))


def register_global_func(func_name: Any, f: Optional[Callable] = None, override: bool = False):
    """Registers a Python callable (or a Function) as a global function.

    Usable as ``register_global_func("name", f)`` or as a decorator:
    ``@register_global_func("name")`` / ``@register_global_func`` (the
    function's own name); either way the registered :class:`Function` is
    returned. Registering a taken name fails unless ``override``.
    """
    if not isinstance(func_name, str):
        f, func_name = func_name, getattr(func_name, "__name__", None)
    if not isinstance(func_name, str):
        raise ValueError("expect string function name")

    def register(target: Callable) -> Any:
        function = convert_to_function(target)
        if LIB.TVMFFIFunctionSetGlobal(ctypes.byref(_name_array(func_name)), function._handle,
                                       1 if override else 0):
            raise_last_error()
        return function

    return register if f is None else register(f)


def list_global_func_names() -> List[str]:
    """The names of every registered global function."""
    functor = get_global_func("ffi.FunctionListGlobalNamesFunctor")()
    return [str(functor(i)) for i in range(functor(-1))]


def remove_global_func(name: str) -> None:
    """Removes a global function (nothing happens when none has the name); returns None, as
    upstream's does."""
    get_global_func("ffi.FunctionRemoveGlobal")(name)
    # a lookup that misses makes a core that keeps the last Function per name (the cffi
    # core on PyPy) let go of it: the function may die now, as it would on CPython
    get_global_func(name, allow_missing=True)


def get_global_func_metadata(name: str) -> Any:
    """The metadata registered with a global function (parsed JSON when present)."""

    text = str(get_global_func("ffi.GetGlobalFuncMetadata")(name))
    return json.loads(text) if text else {}


def get_registered_type_keys() -> Sequence[str]:
    """The key of every type registered with the runtime."""
    return get_global_func("ffi.GetRegisteredTypeKeys")()


def init_ffi_api(namespace: str, target_module_name: Optional[str] = None) -> None:
    """Puts every global function ``<namespace>.<name>`` on a module as ``<name>``.

    The usual ``_ffi_api.py`` of a package: ``tvm_ffi.init_ffi_api("mypkg",
    __name__)`` makes ``_ffi_api.f`` the global ``mypkg.f``. Only the functions
    registered at the time of the call, and only direct members (``mypkg.a.f``
    is not ``a.f``; as upstream, ``mypkg`` itself lands as ``""``); a namespace ``tvm.X`` names the globals ``X.*``. The module
    (default: the one named ``namespace``) must be imported already.
    """
    prefix = namespace[len("tvm."):] if namespace.startswith("tvm.") else namespace
    target = sys.modules[target_module_name or namespace]
    for name in list_global_func_names():
        # Upstream tests a bare prefix: "ns" itself lands as "", and "nsX" as its tail after
        # one more character; copied, since a package may find names where upstream put them.
        if not name.startswith(prefix):
            continue
        short = name[len(prefix) + 1:]
        if "." in short:
            continue
        func = get_global_func(name)
        func.__name__ = short
        setattr(target, short, func)
