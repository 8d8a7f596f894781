"""Python's side of the type names: how FFI origins and module prefixes read in a stub."""

from __future__ import annotations

#: FFI origin -> the Python name a stub annotates it with (what a function returns).
TY_MAP_DEFAULTS = {
    "Any": "typing.Any",
    "Callable": "typing.Callable",
    "Array": "collections.abc.Sequence",
    "List": "collections.abc.MutableSequence",
    "Map": "collections.abc.Mapping",
    "Dict": "collections.abc.MutableMapping",
    "Object": "ffi.Object",
    "Tensor": "ffi.Tensor",
    "dtype": "ffi.dtype",
    "Device": "ffi.Device",
    "ffi.Enum": "tvm_ffi.dataclasses.Enum",
}

#: The same for parameters, where any read-only container is accepted.
TY_MAP_INPUT_DEFAULTS = {
    "Array": "collections.abc.Sequence",
    "List": "collections.abc.Sequence",
    "Map": "collections.abc.Mapping",
    "Dict": "collections.abc.Mapping",
}

#: Module prefixes of type keys -> the Python module that binds them.
MOD_MAP = {
    "testing": "tvm_ffi.testing",
    "ffi": "tvm_ffi",
}
