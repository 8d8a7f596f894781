// Kernels for tests/test_dlpack_exchange.py, against upstream's headers: what a kernel
// library sees of a framework's tensors (through the DLPack exchange API), its stream and
// its tensor allocator during a call, and containers holding tensors.
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/dict.h>
#include <tvm/ffi/container/list.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>

#include <cstdint>
#include <optional>
#include <vector>

using namespace tvm::ffi;

Any Echo(Any value) { return value; }
Any Second(Any first, Any second) { return second; }

// What the kernel received: (shape, dtype, device type, device id, data address).
Array<Any> Describe(TensorView t) {
  std::vector<int64_t> dims(t.shape().begin(), t.shape().end());
  return Array<Any>{Shape(dims), t.dtype(), static_cast<int64_t>(t.device().device_type),
                    static_cast<int64_t>(t.device().device_id),
                    static_cast<int64_t>(reinterpret_cast<intptr_t>(t.data_ptr()))};
}

// The stream the environment says is current for the tensor's device, during the call.
int64_t EnvStream(TensorView t) {
  return static_cast<int64_t>(
      reinterpret_cast<intptr_t>(TVMFFIEnvGetStream(t.device().device_type, t.device().device_id)));
}

// The same for the first tensor of an array.
int64_t FirstEnvStream(Array<Any> values) {
  for (const Any& value : values) {
    if (std::optional<Tensor> t = value.try_cast<Tensor>()) return EnvStream(*t);
  }
  return -1;
}

// Whether a DLPack allocator is installed, during the call.
bool HasAllocator() { return TVMFFIEnvGetDLPackManagedTensorAllocator() != nullptr; }

// A new tensor of t's shape and dtype from the environment's allocator.
Tensor AllocLike(TensorView t) {
  return Tensor::FromEnvAlloc(TVMFFIEnvTensorAlloc, t.shape(), t.dtype(), t.device());
}

Array<Any> MakeArray(Tensor t) { return Array<Any>{t, 42, String("hello")}; }
Array<Any> MakeNested(Tensor t) { return Array<Any>{Array<Any>{t, 42}, t}; }
List<Any> MakeList(Tensor t) { return List<Any>{t, 7}; }
Map<String, Any> MakeMap(Tensor t) {
  return Map<String, Any>{{"tensor", t}, {"value", 42}, {"inner", Map<String, Any>{{"t", t}}}};
}
Dict<String, Any> MakeDict(Tensor t) { return Dict<String, Any>{{"tensor", t}, {"value", 42}}; }

// C++ calling Python: with the tensor, and with a borrowed view of it.
Any CallWith(Function f, Tensor t) { return f(t); }
Any CallWithView(Function f, TensorView t) { return f(t); }  // passed as kTVMFFIDLTensorPtr

double PairScale(TensorView a, TensorView b, double scale) {
  return scale * static_cast<double>(a.ndim() + b.ndim());
}

TVM_FFI_DLL_EXPORT_TYPED_FUNC(echo, Echo);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(second, Second);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(describe, Describe);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(env_stream, EnvStream);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(first_env_stream, FirstEnvStream);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(has_allocator, HasAllocator);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(alloc_like, AllocLike);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(make_array, MakeArray);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(make_nested, MakeNested);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(make_list, MakeList);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(make_map, MakeMap);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(make_dict, MakeDict);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(call_with, CallWith);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(call_with_view, CallWithView);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(pair_scale, PairScale);
