"""The TVM FFI C ABI, mirrored in ctypes.

This module is the executable form of ``c_api/include``: every enum of
``dlpack/dlpack.h``, ``tvm/ffi/c_api.h`` and ``tvm/ffi/extra/c_env_api.h`` as an
``IntEnum``, every struct and union as a ``ctypes.Structure``/``Union`` with the
header's field names in the header's order, and every exported function with
its C prototype and the ctypes signature derived from it.

Nothing here does anything: it only describes. The layout tests compile a C
program against both our headers and upstream's and check every size, alignment,
offset and enum value printed there against this module.

Reading guide
-------------
* A ``TVMFFIAny`` is 16 bytes: a type index, 4 bytes of padding (or a small
  string length), and an 8-byte payload.
* Every object starts with the 24-byte ``TVMFFIObject`` header; the type's
  "cell" struct follows it directly.
* A function is called as ``safe_call(handle, args, num_args, result)``: the
  callee borrows ``args`` and stores an owned value in ``result``.
"""

from __future__ import annotations

import ctypes
import enum
from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    Union,
    c_char,
    c_char_p,
    c_double,
    c_int,
    c_int32,
    c_int64,
    c_size_t,
    c_uint8,
    c_uint16,
    c_uint32,
    c_uint64,
    c_void_p,
)
from dataclasses import dataclass
from typing import Dict, Iterator, List, Tuple, Type

# --------------------------------------------------------------------------- #
# Versions (#define macros)
# --------------------------------------------------------------------------- #

#: ``TVM_FFI_VERSION_MAJOR`` / ``MINOR`` / ``PATCH`` of ``c_api.h``.
TVM_FFI_VERSION_MAJOR = 0
TVM_FFI_VERSION_MINOR = 1
TVM_FFI_VERSION_PATCH = 16

#: ``DLPACK_MAJOR_VERSION`` / ``DLPACK_MINOR_VERSION`` of ``dlpack.h``.
DLPACK_MAJOR_VERSION = 1
DLPACK_MINOR_VERSION = 3

#: Bits of ``DLManagedTensorVersioned.flags`` (``DLPACK_FLAG_BITMASK_*``).
DLPACK_FLAG_BITMASK_READ_ONLY = 1 << 0
DLPACK_FLAG_BITMASK_IS_COPIED = 1 << 1
DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED = 1 << 2

#: Every integer macro above, by its C name (checked by the layout tests).
MACROS: Dict[str, int] = {
    name: value
    for name, value in dict(globals()).items()
    if name.startswith(("TVM_FFI_VERSION_", "DLPACK_")) and isinstance(value, int)
}

# --------------------------------------------------------------------------- #
# Enums
# --------------------------------------------------------------------------- #


class DLDeviceType(enum.IntEnum):
    """``DLDeviceType``: where tensor memory lives (an int32 in ``DLDevice``)."""

    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17
    kDLTrn = 18


class DLDataTypeCode(enum.IntEnum):
    """``DLDataTypeCode``: the ``code`` byte of a ``DLDataType``."""

    kDLInt = 0
    kDLUInt = 1
    kDLFloat = 2
    kDLOpaqueHandle = 3
    kDLBfloat = 4
    kDLComplex = 5
    kDLBool = 6
    kDLFloat8_e3m4 = 7
    kDLFloat8_e4m3 = 8
    kDLFloat8_e4m3b11fnuz = 9
    kDLFloat8_e4m3fn = 10
    kDLFloat8_e4m3fnuz = 11
    kDLFloat8_e5m2 = 12
    kDLFloat8_e5m2fnuz = 13
    kDLFloat8_e8m0fnu = 14
    kDLFloat6_e2m3fn = 15
    kDLFloat6_e3m2fn = 16
    kDLFloat4_e2m1fn = 17


class TVMFFITypeIndex(enum.IntEnum):
    """``TVMFFITypeIndex``: what a ``TVMFFIAny`` or an object header holds.

    Below ``kTVMFFIStaticObjectBegin`` (64) the value sits inline in the Any;
    from 64 it is an object pointer; from ``kTVMFFIDynObjectBegin`` (128) the
    index was allocated at run time for a registered type.
    """

    kTVMFFIAny = -1
    kTVMFFINone = 0
    kTVMFFIInt = 1
    kTVMFFIBool = 2
    kTVMFFIFloat = 3
    kTVMFFIOpaquePtr = 4
    kTVMFFIDataType = 5
    kTVMFFIDevice = 6
    kTVMFFIDLTensorPtr = 7
    kTVMFFIRawStr = 8
    kTVMFFIByteArrayPtr = 9
    kTVMFFIObjectRValueRef = 10
    kTVMFFISmallStr = 11
    kTVMFFISmallBytes = 12
    kTVMFFIUnchanged = 13
    kTVMFFIObject = 64  # listed first so that 64 prints as kTVMFFIObject
    kTVMFFIStaticObjectBegin = 64  # an alias of kTVMFFIObject
    kTVMFFIStr = 65
    kTVMFFIBytes = 66
    kTVMFFIError = 67
    kTVMFFIFunction = 68
    kTVMFFIShape = 69
    kTVMFFITensor = 70
    kTVMFFIArray = 71
    kTVMFFIMap = 72
    kTVMFFIModule = 73
    kTVMFFIOpaquePyObject = 74
    kTVMFFIList = 75
    kTVMFFIDict = 76
    kTVMFFIVisitInterrupt = 77
    kTVMFFIBigInt = 78
    kTVMFFIStaticObjectEnd = 79
    kTVMFFIDynObjectBegin = 128


#: The mutable containers, List and Dict: a call holds (locks) each one it passes as an
#: argument for the whole call (``tvm_ffi_runtime.h``, container locks); both front ends of
#: both runtimes test a type index against this set.
LOCKED_CONTAINER_TYPES = frozenset((int(TVMFFITypeIndex.kTVMFFIList),
                                    int(TVMFFITypeIndex.kTVMFFIDict)))


class TVMFFIObjectDeleterFlagBitMask(enum.IntFlag):
    """``TVMFFIObjectDeleterFlagBitMask``: the ``flags`` argument of a deleter.

    ``Strong``: destroy the value (the strong count reached zero).
    ``Weak``: release the memory (the weak count reached zero).
    """

    kTVMFFIObjectDeleterFlagBitMaskStrong = 1 << 0
    kTVMFFIObjectDeleterFlagBitMaskWeak = 1 << 1
    kTVMFFIObjectDeleterFlagBitMaskBoth = (1 << 0) | (1 << 1)


class TVMFFIBacktraceUpdateMode(enum.IntEnum):
    """``TVMFFIBacktraceUpdateMode``: how ``update_backtrace`` treats the old text."""

    kTVMFFIBacktraceUpdateModeReplace = 0
    kTVMFFIBacktraceUpdateModeAppend = 1


class TVMFFIFieldFlagBitMask(enum.IntFlag):
    """``TVMFFIFieldFlagBitMask``: bits of ``TVMFFIFieldInfo.flags``."""

    kTVMFFIFieldFlagBitMaskWritable = 1 << 0
    kTVMFFIFieldFlagBitMaskHasDefault = 1 << 1
    kTVMFFIFieldFlagBitMaskIsStaticMethod = 1 << 2
    kTVMFFIFieldFlagBitMaskSEqHashIgnore = 1 << 3
    kTVMFFIFieldFlagBitMaskSEqHashDefPattern = 1 << 4
    kTVMFFIFieldFlagBitMaskDefaultFromFactory = 1 << 5
    kTVMFFIFieldFlagBitMaskReprOff = 1 << 6
    kTVMFFIFieldFlagBitMaskCompareOff = 1 << 7
    kTVMFFIFieldFlagBitMaskHashOff = 1 << 8
    kTVMFFIFieldFlagBitMaskInitOff = 1 << 9
    kTVMFFIFieldFlagBitMaskKwOnly = 1 << 10
    kTVMFFIFieldFlagBitSetterIsFunctionObj = 1 << 11
    kTVMFFIFieldFlagBitMaskSEqHashDefSimple = 1 << 12


class TVMFFISEqHashKind(enum.IntEnum):
    """``TVMFFISEqHashKind``: how structural equality/hash treat a type."""

    kTVMFFISEqHashKindUnsupported = 0
    kTVMFFISEqHashKindTreeNode = 1
    kTVMFFISEqHashKindFreeVar = 2
    kTVMFFISEqHashKindDAGNode = 3
    kTVMFFISEqHashKindConstTreeNode = 4
    kTVMFFISEqHashKindUniqueInstance = 5


class TVMFFIDefRegionKind(enum.IntEnum):
    """``TVMFFIDefRegionKind``: the definition region of a visited field."""

    kTVMFFIDefRegionKindNone = 0
    kTVMFFIDefRegionKindPattern = 1
    kTVMFFIDefRegionKindSimple = 2


class TVMFFIRuntimeInstallStatus(enum.IntEnum):
    """``TVMFFIRuntimeInstallStatus``: what ``tvm_ffi_runtime_install`` reports (ours, not upstream's)."""

    kTVMFFIRuntimeInstalled = 0
    kTVMFFIRuntimeAlreadyInstalled = 1
    kTVMFFIRuntimeBadTable = -1


#: Every enum, with the header that declares it.
ENUMS: Dict[Type[enum.Enum], str] = {
    DLDeviceType: "dlpack/dlpack.h",
    DLDataTypeCode: "dlpack/dlpack.h",
    TVMFFITypeIndex: "tvm/ffi/c_api.h",
    TVMFFIObjectDeleterFlagBitMask: "tvm/ffi/c_api.h",
    TVMFFIBacktraceUpdateMode: "tvm/ffi/c_api.h",
    TVMFFIFieldFlagBitMask: "tvm/ffi/c_api.h",
    TVMFFISEqHashKind: "tvm/ffi/c_api.h",
    TVMFFIDefRegionKind: "tvm/ffi/c_api.h",
    TVMFFIRuntimeInstallStatus: "tvm_ffi_runtime.h",
}

# --------------------------------------------------------------------------- #
# dlpack/dlpack.h structs
# --------------------------------------------------------------------------- #


class DLPackVersion(Structure):
    """``DLPackVersion``: the DLPack ABI version a versioned tensor was made for.

    A consumer must refuse a tensor whose ``major`` differs from its own.
    """

    _fields_ = [("major", c_uint32), ("minor", c_uint32)]


class DLDevice(Structure):
    """``DLDevice``: a device kind (``DLDeviceType``) and an ordinal, 8 bytes."""

    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class DLDataType(Structure):
    """``DLDataType``: element type code, bits per lane and lane count, 4 bytes.

    ``float32`` is ``(kDLFloat, 32, 1)``; ``int8x4`` is ``(kDLInt, 8, 4)``.
    """

    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class DLTensor(Structure):
    """``DLTensor``: a borrowed n-d view; owns none of the memory it points to.

    ``strides`` may be NULL (compact row-major). The first element lives at
    ``data + byte_offset``; strides count elements, not bytes.
    """

    _fields_ = [
        ("data", c_void_p),
        ("device", DLDevice),
        ("ndim", c_int32),
        ("dtype", DLDataType),
        ("shape", POINTER(c_int64)),
        ("strides", POINTER(c_int64)),
        ("byte_offset", c_uint64),
    ]


class DLManagedTensor(Structure):
    """``DLManagedTensor``: an owning DLPack 0.x tensor.

    Ownership moves to the consumer, which must call ``deleter(self)`` exactly
    once; ``manager_ctx`` belongs to the producer.
    """


DLManagedTensorDeleter = CFUNCTYPE(None, POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [
    ("dl_tensor", DLTensor),
    ("manager_ctx", c_void_p),
    ("deleter", DLManagedTensorDeleter),
]


class DLManagedTensorVersioned(Structure):
    """``DLManagedTensorVersioned``: an owning DLPack 1.x tensor.

    ``version`` comes first so a consumer can check it before reading more;
    ``flags`` holds ``DLPACK_FLAG_BITMASK_*`` bits. Same deleter contract as
    ``DLManagedTensor``.
    """


DLManagedTensorVersionedDeleter = CFUNCTYPE(None, POINTER(DLManagedTensorVersioned))
DLManagedTensorVersioned._fields_ = [
    ("version", DLPackVersion),
    ("manager_ctx", c_void_p),
    ("deleter", DLManagedTensorVersionedDeleter),
    ("flags", c_uint64),
    ("dl_tensor", DLTensor),
]

#: ``DLPackManagedTensorAllocator``: allocate an owning tensor shaped like a
#: prototype; on failure call ``SetError(error_ctx, kind, message)`` and return nonzero.
DLPackManagedTensorAllocator = CFUNCTYPE(
    c_int, POINTER(DLTensor), POINTER(POINTER(DLManagedTensorVersioned)), c_void_p, c_void_p
)
#: The ``SetError`` callback an allocator reports failures through.
DLPackSetError = CFUNCTYPE(None, c_void_p, c_char_p, c_char_p)
#: ``DLPackManagedTensorFromPyObjectNoSync``.
DLPackManagedTensorFromPyObjectNoSync = CFUNCTYPE(
    c_int, c_void_p, POINTER(POINTER(DLManagedTensorVersioned))
)
#: ``DLPackDLTensorFromPyObjectNoSync``.
DLPackDLTensorFromPyObjectNoSync = CFUNCTYPE(c_int, c_void_p, POINTER(DLTensor))
#: ``DLPackCurrentWorkStream``.
DLPackCurrentWorkStream = CFUNCTYPE(c_int, c_int32, c_int32, POINTER(c_void_p))
#: ``DLPackManagedTensorToPyObjectNoSync``.
DLPackManagedTensorToPyObjectNoSync = CFUNCTYPE(
    c_int, POINTER(DLManagedTensorVersioned), POINTER(c_void_p)
)


class DLPackExchangeAPIHeader(Structure):
    """``DLPackExchangeAPIHeader``: version plus a link to an older table."""


DLPackExchangeAPIHeader._fields_ = [
    ("version", DLPackVersion),
    ("prev_api", POINTER(DLPackExchangeAPIHeader)),
]


class DLPackExchangeAPI(Structure):
    """``DLPackExchangeAPI``: a framework's table of fast tensor-exchange calls."""

    _fields_ = [
        ("header", DLPackExchangeAPIHeader),
        ("managed_tensor_allocator", DLPackManagedTensorAllocator),
        ("managed_tensor_from_py_object_no_sync", DLPackManagedTensorFromPyObjectNoSync),
        ("managed_tensor_to_py_object_no_sync", DLPackManagedTensorToPyObjectNoSync),
        ("dltensor_from_py_object_no_sync", DLPackDLTensorFromPyObjectNoSync),
        ("current_work_stream", DLPackCurrentWorkStream),
    ]


# --------------------------------------------------------------------------- #
# tvm/ffi/c_api.h structs
# --------------------------------------------------------------------------- #

#: ``TVMFFIObjectHandle``: an object, as a pointer to its header.
TVMFFIObjectHandle = c_void_p

#: The deleter in every object header: ``void (*)(void* self, int flags)``.
TVMFFIObjectDeleter = CFUNCTYPE(None, c_void_p, c_int)


class TVMFFIVersion(Structure):
    """``TVMFFIVersion``: what ``TVMFFIGetVersion`` writes."""

    _fields_ = [("major", c_uint32), ("minor", c_uint32), ("patch", c_uint32)]


class _TVMFFIObjectDeleterSlot(Union):
    """The anonymous union holding ``TVMFFIObject.deleter`` (8 bytes everywhere)."""

    _fields_ = [("deleter", TVMFFIObjectDeleter), ("__ensure_align", c_int64)]


class TVMFFIObject(Structure):
    """``TVMFFIObject``: the 24-byte header at the start of every object.

    ``combined_ref_count`` packs the strong count (low 32 bits) and the weak
    count (high 32 bits); a fresh object holds ``(1 << 32) | 1``. The holder
    of the last strong reference calls ``deleter(self, flags)`` with
    ``TVMFFIObjectDeleterFlagBitMask`` bits saying what to release. The object
    owns itself: whoever holds a strong reference keeps it alive.
    """

    _anonymous_ = ("_deleter_slot",)
    _fields_ = [
        ("combined_ref_count", c_uint64),
        ("type_index", c_int32),
        ("__padding", c_uint32),
        ("_deleter_slot", _TVMFFIObjectDeleterSlot),
    ]


class _TVMFFIAnyTag(Union):
    """The 4 bytes after ``TVMFFIAny.type_index``: padding or small length."""

    _fields_ = [("zero_padding", c_uint32), ("small_str_len", c_uint32)]


class _TVMFFIAnyPayload(Union):
    """The 8-byte payload of ``TVMFFIAny``; ``type_index`` says which member is live."""

    _fields_ = [
        ("v_int64", c_int64),
        ("v_float64", c_double),
        ("v_ptr", c_void_p),
        ("v_c_str", c_char_p),
        ("v_obj", POINTER(TVMFFIObject)),
        ("v_dtype", DLDataType),
        ("v_device", DLDevice),
        ("v_bytes", c_char * 8),
        ("v_uint64", c_uint64),
    ]


class TVMFFIAny(Structure):
    """``TVMFFIAny``: the 16-byte tagged value every argument and result uses.

    As an *Any* (a result) it owns one strong reference to an object payload;
    as an *AnyView* (an argument) it borrows it. ``zero_padding`` is zero
    except for ``kTVMFFISmallStr``/``kTVMFFISmallBytes``, whose length (at most
    7) is stored there as ``small_str_len`` with the bytes in ``v_bytes``.
    """

    _anonymous_ = ("_tag", "_payload")
    _fields_ = [
        ("type_index", c_int32),
        ("_tag", _TVMFFIAnyTag),
        ("_payload", _TVMFFIAnyPayload),
    ]


class TVMFFIByteArray(Structure):
    """``TVMFFIByteArray``: a borrowed ``(data, size)`` byte run.

    Also the cell of String and Bytes objects, where ``data`` points at the
    object's own NUL-terminated payload and lives as long as the object.
    """

    _fields_ = [("data", c_void_p), ("size", c_size_t)]


class TVMFFIShapeCell(Structure):
    """``TVMFFIShapeCell``: the cell of a Shape object; ``size`` int64 dims at ``data``."""

    _fields_ = [("data", POINTER(c_int64)), ("size", c_size_t)]


class TVMFFISeqCell(Structure):
    """``TVMFFISeqCell``: the cell of Array and List objects.

    ``data`` holds ``capacity`` ``TVMFFIAny`` slots, the first ``size`` live and
    owned by the container. ``data_deleter`` is NULL when the slots are part of
    the object's allocation (Array) and frees the separate buffer (List).
    """

    _fields_ = [
        ("data", c_void_p),
        ("size", c_int64),
        ("capacity", c_int64),
        ("data_deleter", CFUNCTYPE(None, c_void_p)),
    ]


#: ``update_backtrace(self, backtrace, update_mode)`` in ``TVMFFIErrorCell``.
TVMFFIErrorUpdateBacktrace = CFUNCTYPE(None, c_void_p, POINTER(TVMFFIByteArray), c_int32)


class TVMFFIErrorCell(Structure):
    """``TVMFFIErrorCell``: the cell of an Error object.

    ``kind``/``message``/``backtrace`` view text owned by the error (backtrace
    most recent frame first). ``cause_chain`` and ``extra_context`` are NULL or
    an object the error holds one reference to.
    """

    _fields_ = [
        ("kind", TVMFFIByteArray),
        ("message", TVMFFIByteArray),
        ("backtrace", TVMFFIByteArray),
        ("update_backtrace", TVMFFIErrorUpdateBacktrace),
        ("cause_chain", c_void_p),
        ("extra_context", c_void_p),
    ]


#: ``TVMFFISafeCallType``: ``int (*)(void* handle, const TVMFFIAny* args,
#: int32_t num_args, TVMFFIAny* result)``; 0 on success, -1 with a raised error.
TVMFFISafeCallType = CFUNCTYPE(c_int, c_void_p, POINTER(TVMFFIAny), c_int32, POINTER(TVMFFIAny))


class TVMFFIFunctionCell(Structure):
    """``TVMFFIFunctionCell``: the cell of a Function object.

    Any caller may use ``safe_call(handle=self object, ...)``. ``cpp_call`` is a
    throwing C++ entry, NULL unless made in C++; never call it across runtimes.
    """

    _fields_ = [("safe_call", TVMFFISafeCallType), ("cpp_call", c_void_p)]


class TVMFFIOpaqueObjectCell(Structure):
    """``TVMFFIOpaqueObjectCell``: the foreign handle (e.g. a PyObject*) an opaque object keeps."""

    _fields_ = [("handle", c_void_p)]


class TVMFFIObjectAllocHeader(Structure):
    """``TVMFFIObjectAllocHeader``: the word before each custom-allocated object body.

    ``delete_space(body)`` frees the whole allocation once the object's memory
    is released (NULL when the deleter frees it directly).
    """

    _fields_ = [("delete_space", CFUNCTYPE(None, c_void_p))]


#: ``allocate(size, alignment, type_index, context)`` of ``TVMFFICustomAllocator``.
TVMFFICustomAllocate = CFUNCTYPE(c_void_p, c_size_t, c_size_t, c_int32, c_void_p)


class TVMFFICustomAllocator(Structure):
    """``TVMFFICustomAllocator``: a process-wide object allocator a frontend installs.

    The struct must live as long as the process; ``context`` belongs to the
    allocator and is passed through to ``allocate`` unchanged.
    """

    _fields_ = [("allocate", TVMFFICustomAllocate), ("context", c_void_p)]


#: ``TVMFFIFieldGetter``: ``int (*)(void* field, TVMFFIAny* result)``.
TVMFFIFieldGetter = CFUNCTYPE(c_int, c_void_p, POINTER(TVMFFIAny))
#: ``TVMFFIFieldSetter``: ``int (*)(void* field, const TVMFFIAny* value)``.
TVMFFIFieldSetter = CFUNCTYPE(c_int, c_void_p, POINTER(TVMFFIAny))
#: ``TVMFFIObjectCreator``: ``int (*)(TVMFFIObjectHandle* result)``.
TVMFFIObjectCreator = CFUNCTYPE(c_int, POINTER(c_void_p))


class TVMFFIFieldInfo(Structure):
    """``TVMFFIFieldInfo``: one reflected field of an object type.

    ``offset`` is from the object header. ``setter`` is a
    ``TVMFFIFieldSetter`` or, with ``kTVMFFIFieldFlagBitSetterIsFunctionObj``,
    a Function handle. ``default_value_or_factory`` is borrowed from the
    registrant, which keeps it alive. Strings are borrowed too.
    """

    _fields_ = [
        ("name", TVMFFIByteArray),
        ("doc", TVMFFIByteArray),
        ("metadata", TVMFFIByteArray),
        ("flags", c_int64),
        ("size", c_int64),
        ("alignment", c_int64),
        ("offset", c_int64),
        ("getter", TVMFFIFieldGetter),
        ("setter", c_void_p),
        ("default_value_or_factory", TVMFFIAny),
        ("field_static_type_index", c_int32),
    ]


class TVMFFIMethodInfo(Structure):
    """``TVMFFIMethodInfo``: one reflected method; ``method`` is a borrowed Function."""

    _fields_ = [
        ("name", TVMFFIByteArray),
        ("doc", TVMFFIByteArray),
        ("metadata", TVMFFIByteArray),
        ("flags", c_int64),
        ("method", TVMFFIAny),
    ]


class TVMFFITypeMetadata(Structure):
    """``TVMFFITypeMetadata``: optional per-type facts for reflection-based creation."""

    _fields_ = [
        ("doc", TVMFFIByteArray),
        ("creator", TVMFFIObjectCreator),
        ("total_size", c_int32),
        ("structural_eq_hash_kind", c_int32),
    ]


class TVMFFITypeAttrColumn(Structure):
    """``TVMFFITypeAttrColumn``: one attribute across types, owned by the runtime.

    The value for type index ``t`` is ``data[t - begin_index]`` when
    ``begin_index <= t < begin_index + size``.
    """

    _fields_ = [("data", POINTER(TVMFFIAny)), ("size", c_int32), ("begin_index", c_int32)]


class TVMFFITypeInfo(Structure):
    """``TVMFFITypeInfo``: the runtime's record of one type, at a fixed address.

    ``type_ancestors[d]`` is the record of the ancestor at depth ``d`` for
    ``d < type_depth``. Fields, methods and metadata arrays are owned by the
    runtime and grow as they are registered.
    """


TVMFFITypeInfo._fields_ = [
    ("type_index", c_int32),
    ("type_depth", c_int32),
    ("type_key", TVMFFIByteArray),
    ("type_ancestors", POINTER(POINTER(TVMFFITypeInfo))),
    ("type_key_hash", c_uint64),
    ("num_fields", c_int32),
    ("num_methods", c_int32),
    ("fields", POINTER(TVMFFIFieldInfo)),
    ("methods", POINTER(TVMFFIMethodInfo)),
    ("metadata", POINTER(TVMFFITypeMetadata)),
]

#: ``TVMFFIStreamHandle`` of ``c_env_api.h``: a device stream, never owned.
TVMFFIStreamHandle = c_void_p

# --------------------------------------------------------------------------- #
# Functions
# --------------------------------------------------------------------------- #


@dataclass(frozen=True)
class CFunction:
    """One exported C function: its prototype as C text and as ctypes types."""

    name: str
    restype: str
    params: Tuple[Tuple[str, str], ...]
    header: str

    def c_declarator(self) -> str:
        """The prototype in C, e.g. ``int TVMFFIObjectIncRef(TVMFFIObjectHandle obj)``."""
        params = ", ".join(_c_param(ctype, name) for ctype, name in self.params) or "void"
        return f"{self.restype} {self.name}({params})"

    def ctypes_restype(self):
        """The ctypes ``restype`` for calling the function."""
        return c_type(self.restype)

    def ctypes_argtypes(self) -> list:
        """The ctypes ``argtypes`` for calling the function."""
        return [c_type(ctype) for ctype, _ in self.params]


def _c_param(ctype: str, name: str) -> str:
    # A function-pointer spelling "void (*)(void*)" takes its name inside "(*)".
    if "(*)" in ctype:
        return ctype.replace("(*)", f"(*{name})", 1)
    return f"{ctype} {name}"


def _fn(header: str, restype: str, name: str, *params: Tuple[str, str]) -> CFunction:
    return CFunction(name, restype, tuple(params), header)


_C = "tvm/ffi/c_api.h"
_ENV = "tvm/ffi/extra/c_env_api.h"

#: Every function ``libtvm_ffi.so`` exports, in header order.
C_API_FUNCTIONS: List[CFunction] = [
    _fn(_C, "void", "TVMFFIGetVersion", ("TVMFFIVersion*", "out_version")),
    _fn(_C, "int", "TVMFFIObjectIncRef", ("TVMFFIObjectHandle", "obj")),
    _fn(_C, "int", "TVMFFIObjectDecRef", ("TVMFFIObjectHandle", "obj")),
    _fn(_C, "int", "TVMFFIObjectCreateOpaque", ("void*", "handle"), ("int32_t", "type_index"),
        ("void (*)(void*)", "deleter"), ("TVMFFIObjectHandle*", "out")),
    _fn(_C, "TVMFFICustomAllocator*", "TVMFFIGetCustomAllocator"),
    _fn(_C, "int", "TVMFFISetCustomAllocator", ("TVMFFICustomAllocator*", "allocator")),
    _fn(_C, "int", "TVMFFITypeKeyToIndex", ("const TVMFFIByteArray*", "type_key"),
        ("int32_t*", "out_tindex")),
    _fn(_C, "int", "TVMFFIFunctionCreate", ("void*", "self"),
        ("TVMFFISafeCallType", "safe_call"), ("void (*)(void*)", "deleter"),
        ("TVMFFIObjectHandle*", "out")),
    _fn(_C, "int", "TVMFFIFunctionGetGlobal", ("const TVMFFIByteArray*", "name"),
        ("TVMFFIObjectHandle*", "out")),
    _fn(_C, "int", "TVMFFIAnyViewToOwnedAny", ("const TVMFFIAny*", "any_view"),
        ("TVMFFIAny*", "out")),
    _fn(_C, "int", "TVMFFIFunctionCall", ("TVMFFIObjectHandle", "func"), ("TVMFFIAny*", "args"),
        ("int32_t", "num_args"), ("TVMFFIAny*", "result")),
    _fn(_C, "void", "TVMFFIErrorMoveFromRaised", ("TVMFFIObjectHandle*", "result")),
    _fn(_C, "void", "TVMFFIErrorSetRaised", ("TVMFFIObjectHandle", "error")),
    _fn(_C, "void", "TVMFFIErrorSetRaisedFromCStr", ("const char*", "kind"),
        ("const char*", "message")),
    _fn(_C, "void", "TVMFFIErrorSetRaisedFromCStrParts", ("const char*", "kind"),
        ("const char**", "message_parts"), ("int32_t", "num_parts")),
    _fn(_C, "int", "TVMFFIErrorCreate", ("const TVMFFIByteArray*", "kind"),
        ("const TVMFFIByteArray*", "message"), ("const TVMFFIByteArray*", "backtrace"),
        ("TVMFFIObjectHandle*", "out")),
    _fn(_C, "int", "TVMFFIErrorCreateWithCauseAndExtraContext",
        ("const TVMFFIByteArray*", "kind"), ("const TVMFFIByteArray*", "message"),
        ("const TVMFFIByteArray*", "backtrace"), ("TVMFFIObjectHandle", "cause_chain"),
        ("TVMFFIObjectHandle", "extra_context"), ("TVMFFIObjectHandle*", "out")),
    _fn(_C, "int", "TVMFFITensorFromDLPack", ("DLManagedTensor*", "from"),
        ("int32_t", "require_alignment"), ("int32_t", "require_contiguous"),
        ("TVMFFIObjectHandle*", "out")),
    _fn(_C, "int", "TVMFFITensorToDLPack", ("TVMFFIObjectHandle", "from"),
        ("DLManagedTensor**", "out")),
    _fn(_C, "int", "TVMFFITensorFromDLPackVersioned", ("DLManagedTensorVersioned*", "from"),
        ("int32_t", "require_alignment"), ("int32_t", "require_contiguous"),
        ("TVMFFIObjectHandle*", "out")),
    _fn(_C, "int", "TVMFFITensorToDLPackVersioned", ("TVMFFIObjectHandle", "from"),
        ("DLManagedTensorVersioned**", "out")),
    _fn(_C, "int", "TVMFFITensorCreateUnsafeView", ("TVMFFIObjectHandle", "source"),
        ("const DLTensor*", "prototype"), ("TVMFFIObjectHandle*", "out")),
    _fn(_C, "int", "TVMFFIStringFromByteArray", ("const TVMFFIByteArray*", "input"),
        ("TVMFFIAny*", "out")),
    _fn(_C, "int", "TVMFFIBytesFromByteArray", ("const TVMFFIByteArray*", "input"),
        ("TVMFFIAny*", "out")),
    _fn(_C, "int", "TVMFFIBigIntFromByteArray", ("const TVMFFIByteArray*", "input"),
        ("TVMFFIAny*", "out")),
    _fn(_C, "TVMFFIByteArray", "TVMFFIBigIntGetContentByteArray", ("const TVMFFIAny*", "value")),
    _fn(_C, "int", "TVMFFIDataTypeFromString", ("const TVMFFIByteArray*", "str"),
        ("DLDataType*", "out")),
    _fn(_C, "int", "TVMFFIDataTypeToString", ("const DLDataType*", "dtype"),
        ("TVMFFIAny*", "out")),
    _fn(_C, "int", "TVMFFIFunctionSetGlobal", ("const TVMFFIByteArray*", "name"),
        ("TVMFFIObjectHandle", "f"), ("int", "allow_override")),
    _fn(_C, "int", "TVMFFIFunctionSetGlobalFromMethodInfo",
        ("const TVMFFIMethodInfo*", "method_info"), ("int", "allow_override")),
    _fn(_C, "int", "TVMFFITypeRegisterField", ("int32_t", "type_index"),
        ("const TVMFFIFieldInfo*", "info")),
    _fn(_C, "int", "TVMFFITypeRegisterMethod", ("int32_t", "type_index"),
        ("const TVMFFIMethodInfo*", "info")),
    _fn(_C, "int", "TVMFFITypeRegisterMetadata", ("int32_t", "type_index"),
        ("const TVMFFITypeMetadata*", "metadata")),
    _fn(_C, "int", "TVMFFITypeRegisterAttr", ("int32_t", "type_index"),
        ("const TVMFFIByteArray*", "attr_name"), ("const TVMFFIAny*", "attr_value")),
    _fn(_C, "const TVMFFITypeAttrColumn*", "TVMFFIGetTypeAttrColumn",
        ("const TVMFFIByteArray*", "attr_name")),
    _fn(_C, "const TVMFFIByteArray*", "TVMFFIBacktrace", ("const char*", "filename"),
        ("int", "lineno"), ("const char*", "func"), ("int", "cross_ffi_boundary")),
    _fn(_C, "int32_t", "TVMFFITypeGetOrAllocIndex", ("const TVMFFIByteArray*", "type_key"),
        ("int32_t", "static_type_index"), ("int32_t", "type_depth"),
        ("int32_t", "num_child_slots"), ("int32_t", "child_slots_can_overflow"),
        ("int32_t", "parent_type_index")),
    _fn(_C, "const TVMFFITypeInfo*", "TVMFFIGetTypeInfo", ("int32_t", "type_index")),
    _fn(_C, "int", "TVMFFIHandleInitOnce", ("void**", "handle_addr"),
        ("int (*)(void**)", "init_func")),
    _fn(_C, "int", "TVMFFIHandleDeinitOnce", ("void**", "handle_addr"),
        ("int (*)(void*)", "deinit_func")),
    _fn(_ENV, "int", "TVMFFIEnvSetStream", ("int32_t", "device_type"), ("int32_t", "device_id"),
        ("TVMFFIStreamHandle", "stream"), ("TVMFFIStreamHandle*", "opt_out_original_stream")),
    _fn(_ENV, "TVMFFIStreamHandle", "TVMFFIEnvGetStream", ("int32_t", "device_type"),
        ("int32_t", "device_id")),
    _fn(_ENV, "int", "TVMFFIEnvSetDLPackManagedTensorAllocator",
        ("DLPackManagedTensorAllocator", "allocator"), ("int", "write_to_global_context"),
        ("DLPackManagedTensorAllocator*", "opt_out_original_allocator")),
    _fn(_ENV, "DLPackManagedTensorAllocator", "TVMFFIEnvGetDLPackManagedTensorAllocator"),
    _fn(_ENV, "int", "TVMFFIEnvTensorAlloc", ("DLTensor*", "prototype"),
        ("TVMFFIObjectHandle*", "out")),
    _fn(_ENV, "int", "TVMFFIEnvCheckSignals"),
    _fn(_ENV, "int", "TVMFFIEnvRegisterCAPI", ("const char*", "name"), ("void*", "symbol")),
    _fn(_ENV, "int", "TVMFFIEnvModLookupFromImports", ("TVMFFIObjectHandle", "library_ctx"),
        ("const char*", "func_name"), ("TVMFFIObjectHandle*", "out")),
    _fn(_ENV, "int", "TVMFFIEnvModRegisterContextSymbol", ("const char*", "name"),
        ("void*", "symbol")),
    _fn(_ENV, "int", "TVMFFIEnvModRegisterSystemLibSymbol", ("const char*", "name"),
        ("void*", "symbol")),
]

#: The same functions by name.
C_API_BY_NAME: Dict[str, CFunction] = {fn.name: fn for fn in C_API_FUNCTIONS}

#: C spellings whose values are plain pointers as far as ctypes is concerned.
_POINTER_LIKE = {
    "void*",
    "TVMFFIObjectHandle",
    "TVMFFIStreamHandle",
    "TVMFFISafeCallType",
    "DLPackManagedTensorAllocator",
}

_SCALARS = {"int": c_int, "int32_t": c_int32, "uint64_t": c_uint64, "size_t": c_size_t,
            "char*": c_char_p}


def c_type(spelling: str):
    """The ctypes type of a C type spelling used in ``C_API_FUNCTIONS``.

    ``const`` is dropped (ctypes has no notion of it), function pointers and
    handles become ``c_void_p``, and ``T*`` becomes ``POINTER(T)``.
    """
    spelling = spelling.replace("const ", "").strip()
    if spelling == "void":
        return None
    if spelling in _SCALARS:
        return _SCALARS[spelling]
    if spelling in _POINTER_LIKE or "(*)" in spelling:
        return c_void_p
    if spelling.endswith("*"):
        return POINTER(c_type(spelling[:-1].strip()))
    return globals()[spelling]


def callback_restype(spelling: str):
    """The ctypes type a ctypes *callback* returns for a C return type.

    Like :func:`c_type`, except that pointers are ``c_void_p`` (ctypes
    callbacks can only return simple types).
    """
    ctype = c_type(spelling)
    if ctype is c_char_p or (isinstance(ctype, type) and issubclass(ctype, ctypes._Pointer)):
        return c_void_p
    return ctype


def bind(lib: ctypes.CDLL) -> ctypes.CDLL:
    """Sets ``argtypes`` and ``restype`` of every C API function on ``lib``."""
    for fn in C_API_FUNCTIONS:
        cfunc = getattr(lib, fn.name)
        cfunc.argtypes = fn.ctypes_argtypes()
        cfunc.restype = fn.ctypes_restype()
    return lib


# --------------------------------------------------------------------------- #
# tvm_ffi_runtime.h: the table a runtime installs behind libtvm_ffi.so
# --------------------------------------------------------------------------- #

#: The function a slot stands for returns a struct, so its slot writes it to
#: a trailing ``out`` pointer instead (see ``TVM_FFI_RUNTIME_SLOTS``).
OUTPARAM_SLOTS = ("TVMFFIBigIntGetContentByteArray",)


def slot_function(fn: CFunction) -> CFunction:
    """The signature of ``fn``'s slot in ``TVMFFIRuntimeTable``."""
    if fn.name in OUTPARAM_SLOTS:
        return CFunction(fn.name, "void", fn.params + ((fn.restype + "*", "out"),), fn.header)
    return fn


#: Every slot, in table order: each exported function except ``TVMFFIGetVersion``.
RUNTIME_SLOTS: List[CFunction] = [
    slot_function(fn) for fn in C_API_FUNCTIONS if fn.name != "TVMFFIGetVersion"
]


def slot_prototype(slot: CFunction):
    """The ``CFUNCTYPE`` a Python implementation of ``slot`` is wrapped in."""
    return CFUNCTYPE(callback_restype(slot.restype), *slot.ctypes_argtypes())


class TVMFFIRuntimeTable(Structure):
    """``TVMFFIRuntimeTable`` (``tvm_ffi_runtime.h``): a runtime's implementation of the C API.

    ``struct_size`` must equal ``sizeof`` the table, ``name`` names the runtime
    (``libtvm_ffi.so`` copies it). Each slot is one exported function; a NULL
    slot is served by ``libtvm_ffi.so``'s built-in. The table is copied when
    installed; the callbacks it points to must stay alive until uninstalled.
    """

    _fields_ = [("struct_size", c_size_t), ("name", c_char_p)] + [
        (slot.name, slot_prototype(slot)) for slot in RUNTIME_SLOTS
    ]


#: The private entry points of ``libtvm_ffi.so`` (``tvm_ffi_runtime.h``).
RUNTIME_FUNCTIONS: List[CFunction] = [
    _fn("tvm_ffi_runtime.h", "int", "tvm_ffi_runtime_install",
        ("const TVMFFIRuntimeTable*", "table")),
    _fn("tvm_ffi_runtime.h", "int", "tvm_ffi_runtime_uninstall", ("const char*", "name")),
    _fn("tvm_ffi_runtime.h", "const char*", "tvm_ffi_runtime_name"),
    _fn("tvm_ffi_runtime.h", "const TVMFFIRuntimeTable*", "tvm_ffi_runtime_builtins"),
    _fn("tvm_ffi_runtime.h", "void", "tvm_ffi_runtime_free_object", ("void*", "self"),
        ("int", "flags")),
    _fn("tvm_ffi_runtime.h", "void", "tvm_ffi_runtime_free_sequence", ("void*", "self"),
        ("int", "flags")),
    _fn("tvm_ffi_runtime.h", "void", "tvm_ffi_runtime_strong_count_ended",
        ("TVMFFIObject*", "obj"), ("uint64_t", "before")),
    _fn("tvm_ffi_runtime.h", "void*", "tvm_ffi_runtime_list_buffer_alloc", ("size_t", "bytes")),
    _fn("tvm_ffi_runtime.h", "void", "tvm_ffi_runtime_list_buffer_free", ("void*", "data")),
    _fn("tvm_ffi_runtime.h", "TVMFFIAny", "tvm_ffi_runtime_bigint_any_hash",
        ("const TVMFFIAny*", "value")),
    _fn("tvm_ffi_runtime.h", "TVMFFIAny", "tvm_ffi_runtime_bigint_any_equal",
        ("const TVMFFIAny*", "lhs"), ("const TVMFFIAny*", "rhs")),
    _fn("tvm_ffi_runtime.h", "TVMFFIAny", "tvm_ffi_runtime_structural_key_any_hash",
        ("const TVMFFIAny*", "value")),
    _fn("tvm_ffi_runtime.h", "TVMFFIAny", "tvm_ffi_runtime_structural_key_any_equal",
        ("const TVMFFIAny*", "lhs"), ("const TVMFFIAny*", "rhs")),
    _fn("tvm_ffi_runtime.h", "int", "tvm_ffi_runtime_function_with_owner",
        ("TVMFFISafeCallType", "safe_call"), ("TVMFFIObjectHandle", "owner"),
        ("TVMFFIObjectHandle*", "out")),
    _fn("tvm_ffi_runtime.h", "int", "tvm_ffi_runtime_mlir_packed_function",
        ("void (*)(void**)", "packed"), ("void*", "context"), ("void (*)(void*)", "release"),
        ("TVMFFIObjectHandle*", "out")),
    _fn("tvm_ffi_runtime.h", "void*", "tvm_ffi_runtime_module_vtable"),
    _fn("tvm_ffi_runtime.h", "int", "tvm_ffi_runtime_module_is_foreign",
        ("TVMFFIObjectHandle", "module")),
    _fn("tvm_ffi_runtime.h", "int", "tvm_ffi_runtime_module_call", ("const char*", "method"),
        ("const TVMFFIAny*", "args"), ("int32_t", "num_args"), ("TVMFFIAny*", "result")),
    _fn("tvm_ffi_runtime.h", "int", "tvm_ffi_runtime_module_lookup_from_imports",
        ("TVMFFIObjectHandle", "module"), ("const char*", "name"),
        ("TVMFFIObjectHandle*", "out")),
    _fn("tvm_ffi_runtime.h", "int", "tvm_ffi_runtime_object_lock", ("TVMFFIObjectHandle", "obj")),
    _fn("tvm_ffi_runtime.h", "int", "tvm_ffi_runtime_object_try_lock",
        ("TVMFFIObjectHandle", "obj")),
    _fn("tvm_ffi_runtime.h", "void", "tvm_ffi_runtime_object_unlock",
        ("TVMFFIObjectHandle", "obj")),
    _fn("tvm_ffi_runtime.h", "int", "tvm_ffi_runtime_object_held", ("TVMFFIObjectHandle", "obj")),
    _fn("tvm_ffi_runtime.h", "int", "tvm_ffi_runtime_stack_low"),
    _fn("tvm_ffi_runtime.h", "int", "tvm_ffi_runtime_refuse_deeper_callback"),
    _fn("tvm_ffi_runtime.h", "const char*", "tvm_ffi_runtime_callback_caller_frames",
        ("int", "python_runs")),
    _fn("tvm_ffi_runtime.h", "int", "tvm_ffi_runtime_checked_callback_function",
        ("void*", "self"), ("TVMFFISafeCallType", "callback"), ("void (*)(void*)", "release"),
        ("TVMFFIObjectHandle*", "out")),
    _fn("tvm_ffi_runtime.h", "void", "tvm_ffi_runtime_host_exit"),
    _fn("tvm_ffi_runtime.h", "int", "tvm_ffi_runtime_host_exited"),
    _fn("tvm_ffi_runtime.h", "void", "tvm_ffi_runtime_set_host_deleter",
        ("void (*)(void*, int)", "deleter")),
    _fn("tvm_ffi_runtime.h", "void", "tvm_ffi_runtime_host_deleter", ("void*", "self"),
        ("int", "flags")),
    _fn("tvm_ffi_runtime.h", "void", "tvm_ffi_runtime_set_host_dlpack_deleter",
        ("void (*)(void*, int)", "deleter")),
    _fn("tvm_ffi_runtime.h", "void", "tvm_ffi_runtime_host_dlpack_deleter", ("void*", "managed")),
    _fn("tvm_ffi_runtime.h", "void", "tvm_ffi_runtime_host_dlpack_versioned_deleter",
        ("void*", "managed")),
    _fn("tvm_ffi_runtime.h", "const void*", "tvm_ffi_runtime_host_visitor_vtable",
        ("void (*)(void*, const TVMFFIAny*, TVMFFIAny*)", "visit")),
    _fn("tvm_ffi_runtime.h", "const void*", "tvm_ffi_runtime_host_mutator_vtable",
        ("void (*)(void*, int32_t, const TVMFFIAny*, const TVMFFIAny*, TVMFFIAny*)", "step")),
]


def bind_runtime(lib: ctypes.CDLL) -> ctypes.CDLL:
    """Sets ``argtypes`` and ``restype`` of the runtime-management functions on ``lib``."""
    for fn in RUNTIME_FUNCTIONS:
        cfunc = getattr(lib, fn.name)
        cfunc.argtypes = fn.ctypes_argtypes()
        cfunc.restype = fn.ctypes_restype()
    return lib


# --------------------------------------------------------------------------- #
# Introspection helpers used by the layout tests and the spec generator
# --------------------------------------------------------------------------- #

#: Every struct, with the header that declares it, in header order.
STRUCTS: Dict[type, str] = {
    DLPackVersion: "dlpack/dlpack.h",
    DLDevice: "dlpack/dlpack.h",
    DLDataType: "dlpack/dlpack.h",
    DLTensor: "dlpack/dlpack.h",
    DLManagedTensor: "dlpack/dlpack.h",
    DLManagedTensorVersioned: "dlpack/dlpack.h",
    DLPackExchangeAPIHeader: "dlpack/dlpack.h",
    DLPackExchangeAPI: "dlpack/dlpack.h",
    TVMFFIVersion: _C,
    TVMFFIObject: _C,
    TVMFFIAny: _C,
    TVMFFIByteArray: _C,
    TVMFFIShapeCell: _C,
    TVMFFISeqCell: _C,
    TVMFFIErrorCell: _C,
    TVMFFIFunctionCell: _C,
    TVMFFIOpaqueObjectCell: _C,
    TVMFFIObjectAllocHeader: _C,
    TVMFFICustomAllocator: _C,
    TVMFFIFieldInfo: _C,
    TVMFFIMethodInfo: _C,
    TVMFFITypeMetadata: _C,
    TVMFFITypeAttrColumn: _C,
    TVMFFITypeInfo: _C,
    TVMFFIRuntimeTable: "tvm_ffi_runtime.h",
}

#: Field types that ctypes cannot spell: ``size_t`` (the same ctypes type as
#: ``uint64_t``), enum-typed fields (plain ``int32`` in ctypes) and byte
#: pointers mirrored as ``c_void_p`` so that reading them does not stop at a
#: NUL. The layout tests check each spelling with the C compiler.
FIELD_C_TYPES: Dict[Tuple[str, str], str] = {
    ("DLDevice", "device_type"): "DLDeviceType",
    ("TVMFFIByteArray", "data"): "const char*",
    ("TVMFFIByteArray", "size"): "size_t",
    ("TVMFFIShapeCell", "data"): "const int64_t*",
    ("TVMFFIShapeCell", "size"): "size_t",
    ("TVMFFIAny", "v_c_str"): "const char*",
    ("TVMFFITypeMetadata", "structural_eq_hash_kind"): "TVMFFISEqHashKind",
    ("TVMFFIRuntimeTable", "struct_size"): "size_t",
    ("TVMFFIRuntimeTable", "name"): "const char*",
    # Not a header struct: the Map cell of upstream's container/map_base.h (mirrored in
    # tvm_ffi_ref.runtime.map_layout), whose data_deleter_ is a function pointer there;
    # the runtime keeps it as an address to compare and call.
    ("MapCell", "data_deleter"): "void (*)(void*)",
}

#: The upstream headers' structs (ours add ``TVMFFIRuntimeTable``).
UPSTREAM_STRUCTS = [s for s, header in STRUCTS.items() if header != "tvm_ffi_runtime.h"]
UPSTREAM_ENUMS = [e for e, header in ENUMS.items() if header != "tvm_ffi_runtime.h"]


@dataclass(frozen=True)
class FieldLayout:
    """Where one C-visible field of a struct sits."""

    name: str
    offset: int
    size: int
    ctype: object


def c_fields(struct: type, base: int = 0) -> Iterator[FieldLayout]:
    """The fields of ``struct`` as C sees them, members of anonymous unions inlined."""
    anonymous = set(getattr(struct, "_anonymous_", ()))
    for name, ctype in struct._fields_:
        descriptor = getattr(struct, name)
        if name in anonymous:
            yield from c_fields(ctype, base + descriptor.offset)
        else:
            yield FieldLayout(name, base + descriptor.offset, descriptor.size, ctype)


def enum_members(enum_type: Type[enum.IntEnum]) -> Iterator[Tuple[str, int]]:
    """Every ``(name, value)`` of an enum, aliases included."""
    for name, member in enum_type.__members__.items():
        yield name, int(member)
