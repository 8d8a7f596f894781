// first_kernel.cu -- first_kernel.cc's scale_into and scale on a CUDA GPU
// (spec/15-first-kernel.md, "The same kernel on a GPU"). The kernel launches on
// the stream the caller made current for x's device (TVMFFIEnvGetStream), with
// that device current for the launch (a device guard), so the caller decides
// where and in which order the work runs. Built with nvcc against
// apache-tvm-ffi's headers, or through tvm_ffi.cpp.load_inline(cuda_sources=...).
#include <cuda_runtime.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/extra/cuda/device_guard.h>
#include <tvm/ffi/function.h>

#include <algorithm>
#include <cstdint>

namespace {

namespace ffi = tvm::ffi;

__global__ void scale_elements(const float* src, float* dst, int64_t n, float factor) {
  int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k < n) dst[k] = src[k] * factor;
}

void check_on_gpu(const ffi::TensorView& t, const char* name) {
  DLDataType dtype = t.dtype();
  if (dtype.code != kDLFloat || dtype.bits != 32 || dtype.lanes != 1) {
    TVM_FFI_THROW(TypeError) << name << " must be a float32 tensor";
  }
  if (t.device().device_type != kDLCUDA || !t.IsContiguous()) {
    TVM_FFI_THROW(ValueError) << name << " must be a compact tensor on a CUDA device";
  }
}

void scale_into(ffi::TensorView x, ffi::TensorView out, double factor) {
  check_on_gpu(x, "x");
  check_on_gpu(out, "out");
  if (!std::equal(x.shape().begin(), x.shape().end(), out.shape().begin(), out.shape().end())) {
    TVM_FFI_THROW(ValueError) << "out must have the shape of x";
  }
  if (out.device().device_id != x.device().device_id) {
    TVM_FFI_THROW(ValueError) << "out must be on x's device";
  }
  int64_t n = x.numel();
  if (n == 0) return;
  // The launch goes to x's device: make it current until the guard is destroyed.
  ffi::CUDADeviceGuard guard(x.device().device_id);
  // The caller's stream for that device (NULL: the legacy default stream).
  cudaStream_t stream = static_cast<cudaStream_t>(
      TVMFFIEnvGetStream(x.device().device_type, x.device().device_id));
  const float* src = reinterpret_cast<const float*>(static_cast<const char*>(x.data_ptr()) +
                                                    x.byte_offset());
  float* dst = reinterpret_cast<float*>(static_cast<char*>(out.data_ptr()) + out.byte_offset());
  const int threads = 256;
  const int64_t blocks = (n + threads - 1) / threads;
  scale_elements<<<static_cast<unsigned>(blocks), threads, 0, stream>>>(
      src, dst, n, static_cast<float>(factor));
  // A launch error (no device, a bad configuration) is reported now; the work itself runs
  // later, in the stream's order.
  TVM_FFI_CHECK_CUDA_ERROR(cudaGetLastError());
}

ffi::Tensor scale(ffi::TensorView x, double factor) {
  check_on_gpu(x, "x");
  ffi::Tensor y = ffi::Tensor::FromEnvAlloc(TVMFFIEnvTensorAlloc, x.shape(), x.dtype(), x.device());
  scale_into(x, y, factor);
  return y;
}

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(scale_into, scale_into);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(scale, scale);
