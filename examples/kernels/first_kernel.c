/*
 * first_kernel.c -- the kernel library spec/15-first-kernel.md builds, line by
 * line: scale a float32 tensor, from NumPy or PyTorch, in plain C99 against the
 * TVM FFI C headers alone (this project's c_api/include or apache-tvm-ffi's).
 */
#include <stdio.h>
#include <tvm/ffi/c_api.h>
#include <tvm/ffi/extra/c_env_api.h>

/* Leaves an error in the calling thread's raised-error slot and returns -1: the
 * caller turns it into an exception of that kind. */
static int fail(const char* kind, const char* message) {
  TVMFFIErrorSetRaisedFromCStr(kind, message);
  return -1;
}

/* Reads a float argument; ints and bools pass too, as in Python arithmetic. */
static int arg_float(const TVMFFIAny* args, int i, const char* name, double* out) {
  char message[96];
  if (args[i].type_index == kTVMFFIFloat) {
    *out = args[i].v_float64;
  } else if (args[i].type_index == kTVMFFIInt || args[i].type_index == kTVMFFIBool) {
    *out = (double)args[i].v_int64;
  } else {
    snprintf(message, sizeof(message), "%s must be a float, got type index %d", name,
             (int)args[i].type_index);
    return fail("TypeError", message);
  }
  return 0;
}

/* Whether a tensor's elements lie one after the other (row-major, no gaps). */
static int is_compact(const DLTensor* t) {
  int64_t expected = 1;
  int32_t d;
  if (t->strides == NULL) return 1;
  for (d = t->ndim - 1; d >= 0; --d) {
    if (t->shape[d] != 1 && t->strides[d] != expected) return 0;
    expected *= t->shape[d];
  }
  return 1;
}

/* The DLTensor a Tensor object holds, right after the object's 24-byte header.
 * (The header's TVMFFITensorGetDLTensorPtr does the same, but for C++ only.) */
static DLTensor* tensor_of(TVMFFIObjectHandle obj) {
  return (DLTensor*)((char*)obj + sizeof(TVMFFIObject));
}

/* Borrows the DLTensor of argument i, a Tensor object or a bare DLTensor*, and checks
 * that this kernel can read it: float32, on the CPU, compact. */
static int arg_tensor(const TVMFFIAny* args, int i, const char* name, DLTensor** out) {
  char message[96];
  DLTensor* t;
  if (args[i].type_index == kTVMFFITensor) {
    t = tensor_of(args[i].v_obj);
  } else if (args[i].type_index == kTVMFFIDLTensorPtr) {
    t = (DLTensor*)args[i].v_ptr;
  } else {
    snprintf(message, sizeof(message), "%s must be a tensor, got type index %d", name,
             (int)args[i].type_index);
    return fail("TypeError", message);
  }
  if (t->dtype.code != kDLFloat || t->dtype.bits != 32 || t->dtype.lanes != 1) {
    snprintf(message, sizeof(message), "%s must be a float32 tensor", name);
    return fail("TypeError", message);
  }
  if (t->device.device_type != kDLCPU || !is_compact(t)) {
    snprintf(message, sizeof(message), "%s must be a compact tensor on the CPU", name);
    return fail("ValueError", message);
  }
  *out = t;
  return 0;
}

static int64_t numel(const DLTensor* t) {
  int64_t count = 1;
  int32_t d;
  for (d = 0; d < t->ndim; ++d) count *= t->shape[d];
  return count;
}

/* out = x * factor; both compact float32 tensors with x's number of elements. */
static void scale_data(const DLTensor* x, const DLTensor* out, double factor) {
  const float* src = (const float*)((const char*)x->data + x->byte_offset);
  float* dst = (float*)((char*)out->data + out->byte_offset);
  int64_t k, n = numel(x);
  for (k = 0; k < n; ++k) dst[k] = (float)(src[k] * factor);
}

/* scale_into(x, out, factor): writes x * factor into out, memory the caller owns. */
TVM_FFI_DLL_EXPORT int __tvm_ffi_scale_into(void* self, const TVMFFIAny* args,
                                            int32_t num_args, TVMFFIAny* result) {
  DLTensor *x, *out;
  double factor;
  int32_t d;
  TVMFFIStreamHandle stream;
  (void)self;
  if (num_args != 3) return fail("TypeError", "scale_into(x, out, factor) takes 3 arguments");
  if (arg_tensor(args, 0, "x", &x) || arg_tensor(args, 1, "out", &out) ||
      arg_float(args, 2, "factor", &factor)) {
    return -1;
  }
  if (out->ndim != x->ndim) return fail("ValueError", "out must have the shape of x");
  for (d = 0; d < x->ndim; ++d) {
    if (out->shape[d] != x->shape[d]) return fail("ValueError", "out must have the shape of x");
  }
  /* The caller's current stream for x's device: a GPU kernel would launch on it. */
  stream = TVMFFIEnvGetStream(x->device.device_type, x->device.device_id);
  (void)stream; /* the CPU runs the loop here and now */
  scale_data(x, out, factor);
  result->type_index = kTVMFFINone;
  result->zero_padding = 0;
  result->v_int64 = 0;
  return 0;
}

/* scale(x, factor): a new tensor x * factor, allocated by the caller's allocator. */
TVM_FFI_DLL_EXPORT int __tvm_ffi_scale(void* self, const TVMFFIAny* args, int32_t num_args,
                                       TVMFFIAny* result) {
  DLTensor *x, prototype;
  double factor;
  TVMFFIObjectHandle y;
  (void)self;
  if (num_args != 2) return fail("TypeError", "scale(x, factor) takes 2 arguments");
  if (arg_tensor(args, 0, "x", &x) || arg_float(args, 1, "factor", &factor)) return -1;
  prototype = *x; /* the allocator reads dtype, ndim, shape and device */
  prototype.data = NULL;
  prototype.strides = NULL;
  prototype.byte_offset = 0;
  if (TVMFFIEnvTensorAlloc(&prototype, &y) != 0) return -1; /* its error is raised */
  scale_data(x, tensor_of(y), factor);
  result->type_index = kTVMFFITensor;
  result->zero_padding = 0;
  result->v_obj = (TVMFFIObject*)y; /* our one reference to y moves to the caller */
  return 0;
}

/* current_stream(device): the stream the caller made current for device, as an int. */
TVM_FFI_DLL_EXPORT int __tvm_ffi_current_stream(void* self, const TVMFFIAny* args,
                                                int32_t num_args, TVMFFIAny* result) {
  DLDevice device;
  (void)self;
  if (num_args != 1 || args[0].type_index != kTVMFFIDevice) {
    return fail("TypeError", "current_stream(device) takes one Device");
  }
  device = args[0].v_device;
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = (int64_t)(intptr_t)TVMFFIEnvGetStream(device.device_type, device.device_id);
  return 0;
}

/* Each function's type schema, the JSON upstream's C++ export macro writes when
 * built with TVM_FFI_DLL_EXPORT_INCLUDE_METADATA=1; tools read it to know what to
 * pass. The header is this project's (upstream's are C++ for this); it needs only
 * the C API, so it works against upstream's c_api.h too. The result type comes
 * first, then each parameter's. */
#include <tvm_ffi_abi/export.h>

TVM_FFI_ABI_EXPORT_SCHEMA(scale_into, "None", "DLTensor*", "DLTensor*", "float");
TVM_FFI_ABI_EXPORT_SCHEMA(scale, "ffi.Tensor", "DLTensor*", "float");
TVM_FFI_ABI_EXPORT_SCHEMA(current_stream, "int", "Device");
