"""DLPack through Python: ``from_dlpack``'s rules, and capsules in and out.

The reference core and the cffi core (``tvm_ffi_fast/cffi_core``) run this
module (their ``shortcuts`` re-export it); the compiled core does the same in
C (``tvm_ffi_fast/src/frontend/dlpack.c``).

``from_dlpack(ext_tensor, *, require_alignment=0, require_contiguous=False)``
tries, in upstream's order:

1. a framework tensor whose class publishes a DLPack C exchange table
   (``dlpack_exchange.py``): the table exports an owning
   ``DLManagedTensorVersioned`` and the runtime imports it with the
   requirements; a ``BufferError`` anywhere on this path (the import refused
   it, say) falls through to 2;
2. a DLPack producer: ``ext_tensor.__dlpack__()`` without arguments, which
   gives the legacy ``"dltensor"`` capsule, imported as such;
3. a capsule itself, ``"dltensor_versioned"`` or ``"dltensor"``;
4. anything else is ``TypeError("Expect from_dlpack to take either a
   compatible tensor or PyCapsule")`` (a capsule already consumed too).

An imported capsule is renamed ``"used_..."`` and loses its destructor: the
runtime owns the managed tensor from then on. Out, a capsule's destructor
releases the managed tensor unless a consumer took it. Every Python C API call
goes through ``tvm_ffi_common.pycapi``, which works on CPython and PyPy alike.
"""

from __future__ import annotations

import ctypes
from typing import Any

from tvm_ffi_common import abi, pycapi
from tvm_ffi_common.capi import LIB

from . import dlpack_exchange, releases, upcalls
from .object import wrap_owned

TI = abi.TVMFFITypeIndex

_DLTENSOR = b"dltensor"
_DLTENSOR_VERSIONED = b"dltensor_versioned"
# A capsule compares its name as a C string for as long as it lives: fixed addresses.
_NAME = {False: pycapi.static_name(_DLTENSOR), True: pycapi.static_name(_DLTENSOR_VERSIONED)}
_USED_NAME = {False: pycapi.static_name(b"used_dltensor"),
              True: pycapi.static_name(b"used_dltensor_versioned")}


def from_dlpack(ext_tensor: Any, *, require_alignment: int = 0,
                require_contiguous: bool = False) -> Any:
    """A Tensor sharing the memory of a framework tensor, any DLPack producer, or a capsule.

    ``require_alignment`` (bytes) and ``require_contiguous`` make the import
    fail when the memory does not comply.
    """

    if releases.pending:  # (a loop importing large tensors releases the ones it dropped)
        releases.drain()

    return wrap_owned(import_tensor(ext_tensor, require_alignment, require_contiguous),
                      TI.kTVMFFITensor)


def import_tensor(ext_tensor: Any, require_alignment: int = 0,
                  require_contiguous: bool = False) -> int:
    """What :func:`from_dlpack` does, giving the owned Tensor handle rather than a wrapper (a
    call's argument needs no wrapper, whose finalizer PyPy's GC would have to run)."""
    address = _published_table(type(ext_tensor))
    if address is not None:
        api = dlpack_exchange.table(address)
        try:
            managed = api.managed_from(ext_tensor)
            try:
                handle = upcalls.import_managed_tensor(managed, True, require_alignment,
                                                       require_contiguous)
            except Exception:  # noqa: BLE001 - upstream turns every refusal into BufferError
                dlpack_exchange.release_managed(managed)
                raise BufferError("Failed to convert DLManagedTensorVersioned to ffi.Tensor") \
                    from None
            return handle
        except BufferError:
            pass  # the Python protocol may still work
    if hasattr(ext_tensor, "__dlpack__"):
        handle = _import_named(ext_tensor.__dlpack__(), False, require_alignment,
                               require_contiguous)
        if handle is None:
            raise ValueError("Expect a dltensor field, PyCapsule can only be consumed once")
    else:
        handle = None
        for versioned in (True, False):
            handle = _import_named(ext_tensor, versioned, require_alignment, require_contiguous)
            if handle is not None:
                break
        if handle is None:
            raise TypeError("Expect from_dlpack to take either a compatible tensor or PyCapsule")
    return handle


def _published_table(cls: type):
    # from_dlpack consults a published table whatever SKIP_ENV says (that is for arguments)
    if not hasattr(cls, dlpack_exchange.ATTRIBUTE):
        return None
    return dlpack_exchange.api_address(getattr(cls, dlpack_exchange.ATTRIBUTE))


def _import_named(capsule: Any, versioned: bool, require_alignment: int,
                  require_contiguous: bool):
    """The Tensor handle made from ``capsule`` if it is a live capsule of that form, else None."""
    managed = pycapi.capsule_pointer(capsule, _DLTENSOR_VERSIONED if versioned else _DLTENSOR)
    if managed is None:
        return None
    handle = upcalls.import_managed_tensor(managed, versioned, require_alignment,
                                           require_contiguous)
    # The runtime owns the managed tensor now: the capsule is renamed and must not release it.
    pycapi.capsule_mark_used(capsule, _USED_NAME[versioned])
    return handle


def import_capsule(capsule: Any, require_alignment: int, require_contiguous: bool) -> int:
    """Hands a DLPack capsule's managed tensor to the runtime; returns the new Tensor handle.

    The versioned form is taken first; a consumed capsule is renamed ``used_...``.
    """
    for versioned in (True, False):
        handle = _import_named(capsule, versioned, require_alignment, require_contiguous)
        if handle is not None:
            return handle
    raise ValueError("Expect a dltensor field, PyCapsule can only be consumed once")


def export_capsule(handle: int, versioned: bool) -> Any:
    """A DLPack capsule of the Tensor at ``handle`` (which it keeps alive until consumed)."""
    if versioned:
        out = ctypes.POINTER(abi.DLManagedTensorVersioned)()
        status = LIB.TVMFFITensorToDLPackVersioned(handle, ctypes.byref(out))
    else:
        out = ctypes.POINTER(abi.DLManagedTensor)()
        status = LIB.TVMFFITensorToDLPack(handle, ctypes.byref(out))
    if status:
        upcalls.raise_last_error()
    # Until a consumer takes it (and renames it), the capsule owns the managed tensor: its
    # destructor calls the managed tensor's deleter.
    address = ctypes.cast(out, ctypes.c_void_p).value
    return pycapi.capsule_new(address, _NAME[versioned], pycapi.DLPACK_CAPSULE_DESTRUCTOR)
