"""The Tensor API of both front ends: the fast core's C accessors mean what the shared
Python says, and the reference's DLPack export survives a process that re-types
``ctypes.pythonapi``.

``tensor.TensorMethods`` states each accessor in Python (the reference runs
it); the fast core's ``TensorBase`` implements the same members in C. Here
both are asked of the same tensors, owned and views, of many dtypes and
layouts, in one interpreter of each front end.
"""

from __future__ import annotations

import pytest

from frontend_harness import FRONTENDS_UNDER_TEST, run_frontend

SETUP = r'''
import ctypes
from tvm_ffi_common import abi

SPEC = api.tensor.TensorMethods
MEMBERS = ("shape", "ndim", "strides", "dtype", "device")
CALLS = ("numel", "is_contiguous", "data_ptr", "__dlpack_device__")


def arrays():
    base = np.arange(120, dtype="float64").reshape(2, 3, 4, 5)
    yield base
    yield base.transpose(3, 0, 2, 1)
    yield base[:, 1:, ::2]
    yield base[1]
    yield np.zeros((0, 3), dtype="int16")
    yield np.zeros((4, 0, 4), dtype="int16")[:, :, 1:]
    yield np.array(7, dtype="int8")
    yield np.ones((3, 1), dtype="bool")
    yield np.ones((5,), dtype="float16")[1::2]
    yield np.ones((2, 2), dtype="uint64").T


def view_of(tensor):
    """A Tensor viewing the DLTensor of ``tensor`` (as a kernel's kTVMFFIDLTensorPtr is seen)."""
    return api.tensor.tensor_class()._view_of_dltensor(tensor._handle + ctypes.sizeof(abi.TVMFFIObject))


def both_ways(tensor):
    """Each accessor's value from the class (C in fast) and from the Python statement of it."""
    got, spec = [], []
    for member in MEMBERS:
        got.append(getattr(tensor, member))
        spec.append(getattr(SPEC, member).fget(tensor))
    for method in CALLS:
        got.append(getattr(tensor, method)())
        spec.append(getattr(SPEC, method)(tensor))
    for idx in range(-tensor.ndim - 1, tensor.ndim + 1):
        for table, fn in ((got, tensor.size), (spec, lambda i: SPEC.size(tensor, i))):
            try:
                table.append(fn(idx))
            except IndexError as error:
                table.append(("IndexError", str(error)))
    return [str(v) if isinstance(v, (api.dtype, api.Device)) else v for v in got], \
           [str(v) if isinstance(v, (api.dtype, api.Device)) else v for v in spec]
'''

CASES = [
    ("owned", "[a == b for a, b in (both_ways(api.from_dlpack(x)) for x in arrays())]"),
    ("views", "owners = [api.from_dlpack(x) for x in arrays()]\n"
     "result = [a == b for a, b in (both_ways(view_of(t)) for t in owners)]"),
    ("dlpack_protocol",
     "t = api.from_dlpack(np.arange(6, dtype='int32').reshape(2, 3))\n"
     "result = [np.from_dlpack(t).tolist(), t.__dlpack__().__class__.__name__, "
     "repr(t.__dlpack__(max_version=(1, 0)))[:27], repr(t.__dlpack__(max_version=(0, 8)))[:18], "
     "repr(t.__dlpack__(max_version=[1, 0], dl_device=(1, 0), copy=False))[:27]]"),
    ("dlpack_refusals",
     "t = api.from_dlpack(np.arange(6, dtype='int32'))\n"
     "v = view_of(t)\n"
     "def why(thunk):\n"
     "    try:\n"
     "        thunk()\n"
     "    except Exception as error:\n"
     "        return (type(error).__name__, str(error))\n"
     "result = [why(lambda: t.__dlpack__(max_version=(1, 0), dl_device=(2, 0))), "
     "why(lambda: t.__dlpack__(max_version=(1, 0), copy=True)), why(lambda: v.__dlpack__()), "
     "why(lambda: v._to_dlpack_versioned())]"),
    # The fast core keeps the pair it returned last: tensors on other devices in turn must
    # still each get their own.
    ("dlpack_device_in_turn",
     "shape = (ctypes.c_int64 * 1)(4)\n"
     "def on(device_type, device_id):\n"
     "    t = abi.DLTensor()\n"
     "    t.data, t.ndim, t.byte_offset = 4096, 1, 0\n"
     "    t.device = abi.DLDevice(device_type, device_id)\n"
     "    t.dtype = abi.DLDataType(2, 32, 1)\n"
     "    t.shape = ctypes.cast(shape, type(t.shape))\n"
     "    return t\n"
     "keep = [on(*d) for d in ((1, 0), (2, 3), (2, 3), (1, 0), (2, 0), (13, 1), (1, 0))]\n"
     "cls = api.tensor.tensor_class()\n"
     "result = [cls._view_of_dltensor(ctypes.addressof(t)).__dlpack_device__() for t in keep]"),
    ("pythonapi_retyped_by_another_library",
     "capi = ctypes.pythonapi\n"
     "untouched = [getattr(capi, n).argtypes for n in ('PyCapsule_New', 'PyCapsule_IsValid', "
     "'PyCapsule_GetPointer', 'PyCapsule_SetName', 'PyCapsule_SetDestructor', 'Py_IncRef', "
     "'Py_DecRef')]\n"
     "capi.Py_IncRef.argtypes = capi.Py_DecRef.argtypes = [ctypes.c_char_p]\n"
     "capi.PyCapsule_New.restype = ctypes.c_void_p\n"
     "capi.PyCapsule_New.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p]\n"
     "capi.PyCapsule_IsValid.argtypes = [ctypes.c_void_p, ctypes.c_void_p]\n"
     "capi.PyCapsule_GetPointer.restype = ctypes.c_int\n"
     "x = np.arange(5, dtype='float32')\n"
     "t = api.from_dlpack(x)\n"
     "marker = object()\n"
     "result = [untouched, np.from_dlpack(t).tolist(), api.from_dlpack(x.__dlpack__()).shape, "
     "np.from_dlpack(api.from_dlpack(np.from_dlpack(t))).tolist(), "
     "api.convert(marker).pyobject() is marker]"),
]

EXPECTED = {
    "owned": ["pylist", [["bool", True]] * 10],
    "views": ["pylist", [["bool", True]] * 10],
    "dlpack_protocol": ["pylist", [["pylist", [["int", v] for v in range(6)] and
                                    [["pylist", [["int", 0], ["int", 1], ["int", 2]]],
                                     ["pylist", [["int", 3], ["int", 4], ["int", 5]]]]],
                                   ["str", "PyCapsule"],
                                   ["str", '<capsule object "dltensor_v'],
                                   ["str", '<capsule object "d'],
                                   ["str", '<capsule object "dltensor_v']]],
    "dlpack_device_in_turn": ["pylist", [["pytuple", [["int", d], ["int", i]]] for d, i in (
        (1, 0), (2, 3), (2, 3), (1, 0), (2, 0), (13, 1), (1, 0))]],
    "pythonapi_retyped_by_another_library": [
        "pylist", [["pylist", [["none"]] * 7], ["pylist", [["float", float(v).hex()] for v in range(5)]],
                   ["pytuple", [["int", 5]]],
                   ["pylist", [["float", float(v).hex()] for v in range(5)]], ["bool", True]]],
}


REFUSALS = ["pylist", [["pytuple", [["str", "BufferError"], ["str", text]]] for text in (
    "dl_device of different type not supported", "copy not yet supported",
    "a borrowed DLTensor view cannot be exported", "a borrowed DLTensor view cannot be exported")]]


@pytest.fixture(scope="module")
def results():
    return {fe: run_frontend(fe, CASES, setup=SETUP) for fe in FRONTENDS_UNDER_TEST}


@pytest.mark.parametrize("frontend", FRONTENDS_UNDER_TEST)
@pytest.mark.parametrize("case", [c[0] for c in CASES])
def test_tensor_api(results, frontend, case):
    if case in EXPECTED:
        assert results[frontend][case] == EXPECTED[case]
    else:  # the refusals
        assert results[frontend][case] == REFUSALS
