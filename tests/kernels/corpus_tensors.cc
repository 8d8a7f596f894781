// Tensors crossing the boundary: NumPy arrays read and written in place by
// C++ (contiguous, strided, 0-d, with byte offsets), and tensors made in C++
// (through the environment allocator and through a kernel-owned allocator)
// read by NumPy. Also the per-device stream table.
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/dtype.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

using tvm::ffi::Any;
using tvm::ffi::Array;
using tvm::ffi::Shape;
using tvm::ffi::String;
using tvm::ffi::Tensor;

Array<int64_t> ToArray(tvm::ffi::ShapeView view) {
  Array<int64_t> out;
  for (int64_t v : view) out.push_back(v);
  return out;
}

// Everything C++ sees of a tensor: [ndim, shape, strides, dtype, device type,
// device id, byte_offset, contiguous].
Array<Any> TensorDescribe(Tensor t) {
  const DLTensor* dl = t.GetDLTensorPtr();
  return Array<Any>{Any(static_cast<int64_t>(dl->ndim)),
                    Any(ToArray(t.shape())),
                    Any(ToArray(t.strides())),
                    Any(tvm::ffi::DLDataTypeToString(t.dtype())),
                    Any(static_cast<int64_t>(dl->device.device_type)),
                    Any(static_cast<int64_t>(dl->device.device_id)),
                    Any(static_cast<int64_t>(dl->byte_offset)),
                    Any(t.IsContiguous())};
}

// Whether data + byte_offset is a multiple of `alignment` bytes.
bool TensorIsAligned(Tensor t, int64_t alignment) {
  const DLTensor* dl = t.GetDLTensorPtr();
  uintptr_t address = reinterpret_cast<uintptr_t>(dl->data) + dl->byte_offset;
  return address % static_cast<uintptr_t>(alignment) == 0;
}

// Byte address of element `index` (a flat row-major position) honouring strides.
char* ElementAddress(const DLTensor* dl, int64_t index) {
  int64_t offset = 0;
  for (int d = dl->ndim - 1; d >= 0; --d) {
    int64_t extent = dl->shape[d];
    int64_t i = index % extent;
    index /= extent;
    int64_t stride = dl->strides != nullptr ? dl->strides[d] : 1;
    if (dl->strides == nullptr) {
      for (int e = d + 1; e < dl->ndim; ++e) stride *= dl->shape[e];
    }
    offset += i * stride;
  }
  int64_t item = (dl->dtype.bits * dl->dtype.lanes + 7) / 8;
  return static_cast<char*>(dl->data) + dl->byte_offset + offset * item;
}

int64_t Numel(const DLTensor* dl) {
  int64_t n = 1;
  for (int d = 0; d < dl->ndim; ++d) n *= dl->shape[d];
  return n;
}

// The elements in row-major logical order, as doubles, for float32/float64/
// int32/int64/uint8/bool tensors of any strides (0-d included).
Array<double> TensorValues(Tensor t) {
  const DLTensor* dl = t.GetDLTensorPtr();
  Array<double> out;
  int64_t n = Numel(dl);
  for (int64_t i = 0; i < n; ++i) {
    const char* p = ElementAddress(dl, i);
    double v;
    if (dl->dtype.code == kDLFloat && dl->dtype.bits == 64) v = *reinterpret_cast<const double*>(p);
    else if (dl->dtype.code == kDLFloat && dl->dtype.bits == 32) v = *reinterpret_cast<const float*>(p);
    else if (dl->dtype.code == kDLInt && dl->dtype.bits == 64) v = static_cast<double>(*reinterpret_cast<const int64_t*>(p));
    else if (dl->dtype.code == kDLInt && dl->dtype.bits == 32) v = *reinterpret_cast<const int32_t*>(p);
    else if (dl->dtype.code == kDLUInt && dl->dtype.bits == 8) v = *reinterpret_cast<const uint8_t*>(p);
    else if (dl->dtype.code == kDLBool) v = *reinterpret_cast<const uint8_t*>(p) ? 1.0 : 0.0;
    else TVM_FFI_THROW(TypeError) << "TensorValues: unsupported dtype " << t.dtype();
    out.push_back(v);
  }
  return out;
}

// Writes base, base+1, ... into a float64 or float32 tensor in place (strides honoured).
void TensorFillIota(Tensor t, double base) {
  const DLTensor* dl = t.GetDLTensorPtr();
  if (dl->dtype.code != kDLFloat) TVM_FFI_THROW(TypeError) << "TensorFillIota wants a float tensor";
  int64_t n = Numel(dl);
  for (int64_t i = 0; i < n; ++i) {
    char* p = ElementAddress(dl, i);
    if (dl->dtype.bits == 64) *reinterpret_cast<double*>(p) = base + static_cast<double>(i);
    else *reinterpret_cast<float*>(p) = static_cast<float>(base + static_cast<double>(i));
  }
}

void FillIotaContiguous(Tensor t) {
  int64_t n = t.numel();
  if (t.dtype().code == kDLFloat && t.dtype().bits == 32) {
    float* data = static_cast<float*>(t.data_ptr());
    for (int64_t i = 0; i < n; ++i) data[i] = 0.5f * static_cast<float>(i);
  } else if (t.dtype().code == kDLInt && t.dtype().bits == 64) {
    int64_t* data = static_cast<int64_t*>(t.data_ptr());
    for (int64_t i = 0; i < n; ++i) data[i] = i * 3 - 1;
  } else {
    TVM_FFI_THROW(TypeError) << "FillIotaContiguous: unsupported dtype " << t.dtype();
  }
}

// A tensor from whatever DLPack allocator the environment has installed.
Tensor EnvAlloc(Shape shape, DLDataType dtype) {
  DLDevice cpu{kDLCPU, 0};
  Tensor t = Tensor::FromEnvAlloc(TVMFFIEnvTensorAlloc, shape, dtype, cpu);
  FillIotaContiguous(t);
  return t;
}

// A minimal DLPack allocator owned by this kernel: malloc'd data and shape.
struct KernelBlock {
  DLManagedTensorVersioned managed;
  std::vector<int64_t> shape;
};

void KernelBlockDeleter(DLManagedTensorVersioned* self) {
  KernelBlock* block = static_cast<KernelBlock*>(self->manager_ctx);
  std::free(block->managed.dl_tensor.data);
  delete block;
}

int KernelDLPackAlloc(DLTensor* prototype, DLManagedTensorVersioned** out, void* error_ctx,
                      void (*set_error)(void* error_ctx, const char* kind, const char* message)) {
  KernelBlock* block = new KernelBlock();
  block->shape.assign(prototype->shape, prototype->shape + prototype->ndim);
  DLManagedTensorVersioned& m = block->managed;
  std::memset(&m, 0, sizeof(m));
  m.version.major = DLPACK_MAJOR_VERSION;
  m.version.minor = DLPACK_MINOR_VERSION;
  m.manager_ctx = block;
  m.deleter = KernelBlockDeleter;
  m.dl_tensor = *prototype;
  m.dl_tensor.shape = block->shape.data();
  m.dl_tensor.strides = nullptr;
  m.dl_tensor.byte_offset = 0;
  size_t bytes = tvm::ffi::GetDataSize(*prototype);
  m.dl_tensor.data = std::aligned_alloc(64, bytes < 64 ? 64 : (bytes + 63) / 64 * 64);
  if (m.dl_tensor.data == nullptr) {
    delete block;
    set_error(error_ctx, "MemoryError", "kernel allocator: out of memory");
    return -1;
  }
  *out = &m;
  return 0;
}

// Installs this kernel's allocator for the current thread, allocates through
// TVMFFIEnvTensorAlloc, then restores the previous allocator.
Tensor EnvAllocWithKernelAllocator(Shape shape, DLDataType dtype) {
  DLPackManagedTensorAllocator previous = nullptr;
  TVM_FFI_CHECK_SAFE_CALL(TVMFFIEnvSetDLPackManagedTensorAllocator(KernelDLPackAlloc, 0, &previous));
  try {
    Tensor t = EnvAlloc(shape, dtype);
    TVM_FFI_CHECK_SAFE_CALL(TVMFFIEnvSetDLPackManagedTensorAllocator(previous, 0, nullptr));
    return t;
  } catch (...) {
    TVMFFIEnvSetDLPackManagedTensorAllocator(previous, 0, nullptr);
    throw;
  }
}

// A tensor made by FromNDAlloc with malloc/free (its deleter lives in this
// library, so the library must outlive the tensor).
struct MallocNDAlloc {
  void AllocData(DLTensor* tensor) { tensor->data = std::malloc(tvm::ffi::GetDataSize(*tensor)); }
  void FreeData(DLTensor* tensor) { std::free(tensor->data); }
};

Tensor NDAlloc(Shape shape, DLDataType dtype) {
  DLDevice cpu{kDLCPU, 0};
  Tensor t = Tensor::FromNDAlloc(MallocNDAlloc(), shape, dtype, cpu);
  FillIotaContiguous(t);
  return t;
}

// A transposed view of a 2-d tensor (shares data; strides swapped).
Tensor TransposeView(Tensor t) {
  if (t.ndim() != 2) TVM_FFI_THROW(ValueError) << "TransposeView wants 2-d, got " << t.ndim();
  std::vector<int64_t> shape{t.shape()[1], t.shape()[0]};
  std::vector<int64_t> strides{t.strides()[1], t.strides()[0]};
  return t.as_strided(tvm::ffi::ShapeView(shape.data(), shape.size()),
                      tvm::ffi::ShapeView(strides.data(), strides.size()));
}

// The stream registered for a device in the calling thread, as an integer.
int64_t CurrentStream(DLDevice device) {
  return reinterpret_cast<int64_t>(TVMFFIEnvGetStream(device.device_type, device.device_id));
}

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(tensor_describe, TensorDescribe);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(tensor_is_aligned, TensorIsAligned);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(tensor_values, TensorValues);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(tensor_fill_iota, TensorFillIota);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(env_alloc, EnvAlloc);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(env_alloc_with_kernel_allocator, EnvAllocWithKernelAllocator);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(nd_alloc, NDAlloc);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(transpose_view, TransposeView);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(current_stream, CurrentStream);
