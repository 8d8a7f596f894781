"""The reference runtime: the C API of TVM FFI implemented in Python.

Each module implements one concept and marks its C API functions with
``@implements``; importing this package registers them all, and
:func:`install` puts them behind ``libtvm_ffi.so``. Slots no module
implements are served by the library's built-ins (reference counting is one:
it must be atomic, because C++ kernels do it inline).
"""

from __future__ import annotations

from . import (  # noqa: F401 - imported for their @implements registrations
    anyhash,
    anyvalue,
    containers,
    dataclass_ops,
    dtype,
    env,
    errors,
    functions,
    global_functions,
    maps,
    modules,
    objects,
    reflection,
    registry,
    strings,
    tensors,
)
from .slots import RUNTIME_NAME, install, installed, observers, uninstall

__all__ = ["RUNTIME_NAME", "install", "installed", "observers", "uninstall"]
