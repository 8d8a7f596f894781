// typed_kernels.cc -- a kernel library in C++, written the way upstream's users
// write one: typed functions exported with TVM_FFI_DLL_EXPORT_TYPED_FUNC from
// upstream's headers (apache-tvm-ffi), and built with
// -DTVM_FFI_DLL_EXPORT_INCLUDE_METADATA=1 so that every function also exports
// __tvm_ffi__metadata_<name>, its type schema. tvm-ffi-check generates its
// calls from those schemas; this library obeys every rule.
//
// Build (against upstream's headers and library), then check:
//   c++ -std=c++17 -shared -fPIC -DTVM_FFI_DLL_EXPORT_INCLUDE_METADATA=1
//       -I<tvm_ffi>/include typed_kernels.cc -L<tvm_ffi>/lib -ltvm_ffi -o libtyped_kernels.so
//   tvm-ffi-check libtyped_kernels.so
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/container/variant.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/optional.h>
#include <tvm/ffi/string.h>

#include <cstdint>
#include <string>

namespace {

using tvm::ffi::Any;
using tvm::ffi::Array;
using tvm::ffi::Function;
using tvm::ffi::Map;
using tvm::ffi::Optional;
using tvm::ffi::Shape;
using tvm::ffi::String;
using tvm::ffi::TensorView;
using tvm::ffi::Variant;

int64_t Add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}

double Scale(double x, double factor) { return x * factor; }

bool Negate(bool value) { return !value; }

String Concat(String a, String b) { return String(std::string(a) + std::string(b)); }

int64_t Length(std::string text) { return static_cast<int64_t>(text.size()); }

int64_t SumArray(Array<int64_t> values) {
  uint64_t total = 0;
  for (int64_t v : values) total += static_cast<uint64_t>(v);
  return static_cast<int64_t>(total);
}

Array<Any> Reversed(Array<Any> values) {
  Array<Any> out;
  for (int64_t i = static_cast<int64_t>(values.size()) - 1; i >= 0; --i) out.push_back(values[i]);
  return out;
}

Optional<double> Lookup(Map<String, double> table, String key) {
  auto found = table.find(key);
  if (found == table.end()) return std::nullopt;
  return (*found).second;
}

int64_t Numel(Shape shape) {
  int64_t total = 1;
  for (int64_t d : shape) total *= d;
  return total;
}

double SumFloat32(TensorView t) {
  DLDataType dtype = t.dtype();
  if (dtype.code != kDLFloat || dtype.bits != 32 || dtype.lanes != 1) {
    TVM_FFI_THROW(TypeError) << "sum_float32: expected a float32 tensor";
  }
  if (t.device().device_type != kDLCPU) {
    TVM_FFI_THROW(ValueError) << "sum_float32: expected a CPU tensor";
  }
  int64_t count = t.numel();
  double total = 0;
  const float* base =
      reinterpret_cast<const float*>(static_cast<const char*>(t.data_ptr()) + t.byte_offset());
  for (int64_t flat = 0; flat < count; ++flat) {
    int64_t rest = flat, offset = 0;
    for (int i = t.ndim() - 1; i >= 0; --i) {
      offset += (rest % t.size(i)) * t.stride(i);
      rest /= t.size(i);
    }
    total += base[offset];
  }
  return total;
}

Any CallWith(Function f, int64_t x) { return f(x); }

String Describe(Variant<int64_t, String> value) {
  if (auto number = value.as<int64_t>()) return String("int " + std::to_string(*number));
  return String("str " + std::string(value.get<String>()));
}

Any Echo(Any value) { return value; }

int64_t DTypeBits(DLDataType dtype) { return dtype.bits * dtype.lanes; }

int64_t DeviceType(DLDevice device) { return device.device_type; }

void AlwaysThrows(String message) {
  TVM_FFI_THROW(ValueError) << "always_throws: " << message;
}

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(add, Add);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(scale, Scale);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(negate, Negate);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(concat, Concat);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(length, Length);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(sum_array, SumArray);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(reversed, Reversed);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(lookup, Lookup);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(numel, Numel);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(sum_float32, SumFloat32);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(call_with, CallWith);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(describe, Describe);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(echo, Echo);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(dtype_bits, DTypeBits);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(device_type, DeviceType);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(always_throws, AlwaysThrows);
TVM_FFI_DLL_EXPORT_TYPED_FUNC_DOC(add, "Adds two integers (wrapping like int64 hardware).");
