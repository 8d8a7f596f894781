"""Behaviours where our front ends once differed from upstream, held to upstream.

The conformance suite found each of these (they were listed in
``conformance_tests/known.py``); its properties cover them again now that
they are fixed. Here each one is spelled out case by case: every case runs
under upstream and under each front end of ``FRONTENDS_UNDER_TEST``, and

* ``test_upstream_gives_the_pinned_result``: upstream gives exactly the
  result written below (a fact about upstream, read from its sources);
* ``test_frontend_matches_upstream``: each front end gives upstream's result.

The divergences: a ``numpy.dtype`` argument outside upstream's table,
``convert`` (str/bytes classes, NumPy scalars, opaque values, identity),
dtype lanes read as int16, ``str`` of an unnamed device type, error text that
is not UTF-8, and ``List.extend`` as one slice assignment.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any, List, NamedTuple

import pytest

from frontend_harness import FRONTENDS_UNDER_TEST, run_frontend

#: A kernel with just what the cases need (upstream's headers, C++).
KERNEL = r'''
#include <tvm/ffi/container/list.h>
#include <tvm/ffi/device.h>
#include <tvm/ffi/dtype.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>

#include <string>

using namespace tvm::ffi;

Any Echo(Any value) { return value; }
String DTypeText(DLDataType dtype) { return DLDataTypeToString(dtype); }
DLDataType DTypeMake(int64_t code, int64_t bits, int64_t lanes) {
  DLDataType dtype;
  dtype.code = static_cast<uint8_t>(code);
  dtype.bits = static_cast<uint8_t>(bits);
  dtype.lanes = static_cast<uint16_t>(lanes);
  return dtype;
}
DLDevice DeviceMake(int64_t type, int64_t id) {
  return DLDevice{static_cast<DLDeviceType>(type), static_cast<int32_t>(id)};
}
void RaiseBytes(Bytes kind, Bytes message) {
  throw Error(std::string(kind), std::string(message), "");
}
List<Any> ListEmpty() { return List<Any>(); }
int64_t ListCapacity(List<Any> list) { return static_cast<int64_t>(list.capacity()); }

TVM_FFI_DLL_EXPORT_TYPED_FUNC(echo, Echo);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(dtype_text, DTypeText);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(dtype_make, DTypeMake);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(device_make, DeviceMake);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(raise_bytes, RaiseBytes);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(list_empty, ListEmpty);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(list_capacity, ListCapacity);
'''

SETUP = r'''
import ctypes, fractions

def outcome(thunk):
    """("ok", value) or ("raises", class name, str(exception))."""
    try:
        return ("ok", thunk())
    except Exception as error:
        return ("raises", type(error).__name__, str(error))

TABLE = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
         "float16", "float32", "float64")
REFUSED = ("bool", "complex64", "complex128", ">i4", ">f8", "object", "longdouble",
           "datetime64[s]", "U3", "V4")

class DLPackDType:
    def __init__(self, triple): self.triple = triple
    def __dlpack_data_type__(self): return self.triple

class IntProto:
    def __tvm_ffi_int__(self): return 3

class FloatProto:
    def __tvm_ffi_float__(self): return 0.5

class OpaquePtrProto:
    def __tvm_ffi_opaque_ptr__(self): return 16

class DeviceProto:
    def __dlpack_device__(self): return (2, 1)

class ValueProto:
    def __tvm_ffi_value__(self): return [1, 2]

class Holder:
    def __init__(self, obj): self.obj = obj
    def __tvm_ffi_object__(self): return self.obj

class Convertible(api.ObjectConvertible):
    def __init__(self, obj): self.obj = obj
    def asobject(self): return self.obj

def kind_of(value):
    return type(value).__name__
'''


class Case(NamedTuple):
    """A snippet (``api``, ``np``, the kernel as ``k``, SETUP's names) and upstream's result."""

    id: str
    code: str
    expect: Any


# The normalized forms (frontend_harness.normalize) of what the snippets return.


def ok(value: Any) -> List[Any]:
    """SETUP's ``outcome`` of a thunk that returned ``value`` (already normalized)."""
    return ["pytuple", [["str", "ok"], value]]


def raises(cls: str, text: str) -> List[Any]:
    """SETUP's ``outcome`` of a thunk that raised ``cls`` with ``str(exception) == text``."""
    return ["pytuple", [["str", "raises"], ["str", cls], ["str", text]]]


def strs(*items: str) -> List[Any]:
    """A Python list of str."""
    return ["pylist", [["str", s] for s in items]]


def ints(*items: int) -> List[Any]:
    """A Python list of int."""
    return ["pylist", [["int", i] for i in items]]


def bools(*items: bool) -> List[Any]:
    """A Python list of bool."""
    return ["pylist", [["bool", b] for b in items]]


def dtypes(*names: str) -> List[Any]:
    """A Python list of dtypes."""
    return ["pylist", [["dtype", n] for n in names]]


_TABLE = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64")
#: How numpy spells each of SETUP's REFUSED dtypes (in the exception's text).
_REFUSED = ("bool", "complex64", "complex128", ">i4", ">f8", "O", "float128", "<M8[s]", "<U3",
            "V4")

CASES = [
    # -- numpy-dtype-argument: only upstream's 11-entry table travels
    Case("npdtype.arg.table", "[k.echo(np.dtype(n)) for n in TABLE]", dtypes(*_TABLE)),
    Case("npdtype.arg.table_fields",
         "[(int(k.echo(np.dtype(n)).type_code), int(k.echo(np.dtype(n)).bits)) for n in TABLE]",
         ["pylist", [["pytuple", [["int", c], ["int", b]]] for c, b in
                     [(0, 8), (0, 16), (0, 32), (0, 64), (1, 8), (1, 16), (1, 32), (1, 64),
                      (2, 16), (2, 32), (2, 64)]]]),
    Case("npdtype.arg.refused", "[outcome(lambda n=n: k.echo(np.dtype(n))) for n in REFUSED]",
         ["pylist", [raises("ValueError", f"('Unsupported numpy or ml_dtypes dtype: ', "
                                          f"dtype('{n}'))") for n in _REFUSED]]),
    Case("npdtype.arg.refused_args",
         "try:\n    k.echo(np.dtype('bool'))\nexcept ValueError as e:\n"
         "    result = (e.args[0], e.args[1] is np.dtype('bool'))",
         ["pytuple", [["str", "Unsupported numpy or ml_dtypes dtype: "], ["bool", True]]]),
    Case("npdtype.arg.in_a_list", "outcome(lambda: k.echo([np.dtype('int8'), np.dtype('bool')]))",
         raises("ValueError", "('Unsupported numpy or ml_dtypes dtype: ', dtype('bool'))")),
    Case("npdtype.convert.table", "[api.convert(np.dtype(n)) for n in TABLE]", dtypes(*_TABLE)),
    Case("npdtype.convert.refused",
         "[outcome(lambda n=n: api.convert(np.dtype(n))) for n in REFUSED]",
         ["pylist", [raises("KeyError", f"dtype('{n}')") for n in _REFUSED]]),
    # -- convert-str-bytes-class: String/Bytes with no object behind them
    Case("convert.str_bytes",
         "[(kind_of(v), v, v._tvm_ffi_cached_object is None) for v in (api.convert('abc'), "
         "api.convert('a string longer than seven bytes'), api.convert(b'ab'), "
         "api.convert(b'0123456789'), api.convert(bytearray(b'xy')), api.convert(''))]",
         ["pylist", [["pytuple", [["str", c], v, ["bool", True]]] for c, v in [
             ("String", ["str", "abc"]), ("String", ["str", "a string longer than seven bytes"]),
             ("Bytes", ["bytes", "6162"]), ("Bytes", ["bytes", b"0123456789".hex()]),
             ("Bytes", ["bytes", "7879"]), ("String", ["str", ""])]]]),
    Case("convert.str_each_pass_new",
         "s = api.convert('a string longer than seven bytes')\n"
         "result = (api.convert(s) is s, kind_of(k.echo(s)), k.echo(s) == s)",
         ["pytuple", [["bool", True], ["str", "String"], ["bool", True]]]),
    # -- convert-numpy-scalar: numbers stay as they are
    Case("convert.numbers",
         "[kind_of(api.convert(v)) for v in (np.int32(3), np.uint64(7), np.float32(0.5), "
         "np.float64(2.5), np.int8(-1), np.complex64(1j), 1 + 2j, fractions.Fraction(1, 3), "
         "True, 5, 2.5)]",
         strs("int32", "uint64", "float32", "float64", "int8", "complex64", "complex",
              "Fraction", "bool", "int", "float")),
    Case("convert.numbers_identity",
         "vs = (np.int32(3), np.float32(0.5), fractions.Fraction(1, 3), 1 + 2j, 2**70)\n"
         "result = [api.convert(v) is v for v in vs]",
         bools(True, True, True, True, True)),
    # -- convert-opaque: no rule, an OpaquePyObject (Device included)
    Case("convert.opaque",
         "[kind_of(api.convert(v)) for v in (object(), np.bool_(True), api.device('cpu'), "
         "api.device('cuda', 1), ValueProto(), {1, 2}, range(3))]",
         strs(*["OpaquePyObject"] * 7)),
    Case("convert.opaque_holds_the_value",
         "o = object()\nresult = (api.convert(o).pyobject() is o, k.echo(api.convert(o)) is o)",
         ["pytuple", [["bool", True], ["bool", True]]]),
    # -- convert-identity: objects are themselves; Function/Tensor/Error are not Objects upstream
    Case("convert.objects_identity",
         "vs = (api.Array([1]), api.List([1]), api.Map({'a': 1}), api.Dict({'a': 1}), "
         "api.Shape((1, 2)), api.convert('x'), api.convert(b'x'), api.dtype('int8'), "
         "ctypes.c_void_p(8))\nresult = [api.convert(v) is v for v in vs]",
         bools(*[True] * 9)),
    Case("convert.function_wrapped_anew",
         "f = api.convert(lambda x: x + 1)\ng = api.convert(f)\n"
         "result = (g is f, kind_of(g), g(1), kind_of(api.convert(len)))",
         ["pytuple", [["bool", False], ["str", "Function"], ["int", 2], ["str", "Function"]]]),
    Case("convert.tensor_reimported",
         "t = api.from_dlpack(np.arange(3))\nu = api.convert(t)\n"
         "result = (u is t, kind_of(u), np.from_dlpack(u).tolist(), "
         "kind_of(api.convert(np.arange(2.0))))",
         ["pytuple", [["bool", False], ["str", "Tensor"], ["pylist", [["int", 0], ["int", 1],
                                                                     ["int", 2]]],
                      ["str", "Tensor"]]]),
    Case("convert.error",
         "e = api.convert(ValueError('bad value'))\n"
         "result = (kind_of(e), e.kind, e.message, kind_of(api.convert(e)))",
         ["pytuple", [["str", "Error"], ["str", "ValueError"], ["str", "bad value"],
                      ["str", "OpaquePyObject"]]]),
    Case("convert.containers",
         "a = api.convert([1, 'x', (2,), {'k': 3}])\nm = api.convert({'a': [1]})\n"
         "result = (kind_of(a), kind_of(a[2]), kind_of(a[3]), kind_of(m), kind_of(m['a']), "
         "kind_of(api.convert(())))",
         ["pytuple", [["str", s] for s in ("Array", "Array", "Map", "Map", "Array", "Array")]]),
    Case("convert.protocols",
         "vs = (IntProto(), FloatProto(), OpaquePtrProto(), DeviceProto())\n"
         "result = [api.convert(v) is v for v in vs]",
         bools(True, True, True, True)),
    Case("convert.object_protocols",
         "a = api.Array([1])\n"
         "result = (api.convert(Holder(a)) is a, api.convert(Convertible(a)) is a, "
         "api.convert(None) is None)",
         ["pytuple", [["bool", True], ["bool", True], ["bool", True]]]),
    Case("convert.dlpack_data_type",
         "[outcome(lambda t=t: api.convert(DLPackDType(t))) for t in "
         "((2, 32, 4), (2, 32, -4), (2, 32, 70000), (256, 8, 1), (-1, 8, 1))]",
         ["pylist", [ok(["dtype", "float32x4"]), ok(["dtype", "float32xvscalex4"]),
                     raises("OverflowError", "value too large to convert to int16_t"),
                     raises("OverflowError", "value too large to convert to uint8_t"),
                     raises("OverflowError", "can't convert negative value to uint8_t")]]),
    # -- dtype-scalable-lanes: DLDataType.lanes reads as int16
    Case("dtype.lanes",
         "[int(api.dtype(t).lanes) for t in ('float32xvscalex4', 'intx32768', 'int8x65535', "
         "'float32x4', 'int32xvscalex1', 'bfloat16x32767')]",
         ints(-4, -32768, -1, 4, -1, 32767)),
    Case("dtype.text",
         "[str(api.dtype(t)) for t in ('float32xvscalex4', 'intx32768', 'int8x65535')]",
         strs("float32xvscalex4", "intx32768", "int8x65535")),  # the text is kept as given
    Case("dtype.itemsize",
         "[outcome(lambda t=t: api.dtype(t).itemsize) for t in "
         "('float32xvscalex4', 'intx32768', 'float32x4')]",
         ["pylist", [raises("ValueError", "Cannot determine itemsize for scalable vector types")] * 2
          + [ok(["int", 16])]]),
    Case("dtype.results",
         "ds = [k.dtype_make(2, 32, 65532), k.dtype_make(0, 8, 32768), "
         "k.echo(api.dtype('float32xvscalex4'))]\n"
         "result = [(str(d), int(d.lanes)) for d in ds]",
         ["pylist", [["pytuple", [["str", s], ["int", n]]] for s, n in
                     [("float32xvscalex4", -4), ("int8xvscalex32768", -32768),
                      ("float32xvscalex4", -4)]]]),
    Case("dtype.argument", "[str(k.dtype_text(api.dtype(t))) for t in ('float32xvscalex4', 'intx32768')]",
         strs("float32xvscalex4", "int32xvscalex32768")),
    Case("dtype.with_lanes",
         "f = api.dtype('float32')\nresult = [outcome(lambda n=n: f.with_lanes(n)) for n in "
         "(-4, 4, 4.0, True, 32767, 32768, 65532, -40000, 2**70, '4')]",
         ["pylist", [ok(["dtype", "float32xvscalex4"]), ok(["dtype", "float32x4"]),
                     ok(["dtype", "float32x4"]), ok(["dtype", "float32"]),
                     ok(["dtype", "float32x32767"])]
          + [raises("OverflowError", "value too large to convert to int16_t")] * 3
          + [raises("OverflowError", "Python int too large to convert to C long"),
             raises("TypeError", "an integer is required")]]),
    Case("dtype.with_lanes_lanes", "int(api.dtype('float32').with_lanes(-4).lanes)", ["int", -4]),
    Case("dtype.from_dlpack_data_type",
         "[outcome(lambda t=t: api.dtype.from_dlpack_data_type(t)) for t in "
         "((2, 32, -4), (2, 32, 1), (2.0, 32, 1), (256, 32, 1), (-1, 32, 1), (2, 256, 1), "
         "(2**70, 32, 1), (2, 32, 65532))]",
         ["pylist", [ok(["dtype", "float32xvscalex4"]), ok(["dtype", "float32"]),
                     ok(["dtype", "float32"]),
                     raises("OverflowError", "value too large to convert to uint8_t"),
                     raises("OverflowError", "can't convert negative value to uint8_t"),
                     raises("OverflowError", "value too large to convert to uint8_t"),
                     raises("OverflowError", "Python int too large to convert to C unsigned long"),
                     raises("OverflowError", "value too large to convert to int16_t")]]),
    # -- device-str-unknown-type: KeyError(<type>) from str, repr and type
    Case("device.unknown_type",
         "ds = [k.device_make(0, 0), k.device_make(6, 1), k.device_make(19, 2), api.Device(5, 0)]\n"
         "result = [(outcome(lambda: str(d)), outcome(lambda: repr(d)), outcome(lambda: d.type),"
         " d.index, d.dlpack_device_type()) for d in ds]",
         ["pylist", [["pytuple", [raises("KeyError", str(t))] * 3 + [["int", i], ["int", t]]]
                     for t, i in [(0, 0), (6, 1), (19, 2), (5, 0)]]]),
    Case("device.known_types",
         "[str(k.device_make(t, 0)) for t in (1, 2, 3, 4, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, "
         "17, 18)]",
         strs("cpu:0", "cuda:0", "cuda_host:0", "opencl:0", "vulkan:0", "metal:0", "vpi:0",
              "rocm:0", "rocm_host:0", "ext_dev:0", "cuda_managed:0", "oneapi:0", "webgpu:0",
              "hexagon:0", "maia:0", "trn:0")),
    Case("device.type_is_int32",
         "[k.device_make(t, 0).dlpack_device_type() for t in (2**31, 2**32 - 1, 1)]",
         ints(-2**31, -1, 1)),
    # -- error-message-invalid-utf8: decoding the error raises UnicodeDecodeError
    Case("error.invalid_utf8_message", "outcome(lambda: k.dtype_text(b'\\x80'))",
         raises("UnicodeDecodeError",
                "'utf-8' codec can't decode byte 0x80 in position 15: invalid start byte")),
    Case("error.invalid_utf8_kernel_message",
         "outcome(lambda: k.raise_bytes(b'ValueError', b'bad \\xff'))",
         raises("UnicodeDecodeError",
                "'utf-8' codec can't decode byte 0xff in position 4: invalid start byte")),
    Case("error.invalid_utf8_kind",
         "outcome(lambda: k.raise_bytes(b'Value\\xc3', b'fine'))",
         raises("UnicodeDecodeError",
                "'utf-8' codec can't decode byte 0xc3 in position 5: unexpected end of data")),
    Case("error.valid_utf8", "outcome(lambda: k.raise_bytes(b'ValueError', 'caf\\u00e9'.encode()))",
         raises("ValueError", "café")),
    # -- list-extend-capacity: one ListReplaceSlice, capacity exactly what is needed
    Case("list.extend_capacity",
         "a = k.list_empty()\nc0 = k.list_capacity(a)\na.extend([1, 2, 3])\n"
         "c1 = k.list_capacity(a)\na.extend(range(4))\nc2 = k.list_capacity(a)\n"
         "a.extend([])\nc3 = k.list_capacity(a)\nresult = ([c0, c1, c2, c3], list(a))",
         ["pytuple", [ints(0, 3, 7, 7), ints(1, 2, 3, 0, 1, 2, 3)]]),
    Case("list.extend_python_made",
         "a = api.List([1])\na.extend((x * 10 for x in range(3)))\nc1 = k.list_capacity(a)\n"
         "a += ['x']\nc2 = k.list_capacity(a)\na.extend(a)\nc3 = k.list_capacity(a)\n"
         "result = ([c1, c2, c3], list(a))",
         ["pytuple", [ints(4, 8, 16), ["pylist", [["int", 1], ["int", 0], ["int", 10], ["int", 20],
                                                  ["str", "x"], ["int", 1], ["int", 0],
                                                  ["int", 10], ["int", 20], ["str", "x"]]]]]),
]

CASE_IDS = [case.id for case in CASES]


@pytest.fixture(scope="module")
def results(kernels):
    """run -> case id -> normalized result, for upstream and each front end under test."""
    libs = {"k": kernels.build("upstream_divergences", KERNEL)}
    runs = ["upstream"] + [f for f in FRONTENDS_UNDER_TEST if f != "upstream"]
    cases = [(case.id, case.code) for case in CASES]
    with ThreadPoolExecutor(max_workers=2) as pool:
        outputs = pool.map(lambda frontend: run_frontend(frontend, cases, setup=SETUP, libs=libs),
                           runs)
        return dict(zip(runs, outputs))


def test_case_ids_are_unique():
    assert len(set(CASE_IDS)) == len(CASE_IDS)


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_upstream_gives_the_pinned_result(results, case):
    assert results["upstream"][case.id] == case.expect, case.code


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("frontend", FRONTENDS_UNDER_TEST)
def test_frontend_matches_upstream(results, frontend, case):
    assert results[frontend][case.id] == results["upstream"][case.id], case.code
