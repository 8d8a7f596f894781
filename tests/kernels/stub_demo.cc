// A small extension as a user of tvm_ffi.cpp would write it, built by our
// load_inline/build_inline (the TVM FFI C++ headers are included for it):
// functions exported from the module (`functions=`), and, registered at load
// time, global functions and an object type with fields, a constructor and
// methods, each with the type schema tvm-ffi-stubgen turns into stubs.
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/memory.h>
#include <tvm/ffi/object.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/ffi/string.h>

#include <cstdint>
#include <string>

using tvm::ffi::Array;
using tvm::ffi::Map;
using tvm::ffi::Object;
using tvm::ffi::ObjectRef;
using tvm::ffi::String;

namespace stubdemo {

class CounterObj : public Object {
 public:
  int64_t start = 0;
  double step = 1.0;
  String label;

  CounterObj() = default;
  CounterObj(int64_t start, double step, String label)
      : start(start), step(step), label(std::move(label)) {}

  double At(int64_t n) const { return static_cast<double>(start) + step * static_cast<double>(n); }

  static constexpr bool _type_mutable = true;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("stubdemo.Counter", CounterObj, Object);
};

class Counter : public ObjectRef {
 public:
  Counter(int64_t start, double step, String label) {
    data_ = tvm::ffi::make_object<CounterObj>(start, step, std::move(label));
  }
  double At(int64_t n) const { return get()->At(n); }
  static Counter Zero() { return Counter(0, 0.0, String("zero")); }
  TVM_FFI_DEFINE_OBJECT_REF_METHODS_NOTNULLABLE(Counter, ObjectRef, CounterObj);
};

}  // namespace stubdemo

// Exported from the module by load_inline's `functions=`.
int64_t add(int64_t a, int64_t b) { return a + b; }
String greet(String name) { return String("hello, " + std::string(name)); }
double scale_sum(tvm::ffi::TensorView x, double k) {
  TVM_FFI_ICHECK(x.ndim() == 1) << "x must be a 1D tensor";
  DLDataType f32{kDLFloat, 32, 1};
  TVM_FFI_ICHECK(x.dtype() == f32) << "x must be float32";
  double total = 0.0;
  for (int64_t i = 0; i < x.size(0); ++i) total += static_cast<float*>(x.data_ptr())[i];
  return total * k;
}

TVM_FFI_STATIC_INIT_BLOCK() {
  namespace refl = tvm::ffi::reflection;
  using stubdemo::Counter;
  using stubdemo::CounterObj;
  refl::ObjectDef<CounterObj>()
      .def(refl::init<int64_t, double, String>())
      .def_ro("start", &CounterObj::start)
      .def_rw("step", &CounterObj::step)
      .def_ro("label", &CounterObj::label)
      .def("at", &Counter::At)
      .def_static("zero", &Counter::Zero);
  refl::GlobalDef()
      .def("stubdemo.join", [](Array<String> parts, String sep) {
        std::string out;
        for (size_t i = 0; i < parts.size(); ++i) out += (i ? std::string(sep) : "") + std::string(parts[i]);
        return String(out);
      })
      .def("stubdemo.count_keys", [](Map<String, int64_t> m) { return static_cast<int64_t>(m.size()); })
      .def("stubdemo.make_counter",
           [](int64_t start, double step) { return Counter(start, step, String("made")); });
}
