"""Tensors from a DLPack producer that leaves ``strides`` NULL: how a worker builds them.

A ``("compact", dtype, shape, seed)`` recipe is a C-contiguous NumPy array
handed to ``api.from_dlpack`` through a producer of its own whose legacy
``dltensor`` capsule has ``strides == NULL``, as DLPack allows for compact
tensors (and older producers do): the runtime must then fill the row-major
strides itself. NumPy and torch always export strides, so without this
recipe that path would never run. The exported structs and the array are
kept for the worker's life (the capsule has no deleter to free them).
"""

from __future__ import annotations

import ctypes
from typing import Any, List

#: DLPack type codes of NumPy dtype kinds (bool is kDLBool, 8 bits).
_CODES = {"i": 0, "u": 1, "f": 2, "c": 5, "b": 6}
#: What exported capsules point into: never freed while the worker lives.
_KEEP: List[Any] = []


def _capsule_maker():
    """``make(address)``: a capsule named ``dltensor`` with no destructor.

    On CPython through a private handle of the interpreter (its typing cannot
    clash with ``ctypes.pythonapi``'s users; the upstream worker cannot import
    this project); on PyPy, which has no ``ctypes.PyDLL``, through the
    project's own ``pycapi`` (the PyPy workers run this project only)."""
    if hasattr(ctypes, "PyDLL"):
        python = ctypes.PyDLL(None)
        python.PyCapsule_New.restype = ctypes.py_object
        python.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        return lambda address: python.PyCapsule_New(address, b"dltensor", None)
    from tvm_ffi_common import pycapi

    name = pycapi.static_name(b"dltensor")
    return lambda address: pycapi.capsule_new(address, name, None)


_make_capsule = _capsule_maker()


class CompactProducer:
    """Exports one array through ``__dlpack__`` with NULL strides (CPU only)."""

    def __init__(self, abi: Any, array: Any):
        self.abi = abi
        self.array = array

    def __dlpack_device__(self):
        return (1, 0)

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        abi, array = self.abi, self.array
        managed = abi.DLManagedTensor()
        shape = (ctypes.c_int64 * max(1, array.ndim))(*array.shape)
        tensor = managed.dl_tensor
        tensor.data = array.ctypes.data if array.size else None
        tensor.device = abi.DLDevice(1, 0)
        tensor.ndim = array.ndim
        tensor.dtype = abi.DLDataType(_CODES[array.dtype.kind], array.dtype.itemsize * 8, 1)
        tensor.shape = ctypes.cast(shape, type(tensor.shape))
        tensor.strides = None
        tensor.byte_offset = 0
        _KEEP.append((array, managed, shape))
        return _make_capsule(ctypes.addressof(managed))


def make_compact_tensor(api: Any, abi: Any, np: Any, dtype: str, shape: List[int], seed: int):
    """``api.from_dlpack`` of a compact array of ``dtype`` and ``shape`` exported with NULL
    strides, its bytes drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    count = int(np.prod(shape)) if shape else 1
    raw = rng.integers(0, 256, size=count * dt.itemsize, dtype=np.uint8)
    array = (raw & 1).astype(dt) if dt.kind == "b" else np.frombuffer(raw.tobytes(), dtype=dt)
    return api.from_dlpack(CompactProducer(abi, np.ascontiguousarray(array.reshape(shape))))
