"""The operations the shared API layer asks of a package's core, done by the fast core.

The Python API modules (containers, tensors, ...) are written once, in
``tvm_ffi_ref``, and serve both front ends; for the few operations on hot
paths they call this module, which each package implements for its own core
(see ``tvm_ffi_ref/shortcuts.py`` for the reference's). Here each is one call
into ``tvm_ffi_fast._frontend``, which builds and reads containers through the
runtime's ``ffi.*`` global functions and the C API alone, so it works over
whichever runtime serves the process.
"""

from __future__ import annotations

import ctypes

from tvm_ffi_common import abi, pycapi

from . import _frontend, upcalls


def store_str_or_bytes(out: abi.TVMFFIAny, data: bytes, is_str: bool, scope) -> None:
    """Writes ``data`` into ``out`` as an owned str/bytes value (inline when at most 7 bytes).

    An object made for it is added to ``scope.owned``, to be released after the call.
    """
    handle = _frontend.store_str_or_bytes(ctypes.addressof(out), data, is_str)
    if handle is not None:
        scope.owned.append(handle)


# The rest are the core's functions themselves (no Python frame in between: they sit on
# per-element and per-lookup paths).

#: ``new_array_handle(values, context=None)``: an owned Array handle holding ``values``
#: (converted as call arguments; ``context``, a CallScope, takes up their framework context).
new_array_handle = _frontend.new_array_handle

#: ``new_map_handle(items, mutable)``: an owned Map (or, when ``mutable``, Dict) handle
#: holding the ``(key, value)`` pairs ``items``.
new_map_handle = _frontend.new_map_handle

#: ``map_lookup(container, key, missing, mutable)``: the value for ``key`` in the Map (or
#: Dict) ``container``, or ``missing`` (through the DLPack exchange table it remembers).
map_lookup = _frontend.map_lookup

#: ``seq_size(handle)``: the number of elements of the Array or List at ``handle``.
seq_size = _frontend.seq_size

#: ``seq_item(container, index)``: element ``index`` (``0 <= index < size``) of the Array or
#: List ``container``, as a Python value (through the DLPack exchange table it remembers).
seq_item = _frontend.seq_item

#: ``hold(container)``: waits until no other thread holds the List or Dict ``container``, then
#: holds it (the container locks of ``tvm_ffi_runtime.h``; nothing for other objects).
hold = _frontend.hold

#: ``release(container)``: undoes one ``hold(container)``.
release = _frontend.release

#: ``import_managed_tensor(managed, versioned, require_alignment, require_contiguous)``: an
#: owned Tensor handle taking over the DLPack managed tensor at ``managed``; on failure the
#: caller still owns ``managed`` (the producer's deleter has not run).
import_managed_tensor = _frontend.import_managed_tensor

#: A snapshot of the ``DLTensor`` fields a Tensor reports (a struct sequence with the fields
#: of ``tvm_ffi_ref.shortcuts.DLTensorFields``).
DLTensorFields = _frontend.DLTensorFields

#: ``dltensor(address)``: the fields of the ``DLTensor`` at ``address``.
dltensor = _frontend.dltensor

#: ``new_shape(cls, content)``: ``tensor.Shape(content)``, made in C.
new_shape = _frontend.new_shape

#: ``from_dlpack(ext_tensor, *, require_alignment=0, require_contiguous=False)``: the whole
#: import in C, by the rules ``tvm_ffi_api/dlpack.py`` states.
from_dlpack = _frontend.from_dlpack

#: ``import_capsule(capsule, require_alignment, require_contiguous)``: hands a DLPack capsule's
#: managed tensor to the runtime (the capsule is renamed ``used_...``); the new Tensor handle.
import_capsule = _frontend.import_capsule

#: ``export_capsule(handle, versioned)``: a DLPack capsule of the Tensor at ``handle``.
export_capsule = _frontend.export_capsule

#: ``dtype_from_string(text)``: ``(code, bits, lanes)`` of a dtype string.
dtype_from_string = _frontend.dtype_from_string

#: ``dtype_to_string(code, bits, lanes)``: the runtime's spelling of a DLDataType.
dtype_to_string = _frontend.dtype_to_string

#: ``field_get(getter, offset, obj)``: a reflected field's value, through its
#: ``TVMFFIFieldGetter`` (an address) at ``obj``'s handle + ``offset``.
field_get = _frontend.field_get

#: ``field_getter(getter, offset)``: ``field_get(getter, offset, obj)`` as a callable of ``obj``,
#: the two addresses converted once (a C object with a ``__dict__``).
field_getter = _frontend.field_getter

#: ``field_set(setter, flags, offset, obj, value)``: writes a reflected field through its
#: setter (a C setter's address, or a Function handle when ``flags`` say so).
field_set = _frontend.field_set

#: The ``f_convert`` of ``ffi.MakeFieldSetter`` whose ``converter`` is a Python callable
#: (a ``PyObject*`` from :func:`converter_address`): the value is given to it, and its result
#: stored.
FIELD_CONVERT_CALLBACK = _frontend.field_convert_callback()

#: ``converter_address(convert)``: the ``PyObject*`` of ``convert`` (a new reference, kept for
#: the process) that ``ffi.MakeFieldSetter`` is given with :data:`FIELD_CONVERT_CALLBACK`.
converter_address = pycapi.new_reference

upcalls.install("shortcuts", import_managed_tensor=import_managed_tensor)

#: ``ffi.*`` container globals this core serves itself (none: the global functions are its
#: own C already).
DIRECT_GLOBALS: dict = {}
