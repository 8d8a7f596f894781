// Kernels for benchmarks/bench_calls.py, compiled against upstream's headers
// the way a kernel library would be. Each does as little as its shape allows,
// so the timings measure the cost of crossing the ABI.
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/ffi/string.h>

namespace ffi = tvm::ffi;

void nop() {}
int64_t add3(int64_t a, int64_t b, int64_t c) { return a + b + c; }
int64_t add_int(int64_t a, int64_t b) { return a + b; }
double mul2(double a, double b) { return a * b; }
ffi::String echo_str(ffi::String s) { return s; }
int64_t tensor_pair(ffi::TensorView a, ffi::TensorView b) { return a.ndim() + b.ndim(); }
double tensor_pair_scale(ffi::TensorView a, ffi::TensorView b, double scale) {
  return scale * static_cast<double>(a.ndim() + b.ndim());
}
ffi::Tensor echo_tensor(ffi::Tensor x) { return x; }
int64_t array_len(ffi::Array<int64_t> values) { return static_cast<int64_t>(values.size()); }
ffi::Any call_back(ffi::Function f, int64_t x) { return f(x); }
ffi::Array<int64_t> make_array10() {
  ffi::Array<int64_t> out;
  out.reserve(10);
  for (int64_t i = 0; i < 10; ++i) out.push_back(i);
  return out;
}

// An IR-like node for the structural rows: reflected fields (one hash/compare-off), children
// of any kind, a tree-node structural kind.
class BenchNodeObj : public ffi::Object {
 public:
  int64_t value = 0;
  ffi::String label;
  ffi::String comment;
  ffi::Any left;
  ffi::Any right;
  static constexpr TVMFFISEqHashKind _type_s_eq_hash_kind = kTVMFFISEqHashKindTreeNode;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("bench.Node", BenchNodeObj, ffi::Object);
};

// A balanced graph of `count` objects (nodes, arrays and maps, a third each); each call makes
// a new, structurally equal graph.
ffi::Any make_graph_part(int64_t count, int64_t value) {
  if (count <= 0) return ffi::Any(value);
  int64_t first = (count - 1) / 2, second = count - 1 - first;
  switch (value % 3) {
    case 0: {
      auto node = ffi::make_object<BenchNodeObj>();
      node->value = value;
      node->label = value % 2 ? "odd" : "even";
      node->comment = "not compared";
      node->left = make_graph_part(first, value + 1);
      node->right = make_graph_part(second, value + 2);
      return ffi::ObjectRef(node);
    }
    case 1:
      return ffi::Array<ffi::Any>{value, make_graph_part(first, value + 1), 0.5,
                                  make_graph_part(second, value + 2)};
    default:
      return ffi::Map<ffi::Any, ffi::Any>{{ffi::String("k"), make_graph_part(first, value + 1)},
                                          {value, make_graph_part(second, value + 2)}};
  }
}
ffi::Any make_graph(int64_t count) { return make_graph_part(count, 0); }

TVM_FFI_STATIC_INIT_BLOCK() {
  namespace refl = tvm::ffi::reflection;
  refl::ObjectDef<BenchNodeObj>()
      .def_ro("value", &BenchNodeObj::value)
      .def_ro("label", &BenchNodeObj::label)
      .def_ro("comment", &BenchNodeObj::comment, refl::AttachFieldFlag::SEqHashIgnore())
      .def_ro("left", &BenchNodeObj::left)
      .def_ro("right", &BenchNodeObj::right);
}

TVM_FFI_DLL_EXPORT_TYPED_FUNC(nop, nop);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(add3, add3);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(add_int, add_int);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(mul2, mul2);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(echo_str, echo_str);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(tensor_pair, tensor_pair);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(tensor_pair_scale, tensor_pair_scale);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(echo_tensor, echo_tensor);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(array_len, array_len);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(call_back, call_back);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(make_array10, make_array10);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(make_graph, make_graph);
