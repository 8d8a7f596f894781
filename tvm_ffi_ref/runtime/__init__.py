"""The reference runtime: the C API of TVM FFI implemented in Python.

Each module implements one concept and marks its C API functions with
``@implements``; importing this package registers them all, and
:func:`install` puts them behind ``libtvm_ffi.so``. Slots no module
implements are served by the library's built-ins (reference counting is one:
it must be atomic, because C++ kernels do it inline).
"""

from __future__ import annotations

# The global table lists ffi.* names in registration order, which is import order:
# global_functions, then maps, then pyclass and dataclass_ops (whose parts import maps
# first); make_object's one global, then the structural operations, come last.
from . import (  # noqa: F401 - imported for their @implements and ffi.* registrations
    anyhash,
    anyvalue,
    containers,
    global_functions,
    maps,
    convert_attrs,
    pyclass,
    dataclass_ops,
    dtype,
    env,
    errors,
    functions,
    modules,
    objects,
    reflection,
    make_object,
    registry,
    strings,
    tensors,
)
from . import (  # noqa: F401,E402 - the structural operations and their globals
    structural_equal,
    structural_hash,
    structural_key,
    json_text,
    json_graph,
    deep_copy,
    structural_visit,
    structural_mutate,
    visit_error_context,
)
from .slots import RUNTIME_NAME, install, installed, observers, uninstall

__all__ = ["RUNTIME_NAME", "install", "installed", "observers", "uninstall"]
