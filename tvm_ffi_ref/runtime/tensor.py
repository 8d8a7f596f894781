"""Tensors: an object header, a DLTensor, and the DLPack exchange around them.

Its twin in C: ``tvm_ffi_fast/src/tensor.c``.

A Tensor object (``kTVMFFITensor``, type index 70) is laid out so that C code
reads its ``DLTensor`` in place, right after the 24-byte header
(``TVMFFITensorGetDLTensorPtr`` is just ``handle + 24``)::

    offset  0   TVMFFIObject   header: ref counts, type index 70, deleter
    offset 24   DLTensor       data, device, ndim, dtype, shape*, strides*, byte_offset
    offset 72   void*          what the tensor keeps alive:
                                 imported from DLPack: the DLManagedTensor(Versioned)*
                                   whose deleter runs when the tensor dies
                                 a view: the source Tensor (one strong reference)
    offset 80   int64[]        inline arrays, only when needed:
                                 imported without strides (ndim > 0): ndim compact strides
                                 a view: ndim shape values, then ndim strides

This is upstream's layout (``TensorObjFromDLPack`` and ``TensorObjFromNDAlloc``
in ``container/tensor.h``). An imported tensor's ``shape`` still points into
the producer's managed tensor, which stays alive as long as the tensor does.

DLPack is the hand-over of such a tensor between frameworks. The producer
fills a ``DLManagedTensor`` (0.x) or ``DLManagedTensorVersioned`` (1.x: a
version first, then ``flags``) and gives it away; the consumer calls its
``deleter`` exactly once when done. So:

* ``TVMFFITensorFromDLPack[Versioned](from, require_alignment,
  require_contiguous, out)`` checks, then takes ownership of ``from``. The
  checks run in this order, each a RuntimeError: ``require_alignment``
  (nonzero: ``data + byte_offset`` must be a multiple on devices whose
  addresses are real, ``byte_offset`` alone elsewhere), ``require_contiguous``
  (row-major, ignoring dims of size 1; any empty tensor passes), and for a
  versioned tensor the ``IS_SUBBYTE_TYPE_PADDED`` flag, which is refused. A
  failed check leaves ``from`` with the caller: its deleter does not run and
  ``out`` is not written.
* ``TVMFFITensorToDLPack[Versioned](tensor, out)`` makes a new managed tensor
  whose ``dl_tensor`` copies the tensor's, whose ``manager_ctx`` is the tensor
  (now holding one more reference) and whose deleter drops that reference
  and frees the managed tensor. Versioned ones report DLPack 1.3, flags 0.
* ``TVMFFITensorCreateUnsafeView(source, prototype, out)`` makes a tensor
  described by ``prototype`` (which must have strides) that keeps ``source``
  alive; nothing checks that the view stays inside the source's memory.
* ``TVMFFIEnvTensorAlloc(prototype, out)`` asks the installed
  ``DLPackManagedTensorAllocator`` (``env.py``) for a tensor shaped like
  ``prototype`` and imports the result without checks.
"""

from __future__ import annotations

import ctypes
import sys
from typing import Dict, List, Optional, Sequence, Tuple

from tvm_ffi_common import abi, pycapi
from tvm_ffi_common.capi import LIB

from . import env, errors, memory
from .slots import FFIError, implements
from .type_index import TI

DEVICE = abi.DLDeviceType

#: Where the DLTensor starts in a Tensor object.
DLTENSOR_OFFSET = memory.HEADER_SIZE
#: Where a Tensor keeps the managed tensor (imported) or the source tensor (a view).
KEEP_OFFSET = DLTENSOR_OFFSET + ctypes.sizeof(abi.DLTensor)
#: Where the inline shape/strides arrays start, when a Tensor has them.
TAIL_OFFSET = KEEP_OFFSET + ctypes.sizeof(ctypes.c_void_p)

_INT64 = ctypes.sizeof(ctypes.c_int64)
_DLTENSOR_SIZE = ctypes.sizeof(abi.DLTensor)
_TENSOR = TI.kTVMFFITensor
_UINT64_MASK = (1 << 64) - 1
_DELETER_OFFSET = {False: abi.DLManagedTensor.deleter.offset,
                   True: abi.DLManagedTensorVersioned.deleter.offset}
_MANAGER_CTX_OFFSET = {False: abi.DLManagedTensor.manager_ctx.offset,
                       True: abi.DLManagedTensorVersioned.manager_ctx.offset}
_DL_TENSOR_OFFSET = {False: abi.DLManagedTensor.dl_tensor.offset,
                     True: abi.DLManagedTensorVersioned.dl_tensor.offset}
_MANAGED_SIZE = {False: ctypes.sizeof(abi.DLManagedTensor),
                 True: ctypes.sizeof(abi.DLManagedTensorVersioned)}
_VoidCallback = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


def _int64(value: int) -> int:
    value &= _UINT64_MASK
    return value - (1 << 64) if value >> 63 else value


# ------------------------------------------------------------ DLTensor facts


def tensor_dltensor(address: int) -> abi.DLTensor:
    """The ``DLTensor`` inside the Tensor object at ``address`` (a view, not a copy)."""
    return abi.DLTensor.from_address(address + DLTENSOR_OFFSET)


def shape_of(tensor: abi.DLTensor) -> Tuple[int, ...]:
    """The shape of a DLTensor as a tuple."""
    return tuple(tensor.shape[i] for i in range(tensor.ndim))


def strides_of(tensor: abi.DLTensor) -> Tuple[int, ...]:
    """The strides of a DLTensor in elements; the compact ones when ``strides`` is NULL."""
    if not tensor.strides:
        return tuple(compact_strides(shape_of(tensor)))
    return tuple(tensor.strides[i] for i in range(tensor.ndim))


def compact_strides(shape: Sequence[int]) -> List[int]:
    """Row-major strides for ``shape`` (int64 arithmetic, as upstream fills them)."""
    strides = [0] * len(shape)
    stride = 1
    for i in range(len(shape) - 1, -1, -1):
        strides[i] = stride
        stride = _int64(stride * shape[i])
    return strides


def is_direct_address_device(device: abi.DLDevice) -> bool:
    """Whether a device's data pointers are plain addresses (so alignment can be seen in them)."""
    kind = device.device_type
    return kind <= DEVICE.kDLCUDAHost or kind in (DEVICE.kDLCUDAManaged, DEVICE.kDLROCM,
                                                  DEVICE.kDLROCMHost)


def is_aligned(tensor: abi.DLTensor, alignment: int) -> bool:
    """Whether the first element is ``alignment``-aligned (``byte_offset`` alone off the host)."""
    if is_direct_address_device(tensor.device):
        return ((tensor.data or 0) + tensor.byte_offset) % alignment == 0
    return tensor.byte_offset % alignment == 0


def is_contiguous(tensor: abi.DLTensor) -> bool:
    """Whether a DLTensor is row-major compact (dims of size 1 may have any stride)."""
    if not tensor.strides:
        return True
    shape = shape_of(tensor)
    if 0 in shape:
        return True  # an empty tensor has no layout to violate
    expected = 1
    for k in range(tensor.ndim - 1, -1, -1):
        if shape[k] == 1:
            continue
        if tensor.strides[k] != expected:
            return False
        expected = _int64(expected * shape[k])
    return True


def data_size(tensor: abi.DLTensor) -> int:
    """Bytes the elements of a compact DLTensor occupy (sub-byte types packed)."""
    count = 1
    for extent in shape_of(tensor):
        count *= extent
    return (count * tensor.dtype.bits * tensor.dtype.lanes + 7) // 8


# ---------------------------------------------------- importing from DLPack


def _release_managed(address: int, versioned: bool) -> None:
    managed = ctypes.c_void_p.from_address(address + KEEP_OFFSET).value
    deleter = ctypes.c_void_p.from_address(managed + _DELETER_OFFSET[versioned]).value
    if deleter:
        _VoidCallback(deleter)(managed)


def _release_unversioned(address: int) -> None:
    _release_managed(address, versioned=False)


def _release_versioned(address: int) -> None:
    _release_managed(address, versioned=True)


def _wrap_managed(managed: int, versioned: bool) -> int:
    """A Tensor that owns ``managed`` (no checks); returns the new object's address."""
    source = abi.DLTensor.from_address(managed + _DL_TENSOR_OFFSET[versioned])
    if source.ndim < 0:
        raise FFIError("ValueError", f"DLTensor.ndim must not be negative, got {source.ndim}")
    inline_strides = not source.strides and source.ndim != 0
    size = TAIL_OFFSET + (source.ndim * _INT64 if inline_strides else 0)
    address = memory.new_object(_TENSOR, size,
                                _release_versioned if versioned else _release_unversioned)
    ctypes.memmove(address + DLTENSOR_OFFSET, ctypes.addressof(source), _DLTENSOR_SIZE)
    ctypes.c_void_p.from_address(address + KEEP_OFFSET).value = managed
    if inline_strides:
        strides = compact_strides(shape_of(source))
        ctypes.memmove(address + TAIL_OFFSET, (ctypes.c_int64 * source.ndim)(*strides),
                       source.ndim * _INT64)
        tensor_dltensor(address).strides = ctypes.cast(address + TAIL_OFFSET,
                                                       ctypes.POINTER(ctypes.c_int64))
    return address


def new_tensor_from_managed(managed: int, versioned: bool, require_alignment: int = 0,
                            require_contiguous: bool = False) -> int:
    """Imports a DLPack managed tensor at address ``managed``; returns an owned Tensor handle.

    ``versioned`` says whether it is a ``DLManagedTensorVersioned``. On
    success the Tensor owns ``managed`` and runs its deleter once, when it
    dies. On failure (an :class:`FFIError` of kind RuntimeError, with
    upstream's message) nothing is taken: ``managed`` is still the caller's.
    """
    if not managed:
        raise FFIError("ValueError", "the DLPack managed tensor must not be NULL")
    source = abi.DLTensor.from_address(managed + _DL_TENSOR_OFFSET[versioned])
    alignment = require_alignment & _UINT64_MASK  # upstream reads it as a size_t
    if alignment != 0 and not is_aligned(source, alignment):
        raise FFIError("RuntimeError", f"FromDLPack: Data is not aligned to {alignment} bytes.")
    if require_contiguous and not is_contiguous(source):
        raise FFIError("RuntimeError", "FromDLPack: Tensor is not contiguous.")
    if versioned:
        flags = abi.DLManagedTensorVersioned.from_address(managed).flags
        if flags & abi.DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED:
            raise FFIError("RuntimeError", "Subbyte type padded is not yet supported")
    return _wrap_managed(managed, versioned)


@implements("TVMFFITensorFromDLPack")
def tensor_from_dlpack(managed, require_alignment, require_contiguous, out):
    out[0] = new_tensor_from_managed(ctypes.cast(managed, ctypes.c_void_p).value, False,
                                     require_alignment, bool(require_contiguous))


@implements("TVMFFITensorFromDLPackVersioned")
def tensor_from_dlpack_versioned(managed, require_alignment, require_contiguous, out):
    out[0] = new_tensor_from_managed(ctypes.cast(managed, ctypes.c_void_p).value, True,
                                     require_alignment, bool(require_contiguous))


# ------------------------------------------------------ exporting to DLPack


def _drop_exported(managed: int, versioned: bool) -> None:
    tensor = ctypes.c_void_p.from_address(managed + _MANAGER_CTX_OFFSET[versioned]).value
    memory.free(managed)
    if tensor:
        memory.dec_ref(tensor)


def _report_deleter_failure() -> None:  # pragma: no cover - only on runtime bugs
    import sys
    import traceback

    print("tvm_ffi_ref: error in a DLPack deleter:", file=sys.stderr)
    traceback.print_exc()


@ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int)
def _exported_deleter(managed, versioned):
    # through libtvm_ffi.so's host DLPack deleters: never once the interpreter exits
    # (interpreter_exit.py); a release then is dropped
    try:
        _drop_exported(managed, versioned=bool(versioned))
    except BaseException:  # noqa: BLE001 - nothing may cross into C
        _report_deleter_failure()


LIB.tvm_ffi_runtime_set_host_dlpack_deleter(ctypes.cast(_exported_deleter, ctypes.c_void_p))
#: What an export's ``deleter`` names (CPython): libtvm_ffi.so's host DLPack deleters.
_EXPORTED_DELETER = {
    False: ctypes.cast(LIB.tvm_ffi_runtime_host_dlpack_deleter, ctypes.c_void_p).value,
    True: ctypes.cast(LIB.tvm_ffi_runtime_host_dlpack_versioned_deleter, ctypes.c_void_p).value,
}

#: Whether exported tensors get the deferring deleter: on PyPy a NumPy array (or a capsule)
#: freed during garbage collection calls its managed tensor's deleter from where no Python
#: callback can run, so the deleter only queues it (``pycapi.DEFERRED_DELETER``) and
#: :func:`drain_deferred_exports` (run by the front end before each call) drops it.
DEFER_EXPORT_DELETERS = sys.implementation.name != "cpython"
#: managed tensor address -> versioned, for the exports whose deleter is deferred.
_deferred_exports: Dict[int, bool] = {}


def drain_deferred_exports() -> None:
    """Runs the deleters the deferring deleter queued (outside any dealloc)."""
    for managed in pycapi.take_deferred():
        versioned = _deferred_exports.pop(managed, None)
        if versioned is not None:
            _drop_exported(managed, versioned)


def _require_tensor(handle: Optional[int], function: str) -> int:
    # Upstream trusts the handle; reading a non-tensor as one would be a crash, so say so.
    if not handle:
        raise FFIError("ValueError", f"{function}: the tensor handle must not be NULL")
    index = memory.type_index_of(handle)
    if index != TI.kTVMFFITensor:
        from .registry import TYPES

        try:
            got = TYPES.type_key(index)
        except FFIError:
            raise FFIError("TypeError", f"{function}: expected a ffi.Tensor, got type index "
                                        f"{index}") from None
        if not TYPES.is_instance(index, TI.kTVMFFITensor):
            raise FFIError("TypeError", f"{function}: expected a ffi.Tensor, got {got}")
    return handle


def to_managed(tensor: int, versioned: bool) -> int:
    """Exports a Tensor as a new DLPack managed tensor; returns its address.

    The managed tensor holds one reference to ``tensor`` (its ``manager_ctx``)
    until its deleter runs, which drops the reference and frees it. Whoever
    receives it must call the deleter exactly once.
    """
    managed = memory.malloc(_MANAGED_SIZE[versioned])
    if versioned:
        header = abi.DLManagedTensorVersioned.from_address(managed)
        header.version.major = abi.DLPACK_MAJOR_VERSION
        header.version.minor = abi.DLPACK_MINOR_VERSION
        header.flags = 0
    ctypes.memmove(managed + _DL_TENSOR_OFFSET[versioned], tensor + DLTENSOR_OFFSET,
                   ctypes.sizeof(abi.DLTensor))
    ctypes.c_void_p.from_address(managed + _MANAGER_CTX_OFFSET[versioned]).value = tensor
    if DEFER_EXPORT_DELETERS:
        _deferred_exports[managed] = versioned
    ctypes.c_void_p.from_address(managed + _DELETER_OFFSET[versioned]).value = \
        pycapi.DEFERRED_DELETER if DEFER_EXPORT_DELETERS else _EXPORTED_DELETER[versioned]
    memory.inc_ref(tensor)
    return managed


@implements("TVMFFITensorToDLPack")
def tensor_to_dlpack(tensor, out):
    out[0] = ctypes.cast(to_managed(_require_tensor(tensor, "TVMFFITensorToDLPack"), False),
                         ctypes.POINTER(abi.DLManagedTensor))


@implements("TVMFFITensorToDLPackVersioned")
def tensor_to_dlpack_versioned(tensor, out):
    managed = to_managed(_require_tensor(tensor, "TVMFFITensorToDLPackVersioned"), True)
    out[0] = ctypes.cast(managed, ctypes.POINTER(abi.DLManagedTensorVersioned))


# ------------------------------------------------------------------- views


def _release_view_source(address: int) -> None:
    source = ctypes.c_void_p.from_address(address + KEEP_OFFSET).value
    if source:
        memory.dec_ref(source)


def new_unsafe_view(source: int, prototype: abi.DLTensor) -> int:
    """A Tensor described by ``prototype`` that keeps ``source`` alive; returns an owned handle.

    ``prototype``'s shape and strides are copied into the new object (strides
    are required); its data pointer, device, dtype and byte offset are taken
    as given. Nothing checks that the view lies inside ``source``'s memory.
    """
    if not prototype.strides:
        raise FFIError("InternalError", "Check not null: prototype.strides ")
    ndim = prototype.ndim
    if ndim < 0:
        raise FFIError("ValueError", f"TVMFFITensorCreateUnsafeView: ndim must not be negative, "
                                     f"got {ndim}")
    shape = [prototype.shape[i] for i in range(ndim)]
    strides = [prototype.strides[i] for i in range(ndim)]
    address = memory.new_object(TI.kTVMFFITensor, TAIL_OFFSET + 2 * ndim * _INT64,
                                _release_view_source)
    ctypes.memmove(address + DLTENSOR_OFFSET, ctypes.addressof(prototype),
                   ctypes.sizeof(abi.DLTensor))
    if ndim:
        ctypes.memmove(address + TAIL_OFFSET, (ctypes.c_int64 * (2 * ndim))(*shape, *strides),
                       2 * ndim * _INT64)
    view = tensor_dltensor(address)
    view.shape = ctypes.cast(address + TAIL_OFFSET, ctypes.POINTER(ctypes.c_int64))
    view.strides = ctypes.cast(address + TAIL_OFFSET + ndim * _INT64,
                               ctypes.POINTER(ctypes.c_int64))
    if source:
        memory.inc_ref(source)
    ctypes.c_void_p.from_address(address + KEEP_OFFSET).value = source
    return address


@implements("TVMFFITensorCreateUnsafeView")
def tensor_create_unsafe_view(source, prototype, out):
    out[0] = new_unsafe_view(source, prototype.contents)


# ------------------------------------------------- the environment allocator


@abi.DLPackSetError
def _allocator_set_error(error_ctx, kind, message):
    # The allocator's way to report a failure: it becomes the raised error.
    try:
        errors.set_raised_owned(errors.new_error(kind or b"RuntimeError", message or b""))
    except BaseException:  # noqa: BLE001 - nothing may cross into C
        _report_deleter_failure()


def env_alloc_status(prototype) -> Tuple[int, Optional[int]]:
    """``TVMFFIEnvTensorAlloc`` as ``(status, tensor)``; ``prototype`` is a ``POINTER(DLTensor)``.

    A nonzero status is the allocator's own (its error, if it reported one
    through ``SetError``, is in the raised slot); the tensor is then None.
    """
    allocator = env.get_allocator()
    if allocator is None:
        raise FFIError("RuntimeError", "TVMFFIEnvTensorAlloc: allocator is nullptr, likely "
                                       "because TVMFFIEnvSetDLPackManagedTensorAllocator has "
                                       "not been called.")
    managed = ctypes.POINTER(abi.DLManagedTensorVersioned)()
    status = abi.DLPackManagedTensorAllocator(allocator)(prototype, ctypes.byref(managed), None,
                                                         _allocator_set_error)
    if status != 0:
        return status, None
    if not managed:
        raise FFIError("RuntimeError", "Check failed: (dlpack_tensor != nullptr) is false: "
                                       "TVMFFIEnvTensorAlloc: failed to allocate a tensor from "
                                       "the allocator")
    return 0, _wrap_managed(ctypes.addressof(managed.contents), versioned=True)


def env_tensor_alloc(prototype: abi.DLTensor) -> int:
    """Allocates a tensor like ``prototype`` through the installed allocator; an owned handle.

    Only ``device``, ``dtype``, ``ndim`` and ``shape`` of the prototype
    matter. Raises :class:`FFIError` with the allocator's error.
    """
    status, tensor = env_alloc_status(ctypes.cast(ctypes.addressof(prototype),
                                                  ctypes.POINTER(abi.DLTensor)))
    if status != 0:
        raised = errors.take_raised()
        if raised is None:
            raise FFIError("RuntimeError", f"the DLPack allocator failed with status {status}")
        kind, message, _ = errors.error_parts(raised)
        memory.dec_ref(raised)
        raise FFIError(kind, message)
    return tensor


@implements("TVMFFIEnvTensorAlloc")
def env_tensor_alloc_slot(prototype, out):
    status, tensor = env_alloc_status(prototype)
    if status == 0:
        out[0] = tensor
    return status


# --------------------------------------------------------- Python capsules

# A capsule keeps a pointer to its name, so the names it is renamed to must never move.
_USED_NAMES = {False: pycapi.static_name(b"used_dltensor"),
               True: pycapi.static_name(b"used_dltensor_versioned")}


def new_tensor_from_capsule(capsule, require_alignment: int = 0,
                            require_contiguous: bool = False) -> int:
    """Imports a ``__dlpack__`` capsule ("dltensor" or "dltensor_versioned"); an owned handle.

    Follows the DLPack Python protocol: only once the Tensor owns the managed
    tensor is the capsule renamed to "used_dltensor[_versioned]", so a failed
    import leaves the capsule (and its producer's clean-up) untouched.
    """
    for versioned, name in ((True, b"dltensor_versioned"), (False, b"dltensor")):
        if pycapi.capsule_is_valid(capsule, name):
            managed = pycapi.capsule_get_pointer(capsule, name)
            tensor = new_tensor_from_managed(managed, versioned, require_alignment,
                                             require_contiguous)
            pycapi.capsule_set_name(capsule, _USED_NAMES[versioned])
            return tensor
    raise TypeError("expected a DLPack capsule named 'dltensor' or 'dltensor_versioned' "
                    "(one already consumed cannot be imported again)")
