// first_kernel.cc -- first_kernel.c's library written with upstream's header-only
// C++ API (spec/15-first-kernel.md, "The same kernel in C++"): the same exported
// symbols, receiving the same bytes. Compile against apache-tvm-ffi's headers.
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/function.h>

#include <algorithm>
#include <cstdint>

namespace {

namespace ffi = tvm::ffi;

void check_readable(const ffi::TensorView& t, const char* name) {
  DLDataType dtype = t.dtype();
  if (dtype.code != kDLFloat || dtype.bits != 32 || dtype.lanes != 1) {
    TVM_FFI_THROW(TypeError) << name << " must be a float32 tensor";
  }
  if (t.device().device_type != kDLCPU || !t.IsContiguous()) {
    TVM_FFI_THROW(ValueError) << name << " must be a compact tensor on the CPU";
  }
}

void scale_into(ffi::TensorView x, ffi::TensorView out, double factor) {
  check_readable(x, "x");
  check_readable(out, "out");
  if (!std::equal(x.shape().begin(), x.shape().end(), out.shape().begin(), out.shape().end())) {
    TVM_FFI_THROW(ValueError) << "out must have the shape of x";
  }
  const float* src = static_cast<const float*>(x.data_ptr()) + x.byte_offset() / sizeof(float);
  float* dst = static_cast<float*>(out.data_ptr()) + out.byte_offset() / sizeof(float);
  for (int64_t k = 0; k < x.numel(); ++k) dst[k] = static_cast<float>(src[k] * factor);
}

ffi::Tensor scale(ffi::TensorView x, double factor) {
  check_readable(x, "x");
  ffi::Tensor y = ffi::Tensor::FromEnvAlloc(TVMFFIEnvTensorAlloc, x.shape(), x.dtype(), x.device());
  scale_into(x, y, factor);
  return y;
}

int64_t current_stream(DLDevice device) {
  return reinterpret_cast<intptr_t>(TVMFFIEnvGetStream(device.device_type, device.device_id));
}

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(scale_into, scale_into);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(scale, scale);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(current_stream, current_stream);
