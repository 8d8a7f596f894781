"""Tensors, DLPack and the environment API under each runtime."""

from __future__ import annotations

import pytest

from runtime_client import OURS, RUNTIMES, run_all, tagged

TENSORS = r"""
import threading
DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
deleted = []
@DELETER
def on_delete(managed):
    deleted.append(managed)

_buffers = []
def managed(shape, strides=None, dtype=(2, 32, 1), device=(1, 0), offset=0, versioned=False, flags=0,
            misalign=0, byte_offset=0):
    nbytes = 8 * 64
    buf = ctypes.create_string_buffer(nbytes + 64)
    base = (ctypes.addressof(buf) + 63) // 64 * 64 + misalign
    shp = (ctypes.c_int64 * len(shape))(*shape)
    std = (ctypes.c_int64 * len(strides))(*strides) if strides is not None else None
    m = abi.DLManagedTensorVersioned() if versioned else abi.DLManagedTensor()
    t = m.dl_tensor
    t.data = base; t.device = abi.DLDevice(*device); t.ndim = len(shape)
    t.dtype = abi.DLDataType(*dtype); t.shape = ctypes.cast(shp, ctypes.POINTER(ctypes.c_int64))
    t.strides = ctypes.cast(std, ctypes.POINTER(ctypes.c_int64)) if std is not None else None
    t.byte_offset = byte_offset
    m.deleter = ctypes.cast(on_delete, type(m.deleter))
    if versioned:
        m.version.major, m.version.minor = 1, 3
        m.flags = flags
    _buffers.append((buf, shp, std, m))
    return m

def import_(m, align=0, contiguous=0):
    out = ctypes.c_void_p()
    fn = lib.TVMFFITensorFromDLPackVersioned if isinstance(m, abi.DLManagedTensorVersioned) else lib.TVMFFITensorFromDLPack
    if fn(ctypes.byref(m), align, contiguous, ctypes.byref(out)) != 0:
        return ("ERR",) + take_error()
    return Obj(out.value)

m1 = managed((2, 3))
t1 = import_(m1)
print("import: %r" % ((show(t1), abi.DLTensor.from_address(t1.handle + 24).data == m1.dl_tensor.data),))
del t1
print("released: %r" % ((len(deleted), deleted[-1] == ctypes.addressof(m1)),))
print("strided: %r" % (show(import_(managed((2, 3), strides=(1, 2)))),))
print("scalar: %r" % (show(import_(managed(()))),))
print("misaligned: %r" % ((import_(managed((4,), misalign=4), align=16), len(deleted)),))
print("aligned: %r" % (show(import_(managed((4,)), align=64)),))
print("misaligned offset: %r" % (import_(managed((4,), byte_offset=8), align=16),))
print("other device: %r" % ((show(import_(managed((4,), device=(7, 0), misalign=4), align=16)),
                             import_(managed((4,), device=(7, 0), byte_offset=8), align=16)),))
print("noncontiguous: %r" % (import_(managed((2, 3), strides=(1, 2)), contiguous=1),))
print("contiguous: %r" % ([show(import_(managed(shape, strides=strides), contiguous=1))
                           for shape, strides in [((2, 3), (3, 1)), ((2, 1, 3), (3, 99, 1)), ((0, 3), (7, 7))]],))
print("versioned: %r" % ((show(import_(managed((3,), versioned=True, flags=1))),
                          import_(managed((3,), versioned=True, flags=4))),))
count = len(deleted)
import gc; gc.collect()

t = import_(managed((2, 2)))
out = ctypes.POINTER(abi.DLManagedTensor)()
before = rc(t)
print("to dlpack: %r" % ((lib.TVMFFITensorToDLPack(ctypes.c_void_p(t.handle), ctypes.byref(out)),
                          out.contents.manager_ctx == t.handle, rc(t) - before,
                          tuple(out.contents.dl_tensor.shape[i] for i in range(2))),))
out.contents.deleter(out)
print("to dlpack released: %r" % (rc(t) - before,))
outv = ctypes.POINTER(abi.DLManagedTensorVersioned)()
print("to dlpack versioned: %r" % ((lib.TVMFFITensorToDLPackVersioned(ctypes.c_void_p(t.handle), ctypes.byref(outv)),
                                    outv.contents.version.major, outv.contents.version.minor, outv.contents.flags,
                                    rc(t) - before),))
outv.contents.deleter(outv)

proto = abi.DLTensor()
src = abi.DLTensor.from_address(t.handle + 24)
proto.data = src.data + 4; proto.device = src.device; proto.dtype = src.dtype; proto.ndim = 1
shp = (ctypes.c_int64 * 1)(3); std = (ctypes.c_int64 * 1)(1)
proto.shape = ctypes.cast(shp, ctypes.POINTER(ctypes.c_int64)); proto.strides = ctypes.cast(std, ctypes.POINTER(ctypes.c_int64))
view = ctypes.c_void_p()
status = lib.TVMFFITensorCreateUnsafeView(ctypes.c_void_p(t.handle), ctypes.byref(proto), ctypes.byref(view))
print("view: %r" % ((status, show_handle(view.value), rc(t) - before),))
proto.strides = None
print("view no strides: %r" % ((lib.TVMFFITensorCreateUnsafeView(ctypes.c_void_p(t.handle), ctypes.byref(proto), ctypes.byref(ctypes.c_void_p())),
                                take_error()),))
vobj = Obj(view.value)
vt = abi.DLTensor.from_address(view.value + 24)
print("view owns shape: %r" % ((ctypes.addressof(vt.shape.contents) != ctypes.addressof(shp), vt.data - src.data),))
deleted_before = len(deleted)
del t
kept = len(deleted) - deleted_before
del vobj
print("view keeps source: %r" % ((kept, len(deleted) - deleted_before),))

# containers: the first non-CPU tensor device
cuda = import_(managed((1,), device=(2, 3)))
cpu = import_(managed((1,)))
print("first non-cpu: %r" % ((call("ffi.ContainerFindFirstNonCPUDevice", call("ffi.Array", cpu, call("ffi.Map", "k", cuda))),
                              call("ffi.ContainerFindFirstNonCPUDevice", call("ffi.List", cpu, 1)),
                              call("ffi.ContainerFindFirstNonCPUDevice", 5)),))

# environment: streams per device per thread
orig = ctypes.c_void_p(99)
print("stream set: %r" % ((lib.TVMFFIEnvSetStream(2, 1, ctypes.c_void_p(0x1234), ctypes.byref(orig)), orig.value),))
print("stream get: %r" % ((lib.TVMFFIEnvGetStream(2, 1), lib.TVMFFIEnvGetStream(2, 0), lib.TVMFFIEnvGetStream(9, 9)),))
lib.TVMFFIEnvSetStream(2, 1, ctypes.c_void_p(0x5678), ctypes.byref(orig))
print("stream swap: %r" % ((orig.value, lib.TVMFFIEnvGetStream(2, 1)),))
other = []
th = threading.Thread(target=lambda: other.append(lib.TVMFFIEnvGetStream(2, 1)))
th.start(); th.join()
print("stream other thread: %r" % (other,))
print("stream no out: %r" % (lib.TVMFFIEnvSetStream(1, 0, None, None),))

ALLOC = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(abi.DLTensor), ctypes.POINTER(ctypes.POINTER(abi.DLManagedTensorVersioned)),
                         ctypes.c_void_p, ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p))
allocs = []
@ALLOC
def allocator(proto, out, ctx, set_error):
    if proto.contents.ndim == 3:
        set_error(ctx, b"MemoryError", b"three dimensions is too many")
        return -1
    shape = tuple(proto.contents.shape[i] for i in range(proto.contents.ndim))
    m = managed(shape, versioned=True, dtype=(proto.contents.dtype.code, proto.contents.dtype.bits, proto.contents.dtype.lanes))
    allocs.append(shape)
    out[0] = ctypes.pointer(m)
    return 0
@ALLOC
def null_allocator(proto, out, ctx, set_error):
    out[0] = ctypes.POINTER(abi.DLManagedTensorVersioned)()
    return 0

def env_alloc(shape):
    proto = abi.DLTensor(); shp = (ctypes.c_int64 * len(shape))(*shape)
    proto.ndim = len(shape); proto.shape = ctypes.cast(shp, ctypes.POINTER(ctypes.c_int64))
    proto.dtype = abi.DLDataType(2, 16, 1); proto.device = abi.DLDevice(1, 0)
    out = ctypes.c_void_p()
    if lib.TVMFFIEnvTensorAlloc(ctypes.byref(proto), ctypes.byref(out)) != 0:
        return ("ERR",) + take_error()
    return show(Obj(out.value))

print("alloc none: %r" % ((bool(lib.TVMFFIEnvGetDLPackManagedTensorAllocator()), env_alloc((2,))),))
prev = ctypes.c_void_p()
print("alloc set: %r" % ((lib.TVMFFIEnvSetDLPackManagedTensorAllocator(allocator, 0, ctypes.byref(prev)), bool(prev.value)),))
print("alloc use: %r" % ((env_alloc((2, 5)), env_alloc((1, 1, 1)), allocs),))
other = []
th = threading.Thread(target=lambda: other.append(bool(lib.TVMFFIEnvGetDLPackManagedTensorAllocator())))
th.start(); th.join()
print("alloc thread local: %r" % (other,))
lib.TVMFFIEnvSetDLPackManagedTensorAllocator(allocator, 1, ctypes.byref(prev))
other = []
th = threading.Thread(target=lambda: other.append(bool(lib.TVMFFIEnvGetDLPackManagedTensorAllocator())))
th.start(); th.join()
print("alloc global: %r" % ((other, bool(prev.value)),))
lib.TVMFFIEnvSetDLPackManagedTensorAllocator(null_allocator, 0, None)
print("alloc null result: %r" % (env_alloc((2,)),))

# signal checks through a registered PyErr_CheckSignals
print("signals unregistered: %r" % (lib.TVMFFIEnvCheckSignals(),))
CHECK = ctypes.CFUNCTYPE(ctypes.c_int)
answer = [0]
calls = []
@CHECK
def check_signals():
    calls.append(1)
    return answer[0]
ensure = ctypes.cast(ctypes.pythonapi.PyGILState_Ensure, ctypes.c_void_p)
release = ctypes.cast(ctypes.pythonapi.PyGILState_Release, ctypes.c_void_p)
print("register: %r" % ((lib.TVMFFIEnvRegisterCAPI(b"PyGILState_Ensure", ensure),
                         lib.TVMFFIEnvRegisterCAPI(b"PyGILState_Release", release),
                         lib.TVMFFIEnvRegisterCAPI(b"PyErr_CheckSignals", ctypes.cast(check_signals, ctypes.c_void_p))),))
print("signals: %r" % ((lib.TVMFFIEnvCheckSignals(), len(calls)),))
answer[0] = -1
print("signals raised: %r" % ((lib.TVMFFIEnvCheckSignals(), len(calls), take_error()),))
print("register unknown: %r" % ((lib.TVMFFIEnvRegisterCAPI(b"Py_Other", None), take_error()),))
"""


@pytest.fixture(scope="module")
def tensors():
    return run_all(TENSORS)


@pytest.mark.parametrize("runtime", OURS)
def test_tensors_and_env_agree_with_upstream(runtime, tensors):
    assert tensors[runtime] == tensors["upstream"]


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_tensors_and_dlpack(runtime, tensors):
    out = tagged(tensors[runtime])
    assert out["import"] == "(('Tensor', (2, 3), (3, 1), (2, 32, 1), (1, 0), 0), True)"
    assert out["released"] == "(1, True)"
    assert out["strided"] == "('Tensor', (2, 3), (1, 2), (2, 32, 1), (1, 0), 0)"
    assert out["scalar"] == "('Tensor', (), None, (2, 32, 1), (1, 0), 0)"
    # the deleter ran for the three tensors released so far, not for the refused one
    assert out["misaligned"] == "(('ERR', 'RuntimeError', 'FromDLPack: Data is not aligned to 16 bytes.'), 3)"
    assert out["misaligned offset"] == "('ERR', 'RuntimeError', 'FromDLPack: Data is not aligned to 16 bytes.')"
    assert out["other device"] == (
        "(('Tensor', (4,), (1,), (2, 32, 1), (7, 0), 0), ('ERR', 'RuntimeError', 'FromDLPack: Data "
        "is not aligned to 16 bytes.'))")
    assert out["noncontiguous"] == "('ERR', 'RuntimeError', 'FromDLPack: Tensor is not contiguous.')"
    assert out["versioned"] == (
        "(('Tensor', (3,), (1,), (2, 32, 1), (1, 0), 0), ('ERR', 'RuntimeError', 'Subbyte type "
        "padded is not yet supported'))")
    assert out["to dlpack"] == "(0, True, 1, (2, 2))"
    assert out["to dlpack released"] == "0"
    assert out["to dlpack versioned"] == "(0, 1, 3, 0, 1)"
    assert out["view"] == "(0, ('Tensor', (3,), (1,), (2, 32, 1), (1, 0), 0), 1)"
    assert out["view no strides"].startswith("(-1, ('InternalError', ")
    assert out["view owns shape"] == "(True, 4)"
    assert out["view keeps source"] == "(0, 1)"
    assert out["first non-cpu"] == "(('device', 2, 3), ('device', 1, 0), ('device', 1, 0))"


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_environment(runtime, tensors):
    out = tagged(tensors[runtime])
    assert out["stream set"] == "(0, None)"
    assert out["stream get"] == "(4660, None, None)"
    assert out["stream swap"] == "(4660, 22136)"
    assert out["stream other thread"] == "[None]"
    assert out["alloc none"] == (
        "(False, ('ERR', 'RuntimeError', 'TVMFFIEnvTensorAlloc: allocator is nullptr, likely "
        "because TVMFFIEnvSetDLPackManagedTensorAllocator has not been called.'))")
    assert out["alloc set"] == "(0, False)"
    assert out["alloc use"] == (
        "(('Tensor', (2, 5), (5, 1), (2, 16, 1), (1, 0), 0), ('ERR', 'MemoryError', 'three "
        "dimensions is too many'), [(2, 5)])")
    assert out["alloc thread local"] == "[False]"
    assert out["alloc global"] == "([True], True)"
    assert out["alloc null result"] == (
        "('ERR', 'RuntimeError', 'Check failed: (dlpack_tensor != nullptr) is false: "
        "TVMFFIEnvTensorAlloc: failed to allocate a tensor from the allocator')")
    assert out["signals unregistered"] == "0"
    assert out["register"] == "(0, 0, 0)"
    assert out["signals"] == "(0, 1)"
    assert out["signals raised"] == "(-1, 2, None)"
    assert out["register unknown"] == "(-1, ('ValueError', 'Unknown env API Py_Other'))"
