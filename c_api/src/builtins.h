/*
 * builtins.h -- the built-in slot implementations of libtvm_ffi.so.
 *
 * tvm_ffi_builtins_table() is a complete TVMFFIRuntimeTable: real
 * implementations where no type registry is needed, clean failures elsewhere.
 * dispatch.c serves it before a runtime is installed and fills a runtime's NULL
 * slots from it.
 */
#ifndef TVM_FFI_SRC_BUILTINS_H_
#define TVM_FFI_SRC_BUILTINS_H_

#include <tvm_ffi_runtime.h>

/* The complete built-in table (name "builtin"). */
const TVMFFIRuntimeTable* tvm_ffi_builtins_table(void);

/* Sets the name reported by the failing built-ins ("no runtime" vs. a runtime's name). */
void tvm_ffi_builtins_set_serving_runtime(const char* name);

#endif /* TVM_FFI_SRC_BUILTINS_H_ */
