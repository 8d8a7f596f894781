/*
 * cffi_helpers.h -- the few C helpers of the cffi core (tvm_ffi_fast/cffi_core).
 *
 * Each takes what Python hands cffi directly (a bytes object as const char* and its
 * length) and builds the TVMFFIByteArray a C API function wants, so that the core
 * makes no cffi struct per call. They call the C API as libtvm_ffi.so exports it.
 */
#ifndef TVM_FFI_FAST_CFFI_HELPERS_H_
#define TVM_FFI_FAST_CFFI_HELPERS_H_

#include <stddef.h>
#include <tvm/ffi/c_api.h>
#include <tvm/ffi/extra/c_env_api.h>

/* data[0:size] as an owned str (is_str) or bytes value: inline when at most 7 bytes (NUL
 * padded, as TVMFFIStringFromByteArray makes it), else a String/Bytes object. 0, or -1
 * with the error raised. */
int tvm_ffi_cffi_str_or_bytes(const char* data, size_t size, int is_str, TVMFFIAny* out);

/* TVMFFIFunctionGetGlobal of the name data[0:size]. */
int tvm_ffi_cffi_get_global(const char* name, size_t size, void** out);

/* TVMFFIDataTypeFromString of the text data[0:size]. */
int tvm_ffi_cffi_dtype_from_string(const char* data, size_t size, DLDataType* out);

#endif /* TVM_FFI_FAST_CFFI_HELPERS_H_ */
