"""The reference runtime: the C API of TVM FFI implemented in Python.

Each module implements one concept and marks its C API functions with
``@implements``; importing this package registers them all, and
:func:`install` puts them behind ``libtvm_ffi.so``. Slots no module
implements are served by the library's built-ins (reference counting is one:
it must be atomic, because C++ kernels do it inline).
"""

from __future__ import annotations

import importlib

#: The modules, in the order their ``ffi.*`` globals register (the global table lists
#: names in registration order, and so does ``ffi.FunctionListGlobalNamesFunctor``):
#: the order ``tvm_ffi_fast/src/fast_runtime.c``'s ``init_runtime`` registers them in.
#: A module's own imports register first, so the list names the first module of each
#: group; ``tests/test_runtime_pairs.py`` checks that both runtimes list the same
#: names in the same order. A tuple of strings, so an import sorter cannot reorder it.
REGISTRATION_ORDER = (
    "any_hash",
    "anyvalue",
    "containers",
    "global_functions",
    "maps",
    "convert_attrs",
    "pyclass",
    "dataclass_ops",
    "dtype",
    "env",
    "errors",
    "functions",
    "module",
    "objects",
    "reflection",
    "reflection_make_object",
    "registry",
    "strings",
    "tensor",
    # the structural operations and their globals
    "structural_equal",
    "structural_hash",
    "structural_key",
    "json_text",
    "json_graph",
    "deep_copy",
    "structural_visit",
    "structural_mutate",
    "visit_error_context",
)
for _name in REGISTRATION_ORDER:  # each for its @implements and ffi.* registrations
    importlib.import_module(f".{_name}", __name__)
del _name

from .slots import RUNTIME_NAME, install, installed, observers, uninstall

__all__ = ["REGISTRATION_ORDER", "RUNTIME_NAME", "install", "installed", "observers", "uninstall"]
