"""What every core's ``shortcuts`` module provides: the hot container, tensor, dtype and field operations.

Part of the core contract (``object.pyi`` says what that is). Each is one
step the shared modules would otherwise take through several global-function
calls; a core does it in one (the reference through its Python runtime, the
fast cores in C).
"""

from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

from tvm_ffi_common import abi

from .arg_setters import CallScope
from .dlpack import (
    export_capsule as export_capsule,
    from_dlpack as from_dlpack,
    import_capsule as import_capsule,
)

def store_str_or_bytes(out: abi.TVMFFIAny, data: bytes, is_str: bool, scope: Any) -> None:
    """Writes ``data`` into ``out`` as an owned str/bytes value (inline when at most 7 bytes)."""

def new_array_handle(values: Sequence[Any], context: Optional[CallScope] = None) -> int:
    """A new Array holding ``values``; its owned handle."""

def new_map_handle(items: List[Tuple[Any, Any]], mutable: bool,
                   context: Optional[CallScope] = None) -> int:
    """A new Map (a Dict when ``mutable``) of ``items``; its owned handle."""

def map_lookup(container: Any, key: Any, missing: Any, mutable: bool) -> Any:
    """The value of ``key`` in a Map/Dict, or ``missing``."""

def seq_size(handle: int) -> int:
    """The number of items of the Array/List at ``handle``."""

def seq_item(container: Any, index: int) -> Any:
    """Item ``index`` (already bounds-checked) of an Array/List."""

def hold(container: Any) -> bool:
    """Locks a container against mutation for the duration of a call; whether it did."""

def release(container: Any) -> None:
    """Undoes :func:`hold`."""

def import_managed_tensor(managed: int, versioned: bool, require_alignment: int,
                          require_contiguous: bool) -> int:
    """An owned Tensor handle taking over the DLPack managed tensor at ``managed``."""

def take_pending_signal_error() -> Optional[BaseException]:
    """The Python exception a failed ``TVMFFIEnvCheckSignals`` left for this thread, or None."""

class DLTensorFields(NamedTuple):
    """A snapshot of the ``DLTensor`` fields a Tensor reports."""

    data: int
    device_type: int
    device_id: int
    ndim: int
    dtype: Tuple[int, int, int]
    shape: Tuple[int, ...]
    strides: Optional[Tuple[int, ...]]
    byte_offset: int

def dltensor(address: int) -> DLTensorFields:
    """The fields of the ``DLTensor`` at ``address``."""

def new_shape(cls: type, content: Any) -> Any:
    """``tensor.Shape(content)``: a tuple (of ``cls``) of the integers ``content`` holds."""

def dtype_from_string(text: str) -> Tuple[int, int, int]:
    """``(code, bits, lanes)`` of a dtype string (``TVMFFIDataTypeFromString``)."""

def dtype_to_string(code: int, bits: int, lanes: int) -> str:
    """The runtime's spelling of ``(code, bits, lanes)`` (``TVMFFIDataTypeToString``)."""

def field_get(getter: int, offset: int, obj: Any) -> Any:
    """A reflected field's value, through its getter at ``obj``'s field ``offset``."""

def field_getter(getter: int, offset: int) -> Callable[[Any], Any]:
    """``field_get(getter, offset, obj)`` as a callable of ``obj`` alone (a field property's
    ``fget``); it takes attributes (``__name__``, ``__doc__``, ...)."""

def field_set(setter: int, flags: int, offset: int, obj: Any, value: Any) -> None:
    """Writes a reflected field through its setter."""

#: The address of the C callback a field setter converts values through.
FIELD_CONVERT_CALLBACK: int

def converter_address(convert: Any) -> int:
    """The ``converter`` given with :data:`FIELD_CONVERT_CALLBACK`: a kept ``PyObject*`` of ``convert``."""

#: ``ffi.*`` container globals (the name after ``ffi.``) the core serves itself, with the
#: global's semantics; the shared container classes call these instead of the global.
DIRECT_GLOBALS: Dict[str, Callable[..., Any]]
