/*
 * cffi_helpers.c -- the C helpers of the cffi core; see cffi_helpers.h.
 */
#include "cffi_helpers.h"

#include <string.h>

int tvm_ffi_cffi_str_or_bytes(const char* data, size_t size, int is_str, TVMFFIAny* out) {
  TVMFFIByteArray array;
  if (size <= 7) {
    out->type_index = is_str ? kTVMFFISmallStr : kTVMFFISmallBytes;
    out->small_str_len = (uint32_t)size;
    out->v_int64 = 0;
    if (size > 0) memcpy(out->v_bytes, data, size);
    return 0;
  }
  array.data = data;
  array.size = size;
  return is_str ? TVMFFIStringFromByteArray(&array, out) : TVMFFIBytesFromByteArray(&array, out);
}

int tvm_ffi_cffi_get_global(const char* name, size_t size, void** out) {
  TVMFFIByteArray array;
  array.data = name;
  array.size = size;
  return TVMFFIFunctionGetGlobal(&array, out);
}

int tvm_ffi_cffi_dtype_from_string(const char* data, size_t size, DLDataType* out) {
  TVMFFIByteArray array;
  array.data = data;
  array.size = size;
  return TVMFFIDataTypeFromString(&array, out);
}
