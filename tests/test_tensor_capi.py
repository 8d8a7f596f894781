"""Tensors and DLPack exchange, driven through the C API and compared with upstream.

Each test runs one snippet under upstream and each runtime in ``RUNTIMES`` and
asserts the same output, which is also pinned to explicit expectations
(computed here from NumPy or written out), so that a runtime cannot pass by
being wrong the same way as the snippet. Addresses never appear in output:
snippets print offsets and identities instead.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from capi_harness import each_runtime, run_capi

#: Our runtimes held to upstream here.
RUNTIMES = ["ref", "fast"]

#: Every NumPy dtype DLPack can carry, with the DLDataType NumPy exports for it.
NUMPY_DTYPES = {
    "bool": (6, 8, 1),
    "int8": (0, 8, 1), "int16": (0, 16, 1), "int32": (0, 32, 1), "int64": (0, 64, 1),
    "uint8": (1, 8, 1), "uint16": (1, 16, 1), "uint32": (1, 32, 1), "uint64": (1, 64, 1),
    "float16": (2, 16, 1), "float32": (2, 32, 1), "float64": (2, 64, 1),
    "complex64": (5, 64, 1), "complex128": (5, 128, 1),
}

#: name -> expression building an array from ``base`` (a 4x6 array of the dtype).
LAYOUTS = {
    "compact": "base",
    "0-d": "base[1, 2][()]",
    "strided": "base[::2, 1::2]",
    "transposed": "base.T",
    "empty": "base[:0]",
    "column": "base[:, 3:4]",
}

#: Helpers every snippet here starts with (DLPack capsules, hand-made managed tensors).
HELPERS = """
import sys
import numpy as np
api = ctypes.pythonapi
api.PyCapsule_GetPointer.restype = ctypes.c_void_p
api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_void_p]
api.PyCapsule_New.restype = ctypes.py_object
api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
NAMES = {n: ctypes.create_string_buffer(n) for n in
         (b"dltensor", b"dltensor_versioned", b"used_dltensor", b"used_dltensor_versioned")}
MT, MTV = abi.DLManagedTensor, abi.DLManagedTensorVersioned

def rc(h):
    return abi.TVMFFIObject.from_address(h).combined_ref_count & 0xffffffff

def dl(h):
    return abi.DLTensor.from_address(h + 24)

def addr(p):
    return ctypes.cast(p, ctypes.c_void_p).value

def import_capsule(cap, versioned, align=0, contig=0):
    '''Imports a __dlpack__ capsule as the DLPack protocol says: rename it once owned.'''
    name = b"dltensor_versioned" if versioned else b"dltensor"
    ptr = api.PyCapsule_GetPointer(cap, name)
    fn = lib.TVMFFITensorFromDLPackVersioned if versioned else lib.TVMFFITensorFromDLPack
    h = ctypes.c_void_p()
    status = fn(ctypes.cast(ptr, ctypes.POINTER(MTV if versioned else MT)), align, contig,
                ctypes.byref(h))
    if status == 0:
        api.PyCapsule_SetName(cap, ctypes.addressof(NAMES[b"used_" + name]))
    return status, h.value

class Holder:
    '''Hands an exported capsule to numpy.from_dlpack.'''
    def __init__(self, cap):
        self.cap = cap
    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        return self.cap
    def __dlpack_device__(self):
        return (1, 0)

def export(h, versioned):
    '''The tensor as a NumPy array through TVMFFITensorToDLPack[Versioned].'''
    out = ctypes.POINTER(MTV if versioned else MT)()
    fn = lib.TVMFFITensorToDLPackVersioned if versioned else lib.TVMFFITensorToDLPack
    assert fn(h, ctypes.byref(out)) == 0
    name = b"dltensor_versioned" if versioned else b"dltensor"
    return np.from_dlpack(Holder(api.PyCapsule_New(addr(out), ctypes.addressof(NAMES[name]), None)))

deleted = []
@abi.DLManagedTensorDeleter
def unversioned_deleter(p):
    deleted.append(addr(p))
@abi.DLManagedTensorVersionedDeleter
def versioned_deleter(p):
    deleted.append(addr(p))
_keep = []
BUF = ctypes.create_string_buffer(8192)
BASE = (ctypes.addressof(BUF) + 255) // 256 * 256  # 256-aligned

def managed(shape, strides=None, versioned=False, offset=0, byte_offset=0, device=(1, 0),
            dtype=(2, 32, 1), flags=0, deleter=True):
    '''A hand-made DLManagedTensor[Versioned] over BUF, its deleter recording into deleted.'''
    m = (MTV if versioned else MT)()
    t = m.dl_tensor
    t.data, t.device, t.ndim = BASE + offset, abi.DLDevice(*device), len(shape)
    t.dtype, t.byte_offset = abi.DLDataType(*dtype), byte_offset
    sh = (ctypes.c_int64 * max(1, len(shape)))(*shape)
    t.shape = ctypes.cast(sh, ctypes.POINTER(ctypes.c_int64))
    _keep.extend([m, sh])
    if strides is not None:
        st = (ctypes.c_int64 * max(1, len(strides)))(*strides)
        t.strides = ctypes.cast(st, ctypes.POINTER(ctypes.c_int64))
        _keep.append(st)
    if versioned:
        m.version.major, m.version.minor, m.flags = 1, 0, flags
    if deleter:
        m.deleter = versioned_deleter if versioned else unversioned_deleter
    return m

def import_managed(m, align=0, contig=0):
    versioned = isinstance(m, MTV)
    fn = lib.TVMFFITensorFromDLPackVersioned if versioned else lib.TVMFFITensorFromDLPack
    h = ctypes.c_void_p(0xdead)  # must stay untouched on failure
    status = fn(ctypes.byref(m), align, contig, ctypes.byref(h))
    return status, h.value

def where(pointer, h, m=None):
    '''Where a shape/strides pointer of tensor h points, as a name.'''
    p = addr(pointer)
    if p is None:
        return "null"
    if m is not None and p == addr(m.dl_tensor.shape):
        return "producer shape"
    if m is not None and p == addr(m.dl_tensor.strides):
        return "producer strides"
    return f"object+{p - h}"

def describe(h, m=None):
    t = dl(h)
    return dict(type_index=abi.TVMFFIObject.from_address(h).type_index, ndim=t.ndim,
                dtype=(t.dtype.code, t.dtype.bits, t.dtype.lanes),
                device=(t.device.device_type, t.device.device_id),
                data=None if not t.data else t.data - BASE, byte_offset=t.byte_offset,
                shape=[t.shape[i] for i in range(t.ndim)],
                strides=None if not t.strides else [t.strides[i] for i in range(t.ndim)],
                shape_at=where(t.shape, h, m), strides_at=where(t.strides, h, m))
"""


def program(*parts: str) -> str:
    """HELPERS followed by ``parts``, each dedented on its own."""
    return "".join(textwrap.dedent(part) for part in (HELPERS,) + parts)


def same_everywhere(*parts: str, **variables) -> str:
    """Runs :func:`program` under upstream and each runtime; asserts equal output; returns it."""
    outputs = each_runtime(["upstream", *RUNTIMES],
                           lambda rt: run_capi(rt, program(*parts), **variables))
    expected = outputs["upstream"]
    for runtime in RUNTIMES:
        actual = outputs[runtime]
        assert actual == expected, f"{runtime} differs from upstream:\n{actual}\nvs\n{expected}"
    return expected


def test_numpy_round_trips_every_dtype_and_layout():
    out = same_everywhere("""
    for dtype in DTYPES:
        base = (np.arange(24) % 7).astype(dtype).reshape(4, 6)
        for layout, expr in LAYOUTS.items():
            for versioned in (False, True):
                arr = eval(expr)
                arr = np.asarray(arr)
                before = sys.getrefcount(arr)
                status, h = import_capsule(arr.__dlpack__(max_version=(1, 0)) if versioned
                                           else arr.__dlpack__(), versioned)
                t = dl(h)
                facts = describe(h)
                data_delta = t.data - arr.__array_interface__["data"][0]
                back = [export(h, v) for v in (False, True)]
                counts = [rc(h)]
                same = [b.dtype == arr.dtype and b.shape == arr.shape and
                        b.strides == arr.strides and np.array_equal(b, arr) and
                        (arr.size == 0 or b.__array_interface__["data"][0]
                         == arr.__array_interface__["data"][0]) for b in back]
                del back
                counts.append(rc(h))
                lib.TVMFFIObjectDecRef(h)
                print(dtype, layout, versioned, status, facts["type_index"], facts["ndim"],
                      facts["dtype"], facts["device"], facts["shape"], facts["strides"],
                      facts["byte_offset"], data_delta, counts, same,
                      sys.getrefcount(arr) - before)
    """, DTYPES=list(NUMPY_DTYPES), LAYOUTS=LAYOUTS)
    lines = iter(out.splitlines())
    for dtype, dl_dtype in NUMPY_DTYPES.items():
        base = (np.arange(24) % 7).astype(dtype).reshape(4, 6)
        for layout, expr in LAYOUTS.items():
            arr = np.asarray(eval(expr))
            strides = [s // arr.itemsize for s in arr.strides]
            for versioned in (False, True):
                expected = (f"{dtype} {layout} {versioned} 0 70 {arr.ndim} {dl_dtype} (1, 0) "
                            f"{list(arr.shape)} {strides if arr.ndim else None} 0 0 [3, 1] "
                            "[True, True] 0")
                assert next(lines) == expected
    assert next(lines, None) is None


def test_imported_tensor_layout_and_ownership():
    out = same_everywhere("""
    cases = [
        ("compact, no strides", dict(shape=(2, 3))),
        ("explicit strides", dict(shape=(2, 3), strides=(1, 2))),
        ("0-d, no strides", dict(shape=())),
        ("empty, no strides", dict(shape=(2, 0, 3))),
        ("byte_offset", dict(shape=(4,), byte_offset=8, dtype=(0, 8, 4))),
        ("versioned, no strides", dict(shape=(3, 1, 2), versioned=True)),
        ("versioned, read-only flag", dict(shape=(5,), strides=(2,), versioned=True, flags=1)),
        ("other device", dict(shape=(2,), device=(2, 3))),
        ("no deleter", dict(shape=(2,), deleter=False)),
    ]
    for name, kwargs in cases:
        m = managed(**kwargs)
        status, h = import_managed(m)
        facts = describe(h, m)
        kept = ctypes.c_void_p.from_address(h + 72).value == ctypes.addressof(m)
        print(name, status, facts, kept, rc(h), deleted)
        lib.TVMFFIObjectDecRef(h)
        print("  deleted once:", deleted == ([ctypes.addressof(m)] if kwargs.get("deleter", True) else []))
        deleted.clear()
    """)
    common = "'type_index': 70"
    lines = out.splitlines()
    assert lines[0] == ("compact, no strides 0 {" + common + ", 'ndim': 2, 'dtype': (2, 32, 1), "
                        "'device': (1, 0), 'data': 0, 'byte_offset': 0, 'shape': [2, 3], "
                        "'strides': [3, 1], 'shape_at': 'producer shape', "
                        "'strides_at': 'object+80'} True 1 []")
    assert "'strides': [1, 2], 'shape_at': 'producer shape', 'strides_at': 'producer strides'" \
        in lines[2]
    assert "'ndim': 0," in lines[4] and "'strides': None," in lines[4] \
        and "'strides_at': 'null'" in lines[4]
    assert "'shape': [2, 0, 3], 'strides': [0, 3, 1]" in lines[6] and "object+80" in lines[6]
    assert "'dtype': (0, 8, 4)" in lines[8] and "'byte_offset': 8" in lines[8]
    assert "'shape': [3, 1, 2], 'strides': [2, 2, 1]" in lines[10]
    assert "'strides': [2], 'shape_at': 'producer shape', 'strides_at': 'producer strides'" \
        in lines[12]
    assert "'device': (2, 3)" in lines[14]
    assert all(line.endswith(" True 1 []") for line in lines[0::2])
    assert lines[1::2] == ["  deleted once: True"] * 9


def test_alignment_contiguity_and_flag_checks_leave_from_with_the_caller():
    out = same_everywhere("""
    cases = [
        (dict(shape=(4,), offset=4), 64, 0),
        (dict(shape=(4,), offset=64), 64, 0),
        (dict(shape=(4,), offset=0, byte_offset=4), 8, 0),
        (dict(shape=(4,), offset=4, device=(4, 0)), 8, 0),
        (dict(shape=(4,), offset=4, device=(4, 0), byte_offset=12), 8, 0),
        (dict(shape=(4,), offset=4, device=(13, 0)), 8, 0),
        (dict(shape=(4,), offset=3), -1, 0),
        (dict(shape=(2, 3), strides=(1, 2)), 0, 1),
        (dict(shape=(2, 3), strides=(3, 1)), 0, 1),
        (dict(shape=(2, 1), strides=(1, 7)), 0, 1),
        (dict(shape=(2, 0), strides=(9, 9)), 0, 1),
        (dict(shape=(2, 3)), 0, 1),
        (dict(shape=(2, 3), strides=(1, 2), offset=3), 16, 1),
        (dict(shape=(4,), versioned=True, flags=4), 0, 0),
        (dict(shape=(4,), versioned=True, flags=3), 0, 0),
        (dict(shape=(4,), versioned=True, flags=4, offset=1), 4, 0),
        (dict(shape=(2, 3), strides=(1, 2), versioned=True, flags=4), 0, 1),
    ]
    for kwargs, align, contig in cases:
        m = managed(**kwargs)
        status, h = import_managed(m, align, contig)
        print(status, "out untouched" if h == 0xdead else "imported", take_error(), deleted)
        if status == 0:
            lib.TVMFFIObjectDecRef(h)
        deleted.clear()
    """)
    aligned = "0 imported None []"

    def fail(message):
        return f"-1 out untouched ('RuntimeError', '{message}') []"

    assert out.splitlines() == [
        fail("FromDLPack: Data is not aligned to 64 bytes."),
        aligned,
        fail("FromDLPack: Data is not aligned to 8 bytes."),
        aligned,  # not a direct-address device: only byte_offset counts
        fail("FromDLPack: Data is not aligned to 8 bytes."),
        fail("FromDLPack: Data is not aligned to 8 bytes."),  # CUDA managed memory is
        fail("FromDLPack: Data is not aligned to 18446744073709551615 bytes."),
        fail("FromDLPack: Tensor is not contiguous."),
        aligned,
        aligned,  # size-1 dims may have any stride
        aligned,  # empty tensors are contiguous
        aligned,  # no strides means compact
        fail("FromDLPack: Data is not aligned to 16 bytes."),  # alignment is checked first
        fail("Subbyte type padded is not yet supported"),
        aligned,  # read-only and is-copied flags are accepted
        fail("FromDLPack: Data is not aligned to 4 bytes."),
        fail("FromDLPack: Tensor is not contiguous."),
    ]


def test_export_keeps_the_tensor_alive_until_each_deleter_runs_once():
    out = same_everywhere("""
    m = managed((2, 3))
    status, h = import_managed(m)
    u = ctypes.POINTER(MT)()
    v = ctypes.POINTER(MTV)()
    print(lib.TVMFFITensorToDLPack(h, ctypes.byref(u)), rc(h))
    print(lib.TVMFFITensorToDLPackVersioned(h, ctypes.byref(v)), rc(h))
    for name, e in (("unversioned", u.contents), ("versioned", v.contents)):
        t = e.dl_tensor
        same_fields = bytes(t)[:] == bytes(dl(h))
        print(name, e.manager_ctx == h, same_fields, addr(t.shape) == addr(m.dl_tensor.shape),
              addr(t.strides) - h, bool(e.deleter))
    print(v.contents.version.major, v.contents.version.minor, v.contents.flags)
    lib.TVMFFIObjectDecRef(h)
    print(rc(h), deleted)  # the exports keep it alive
    u.contents.deleter(u)
    print(rc(h), deleted)
    v.contents.deleter(v)
    print(deleted == [ctypes.addressof(m)])
    """)
    assert out.splitlines() == [
        "0 2", "0 3",
        "unversioned True True True 80 True",
        "versioned True True True 80 True",
        "1 3 0",
        "2 []", "1 []", "True",
    ]


def test_unsafe_view_keeps_its_source_alive():
    out = same_everywhere("""
    m = managed((2, 3))
    status, h = import_managed(m)
    proto = abi.DLTensor()
    proto.data, proto.device, proto.ndim = BASE + 4, abi.DLDevice(1, 0), 2
    proto.dtype, proto.byte_offset = abi.DLDataType(2, 32, 1), 12
    shape, strides = (ctypes.c_int64 * 2)(3, 1), (ctypes.c_int64 * 2)(1, 3)
    proto.shape, proto.strides = shape, strides
    v = ctypes.c_void_p(0xdead)
    print(lib.TVMFFITensorCreateUnsafeView(h, ctypes.byref(proto), ctypes.byref(v)), rc(h))
    print(describe(v.value), ctypes.c_void_p.from_address(v.value + 72).value == h)
    shape[0] = 99; strides[1] = 99  # copied, not borrowed
    print(describe(v.value)["shape"], describe(v.value)["strides"])
    lib.TVMFFIObjectDecRef(h)
    print(rc(h), deleted)
    lib.TVMFFIObjectDecRef(v)
    print(deleted == [ctypes.addressof(m)])
    deleted.clear()
    status, h = import_managed(managed((2, 3)))
    proto.ndim = 0
    print(lib.TVMFFITensorCreateUnsafeView(h, ctypes.byref(proto), ctypes.byref(v)),
          describe(v.value)["ndim"], describe(v.value)["strides_at"], rc(h))
    lib.TVMFFIObjectDecRef(v)
    for ndim in (2, 0):
        proto.ndim, proto.strides = ndim, None
        v = ctypes.c_void_p(0xdead)
        print(lib.TVMFFITensorCreateUnsafeView(h, ctypes.byref(proto), ctypes.byref(v)),
              v.value == 0xdead, take_error(), rc(h))
    lib.TVMFFIObjectDecRef(h)
    print(len(deleted))
    """)
    assert out.splitlines() == [
        "0 2",
        "{'type_index': 70, 'ndim': 2, 'dtype': (2, 32, 1), 'device': (1, 0), 'data': 4, "
        "'byte_offset': 12, 'shape': [3, 1], 'strides': [1, 3], 'shape_at': 'object+80', "
        "'strides_at': 'object+96'} True",
        "[3, 1] [1, 3]",
        "1 []",
        "True",
        "0 0 object+80 2",
        "-1 True ('InternalError', 'Check not null: prototype.strides ') 1",
        "-1 True ('InternalError', 'Check not null: prototype.strides ') 1",
        "1",
    ]


ALLOCATOR = """
import threading
allocated = []
mode = ["compact"]
seen = []
@abi.DLPackManagedTensorAllocator
def allocator(proto, out, ctx, set_error):
    p = proto.contents
    seen.append((ctx, addr(proto)))
    if mode[0] == "fail":
        abi.DLPackSetError(set_error)(ctx, b"MemoryError", b"out of test memory")
        return -1
    if mode[0] == "silent":
        return 7
    if mode[0] == "null":
        return 0
    shape = [p.shape[i] for i in range(p.ndim)]
    count = int(np.prod(shape)) if shape else 1
    buf = (ctypes.c_uint8 * max(1, count * p.dtype.bits * p.dtype.lanes // 8))()
    m = managed(shape, strides=None if mode[0] == "compact" else [1] * len(shape),
                versioned=True, dtype=(p.dtype.code, p.dtype.bits, p.dtype.lanes),
                device=(p.device.device_type, p.device.device_id))
    m.dl_tensor.data = ctypes.addressof(buf)
    _keep.append(buf)
    allocated.append(m)
    out[0] = ctypes.pointer(m)
    return 0
ALLOCATOR_ADDRESS = addr(allocator)

def prototype(shape, dtype=(2, 32, 1), device=(1, 0)):
    proto = abi.DLTensor()
    sh = (ctypes.c_int64 * max(1, len(shape)))(*shape)
    _keep.append(sh)
    proto.shape, proto.ndim = sh, len(shape)
    proto.dtype, proto.device = abi.DLDataType(*dtype), abi.DLDevice(*device)
    return proto
"""


def test_env_tensor_alloc_through_the_installed_allocator():
    out = same_everywhere(ALLOCATOR, """
    proto = prototype((2, 3))
    h = ctypes.c_void_p(0xdead)
    print(lib.TVMFFIEnvTensorAlloc(ctypes.byref(proto), ctypes.byref(h)), h.value == 0xdead,
          take_error())
    print(lib.TVMFFIEnvSetDLPackManagedTensorAllocator(ALLOCATOR_ADDRESS, 0, None))
    for mode[0], proto in (("compact", prototype((2, 3))), ("strided", prototype((2, 3))),
                           ("compact", prototype((), dtype=(0, 8, 1))),
                           ("compact", prototype((4,), dtype=(1, 16, 1), device=(2, 1))),
                           ("fail", proto), ("silent", proto), ("null", proto)):
        h = ctypes.c_void_p(0xdead)
        status = lib.TVMFFIEnvTensorAlloc(ctypes.byref(proto), ctypes.byref(h))
        print(mode[0], status, take_error(), seen[-1] == (None, ctypes.addressof(proto)))
        if status == 0:
            m = allocated[-1]
            facts = describe(h.value, m)
            facts["data"] = facts["data"] + BASE == m.dl_tensor.data
            kept = ctypes.c_void_p.from_address(h.value + 72).value == ctypes.addressof(m)
            print("  ", facts, kept, rc(h.value))
            lib.TVMFFIObjectDecRef(h)
            print("   deleted once:", deleted == [ctypes.addressof(m)])
            deleted.clear()
        else:
            print("   out untouched:", h.value == 0xdead)
    """)

    def facts(ndim, dtype, device, shape, strides, strides_at, shape_at="'producer shape'"):
        return (f"   {{'type_index': 70, 'ndim': {ndim}, 'dtype': {dtype}, 'device': {device}, "
                f"'data': True, 'byte_offset': 0, 'shape': {shape}, 'strides': {strides}, "
                f"'shape_at': {shape_at}, 'strides_at': '{strides_at}'}} True 1")

    assert out.splitlines() == [
        "-1 True ('RuntimeError', 'TVMFFIEnvTensorAlloc: allocator is nullptr, likely because "
        "TVMFFIEnvSetDLPackManagedTensorAllocator has not been called.')",
        "0",
        "compact 0 None True",
        facts(2, (2, 32, 1), (1, 0), [2, 3], [3, 1], "object+80"),
        "   deleted once: True",
        "strided 0 None True",
        facts(2, (2, 32, 1), (1, 0), [2, 3], [1, 1], "producer strides"),
        "   deleted once: True",
        "compact 0 None True",
        facts(0, (0, 8, 1), (1, 0), [], None, "null"),
        "   deleted once: True",
        "compact 0 None True",
        facts(1, (1, 16, 1), (2, 1), [4], [1], "object+80"),
        "   deleted once: True",
        "fail -1 ('MemoryError', 'out of test memory') True",
        "   out untouched: True",
        "silent 7 None True",
        "   out untouched: True",
        "null -1 ('RuntimeError', 'Check failed: (dlpack_tensor != nullptr) is false: "
        "TVMFFIEnvTensorAlloc: failed to allocate a tensor from the allocator') True",
        "   out untouched: True",
    ]


ALLOC_KERNEL_CC = r"""
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/function.h>

#include <cstdlib>

namespace ffi = tvm::ffi;

// Allocates a rows x cols float32 tensor through the environment and fills it.
ffi::Tensor alloc_iota(int64_t rows, int64_t cols) {
  ffi::Tensor t = ffi::Tensor::FromEnvAlloc(TVMFFIEnvTensorAlloc, ffi::Shape({rows, cols}),
                                            DLDataType{kDLFloat, 32, 1}, DLDevice{kDLCPU, 0});
  float* data = static_cast<float*>(t.data_ptr());
  for (int64_t i = 0; i < t.numel(); ++i) data[i] = static_cast<float>(i);
  return t;
}

// Reads a tensor argument in place: scales it and returns the sum of the result.
double scale_and_sum(ffi::Tensor t, double factor) {
  TVM_FFI_ICHECK(t.dtype().code == kDLFloat && t.dtype().bits == 64);
  double total = 0;
  char* base = static_cast<char*>(t.data_ptr()) + t.byte_offset();
  for (int64_t i = 0; i < t.size(0); ++i) {
    for (int64_t j = 0; j < t.size(1); ++j) {
      double* x = reinterpret_cast<double*>(base) + i * t.stride(0) + j * t.stride(1);
      *x *= factor;
      total += *x;
    }
  }
  return total;
}

// Reads a borrowed view in place (accepts a Tensor or a bare DLTensor*).
double sum_view(ffi::TensorView t) {
  const double* base = reinterpret_cast<const double*>(static_cast<char*>(t.data_ptr()) +
                                                       t.byte_offset());
  double total = 0;
  for (int64_t i = 0; i < t.size(0); ++i) {
    for (int64_t j = 0; j < t.size(1); ++j) total += base[i * t.stride(0) + j * t.stride(1)];
  }
  return total;
}

// A view through the C++ API (Tensor::as_strided calls TVMFFITensorCreateUnsafeView):
// the diagonal just above the main one.
ffi::Tensor upper_diagonal(ffi::Tensor t) {
  return t.as_strided({t.size(0) - 1}, {t.stride(0) + t.stride(1)}, 1);
}

// A tensor the kernel allocates itself (its own deleter), for us to export and release.
struct MallocAlloc {
  void AllocData(DLTensor* tensor) { tensor->data = malloc(ffi::GetDataSize(*tensor)); }
  void FreeData(DLTensor* tensor) { free(tensor->data); }
};
ffi::Tensor ones(int64_t n) {
  ffi::Tensor t = ffi::Tensor::FromNDAlloc(MallocAlloc(), ffi::Shape({n}),
                                           DLDataType{kDLInt, 32, 1}, DLDevice{kDLCPU, 0});
  for (int64_t i = 0; i < n; ++i) static_cast<int32_t*>(t.data_ptr())[i] = 1;
  return t;
}

TVM_FFI_DLL_EXPORT_TYPED_FUNC(alloc_iota, alloc_iota);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(ones, ones);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(scale_and_sum, scale_and_sum);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(sum_view, sum_view);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(upper_diagonal, upper_diagonal);
"""


def test_cpp_kernels_allocate_through_the_env_and_read_tensors_in_place(kernels):
    path = kernels.build("tensor_kernels", ALLOC_KERNEL_CC)
    out = same_everywhere(ALLOCATOR, """
    kernel = ctypes.CDLL(PATH)
    def call(name, *args):
        f = abi.TVMFFISafeCallType(("__tvm_ffi_" + name, kernel))
        packed = (abi.TVMFFIAny * len(args))()
        for i, a in enumerate(args):
            if isinstance(a, float):
                packed[i].type_index = TI.kTVMFFIFloat; packed[i].v_float64 = a
            elif isinstance(a, int):
                packed[i].type_index = TI.kTVMFFIInt; packed[i].v_int64 = a
            else:
                packed[i].type_index = a[0]; packed[i].v_ptr = a[1]
        result = abi.TVMFFIAny()
        status = f(None, packed, len(args), ctypes.byref(result))
        return status, result
    status, result = call("alloc_iota", 2, 3)
    print(status, take_error())  # no allocator installed
    lib.TVMFFIEnvSetDLPackManagedTensorAllocator(ALLOCATOR_ADDRESS, 0, None)
    status, result = call("alloc_iota", 2, 3)
    h = result.v_ptr
    print(status, result.type_index, rc(h), describe(h)["strides"], len(allocated))
    print(export(h, True).tolist(), rc(h))
    lib.TVMFFIObjectDecRef(h)
    print(deleted == [ctypes.addressof(m) for m in allocated])
    deleted.clear()

    arr = np.arange(12, dtype="float64").reshape(3, 4).copy()  # owns its memory
    before = sys.getrefcount(arr)
    status, t = import_capsule(arr[:, 1:].__dlpack__(max_version=(1, 0)), True)
    status, result = call("scale_and_sum", (TI.kTVMFFITensor, t), 2.0)
    print(status, result.type_index, result.v_float64, arr.tolist(), rc(t))
    status, result = call("scale_and_sum", (TI.kTVMFFITensor, t), 0.5)
    print(status, result.v_float64, rc(t))
    for arg in ((TI.kTVMFFITensor, t), (TI.kTVMFFIDLTensorPtr, t + 24)):
        status, result = call("sum_view", arg)
        print(status, result.v_float64, rc(t))
    status, result = call("upper_diagonal", (TI.kTVMFFITensor, t))
    d = result.v_ptr
    print(status, result.type_index, rc(t), describe(d)["shape"], describe(d)["strides"],
          describe(d)["byte_offset"], (dl(d).data - dl(t).data) // 8, export(d, False).tolist())
    lib.TVMFFIObjectDecRef(t)
    print(rc(d), sys.getrefcount(arr) - before)
    lib.TVMFFIObjectDecRef(d)
    print(sys.getrefcount(arr) - before)
    status, result = call("ones", 3)
    h = result.v_ptr
    exported = export(h, True)
    print(status, result.type_index, rc(h), describe(h)["strides_at"], exported.tolist())
    lib.TVMFFIObjectDecRef(h)
    print(rc(h), exported.sum())
    del exported
    """, PATH=path)
    assert out.splitlines() == [
        "-1 ('RuntimeError', 'TVMFFIEnvTensorAlloc: allocator is nullptr, likely because "
        "TVMFFIEnvSetDLPackManagedTensorAllocator has not been called.')",
        "0 70 1 [3, 1] 1",
        "[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] 1",
        "True",
        "0 3 108.0 [[0.0, 2.0, 4.0, 6.0], [4.0, 10.0, 12.0, 14.0], [8.0, 18.0, 20.0, 22.0]] 1",
        "0 54.0 1",
        "0 54.0 1",
        "0 54.0 1",
        "0 70 2 [2] [5] 0 1 [2.0, 7.0]",
        "1 1",
        "0",
        "0 70 2 object+88 [1, 1, 1]",  # FromNDAlloc: shape at +80 (after its allocator), strides
        "1 3",
    ]


@pytest.mark.parametrize("runtime", ["ref"])  # tvm_ffi_ref's own Python helpers
def test_front_end_helpers(runtime):
    # The helpers the front end uses, on top of the same objects the C API makes.
    out = run_capi(runtime, program(ALLOCATOR, """
    from tvm_ffi_ref.runtime import env, memory, tensor
    from tvm_ffi_ref.runtime.slots import FFIError
    arr = np.arange(6, dtype="int16").reshape(2, 3)
    before = sys.getrefcount(arr)
    cap = arr.T.__dlpack__(max_version=(1, 0))
    h = tensor.new_tensor_from_capsule(cap)
    t = tensor.tensor_dltensor(h)
    print(tensor.shape_of(t), tensor.strides_of(t), tensor.is_contiguous(t),
          tensor.is_aligned(t, 2), tensor.data_size(t))
    try:
        tensor.new_tensor_from_capsule(cap)
    except TypeError as e:
        print("TypeError", e)
    cap2 = arr.__dlpack__()
    cap3 = arr.ravel()[1:].__dlpack__()  # 2 bytes past NumPy's (16-byte aligned) data
    try:
        tensor.new_tensor_from_capsule(cap3, require_alignment=4)
    except FFIError as e:
        print(e.kind, e.message)
    del cap3
    h2 = tensor.new_tensor_from_capsule(cap2, require_contiguous=True)
    m = tensor.to_managed(h2, versioned=True)
    print(memory.strong_count(h2), MTV.from_address(m).version.major)
    MTV.from_address(m).deleter(ctypes.cast(m, ctypes.POINTER(MTV)))
    view_proto = abi.DLTensor.from_buffer_copy(bytes(tensor.tensor_dltensor(h2)))
    v = tensor.new_unsafe_view(h2, view_proto)
    print(memory.strong_count(h2), tensor.shape_of(tensor.tensor_dltensor(v)))
    for handle in (h, h2, v):
        memory.dec_ref(handle)
    del cap, cap2
    print(sys.getrefcount(arr) - before)
    print(tensor.compact_strides([2, 0, 3]), tensor.compact_strides([]))
    try:
        tensor.env_tensor_alloc(prototype((2,)))
    except FFIError as e:
        print(e.kind)
    env.set_allocator(ALLOCATOR_ADDRESS)
    a = tensor.env_tensor_alloc(prototype((2, 2), dtype=(0, 64, 1)))
    print(tensor.shape_of(tensor.tensor_dltensor(a)), memory.strong_count(a))
    memory.dec_ref(a)
    print(deleted == [ctypes.addressof(m) for m in allocated])
    """))
    assert out.splitlines() == [
        "(3, 2) (1, 3) False True 12",
        "TypeError expected a DLPack capsule named 'dltensor' or 'dltensor_versioned' (one "
        "already consumed cannot be imported again)",
        "RuntimeError FromDLPack: Data is not aligned to 4 bytes.",
        "2 1",
        "2 (2, 3)",
        "0",
        "[0, 3, 1] []",
        "RuntimeError",
        "(2, 2) 1",
        "True",
    ]
