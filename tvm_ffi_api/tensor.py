"""``Tensor``, ``Shape`` and DLPack exchange with NumPy, PyTorch and friends.

A Tensor object is the 24-byte header followed by a ``DLTensor``; everything
a :class:`Tensor` reports is read from that struct in place. Exchange is zero
copy both ways. In, :func:`from_dlpack` takes a framework tensor through its
DLPack C exchange table when its class publishes one (``dlpack_exchange.py``),
else the ``DLManagedTensor`` of a producer's ``__dlpack__()`` capsule, and
hands it to ``TVMFFITensorFromDLPack[Versioned]`` (which then owns it and
calls its deleter when the Tensor dies). Out, :meth:`Tensor.__dlpack__`
exports a managed tensor that keeps the Tensor alive until the consumer calls
its deleter.

Each core supplies ``TensorBase`` (the reference: ``Object`` plus the address
of a view's DLTensor; the fast core: an extension type whose accessors are C)
and ``shortcuts.from_dlpack``; :class:`TensorMethods` here is the meaning of
every accessor, and what the reference runs.
"""

from __future__ import annotations

import ctypes
from typing import Any, Optional, Tuple

from tvm_ffi_common import abi

from . import device as device_module, releases, shortcuts, upcalls
from .device import Device
from .dtype import dtype_from_tuple
from .object import Object, TensorBase, class_for_type_index, register_class
from .string import PyNativeObject

TI = abi.TVMFFITypeIndex
_CELL_OFFSET = ctypes.sizeof(abi.TVMFFIObject)

#: The DLPack version this package produces (``__dlpack__`` with ``max_version``).
__dlpack_version__ = (abi.DLPACK_MAJOR_VERSION, abi.DLPACK_MINOR_VERSION)

#: ``from_dlpack(ext_tensor, *, require_alignment=0, require_contiguous=False)``: a Tensor
#: sharing the memory of a framework tensor, any DLPack producer, or a DLPack capsule.
#: ``require_alignment`` (bytes) and ``require_contiguous`` make the import fail when the
#: memory does not comply. (The reference's ``shortcuts.from_dlpack`` states the rules.)
from_dlpack = shortcuts.from_dlpack


def _compact_strides(shape: Tuple[int, ...]) -> Tuple[int, ...]:
    strides, expected = [], 1
    for extent in reversed(shape):
        strides.append(expected)
        expected *= extent
    return tuple(reversed(strides))


class TensorMethods:
    """What a Tensor reports, read from its DLTensor (mixed into :class:`Tensor`).

    The fast core's ``TensorBase`` implements the same members in C, and
    comes first in the method resolution order; the reference runs these.
    A Tensor either owns a Tensor object (``_handle``) or views a borrowed
    ``DLTensor*`` (``_view``, a kernel's ``kTVMFFIDLTensorPtr`` argument or result).
    """

    __slots__ = ()

    @classmethod
    def _view_of_dltensor(cls, address: int) -> "Tensor":
        """A non-owning Tensor over a borrowed ``DLTensor*`` (valid while its owner lives)."""
        tensor = cls.__new__(cls)
        tensor._handle = None
        tensor._view = address
        return tensor

    def _fields(self) -> "shortcuts.DLTensorFields":
        address = getattr(self, "_view", None) if self._handle is None else self._handle + _CELL_OFFSET
        return shortcuts.dltensor(address)

    @property
    def shape(self) -> Tuple[int, ...]:
        """The extent of each dimension."""
        return self._fields().shape

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return self._fields().ndim

    def numel(self) -> int:
        """The number of elements."""
        count = 1
        for extent in self.shape:
            count *= extent
        return count

    def size(self, idx: int) -> int:
        """The extent of dimension ``idx`` (negative counts from the end)."""
        ndim = self.ndim
        if idx < -ndim or idx >= ndim:
            raise IndexError(f"Dimension {idx} out of range for tensor with {ndim} dimensions")
        return self.shape[idx]

    @property
    def strides(self) -> Tuple[int, ...]:
        """Element strides of each dimension (compact row-major when none are stored)."""
        t = self._fields()
        return _compact_strides(t.shape) if t.strides is None else t.strides

    def is_contiguous(self) -> bool:
        """Whether the layout is compact row-major (size-1 and empty dims aside)."""
        t = self._fields()
        if t.strides is None or 0 in t.shape:
            return True
        expected = 1
        for k in range(t.ndim - 1, -1, -1):
            if t.shape[k] == 1:
                continue
            if t.strides[k] != expected:
                return False
            expected *= t.shape[k]
        return True

    def data_ptr(self) -> int:
        """The address of the first element (``data + byte_offset``)."""
        t = self._fields()
        return t.data + t.byte_offset

    @property
    def dtype(self):
        """The element type."""
        return dtype_from_tuple(*self._fields().dtype)

    @property
    def device(self) -> Device:
        """Where the data lives."""
        t = self._fields()
        # the class registered with core._set_class_device (TVM's Device), looked up now
        return device_module.DEVICE_CLASS._from_pair(t.device_type, t.device_id)

    def __dlpack_device__(self) -> Tuple[int, int]:
        t = self._fields()
        return (t.device_type, t.device_id)

    def _to_dlpack(self) -> Any:
        return shortcuts.export_capsule(self._exported_handle(), False)

    def _to_dlpack_versioned(self) -> Any:
        return shortcuts.export_capsule(self._exported_handle(), True)

    def _exported_handle(self) -> int:
        if self._handle is None:
            raise BufferError("a borrowed DLTensor view cannot be exported")
        return self._handle

    def __dlpack__(self, *, stream: Any = None, max_version: Optional[Tuple[int, int]] = None,
                   dl_device: Optional[Tuple[int, int]] = None,
                   copy: Optional[bool] = None) -> Any:
        """The DLPack producer protocol: a capsule sharing this tensor's memory."""
        self._exported_handle()
        if max_version is None:
            return self._to_dlpack()
        if max_version[0] >= __dlpack_version__[0]:
            if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
                raise BufferError("dl_device of different type not supported")
            if copy:
                raise BufferError("copy not yet supported")
            return self._to_dlpack_versioned()
        if max_version[0] < 1:
            return self._to_dlpack()
        raise BufferError(f"Unsupported max_version {max_version}")


class Tensor(TensorBase, TensorMethods):
    """An n-dimensional array that lives in C memory and crosses kernels by reference."""

    __slots__ = ()

    if not releases.PROMPT:
        @classmethod
        def _adopt(cls, handle: int) -> "Tensor":
            """A Tensor taking over one reference, its memory reported to the collector."""
            tensor = super()._adopt(handle)
            fields = tensor._fields()
            size = (fields.dtype[1] * fields.dtype[2] + 7) // 8
            for extent in fields.shape:
                size *= extent
            releases.external_memory(size)
            return tensor


register_class(TI.kTVMFFITensor, Tensor)


def tensor_class() -> type:
    """The class Tensor objects come back as (``Tensor`` unless :func:`set_tensor_class`)."""
    return class_for_type_index(TI.kTVMFFITensor)


def set_tensor_class(cls: type) -> None:
    """Makes ``cls`` (a subclass of :class:`Tensor`) the class of every Tensor made from now on:
    results, ``from_dlpack``, views (upstream's ``core._set_class_tensor``)."""
    register_class(TI.kTVMFFITensor, cls)


def shape_content(handle: int) -> Tuple[int, ...]:
    """The dimensions stored in a Shape object."""
    cell = abi.TVMFFIShapeCell.from_address(handle + _CELL_OFFSET)
    return tuple(cell.data[i] for i in range(cell.size))


class Shape(tuple, PyNativeObject):
    """A ``tuple`` of ints backed by a TVM FFI Shape object."""

    _tvm_ffi_cached_object: Optional[Object]

    def __new__(cls, content) -> "Shape":
        # the tuple of the integers given, and the Shape object ffi.Shape makes of them
        # (the reference's shortcuts.new_shape states it; the fast core does it in C)
        return shortcuts.new_shape(cls, content)

    @classmethod
    def _tvm_ffi_from_handle(cls, handle: int) -> "Shape":
        self = super().__new__(cls, shape_content(handle))
        self._tvm_ffi_cached_object = Object._adopt(handle)
        return self

    def __reduce_ex__(self, protocol):
        # a Shape of the same dimensions (copy, deepcopy, pickle), never a second wrapper
        # of the cached object: that one is a Shape too and would recurse through here
        return (type(self), (tuple(self),))


register_class(TI.kTVMFFIShape, Shape)

upcalls.install("tensor", Shape=Shape, from_dlpack=from_dlpack, tensor_class=tensor_class)
