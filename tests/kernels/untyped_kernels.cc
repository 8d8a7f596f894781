// untyped_kernels.cc -- typed functions exported WITHOUT metadata, as upstream's default
// macros build them (no -DTVM_FFI_DLL_EXPORT_INCLUDE_METADATA): no
// __tvm_ffi__metadata_<name> symbol, so tvm-ffi-check must discover each
// signature from the TypeError a wrongly called function raises. Two more
// functions check their arguments the way functions compiled by TVM do: their
// errors name tensor shapes and dtypes (`vadd(A: Tensor([16], float32), ...)`).
// Every function returns once its arguments are right, so a call that returned
// is one that reached the body.
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
#include <cstring>
#include <string>

namespace {

using tvm::ffi::Any;
using tvm::ffi::Array;
using tvm::ffi::Function;
using tvm::ffi::Map;
using tvm::ffi::Optional;
using tvm::ffi::Shape;
using tvm::ffi::String;
using tvm::ffi::Tensor;
using tvm::ffi::TensorView;
using tvm::ffi::Variant;

int64_t Add(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) + b); }
double Scale(double x, double factor) { return x * factor; }
bool Negate(bool value) { return !value; }
String Concat(String a, String b) { return String(std::string(a) + std::string(b)); }
int64_t Length(std::string text) { return static_cast<int64_t>(text.size()); }
int64_t SumArray(Array<int64_t> values) {
  uint64_t total = 0;
  for (int64_t v : values) total += static_cast<uint64_t>(v);
  return static_cast<int64_t>(total);
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
int64_t FirstOr(Optional<int64_t> value, int64_t fallback) { return value.value_or(fallback); }
String Either(Variant<int64_t, String> value) {
  if (auto text = value.as<String>()) return *text;
  return String(std::to_string(value.get<int64_t>()));
}
int64_t Ndim(TensorView t) { return t.ndim(); }
int64_t TensorNdim(Tensor t) { return t.defined() ? t.ndim() : -1; }  // Tensor is nullable
int64_t DtypeBits(DLDataType dtype) { return dtype.bits; }
int64_t DeviceType(DLDevice device) { return device.device_type; }
Any CallWith(Function f, int64_t x) { return f(x); }
bool IsNull(void* pointer) { return pointer == nullptr; }
int64_t Sum5(int64_t a, int64_t b, int64_t c, int64_t d, int64_t e) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + b + c + d + e);
}
int64_t Answer() { return 42; }

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(add, Add);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(scale, Scale);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(negate, Negate);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(concat, Concat);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(length, Length);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(sum_array, SumArray);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(lookup, Lookup);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(numel, Numel);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(first_or, FirstOr);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(either, Either);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(ndim, Ndim);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(tensor_ndim, TensorNdim);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(dtype_bits, DtypeBits);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(device_type, DeviceType);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(call_with, CallWith);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(is_null, IsNull);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(sum5, Sum5);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(answer, Answer);

// ------------------------------------------------ checked as TVM-compiled functions are

namespace {

const char* kVaddSignature =
    "vadd(A: Tensor([16], float32), B: Tensor([16], float32), C: Tensor([16], float32))";
const char* kSaxpySignature =
    "saxpy(a: float32, X: Tensor([n], float32), Y: Tensor([n], float32))";

int Fail(const char* kind, const std::string& detail, const char* signature,
         const std::string& expected) {
  std::string message = detail + " when calling:\n  `" + signature + "`";
  if (!expected.empty()) message += ",\n  expected " + expected;
  TVMFFIErrorSetRaisedFromCStr(kind, message.c_str());
  return -1;
}

const DLTensor* AsTensor(const TVMFFIAny& arg) {
  if (arg.type_index == kTVMFFIDLTensorPtr) return static_cast<const DLTensor*>(arg.v_ptr);
  if (arg.type_index == kTVMFFITensor) {
    return reinterpret_cast<const DLTensor*>(reinterpret_cast<const char*>(arg.v_obj) +
                                             sizeof(TVMFFIObject));
  }
  return nullptr;
}

// The checks of one float32 vector argument; `length` < 0 takes any length, else must match.
int CheckVector(const TVMFFIAny* args, int i, const char* name, const char* signature,
                int64_t* length) {
  const DLTensor* t = AsTensor(args[i]);
  std::string at = " on argument #" + std::to_string(i);
  if (t == nullptr) return Fail("TypeError", "Mismatched type" + at, signature, "Tensor");
  if (t->ndim != 1) {
    return Fail("ValueError", std::string("Mismatched ") + name + ".ndim" + at, signature, "1");
  }
  if (t->dtype.code != kDLFloat || t->dtype.bits != 32 || t->dtype.lanes != 1) {
    return Fail("TypeError", std::string("Mismatched ") + name + ".dtype" + at, signature,
                "float32");
  }
  if (t->strides != nullptr && t->shape[0] > 1 && t->strides[0] != 1) {
    return Fail("ValueError", std::string("Mismatched ") + name + ".strides" + at, signature,
                "to be compact array");
  }
  if (*length < 0) {
    *length = t->shape[0];
  } else if (t->shape[0] != *length) {
    return Fail("ValueError", std::string("Invalid ") + name + ".shape[0]" + at, signature,
                std::to_string(*length));
  }
  return 0;
}

float* Data(const TVMFFIAny& arg) {
  const DLTensor* t = AsTensor(arg);
  return reinterpret_cast<float*>(static_cast<char*>(t->data) + t->byte_offset);
}

}  // namespace

extern "C" TVM_FFI_DLL_EXPORT int __tvm_ffi_vadd(void*, const TVMFFIAny* args, int32_t n,
                                                 TVMFFIAny* result) {
  if (n != 3) {
    return Fail("TypeError", "Expected 3 arguments", kVaddSignature, "");
  }
  const char* names[] = {"A", "B", "C"};
  for (int i = 0; i < 3; ++i) {
    int64_t length = 16;
    if (CheckVector(args, i, names[i], kVaddSignature, &length) != 0) return -1;
  }
  for (int k = 0; k < 16; ++k) Data(args[2])[k] = Data(args[0])[k] + Data(args[1])[k];
  result->type_index = kTVMFFINone;
  result->zero_padding = 0;
  result->v_int64 = 0;
  return 0;
}

extern "C" TVM_FFI_DLL_EXPORT int __tvm_ffi_saxpy(void*, const TVMFFIAny* args, int32_t n,
                                                  TVMFFIAny* result) {
  if (n != 3) return Fail("TypeError", "Expected 3 arguments", kSaxpySignature, "");
  if (args[0].type_index != kTVMFFIFloat && args[0].type_index != kTVMFFIInt) {
    return Fail("TypeError", "Mismatched type on argument #0", kSaxpySignature, "float");
  }
  double a = args[0].type_index == kTVMFFIFloat ? args[0].v_float64
                                                 : static_cast<double>(args[0].v_int64);
  int64_t length = -1;
  if (CheckVector(args, 1, "X", kSaxpySignature, &length) != 0) return -1;
  if (CheckVector(args, 2, "Y", kSaxpySignature, &length) != 0) return -1;
  for (int64_t k = 0; k < length; ++k) {
    Data(args[2])[k] = static_cast<float>(a * Data(args[1])[k] + Data(args[2])[k]);
  }
  result->type_index = kTVMFFINone;
  result->zero_padding = 0;
  result->v_int64 = 0;
  return 0;
}
