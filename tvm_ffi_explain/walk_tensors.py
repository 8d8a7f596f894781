"""How the walker shows tensors: the DLTensor, its shape, strides and elements.

A Tensor object's ``DLTensor`` and the reference runtime's field after it, a
borrowed ``DLTensor*``, the elements read in address order (gaps of a strided
view marked), and the DLPack managed tensor a Tensor keeps alive. One of the
three families of object bodies :class:`.walk.Walker` is made of; it uses the
walker's helpers through ``self``.
"""

from __future__ import annotations

import ctypes
import struct
from typing import List, Sequence, Tuple

from tvm_ffi_common import abi

from .model import Field, Region, Section
from .reading import HEADER_SIZE, dtype_name, float_note, read


class TensorBodies:
    """Tensor objects, borrowed DLTensors and the DLPack structs behind them."""

    # --- tensors

    def tensor_body(self, region: Region, address: int, index: int, depth: int) -> None:
        from tvm_ffi_ref.runtime import tensor

        region.summary = "a tensor: header, then a DLTensor read in place by kernels"
        region.code = "tvm_ffi_ref.runtime.tensor._wrap_managed"
        at = address + HEADER_SIZE
        fields, info = self.dltensor_fields(at, HEADER_SIZE, "", depth)
        region.sections.append(Section("cell", "DLTensor", fields))
        if not self._is_ours(address):
            return
        keep_at = tensor.KEEP_OFFSET
        raw = read(address + keep_at, 8)
        keep = int.from_bytes(raw, "little") or None
        f = Field(keep_at, "manager", "void*", raw, "what this tensor keeps alive",
                  keep, True)
        region.sections.append(Section("runtime", "the reference runtime's field",
                                       [f], note="upstream keeps the same pointer here"))
        dl = abi.DLTensor.from_address(at)
        if keep and depth < self.max_depth:
            f.target, f.meaning = self.managed_region(keep, dl, depth + 1)
        strides = ctypes.cast(dl.strides, ctypes.c_void_p).value
        if strides and strides == address + tensor.TAIL_OFFSET:
            section_list = self.int64_sections(strides, tensor.TAIL_OFFSET, dl.ndim, "stride")
            section_list[0].title = "strides"
            section_list[0].note = "the producer gave none: compact strides, kept here"
            region.sections += section_list

    def dltensor_fields(self, address: int, base: int, prefix: str,
                        depth: int) -> Tuple[List[Field], abi.DLTensor]:
        """The fields of a DLTensor, its shape, strides and data followed."""
        T = self.struct_fields(abi.DLTensor, address, base, prefix)
        dl = abi.DLTensor.from_address(address)
        rows = [T["data"]]
        T["data"].meaning = "the elements (first at data + byte_offset)"
        rows += self.device_fields(address + abi.DLTensor.device.offset,
                                   base + abi.DLTensor.device.offset, prefix + "device.")
        T["ndim"].meaning = f"{dl.ndim} dimensions"
        rows.append(T["ndim"])
        rows += self.dtype_fields(address + abi.DLTensor.dtype.offset,
                                  base + abi.DLTensor.dtype.offset, prefix + "dtype.")
        ndim = max(dl.ndim, 0)
        shape = [dl.shape[i] for i in range(ndim)] if dl.shape else []
        T["shape"].meaning = f"{tuple(shape)}"
        if dl.strides:
            strides = [dl.strides[i] for i in range(ndim)]
            T["strides"].meaning = f"{tuple(strides)} in elements"
        else:
            T["strides"].meaning = "NULL: compact row-major"
        T["byte_offset"].meaning = f"{dl.byte_offset}"
        rows += [T["shape"], T["strides"], T["byte_offset"]]
        if depth < self.max_depth:
            for name, count in (("shape", ndim), ("strides", ndim)):
                pointer = T[name].pointer
                if pointer and count and self.already(pointer, "int64") is None:
                    T[name].target = self.int64_region(f"{name} array", pointer, count)
            if dl.data and self.already(dl.data, "data") is None:
                T["data"].target = self.data_region(dl, shape)
        return rows, dl

    def dltensor_region(self, address: int, depth: int) -> Region:
        region = self.new_region("DLTensor", address, "a borrowed DLTensor: nobody is owed "
                                 "anything when the call ends", key="DLTensor")
        fields, _ = self.dltensor_fields(address, 0, "", depth)
        region.sections.append(Section("", "DLTensor", fields))
        return self.finish(region)

    def int64_region(self, kind: str, address: int, count: int) -> Region:
        region = self.new_region(kind, address, f"{count} int64_t values, owned by whoever "
                                 "made the DLTensor", key="int64")
        region.sections += self.int64_sections(address, 0, count, kind.split()[0])
        return self.finish(region)

    def data_region(self, dl: abi.DLTensor, shape: Sequence[int]) -> Region:
        count = 1
        for extent in shape:
            count *= extent
        lanes = max(dl.dtype.lanes, 1)
        item = max((dl.dtype.bits * lanes + 7) // 8, 1)
        start = dl.data + dl.byte_offset
        region = self.new_region("tensor data", dl.data,
                                 f"{count} element(s) of dtype "
                                 f"{dtype_name(dl.dtype.code, dl.dtype.bits, dl.dtype.lanes)}; "
                                 "owned by the producer", key="data")
        if dl.device.device_type not in (abi.DLDeviceType.kDLCPU, abi.DLDeviceType.kDLCUDAHost):
            region.sections.append(Section("", "", elided=True,
                                           note="device memory: not readable from here"))
            return self.finish(region)
        strides = ([dl.strides[i] for i in range(dl.ndim)] if dl.strides
                   else _compact(shape))
        reach = sum((extent - 1) * stride for extent, stride in zip(shape, strides)
                    if extent > 0 and stride > 0)
        low = sum((extent - 1) * stride for extent, stride in zip(shape, strides)
                  if extent > 0 and stride < 0)
        if count == 0:
            region.sections.append(Section("", "", elided=True, note="no elements"))
            return self.finish(region)
        first = start + low * item
        span = (reach - low + 1) * item
        shown = min(span, self.max_bytes)
        shown -= shown % item if shown >= item else 0
        members = _element_offsets(shape, strides, low) if count <= 1 << 16 else None
        section = Section("elements", f"{item}-byte items",
                          note="memory in address order, from the lowest element on")
        for k in range(max(shown // item, 1)):
            raw = read(first + k * item, item)
            note = element_note(raw, dl.dtype)
            if members is not None and k not in members:
                note = (note + "  " if note else "") + "(a gap: not an element of this view)"
            section.fields.append(Field(first - dl.data + k * item, f"[{k}]",
                                        c_element_type(dl.dtype), raw, note))
        region.sections.append(section)
        if span > shown:
            region.sections.append(Section("", "", elided=True,
                                           note=f"... {span - shown} more bytes ..."))
        # The title gives the whole span, not just the bytes shown above.
        region.size = max(region.size, first - dl.data + span)
        return self.finish(region)

    def managed_region(self, managed: int, dl: abi.DLTensor, depth: int) -> Tuple[Region, str]:
        """The DLPack managed tensor a Tensor keeps (versioned or not, told apart by its copy)."""
        versioned = None
        for candidate, struct_type in ((False, abi.DLManagedTensor),
                                       (True, abi.DLManagedTensorVersioned)):
            inner = abi.DLTensor.from_address(managed + struct_type.dl_tensor.offset)
            if inner.data == dl.data and inner.ndim == dl.ndim and \
                    ctypes.cast(inner.shape, ctypes.c_void_p).value == \
                    ctypes.cast(dl.shape, ctypes.c_void_p).value:
                versioned = candidate
                break
        if versioned is None:
            region = self.new_region("kept object", managed, "not a DLPack managed tensor this "
                                     "walker recognises", key="managed")
            return self.finish(region), "what this tensor keeps alive"
        struct_type = abi.DLManagedTensorVersioned if versioned else abi.DLManagedTensor
        region = self.new_region(struct_type.__name__, managed,
                                 "the producer's DLPack tensor; its deleter runs when the "
                                 "Tensor dies", key="managed")
        M = self.struct_fields(struct_type, managed, 0)
        rows = []
        if versioned:
            V = self.struct_fields(abi.DLPackVersion, managed, 0, "version.")
            V["major"].meaning = f"DLPack {self.int_field(V['major'], ctypes.c_uint32)}"
            V["minor"].meaning = f".{self.int_field(V['minor'], ctypes.c_uint32)}"
            rows += [V["major"], V["minor"]]
        M["manager_ctx"].meaning = "the producer's own context"
        M["deleter"].meaning = "the consumer calls deleter(self) exactly once"
        rows += [M["manager_ctx"], M["deleter"]]
        if versioned:
            M["flags"].meaning = f"DLPACK_FLAG_BITMASK_* = {self.int_field(M['flags'])}"
            rows.append(M["flags"])
        inner_at = struct_type.dl_tensor.offset
        inner, _ = self.dltensor_fields(managed + inner_at, inner_at, "dl_tensor.", depth)
        sections = [Section("", struct_type.__name__, rows),
                    Section("dl_tensor", "DLTensor", inner,
                            note="the Tensor's DLTensor is a copy of this one")]
        region.sections += sorted(sections, key=lambda s: s.fields[0].offset)
        what = ("the DLManagedTensorVersioned it took over" if versioned else
                "the DLManagedTensor it took over (DLPack 0.x, from __dlpack__())")
        return self.finish(region), what


def _element_offsets(shape: Sequence[int], strides: Sequence[int], low: int) -> set:
    """Where each element of a view lies, in items from its lowest element."""
    offsets = {0 - low}
    for extent, stride in zip(shape, strides):
        offsets = {o + i * stride for o in offsets for i in range(extent)}
    return {o + 0 for o in offsets}


def _compact(shape: Sequence[int]) -> List[int]:
    strides, step = [], 1
    for extent in reversed(shape):
        strides.append(step)
        step *= extent
    return list(reversed(strides))


_ELEMENT_FORMATS = {
    (abi.DLDataTypeCode.kDLInt, 8): "<b", (abi.DLDataTypeCode.kDLInt, 16): "<h",
    (abi.DLDataTypeCode.kDLInt, 32): "<i", (abi.DLDataTypeCode.kDLInt, 64): "<q",
    (abi.DLDataTypeCode.kDLUInt, 8): "<B", (abi.DLDataTypeCode.kDLUInt, 16): "<H",
    (abi.DLDataTypeCode.kDLUInt, 32): "<I", (abi.DLDataTypeCode.kDLUInt, 64): "<Q",
    (abi.DLDataTypeCode.kDLFloat, 16): "<e", (abi.DLDataTypeCode.kDLFloat, 32): "<f",
    (abi.DLDataTypeCode.kDLFloat, 64): "<d", (abi.DLDataTypeCode.kDLBool, 8): "<?",
}


def c_element_type(dtype: abi.DLDataType) -> str:
    """A C-ish spelling of one element of a tensor."""
    return dtype_name(dtype.code, dtype.bits, dtype.lanes)


def element_note(raw: bytes, dtype: abi.DLDataType) -> str:
    """The value of one element, when its dtype is a plain scalar (or a complex)."""
    if dtype.code == abi.DLDataTypeCode.kDLComplex and dtype.bits in (64, 128) and \
            dtype.lanes == 1 and len(raw) == dtype.bits // 8:
        real, imag = struct.unpack("<ff" if dtype.bits == 64 else "<dd", raw)
        return repr(complex(real, imag))
    fmt = _ELEMENT_FORMATS.get((dtype.code, dtype.bits))
    if fmt is None or dtype.lanes != 1 or len(raw) != struct.calcsize(fmt):
        return ""
    value = struct.unpack(fmt, raw)[0]
    return float_note(value) if isinstance(value, float) else repr(value)

