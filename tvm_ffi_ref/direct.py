"""Shortcuts the front end takes when the reference runtime itself serves the process.

The Python API reaches the runtime through the C ABI alone, so that it works
over any runtime. When the runtime is this package's own, though, the same
Python functions that implement a C API slot or an ``ffi.*`` global can be
called directly: same semantics, two ctypes crossings fewer per operation.
:data:`ENABLED` says whether that is the case; every shortcut here has a
C-ABI twin that the front end uses otherwise.
"""

from __future__ import annotations

from typing import Any, Sequence

from . import abi, error, runtime
from .runtime import containers, maps, strings, tensors
from .runtime.slots import FFIError

#: Whether the reference runtime serves the C API in this process.
ENABLED = runtime.installed()


def _raise(exc: FFIError) -> None:
    raise error.make_exception(exc.kind, exc.message, "") from None


def store_str_or_bytes(out: abi.TVMFFIAny, data: bytes, is_str: bool) -> None:
    """Writes an owned str/bytes value (inline when at most 7 bytes) into ``out``."""
    strings.store_str_or_bytes(out, data, is_str)


def array_handle(values: Sequence[Any]) -> int:
    """An owned Array handle holding ``values`` (converted as call arguments)."""
    from .convert import CallScope, pack_args

    scope = CallScope()
    try:
        return containers.array_from_anys(pack_args(values, scope))
    except FFIError as exc:
        _raise(exc)
    finally:
        scope.close()


def map_handle(pairs: Sequence[Any], mutable: bool) -> int:
    """An owned Map (or Dict) handle holding ``pairs`` of (key, value)."""
    from .convert import CallScope, pack_args

    scope = CallScope()
    try:
        flat = pack_args([x for kv in pairs for x in kv], scope)
        views = [(flat[i], flat[i + 1]) for i in range(0, len(flat), 2)]
        return (maps.dict_from_pairs if mutable else maps.map_from_pairs)(views)
    except FFIError as exc:
        _raise(exc)
    finally:
        scope.close()


def map_lookup(handle: int, key: Any, missing: Any) -> Any:
    """The value for ``key`` in the Map/Dict at ``handle``, or ``missing``."""
    from .convert import CallScope, borrowed_to_python, set_arg

    scope = CallScope()
    try:
        view = abi.TVMFFIAny()
        set_arg(view, key, scope)
        value = maps.map_lookup(handle, view)
        return missing if value is None else borrowed_to_python(value)
    except FFIError as exc:
        _raise(exc)
    finally:
        scope.close()


def tensor_from_managed(managed: int, versioned: bool, require_alignment: int,
                        require_contiguous: bool) -> int:
    """An owned Tensor handle taking over a DLPack managed tensor."""
    try:
        return tensors.new_tensor_from_managed(managed, versioned, require_alignment,
                                               require_contiguous)
    except FFIError as exc:
        _raise(exc)
