"""tvm_ffi_fast's Python API: the same API as tvm_ffi_ref, indistinguishable to kernels.

* The package exports exactly the names tvm_ffi_ref exports, and its shared
  API modules are tvm_ffi_ref's files bound to fast's own core.
* A kernel cannot tell the front ends apart: a C kernel describes every byte
  of each TVMFFIAny it receives (and of the objects they point at, addresses
  aside) for a broad list of Python values; the descriptions under tvm_ffi_ref
  and tvm_ffi_fast must be identical.
* What the C core does in place of a Python hook (String/Bytes/Shape results)
  gives what the hook gives, and the call-rule checks raise the reference's
  ABIViolation with the reference's messages.
* The core only uses the C ABI, so the fast front end also passes the corpus
  over the reference runtime ("fast-over-ref").
"""

from __future__ import annotations

import json
import os

import pytest

from corpus_cases import ALL_CASES, SETUP
from frontend_harness import build_corpus_kernels, run_frontend
from subprocess_utils import run_python

TESTS = os.path.dirname(os.path.abspath(__file__))

# ------------------------------------------------------------------ exports


def test_fast_exports_exactly_the_names_ref_exports():
    out = run_python("""
    import json, types
    import tvm_ffi_ref, tvm_ffi_fast

    def public(module):
        return sorted(name for name, value in vars(module).items()
                      if not name.startswith("_") and not isinstance(value, types.ModuleType))

    print(json.dumps({name: [sorted(m.__all__), public(m)]
                      for name, m in (("ref", tvm_ffi_ref), ("fast", tvm_ffi_fast))}))
    """)
    exported = json.loads(out)
    assert exported["fast"][0] == exported["ref"][0]  # __all__
    assert exported["fast"][1] == exported["ref"][1]  # every public non-module attribute


def test_shared_modules_are_the_shared_folders_files_over_the_fast_core():
    out = run_python("""
    import json, os, sys
    import tvm_ffi_fast as api
    from tvm_ffi_fast import container, module, string, tensor
    print(json.dumps({
        "ref_imported": sorted(m for m in sys.modules if m.startswith("tvm_ffi_ref")),
        "fast_runtime_imported": "tvm_ffi_fast.runtime" in sys.modules,
        "container_file": os.path.relpath(container.__file__, os.path.dirname(os.path.dirname(api.__file__))),
        "core_files": [os.path.basename(sys.modules["tvm_ffi_fast." + m].__file__)
                       for m in ("object", "convert", "function", "shortcuts")],
        "core_dir_is_fast": all(os.path.dirname(sys.modules["tvm_ffi_fast." + m].__file__)
                                == os.path.join(os.path.dirname(api.__file__), "compiled_core")
                                for m in ("object", "convert", "function", "shortcuts")),
        "array_is_fast_object": issubclass(container.Array, api.Object),
        "object_is_extension_type": api.Object.__module__ + "." + api.Object.__name__,
        "function_is_extension_type": api.Function.__module__ + "." + api.Function.__name__,
        "runtime": api.runtime_name(),
        "no_runtime_module": __import__("importlib").util.find_spec("tvm_ffi_fast.runtime") is None,
    }))
    """)
    facts = json.loads(out)
    assert facts == {
        "ref_imported": [],
        "fast_runtime_imported": False,
        "container_file": os.path.join("tvm_ffi_api", "container.py"),
        "core_files": ["object.py", "convert.py", "function.py", "shortcuts.py"],
        "core_dir_is_fast": True,
        "array_is_fast_object": True,
        "object_is_extension_type": "tvm_ffi_fast.object.Object",
        "function_is_extension_type": "tvm_ffi_fast.function.Function",
        "runtime": "tvm_ffi_fast",
        "no_runtime_module": True,
    }


# ------------------------------------------------------------------ the bytes a kernel sees

#: A C kernel (our headers, C99) describing each argument: its 16 bytes (the
#: pointer of an object masked) and, for objects, the header and body fields a
#: kernel can read, recursively for containers; addresses never appear.
DESCRIBE_KERNEL = r"""
#include <tvm/ffi/c_api.h>
#include <stdio.h>
#include <string.h>

static char g_text[1 << 16];
static size_t g_used;

static void put(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
#include <stdarg.h>
static void put(const char* fmt, ...) {
  va_list va;
  va_start(va, fmt);
  if (g_used < sizeof(g_text)) {
    int n = vsnprintf(g_text + g_used, sizeof(g_text) - g_used, fmt, va);
    if (n > 0) g_used += (size_t)n;
  }
  va_end(va);
}

static void put_hex(const void* data, size_t n) {
  size_t i;
  for (i = 0; i < n; ++i) put("%02x", ((const unsigned char*)data)[i]);
}

static void describe(const TVMFFIAny* v, int depth);

static void describe_object(const TVMFFIAny* v, int depth) {
  const TVMFFIObject* obj = v->v_obj;
  const char* body = (const char*)obj + sizeof(TVMFFIObject);
  put("obj(header_index=%d strong=%u weak=%u pad=%u", (int)obj->type_index,
      (unsigned)(obj->combined_ref_count & 0xffffffffu),
      (unsigned)(obj->combined_ref_count >> 32), (unsigned)obj->__padding);
  switch (v->type_index) {
    case kTVMFFIStr:
    case kTVMFFIBytes: {
      const TVMFFIByteArray* cell = (const TVMFFIByteArray*)body;
      put(" size=%zu data=", cell->size);
      put_hex(cell->data, cell->size);
      put(" nul=%d", cell->data[cell->size] == 0);
      break;
    }
    case kTVMFFIBigInt: {
      size_t n = *(const size_t*)body;
      put(" words=%zu:", n);
      put_hex(body + sizeof(size_t), n * 8);
      break;
    }
    case kTVMFFIShape: {
      const TVMFFIShapeCell* cell = (const TVMFFIShapeCell*)body;
      size_t i;
      put(" dims=");
      for (i = 0; i < cell->size; ++i) put("%lld,", (long long)cell->data[i]);
      break;
    }
    case kTVMFFIArray:
    case kTVMFFIList: {
      const TVMFFISeqCell* cell = (const TVMFFISeqCell*)body;
      int64_t i;
      put(" size=%lld capacity=%lld inline=%d deleter=%d [", (long long)cell->size,
          (long long)cell->capacity, cell->data == body + sizeof(TVMFFISeqCell),
          cell->data_deleter != NULL);
      for (i = 0; i < cell->size && depth < 4; ++i) {
        describe((const TVMFFIAny*)cell->data + i, depth + 1);
        put("; ");
      }
      put("]");
      break;
    }
    case kTVMFFIMap:
    case kTVMFFIDict: {
      /* MapBaseObj: data, size, slots (bit 63: the small layout, whose data is the KV pairs) */
      const TVMFFIAny* kv = *(const TVMFFIAny* const*)body;
      uint64_t size = *(const uint64_t*)(body + 8), slots = *(const uint64_t*)(body + 16), i;
      put(" size=%llu small=%d", (unsigned long long)size, (int)(slots >> 63));
      if (slots >> 63) {
        put(" slots=%llu {", (unsigned long long)(slots & ~(1ull << 63)));
        for (i = 0; i < size && depth < 4; ++i) {
          describe(kv + 2 * i, depth + 1);
          put(": ");
          describe(kv + 2 * i + 1, depth + 1);
          put("; ");
        }
        put("}");
      }
      break;
    }
    case kTVMFFITensor: {
      const DLTensor* t = (const DLTensor*)body;
      int i;
      put(" data=%d device=%d:%d ndim=%d dtype=%d,%d,%d offset=%llu shape=", t->data != NULL,
          (int)t->device.device_type, (int)t->device.device_id, t->ndim, (int)t->dtype.code,
          (int)t->dtype.bits, (int)t->dtype.lanes, (unsigned long long)t->byte_offset);
      for (i = 0; i < t->ndim; ++i) put("%lld,", (long long)t->shape[i]);
      put(" strides=");
      if (t->strides == NULL) put("null");
      for (i = 0; t->strides != NULL && i < t->ndim; ++i) put("%lld,", (long long)t->strides[i]);
      break;
    }
    case kTVMFFIError: {
      const TVMFFIErrorCell* cell = (const TVMFFIErrorCell*)body;
      put(" kind=%.*s message=%.*s", (int)cell->kind.size, cell->kind.data,
          (int)cell->message.size, cell->message.data);
      break;
    }
    default: {
      const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(v->type_index);
      if (info != NULL) put(" key=%.*s", (int)info->type_key.size, info->type_key.data);
    }
  }
  put(")");
}

static void describe(const TVMFFIAny* v, int depth) {
  put("ti=%d pad=%u ", (int)v->type_index, (unsigned)v->zero_padding);
  if (v->type_index >= kTVMFFIStaticObjectBegin) {
    describe_object(v, depth);
  } else if (v->type_index == kTVMFFIObjectRValueRef) {
    put("rvalue_slot_nonnull=%d", *(void* const*)v->v_ptr != NULL);
  } else {
    put("payload=");
    put_hex(&v->v_int64, 8);
  }
}

TVM_FFI_DLL_EXPORT int __tvm_ffi_describe(void* self, const TVMFFIAny* args, int32_t n,
                                          TVMFFIAny* result) {
  TVMFFIByteArray text;
  int32_t i;
  (void)self;
  g_used = 0;
  for (i = 0; i < n; ++i) {
    describe(&args[i], 0);
    put("\n");
  }
  text.data = g_text;
  text.size = g_used;
  return TVMFFIStringFromByteArray(&text, result);
}

/* describe_result(f): calls f() and describes the owned value it returns. */
TVM_FFI_DLL_EXPORT int __tvm_ffi_describe_result(void* self, const TVMFFIAny* args, int32_t n,
                                                 TVMFFIAny* result) {
  TVMFFIAny value;
  TVMFFIByteArray text;
  int status;
  (void)self;
  if (n != 1 || args[0].type_index != kTVMFFIFunction) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "describe_result(f)");
    return -1;
  }
  value.type_index = kTVMFFINone;
  value.zero_padding = 0;
  value.v_int64 = 0;
  status = TVMFFIFunctionCall(args[0].v_obj, NULL, 0, &value);
  if (status != 0) return status;
  g_used = 0;
  describe(&value, 0);
  if (value.type_index >= kTVMFFIStaticObjectBegin) TVMFFIObjectDecRef(value.v_obj);
  text.data = g_text;
  text.size = g_used;
  return TVMFFIStringFromByteArray(&text, result);
}
"""

#: Python expressions, each passed alone; run under every front end (``api`` bound).
VALUES = [
    "None", "True", "False", "0", "1", "-1", "2**63 - 1", "-2**63", "2**63", "-2**63 - 1",
    "2**64", "-(2**64)", "2**127", "-(2**127)", "3**100", "-(3**100)",
    "1.5", "-0.0", "float('nan')", "float('inf')", "5e-324",
    "''", "'a'", "'abcdefg'", "'abcdefgh'", "'\\u00e9'", "'\\u00e4\\u00f6\\u00fc\\u00df'",
    "'\\U0001f389'", "'x' * 1000", "'a\\x00b'", "'\\ud800'",
    "b''", "b'abc'", "b'1234567'", "b'12345678'", "b'\\x00\\xff'", "bytearray(b'xy')",
    "bytearray(b'0123456789')", "Sub(b'bytes subclass!')",
    "np.int8(-3)", "np.int64(2**62)", "np.uint64(2**63)", "np.float64(2.5)", "np.float32(1.5)",
    "np.float16(-0.5)", "np.True_", "IntKind.B", "fractions.Fraction(1, 3)", "decimal.Decimal(1)",
    "api.dtype('float32')", "api.dtype('bfloat16')", "api.dtype('int32x4')", "np.dtype('int8')",
    "api.device('cpu')", "api.device('cuda:1')", "api.device('metal', 3)", "DeviceSub('cuda', 2)",
    "[]", "[1, 'a', 2.5, None, [True]]", "(1, 2.5)", "('long string element',)",
    "{}", "{'k': 1}", "{'a long key here!': [1, 2]}", "collections.OrderedDict(x=1)",
    "{i: str(i) * 9 for i in range(6)}", "{'f': print, 'n': {'deep': (1,)}}", "[print, [b'x']]",
    "api.Shape((2, 3))", "api.Shape(())", "api.convert([1, 2])", "api.Array([3])",
    "api.List([1, 'x'])", "api.Map({'a': 1})", "api.Dict({'b': 2})",
    "api.convert('a long string as String')", "api.convert(b'long bytes as Bytes')",
    "values.str_of_len(30)", "values.bytes_of_len(20)", "values.str_of_len(3)",
    "np.arange(6, dtype='int32').reshape(2, 3)", "np.zeros(())", "np.arange(10.0)[::2]",
    "api.from_dlpack(np.ones(4, dtype='float32'))",
    "lambda: 0", "print", "api.convert(lambda x: x)",
    "ctypes.c_void_p(1234)", "ctypes.c_void_p()", "OpaquePtr()",
    "Int()", "Float()", "Value()", "DataType()", "DeviceProto()", "ObjectProto()",
    "ValueError('boom')", "CustomError('custom')", "KeyboardInterrupt('kb')",
    "object()", "Plain()", "Convertible()", "api.convert([1])._move()",
    "StrSub('a str subclass value')", "TupleSub((1, 2))", "DictSub(z=1)",
    "2**30 - 1", "-(2**30 - 1)", "2**30", "-(2**30)", "'\\x7f'", "'\\x80'",
]

#: Argument lists passed whole: the plain arguments a call writes in place (scalars, short
#: ASCII str, Objects) before, between and after ones that need encoding, holding or a scope.
CALLS = [
    "(1, 2)", "(1.5, None, True, 'abc', api.Shape((1,)))",
    "(1, 'abcdefgh', 2.5)", "(7, api.List([1]), 'x')", "(api.Dict({'a': 1}), 3)",
    "(2**40, 1, -1)", "(np.ones(2), 4, 'yz')", "(1, [2, 3], 'q', (4,), None)",
    "tuple(range(9))", "tuple(range(8))", "(api.convert(b'long bytes as Bytes'), 'abc\\u00e9')",
    # NumPy arrays (met by VALUES already: the remembered producer type, imported in place)
    # among plain arguments, before ones that need the general call, and at the stack's limit
    "(1, np.ones(3, dtype='float32'), 2.5, np.arange(4))",
    "(np.ones(2), 'a long str after a tensor', np.zeros(1))", "(np.ones(2), [1, 2], None)",
    "tuple([np.ones(1)] * 8)", "tuple([np.ones(1)] * 9)",
    "(np.arange(10.0)[::2], api.from_dlpack(np.ones(2)), True)",
]

DESCRIBE_SCRIPT = r'''
import collections, ctypes, decimal, enum, fractions, json, sys
import numpy as np
{imports}
kernel = api.load_module({describe!r})
describe, describe_result = kernel.describe, kernel.describe_result
values = api.load_module({values!r})

class Sub(bytes): pass
class StrSub(str): pass
class TupleSub(tuple): pass
class DictSub(dict): pass
class IntKind(enum.IntEnum):
    A = 1
    B = 2
class OpaquePtr:
    def __tvm_ffi_opaque_ptr__(self): return 4096
class Int:
    def __tvm_ffi_int__(self): return True
class Float:
    def __tvm_ffi_float__(self): return 3
class Value:
    def __tvm_ffi_value__(self): return [1, "via __tvm_ffi_value__"]
class DataType:
    def __dlpack_data_type__(self): return (2, 16, 1)
class DeviceProto:
    def __dlpack_device__(self): return (2, 5)
class DeviceSub(api.Device):
    def dlpack_device_type(self): return 4
    @property
    def index(self): return 9
class ObjectProto:
    def __tvm_ffi_object__(self): return api.convert([7])
class CustomError(Exception): pass
class Plain: pass
class Convertible(api.ObjectConvertible):
    def asobject(self): return api.convert({{"from": "asobject"}})

out = []
for source in {sources!r}:
    try:
        described = str(describe(eval(source)))
    except BaseException as error:
        described = "raises " + type(error).__name__
    try:  # the same value returned by a Python callback: an owned result
        returned = str(describe_result(lambda: eval(source)))
    except BaseException as error:
        returned = "raises " + type(error).__name__
    out.append(described + "returned: " + returned)
for source in {calls!r}:
    try:
        out.append(str(describe(*eval(source))))
    except BaseException as error:
        out.append("raises " + type(error).__name__)
print(json.dumps(out))
'''

RUNTIME_IMPORTS = {
    "ref": "import tvm_ffi_ref as api",
    "fast": "import tvm_ffi_fast as api",
    "ref-over-fast": "import tvm_ffi_fast\nimport tvm_ffi_ref as api",
    "fast-over-ref": "import tvm_ffi_ref\nimport tvm_ffi_fast as api",
}


@pytest.fixture(scope="module")
def descriptions(kernels):
    describe = kernels.build("fast_describe_args", DESCRIBE_KERNEL, language="c")
    values = build_corpus_kernels(kernels, ["values"])["values"]

    def run(frontend):
        script = DESCRIBE_SCRIPT.format(imports=RUNTIME_IMPORTS[frontend], describe=describe,
                                        values=values, sources=VALUES, calls=CALLS)
        return dict(zip(VALUES + CALLS, json.loads(run_python(script))))

    return {frontend: run(frontend) for frontend in RUNTIME_IMPORTS}


@pytest.mark.parametrize("ours,theirs", [("fast", "ref-over-fast"), ("fast-over-ref", "ref")])
def test_a_kernel_cannot_tell_the_front_ends_apart(descriptions, ours, theirs):
    """Same runtime, two front ends: every byte a kernel can read is the same."""
    differing = {source: (descriptions[ours][source], descriptions[theirs][source])
                 for source in VALUES + CALLS
                 if descriptions[ours][source] != descriptions[theirs][source]}
    assert not differing


def test_the_described_values_cover_every_encoding(descriptions):
    kinds = {text.split(" ", 1)[0] for text in descriptions["fast"].values()}
    for index in (0, 1, 2, 3, 4, 5, 6, 10, 11, 12, 64 + 1, 64 + 2, 64 + 3, 64 + 4, 64 + 5, 64 + 6,
                  64 + 7, 64 + 8, 64 + 10, 64 + 11, 64 + 14):
        assert f"ti={index}" in kinds, index
    assert "raises" in kinds  # the lone surrogate


def test_the_runtimes_agree_on_what_the_front_ends_made(descriptions):
    """Across runtimes too: only the runtimes' own allocation choices may differ."""
    differing = {source: (descriptions["fast"][source], descriptions["ref"][source])
                 for source in VALUES + CALLS
                 if descriptions["fast"][source] != descriptions["ref"][source]}
    assert not differing


# ------------------------------------------------------------------ core vs Python hooks


def test_string_bytes_shape_results_are_what_their_from_handle_makes(kernels):
    values = build_corpus_kernels(kernels, ["values"])["values"]
    out = run_python(f"""
    import json
    import tvm_ffi_fast as api
    from tvm_ffi_fast import _frontend
    values = api.load_module({values!r})

    def facts(value):
        cached = value._tvm_ffi_cached_object
        return [type(value).__name__, repr(tuple(value) if isinstance(value, tuple) else value),
                type(cached).__name__, cached.type_index, cached.__chandle__() != 0]

    report = []
    for made in (lambda: values.str_of_len(30), lambda: values.str_non_ascii(),
                 lambda: values.bytes_of_len(20), lambda: api.Shape((4, 5, 6)),
                 lambda: values.echo("non-ascii \\u00e9\\u4e16, long")):
        by_core = made()
        handle = by_core._tvm_ffi_cached_object._handle
        _frontend.incref(handle)
        by_hook = type(by_core)._tvm_ffi_from_handle(handle)
        report.append([facts(by_core) == facts(by_hook), facts(by_core)])
    print(json.dumps(report))
    """)
    report = json.loads(out)
    assert [same for same, _ in report] == [True] * len(report), report
    assert [facts[0] for _, facts in report] == ["String", "String", "Bytes", "Shape", "String"]


def test_dtype_and_device_results_are_what_the_python_makes(kernels):
    values = build_corpus_kernels(kernels, ["values"])["values"]
    out = run_python(f"""
    import json
    import tvm_ffi_fast as api
    from tvm_ffi_fast.device import Device
    from tvm_ffi_fast.dtype import dtype_from_tuple
    values = api.load_module({values!r})

    def dtype_facts(d):
        return [type(d).__name__, type(str(d)).__name__, str(d), repr(d), d._tvm_ffi_dtype_tuple,
                sorted(vars(d))]

    def named(text_of, d):
        try:
            return text_of(d)
        except KeyError as error:  # a device type with no name, as upstream
            return ["KeyError", error.args[0]]

    def device_facts(d):
        return [type(d).__name__, d._type, d._index, named(str, d), named(repr, d)]

    report = []
    for triple in [(2, 32, 1), (0, 32, 4), (1, 1, 1), (4, 16, 1), (6, 8, 1), (2, 16, 1), (10, 8, 2),
                   (17, 4, 2), (3, 64, 1), (2, 32, 1), (2, 32, 65532), (0, 8, 32768)]:
        report.append([dtype_facts(values.dtype_make(*triple)) == dtype_facts(dtype_from_tuple(*triple)),
                       dtype_facts(values.dtype_make(*triple))[2]])
    for pair in [(1, 0), (2, 1), (8, 0), (2, 7), (99, 3)]:
        report.append([device_facts(values.device_make(*pair)) == device_facts(Device._from_pair(*pair)),
                       device_facts(values.device_make(*pair))[3]])
    print(json.dumps(report))
    """)
    report = json.loads(out)
    assert [same for same, _ in report] == [True] * len(report), report
    assert [text for _, text in report][:3] == ["float32", "int32x4", "uint1"]


# ------------------------------------------------------------------ call rules

BROKEN = os.path.join(TESTS, "kernels", "broken_rules.c")


def test_broken_rules_raise_the_references_violations(kernels):
    with open(BROKEN) as f:
        path = kernels.build("broken_rules", f.read(), language="c")
    script = """
    import ctypes, json
    import {module} as api
    lib = ctypes.CDLL({path!r})
    out = {{}}
    for name in ["ok_int", "fail_without_error", "unknown_status", "raw_str_result",
                 "long_small_str", "unknown_pod_type", "unregistered_object", "mislabeled_object"]:
        f = api.Function.__from_extern_c__(
            ctypes.cast(getattr(lib, "__tvm_ffi_" + name), ctypes.c_void_p).value,
            keep_alive_object=lib)
        try:
            out[name] = repr(f())
        except BaseException as e:
            out[name] = [type(e).__module__.rsplit(".", 1)[-1], type(e).__name__,
                         getattr(e, "rule", None), str(e)]
    print(json.dumps(out))
    """
    ref = json.loads(run_python(script.format(module="tvm_ffi_ref", path=path)))
    fast = json.loads(run_python(script.format(module="tvm_ffi_fast", path=path)))
    assert fast == ref
    assert fast["ok_int"] == "7"
    assert {name: v[2] for name, v in fast.items() if name != "ok_int"} == {
        "fail_without_error": "error-raised", "unknown_status": "status",
        "raw_str_result": "result-owned", "long_small_str": "small-str-length",
        "unknown_pod_type": "result-type", "unregistered_object": "result-type",
        "mislabeled_object": "object-header"}


# ------------------------------------------------------------------ over the reference runtime


def test_the_fast_front_end_passes_the_corpus_over_the_reference_runtime(kernels):
    libs = build_corpus_kernels(kernels)
    got = run_frontend("fast-over-ref", [(case.id, case.code) for case in ALL_CASES],
                       setup=SETUP, libs=libs, introspect="introspect")
    differing = [case.id for case in ALL_CASES if got[case.id] != case.expect]
    assert not differing, {case_id: got[case_id] for case_id in differing[:10]}
