// untyped_kernels.cc -- the rest of a library of typed functions exported WITHOUT
// metadata, as upstream's default macros build them (no
// -DTVM_FFI_DLL_EXPORT_INCLUDE_METADATA): no __tvm_ffi__metadata_<name> symbol, so
// tvm-ffi-check must discover each signature from the TypeError a wrongly called
// function raises. The tests compile it together with
// examples/kernels/typed_kernels.cc (16 typed functions) into one library; this part
// adds the parameter kinds and counts that one lacks, and two functions that check
// their arguments the way functions compiled by TVM do: their errors name tensor
// shapes and dtypes (`vadd(A: Tensor([16], float32), ...)`). Every function returns
// (or raises from its body) once its arguments are right.
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/dict.h>
#include <tvm/ffi/container/list.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/optional.h>
#include <tvm/ffi/string.h>

#include <cstdint>
#include <string>

namespace {

int64_t FirstOr(tvm::ffi::Optional<int64_t> value, int64_t fallback) {
  return value.value_or(fallback);
}
// Tensor is nullable: None arrives as an undefined Tensor.
int64_t TensorNdim(tvm::ffi::Tensor t) { return t.defined() ? t.ndim() : -1; }
bool IsNull(void* pointer) { return pointer == nullptr; }
int64_t Sum5(int64_t a, int64_t b, int64_t c, int64_t d, int64_t e) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + b + c + d + e);
}
int64_t Answer() { return 42; }
int64_t CountNonEmpty(tvm::ffi::List<tvm::ffi::String> items) {
  int64_t count = 0;
  for (const tvm::ffi::String& item : items) count += item.size() != 0;
  return count;
}
int64_t DictTotal(tvm::ffi::Dict<tvm::ffi::String, int64_t> table) {
  uint64_t total = 0;
  for (const auto& kv : table) total += static_cast<uint64_t>(kv.second);
  return static_cast<int64_t>(total);
}

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(first_or, FirstOr);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(tensor_ndim, TensorNdim);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(is_null, IsNull);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(sum5, Sum5);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(answer, Answer);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(count_non_empty, CountNonEmpty);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(dict_total, DictTotal);

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
