/*
 * example_kernels.c -- a small kernel library written in plain C99 against
 * c_api/include, the way a third party would write one without C++.
 *
 * Each function is exported as __tvm_ffi_<name> with the packed calling
 * convention: it borrows args[0..num_args), writes an owned value to *result
 * and returns 0, or raises an error naming the argument at fault and returns
 * -1. Build: cc -std=c99 -shared -fPIC -I c_api/include example_kernels.c
 *
 * Each function also exports __tvm_ffi__metadata_<name>, its type schema in
 * the JSON upstream's TVM_FFI_DLL_EXPORT_TYPED_FUNC writes when built with
 * TVM_FFI_DLL_EXPORT_INCLUDE_METADATA=1, through TVM_FFI_ABI_EXPORT_SCHEMA
 * (tvm_ffi_abi/export.h), so tools (tvm-ffi-check, stub generators) know what
 * to pass. `tvm-ffi-check` with no argument checks
 * this library; it obeys every rule.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tvm/ffi/c_api.h>
#include <tvm_ffi_abi/export.h>
#include <tvm_ffi_abi/object_cells.h> /* C versions of the header's C++-only layout helpers */

/* ------------------------------------------------------------ helpers */

static int raise_error(const char* kind, const char* message) {
  TVMFFIErrorSetRaisedFromCStr(kind, message);
  return -1;
}

static int check_num_args(const char* func, int32_t num_args, int32_t expected) {
  char message[160];
  if (num_args == expected) return 0;
  snprintf(message, sizeof(message), "%s() takes %d argument%s, got %d", func, (int)expected,
           expected == 1 ? "" : "s", (int)num_args);
  return raise_error("TypeError", message);
}

static int type_error(const char* func, int index, const char* expected, const TVMFFIAny* got) {
  char message[200];
  snprintf(message, sizeof(message), "%s(): argument %d must be %s, got a value of type index %d",
           func, index, expected, (int)got->type_index);
  return raise_error("TypeError", message);
}

/* Reads an int (bools count as 0/1, as in Python). */
static int arg_int(const char* func, const TVMFFIAny* args, int index, int64_t* out) {
  const TVMFFIAny* arg = &args[index];
  if (arg->type_index != kTVMFFIInt && arg->type_index != kTVMFFIBool) {
    return type_error(func, index, "an int", arg);
  }
  *out = arg->v_int64;
  return 0;
}

/* Reads a float, accepting ints and bools the way Python arithmetic does. */
static int arg_float(const char* func, const TVMFFIAny* args, int index, double* out) {
  const TVMFFIAny* arg = &args[index];
  if (arg->type_index == kTVMFFIFloat) {
    *out = arg->v_float64;
  } else if (arg->type_index == kTVMFFIInt || arg->type_index == kTVMFFIBool) {
    *out = (double)arg->v_int64;
  } else {
    return type_error(func, index, "a float", arg);
  }
  return 0;
}

/* Borrows the bytes of any of the three string encodings an argument may use. */
static int arg_str(const char* func, const TVMFFIAny* args, int index, TVMFFIByteArray* out) {
  const TVMFFIAny* arg = &args[index];
  switch (arg->type_index) {
    case kTVMFFISmallStr:
      *out = tvm_ffi_abi_small_bytes(arg);
      return 0;
    case kTVMFFIStr:
      *out = *tvm_ffi_abi_bytes_cell(arg->v_obj);
      return 0;
    case kTVMFFIRawStr:
      out->data = arg->v_c_str;
      out->size = strlen(arg->v_c_str);
      return 0;
    default:
      return type_error(func, index, "a str", arg);
  }
}

/* Borrows the DLTensor of a DLTensor* argument or of a Tensor object. */
static int arg_tensor(const char* func, const TVMFFIAny* args, int index, DLTensor** out) {
  const TVMFFIAny* arg = &args[index];
  if (arg->type_index == kTVMFFIDLTensorPtr) {
    *out = (DLTensor*)arg->v_ptr;
  } else if (arg->type_index == kTVMFFITensor) {
    *out = tvm_ffi_abi_tensor_dltensor(arg->v_obj);
  } else {
    return type_error(func, index, "a tensor", arg);
  }
  return 0;
}

static void set_int(TVMFFIAny* result, int64_t value) {
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = value;
}

static void set_float(TVMFFIAny* result, double value) {
  result->type_index = kTVMFFIFloat;
  result->zero_padding = 0;
  result->v_float64 = value;
}

/* ------------------------------------------------------------ metadata */

/* Each function's type schema: its result type, then its parameters' types
 * (tvm_ffi_abi/export.h writes the JSON upstream's C++ macro writes). */
TVM_FFI_ABI_EXPORT_SCHEMA(add_int, "int", "int", "int");
TVM_FFI_ABI_EXPORT_SCHEMA(scale, "float", "float", "float");
TVM_FFI_ABI_EXPORT_SCHEMA(string_length, "int", "ffi.String");
TVM_FFI_ABI_EXPORT_SCHEMA(concat, "ffi.String", "ffi.String", "ffi.String");
TVM_FFI_ABI_EXPORT_SCHEMA(sum_float32, "float", "DLTensor*");
TVM_FFI_ABI_EXPORT_SCHEMA(echo, "Any", "Any");
TVM_FFI_ABI_EXPORT_SCHEMA(raise_value_error, "None", "ffi.String");

/* ------------------------------------------------------------ kernels */

/* add_int(a: int, b: int) -> int */
TVM_FFI_DLL_EXPORT int __tvm_ffi_add_int(void* self, const TVMFFIAny* args, int32_t num_args,
                                         TVMFFIAny* result) {
  int64_t a, b;
  (void)self;
  if (check_num_args("add_int", num_args, 2) || arg_int("add_int", args, 0, &a) ||
      arg_int("add_int", args, 1, &b)) {
    return -1;
  }
  set_int(result, (int64_t)((uint64_t)a + (uint64_t)b)); /* wraps like int64 hardware */
  return 0;
}

/* scale(x: float, factor: float) -> float */
TVM_FFI_DLL_EXPORT int __tvm_ffi_scale(void* self, const TVMFFIAny* args, int32_t num_args,
                                       TVMFFIAny* result) {
  double x, factor;
  (void)self;
  if (check_num_args("scale", num_args, 2) || arg_float("scale", args, 0, &x) ||
      arg_float("scale", args, 1, &factor)) {
    return -1;
  }
  set_float(result, x * factor);
  return 0;
}

/* string_length(s: str) -> int, the length in UTF-8 bytes */
TVM_FFI_DLL_EXPORT int __tvm_ffi_string_length(void* self, const TVMFFIAny* args,
                                               int32_t num_args, TVMFFIAny* result) {
  TVMFFIByteArray s;
  (void)self;
  if (check_num_args("string_length", num_args, 1) || arg_str("string_length", args, 0, &s)) {
    return -1;
  }
  set_int(result, (int64_t)s.size);
  return 0;
}

/* concat(a: str, b: str) -> str: an owned String (inline when at most 7 bytes) */
TVM_FFI_DLL_EXPORT int __tvm_ffi_concat(void* self, const TVMFFIAny* args, int32_t num_args,
                                        TVMFFIAny* result) {
  TVMFFIByteArray a, b, joined;
  char* buffer;
  int status;
  (void)self;
  if (check_num_args("concat", num_args, 2) || arg_str("concat", args, 0, &a) ||
      arg_str("concat", args, 1, &b)) {
    return -1;
  }
  buffer = (char*)malloc(a.size + b.size + 1);
  if (buffer == NULL) return raise_error("MemoryError", "concat(): out of memory");
  memcpy(buffer, a.data, a.size);
  memcpy(buffer + a.size, b.data, b.size);
  joined.data = buffer;
  joined.size = a.size + b.size;
  status = TVMFFIStringFromByteArray(&joined, result); /* copies: the buffer is ours */
  free(buffer);
  return status;
}

/* sum_float32(t: Tensor) -> float, any shape, strides and byte offset, CPU only */
TVM_FFI_DLL_EXPORT int __tvm_ffi_sum_float32(void* self, const TVMFFIAny* args, int32_t num_args,
                                             TVMFFIAny* result) {
  DLTensor* t;
  int64_t index[16] = {0};
  int64_t count = 1;
  int64_t i;
  int32_t d;
  double total = 0.0;
  (void)self;
  if (check_num_args("sum_float32", num_args, 1) || arg_tensor("sum_float32", args, 0, &t)) {
    return -1;
  }
  if (t->dtype.code != kDLFloat || t->dtype.bits != 32 || t->dtype.lanes != 1) {
    return raise_error("TypeError", "sum_float32(): argument 0 must have dtype float32");
  }
  if (t->device.device_type != kDLCPU) {
    return raise_error("ValueError", "sum_float32(): argument 0 must be on the CPU");
  }
  if (t->ndim < 0 || t->ndim > 16) {
    return raise_error("ValueError", "sum_float32(): argument 0 must have 0 to 16 dimensions");
  }
  for (d = 0; d < t->ndim; ++d) count *= t->shape[d];
  /* Walk the elements in row-major order, odometer style. */
  for (i = 0; i < count; ++i) {
    int64_t offset = 0;
    int64_t stride = 1;
    for (d = t->ndim - 1; d >= 0; --d) {
      offset += index[d] * (t->strides != NULL ? t->strides[d] : stride);
      stride *= t->shape[d];
    }
    total += ((const float*)((const char*)t->data + t->byte_offset))[offset];
    for (d = t->ndim - 1; d >= 0; --d) {
      if (++index[d] < t->shape[d]) break;
      index[d] = 0;
    }
  }
  set_float(result, total);
  return 0;
}

/* echo(x: Any) -> Any: returns its argument, taking ownership as the ABI requires */
TVM_FFI_DLL_EXPORT int __tvm_ffi_echo(void* self, const TVMFFIAny* args, int32_t num_args,
                                      TVMFFIAny* result) {
  (void)self;
  if (check_num_args("echo", num_args, 1)) return -1;
  return TVMFFIAnyViewToOwnedAny(&args[0], result);
}

/* raise_value_error(message: str) -> None: always raises ValueError(message) */
TVM_FFI_DLL_EXPORT int __tvm_ffi_raise_value_error(void* self, const TVMFFIAny* args,
                                                   int32_t num_args, TVMFFIAny* result) {
  TVMFFIByteArray message;
  const char* parts[1];
  char buffer[256];
  size_t n;
  (void)self;
  (void)result;
  if (check_num_args("raise_value_error", num_args, 1) ||
      arg_str("raise_value_error", args, 0, &message)) {
    return -1;
  }
  n = message.size < sizeof(buffer) - 1 ? message.size : sizeof(buffer) - 1;
  memcpy(buffer, message.data, n);
  buffer[n] = '\0';
  if (buffer[0] == '\0') { /* an error always says something (even for "" or "\0...") */
    strcpy(buffer, "raise_value_error() was called with an empty message");
  }
  parts[0] = buffer;
  TVMFFIErrorSetRaisedFromCStrParts("ValueError", parts, 1);
  return -1;
}
