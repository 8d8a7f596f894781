"""C++ kernels compiled against upstream's headers, run under each runtime.

The kernels touch containers inline (read, iterate and mutate Map/Dict/List made
by the runtime, build their own for the runtime to read), throw errors, allocate
tensors and register a reflected type with ``reflection::ObjectDef``: whatever
the runtime hands them must be laid out exactly as upstream's.
"""

from __future__ import annotations

import pytest

from runtime_client import OURS, RUNTIMES, run_all, tagged

KERNEL = r"""
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/dict.h>
#include <tvm/ffi/container/list.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/ffi/string.h>

#include <cstdlib>
#include <sstream>
#include <string>

namespace ffi = tvm::ffi;

int64_t sum_array(ffi::Array<int64_t> arr) {
  int64_t total = 0;
  for (int64_t v : arr) total += v;
  return total;
}

ffi::Array<ffi::Any> make_array(int64_t n) {
  ffi::Array<ffi::Any> out;
  for (int64_t i = 0; i < n; ++i) {
    if (i % 2) out.push_back(ffi::String("item number " + std::to_string(i)));
    else out.push_back(i);
  }
  return out;
}

ffi::Map<ffi::String, int64_t> make_map(int64_t n) {
  ffi::Map<ffi::String, int64_t> out;
  for (int64_t i = 0; i < n; ++i) out.Set(i % 3 ? "k" + std::to_string(i) : "long key " + std::to_string(i), i);
  return out;
}

ffi::Map<ffi::Any, ffi::Any> make_int_map(int64_t n) {
  ffi::Map<ffi::Any, ffi::Any> out;
  for (int64_t i = 0; i < n; ++i) out.Set(i * 13, ffi::String("v" + std::to_string(i)));
  return out;
}

int64_t map_lookup(ffi::Map<ffi::Any, ffi::Any> m, ffi::Any key) {
  auto it = m.find(key);
  if (it == m.end()) return -1;
  return (*it).second.cast<int64_t>();
}

ffi::String map_keys(ffi::Map<ffi::Any, ffi::Any> m) {
  std::ostringstream os;
  for (const auto& kv : m) {
    if (auto s = kv.first.try_cast<ffi::String>()) os << std::string(s->data(), s->size()) << ",";
    else os << kv.first.cast<int64_t>() << ",";
  }
  return os.str();
}

void dict_mutate(ffi::Dict<ffi::Any, ffi::Any> d, int64_t n) {
  for (int64_t i = 0; i < n; ++i) d.Set(i * 7, i);
  for (int64_t i = 0; i < n; i += 3) d.erase(i * 7);
  d.Set(ffi::String("from C++"), ffi::String("a value longer than seven"));
}

int64_t dict_get(ffi::Dict<ffi::Any, ffi::Any> d, ffi::Any key) {
  auto v = d.Get(key);
  return v.has_value() ? v->cast<int64_t>() : -1;
}

void list_mutate(ffi::List<ffi::Any> l, int64_t n) {
  for (int64_t i = 0; i < n; ++i) l.push_back(i);
  l.insert(l.begin(), ffi::String("head of the list"));
  l.erase(l.begin() + 1);
  l.Set(1, ffi::String("set by C++"));
}

ffi::Shape make_shape(int64_t a, int64_t b) { return ffi::Shape({a, b, a * b}); }
int64_t shape_product(ffi::Shape s) { return s.Product(); }

struct CPUAlloc {
  void AllocData(DLTensor* t) { t->data = std::malloc(ffi::GetDataSize(*t)); }
  void FreeData(DLTensor* t) { std::free(t->data); }
};

ffi::Tensor make_tensor(int64_t rows) {
  ffi::Tensor t = ffi::Tensor::FromNDAlloc(CPUAlloc(), ffi::Shape({rows, 3}), DLDataType{kDLFloat, 32, 1},
                                           DLDevice{kDLCPU, 0});
  float* p = static_cast<float*>(t.data_ptr());
  for (int64_t i = 0; i < rows * 3; ++i) p[i] = static_cast<float>(i);
  return t;
}

double tensor_sum(ffi::TensorView t) {
  double total = 0;
  const float* p = static_cast<const float*>(t.data_ptr());
  if (t.ndim() == 2) {
    for (int64_t i = 0; i < t.size(0); ++i)
      for (int64_t j = 0; j < t.size(1); ++j) total += p[i * t.stride(0) + j * t.stride(1)];
  } else {
    for (int64_t i = 0; i < t.numel(); ++i) total += p[i];
  }
  return total;
}

ffi::Tensor transposed(ffi::Tensor t) {
  return t.as_strided(ffi::Shape({t.size(1), t.size(0)}), ffi::Shape({t.stride(1), t.stride(0)}));
}

static int cpu_allocator(DLTensor* prototype, DLManagedTensorVersioned** out, void* ctx,
                         void (*set_error)(void*, const char*, const char*)) {
  if (prototype->ndim > 0 && prototype->shape[0] < 0) {
    set_error(ctx, "ValueError", "negative dimension");
    return -1;
  }
  auto* m = new DLManagedTensorVersioned();
  m->version = {DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
  m->dl_tensor = *prototype;
  int64_t* shape = new int64_t[prototype->ndim];
  for (int i = 0; i < prototype->ndim; ++i) shape[i] = prototype->shape[i];
  m->dl_tensor.shape = shape;
  m->dl_tensor.strides = nullptr;
  m->dl_tensor.data = std::calloc(1, ffi::GetDataSize(*prototype) + 1);
  m->deleter = [](DLManagedTensorVersioned* self) {
    std::free(self->dl_tensor.data);
    delete[] self->dl_tensor.shape;
    delete self;
  };
  *out = m;
  return 0;
}

void install_allocator() {
  TVM_FFI_CHECK_SAFE_CALL(TVMFFIEnvSetDLPackManagedTensorAllocator(cpu_allocator, 0, nullptr));
}

ffi::Tensor env_tensor(int64_t n) {
  return ffi::Tensor::FromEnvAlloc(TVMFFIEnvTensorAlloc, ffi::Shape({n, 2}), DLDataType{kDLFloat, 32, 1},
                                   DLDevice{kDLCPU, 0});
}

void throw_error(ffi::String kind, ffi::String message) {
  if (kind == "ValueError") TVM_FFI_THROW(ValueError) << message;
  if (kind == "IndexError") TVM_FFI_THROW(IndexError) << message;
  TVM_FFI_THROW(RuntimeError) << message;
}

int64_t call_back(ffi::Function f, int64_t x) { return f(x, ffi::String("from C++")).cast<int64_t>(); }
ffi::Any roundtrip(ffi::Any x) { return x; }
ffi::String type_key_of(ffi::Any x) { return x.GetTypeKey(); }
bool array_is_array(ffi::ObjectRef x) { return x->IsInstance<ffi::ArrayObj>(); }

class PointObj : public ffi::Object {
 public:
  int64_t x;
  double y;
  ffi::String name;
  PointObj(int64_t x, double y, ffi::String name) : x(x), y(y), name(std::move(name)) {}
  double norm2() const { return x * x + y * y; }
  static constexpr bool _type_mutable = true;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("test.Point", PointObj, ffi::Object);
};

class Point : public ffi::ObjectRef {
 public:
  Point(int64_t x, double y, ffi::String name) {
    data_ = ffi::make_object<PointObj>(x, y, std::move(name));
  }
  TVM_FFI_DEFINE_OBJECT_REF_METHODS_NULLABLE(Point, ffi::ObjectRef, PointObj);
};

TVM_FFI_STATIC_INIT_BLOCK() {
  namespace refl = tvm::ffi::reflection;
  refl::ObjectDef<PointObj>()
      .def_ro("x", &PointObj::x, "The x coordinate.")
      .def_rw("y", &PointObj::y)
      .def_ro("name", &PointObj::name)
      .def("norm2", &PointObj::norm2, "Squared norm.");
  refl::GlobalDef()
      .def("test.make_point", [](int64_t x, double y, ffi::String name) { return Point(x, y, name); })
      .def("test.point_x", [](Point p) { return p->x; });
}

TVM_FFI_DLL_EXPORT_TYPED_FUNC(sum_array, sum_array);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(make_array, make_array);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(make_map, make_map);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(make_int_map, make_int_map);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(map_lookup, map_lookup);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(map_keys, map_keys);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(dict_mutate, dict_mutate);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(dict_get, dict_get);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(list_mutate, list_mutate);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(make_shape, make_shape);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(shape_product, shape_product);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(make_tensor, make_tensor);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(tensor_sum, tensor_sum);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(transposed, transposed);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(install_allocator, install_allocator);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(env_tensor, env_tensor);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(throw_error, throw_error);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(call_back, call_back);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(roundtrip, roundtrip);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(type_key_of, type_key_of);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(array_is_array, array_is_array);
TVM_FFI_DLL_EXPORT_TYPED_FUNC_DOC(sum_array, "Sums an array of ints.");
"""

SNIPPET = r"""
mod = call("ffi.ModuleLoadFromFile", PATH)
K = {}
def k(name, *args):
    if name not in K:
        K[name] = call("ffi.ModuleGetFunction", mod, name, True)
    return callf(K[name], *args)

print("sum: %r" % ((k("sum_array", call("ffi.Array", 1, 2, 39)), k("sum_array", call("ffi.List", 5, True))),))
print("sum bad: %r" % (err(k, "sum_array", call("ffi.Array", 1, "x")),))
print("sum arity: %r" % (err(k, "sum_array"),))
print("make array: %r" % (show(k("make_array", 5)),))

small = k("make_map", 3)
big = k("make_map", 300)
print("cxx map 3: %r" % (layout(small),))
print("cxx map 300: %r" % (layout(big),))
print("cxx map read: %r" % ((show(call("ffi.MapGetItem", big, "long key 297")), show(call("ffi.MapGetItem", big, "k298")),
                            call("ffi.MapCount", big, "k300"), call("ffi.MapSize", big)),))
cim = k("make_int_map", 300)
print("cxx int map: %r" % ((layout(cim)[:6], show(call("ffi.MapGetItem", cim, 13 * 250))),))

ours3 = call("ffi.Map", "alpha", 1, "a key longer than seven", 2, 42, 3)
ours300 = call("ffi.Map", *[x for i in range(300) for x in (("key%d" % i) if i % 2 else i * 11, i)])
print("lookup ours 3: %r" % ([k("map_lookup", ours3, key) for key in ("alpha", "a key longer than seven", 42, "beta", 43)],))
print("lookup ours 300: %r" % ([k("map_lookup", ours300, key) for key in ("key1", "key299", 0, 11 * 298, "key0", 5)],))
print("keys ours 3: %r" % (show(k("map_keys", ours3)),))
keys300 = show(k("map_keys", ours300))
print("keys ours 300: %r" % ((keys300.split(",")[:8], len(keys300.split(","))),))

d = call("ffi.Dict", "x", 1, "y", 2, "zzzzzzzzzz", 3)
handle = d.handle
k("dict_mutate", d, 300)
print("dict after C++: %r" % ((d.handle == handle, layout(d)),))
print("dict read: %r" % ((call("ffi.DictSize", d), show(call("ffi.DictGetItem", d, "from C++")),
                          call("ffi.DictCount", d, 0), show(call("ffi.DictGetItem", d, 7))),))
call("ffi.DictSetItem", d, 7, "ours")
call("ffi.DictErase", d, 14)
for i in range(300, 600):
    call("ffi.DictSetItem", d, i * 7, i)
k("dict_mutate", d, 5)
print("dict mixed: %r" % (layout(d),))
print("dict get: %r" % ([k("dict_get", d, key) for key in (7 * 599, 14, "x", 7 * 1)],))
sd = call("ffi.Dict")
k("dict_mutate", sd, 2)
print("small dict after C++: %r" % (layout(sd),))
# a full 2-slot dict grown in place by C++ (its storage then lives in a C++ map), then by us
sd3 = call("ffi.Dict", "p", 1, "q", 2)
k("dict_mutate", sd3, 1)
grown_small = layout(sd3)
for key in ("r", "s", "t", "u"):
    call("ffi.DictSetItem", sd3, key, key)
print("switched dict: %r" % ((grown_small, layout(sd3)),))
del sd3

l = call("ffi.List", 1, 2)
k("list_mutate", l, 10)
cell = abi.TVMFFISeqCell.from_address(l.handle + 24)
print("list after C++: %r" % ((show(l), cell.capacity),))
call("ffi.ListAppend", l, "ours again")
k("list_mutate", l, 20)
print("list mixed: %r" % ((show(l)[1][:4], call("ffi.ListSize", l), cell.capacity),))

s = k("make_shape", 3, 4)
print("shape: %r" % ((show(s), k("shape_product", s), k("shape_product", call("ffi.Shape", 2, 5))),))

t = k("make_tensor", 4)
print("tensor: %r" % ((show(t), k("tensor_sum", t)),))
tt = k("transposed", t)
print("view: %r" % ((show(tt), k("tensor_sum", tt), rc(t) >= 2),))
del t
print("view alive: %r" % (k("tensor_sum", tt),))
print("env tensor missing allocator: %r" % (err(k, "env_tensor", 2),))
k("install_allocator")
et = k("env_tensor", 5)
print("env tensor: %r" % ((show(et), k("tensor_sum", et)),))
print("env tensor error: %r" % (err(k, "env_tensor", -1),))

print("errors: %r" % ([err(k, "throw_error", kind, "went wrong: " + kind) for kind in ("ValueError", "IndexError", "Other")],))
SAFE_CALL = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(abi.TVMFFIAny), ctypes.c_int32,
                             ctypes.POINTER(abi.TVMFFIAny))
@SAFE_CALL
def triple(handle, args, n, result):
    result[0].type_index = 1
    result[0].v_int64 = args[0].v_int64 * 3 + (1 if args[1].type_index == 65 else 0)
    return 0
fh = ctypes.c_void_p()
lib.TVMFFIFunctionCreate(None, triple, None, ctypes.byref(fh))
print("callback: %r" % (k("call_back", Obj(fh.value), 14),))
vals = [None, 1, 2.5, True, "s", "a longer string value", b"b", 2 ** 90, DType(2, 16, 1), Dev(2, 3)]
print("roundtrip: %r" % ([show(k("roundtrip", v)) for v in vals],))
print("type keys: %r" % ([show(k("type_key_of", v)) for v in vals + [ours3, d, l, s, call("ffi.Array")]],))
print("is array: %r" % ((k("array_is_array", call("ffi.Array", 1)), k("array_is_array", ours3)),))
before = rc(ours3)
for _ in range(5):
    k("roundtrip", ours3)
print("rc stable: %r" % (rc(ours3) - before,))

# the reflected type registered by the kernel's static initializer
idx = ctypes.c_int32()
assert lib.TVMFFITypeKeyToIndex(ctypes.byref(byte_array("test.Point")), ctypes.byref(idx)) == 0
info = lib.TVMFFIGetTypeInfo(idx.value).contents
def s_(b): return ctypes.string_at(b.data, b.size).decode() if b.data else None
fields = [(s_(f.name), s_(f.doc), s_(f.metadata), f.flags, f.size, f.offset, f.field_static_type_index)
          for f in (info.fields[i] for i in range(info.num_fields))]
methods = [(s_(m.name), s_(m.doc), m.flags, m.method.type_index) for m in (info.methods[i] for i in range(info.num_methods))]
md = info.metadata.contents
print("point type: %r" % ((idx.value, info.type_depth, hex(info.type_key_hash), md.total_size, bool(md.creator)),))
print("point fields: %r" % (fields,))
print("point methods: %r" % (methods,))
p = call("test.make_point", 3, 4.5, "origin point name")
got = []
for f in (info.fields[i] for i in range(info.num_fields)):
    out = abi.TVMFFIAny()
    assert f.getter(p.handle + f.offset, ctypes.byref(out)) == 0
    got.append(show(from_any(out)))
print("point values: %r" % ((p.type_index == idx.value, got, call("test.point_x", p)),))
norm2 = Obj(info.methods[0].method.v_ptr); lib.TVMFFIObjectIncRef(ctypes.c_void_p(norm2.handle))
print("point method: %r" % (callf(norm2, p),))
setter_value = to_any(9.25, [])
f_y = info.fields[1]
SETTER = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(abi.TVMFFIAny))
print("point set: %r" % ((SETTER(f_y.setter)(p.handle + f_y.offset, ctypes.byref(setter_value)), callf(norm2, p)),))
print("point bad: %r" % (err(call, "test.point_x", call("ffi.Array")),))
print("module doc: %r" % ((show(call("ffi.ModuleGetFunctionDoc", mod, "sum_array", False)),
                           show(call("ffi.ModuleGetFunctionDoc", mod, "make_map", False))),))
print("module metadata: %r" % (show(call("ffi.ModuleGetFunctionMetadata", mod, "shape_product", False)),))
"""


@pytest.fixture(scope="module")
def kernel_outputs(kernels):
    path = kernels.build("runtime_kernel", KERNEL, extra_flags=("-DTVM_FFI_DLL_EXPORT_INCLUDE_METADATA=1",))
    return run_all(SNIPPET, PATH=path)


@pytest.mark.parametrize("runtime", OURS)
def test_kernels_agree_with_upstream(runtime, kernel_outputs):
    ours, upstream = kernel_outputs[runtime].splitlines(), kernel_outputs["upstream"].splitlines()
    assert len(ours) == len(upstream) >= 40
    for a, b in zip(ours, upstream):
        assert a == b


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_kernels_read_and_mutate_runtime_containers(runtime, kernel_outputs):
    out = tagged(kernel_outputs[runtime])
    assert out["sum"] == "(42, 6)"
    assert out["sum bad"].startswith("('ERR', 'TypeError', 'Mismatched type on argument #0 when calling: `sum_array(0: Array<int>) -> int`.")
    assert out["make array"] == "[0, 'item number 1', 2, 'item number 3', 4]"
    assert out["cxx map 3"] == "('small', 3, 4, ['long key 0', 'k1', 'k2'])"
    assert out["cxx map 300"].startswith("('dense', 300, 512, 55, ")
    assert out["cxx map read"] == "(297, 298, 0, 300)"
    assert out["lookup ours 3"] == "[1, 2, 3, -1, -1]"
    assert out["lookup ours 300"] == "[1, 299, 0, 298, -1, -1]"
    assert out["keys ours 3"] == "'alpha,a key longer than seven,42,'"
    assert out["keys ours 300"] == "(['0', 'key1', '22', 'key3', '44', 'key5', '66', 'key7'], 301)"
    assert out["dict after C++"].startswith("(True, ('dense', 204, 512, 55, ")
    assert out["dict read"] == "(204, 'a value longer than seven', 0, 1)"
    assert out["dict get"] == "[599, 2, 1, 1]"
    assert out["switched dict"].startswith(
        "(('small', 3, 4, ['p', 'q', 'from C++']), ('dense', 7, 8, 61, ")
    assert out["list after C++"] == (
        "(('List', ['head of the list', 'set by C++', 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]), 16)")
    assert out["shape"] == "(('Shape', (3, 4, 12)), 144, 10)"
    assert out["tensor"] == "(('Tensor', (4, 3), (3, 1), (2, 32, 1), (1, 0), 0), 66.0)"
    assert out["view"] == "(('Tensor', (3, 4), (1, 3), (2, 32, 1), (1, 0), 0), 66.0, True)"
    assert out["view alive"] == "66.0"
    assert out["env tensor missing allocator"] == (
        "('ERR', 'RuntimeError', 'TVMFFIEnvTensorAlloc: allocator is nullptr, likely because "
        "TVMFFIEnvSetDLPackManagedTensorAllocator has not been called.')")
    assert out["env tensor"] == "(('Tensor', (5, 2), (2, 1), (2, 32, 1), (1, 0), 0), 0.0)"
    assert out["env tensor error"] == "('ERR', 'ValueError', 'negative dimension')"
    assert out["errors"] == (
        "[('ERR', 'ValueError', 'went wrong: ValueError'), ('ERR', 'IndexError', 'went wrong: "
        "IndexError'), ('ERR', 'RuntimeError', 'went wrong: Other')]")
    assert out["callback"] == "43"
    assert out["roundtrip"] == (
        "[None, 1, 2.5, True, 's', 'a longer string value', b'b', ('BigInt', "
        "1237940039285380274899124224), ('dtype', 2, 16, 1), ('device', 2, 3)]")
    assert out["type keys"] == (
        "['None', 'int', 'float', 'bool', 'ffi.SmallStr', 'ffi.String', 'ffi.SmallBytes', "
        "'ffi.BigInt', 'DataType', 'Device', 'ffi.Map', 'ffi.Dict', 'ffi.List', 'ffi.Shape', "
        "'ffi.Array']")
    assert out["is array"] == "(True, False)"
    assert out["rc stable"] == "0"


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_kernel_reflected_type(runtime, kernel_outputs):
    out = tagged(kernel_outputs[runtime])
    assert out["point type"].startswith("(138, 1, ")
    assert out["point type"].endswith(", 56, False)")
    assert out["point fields"] == (
        "[('x', 'The x coordinate.', '{\"type_schema\":\"{\\\\\"type\\\\\":\\\\\"int\\\\\"}\"}', 0, 8, 24, 1), "
        "('y', None, '{\"type_schema\":\"{\\\\\"type\\\\\":\\\\\"float\\\\\"}\"}', 1, 8, 32, 3), "
        "('name', None, '{\"type_schema\":\"{\\\\\"type\\\\\":\\\\\"ffi.String\\\\\"}\"}', 0, 16, 40, -1)]")
    assert out["point methods"] == "[('norm2', 'Squared norm.', 0, 68)]"
    assert out["point values"] == "(True, [3, 4.5, 'origin point name'], 3)"
    assert out["point method"] == "29.25"
    assert out["point set"] == "(0, 94.5625)"
    assert out["module doc"] == "('Sums an array of ints.', None)"
    assert out["module metadata"].startswith("'{\"type_schema\":")
