/*
 * module_cxx.h -- modules as C++ sees them (see module_cxx.c).
 */
#ifndef TVM_FFI_FAST_MODULE_CXX_H_
#define TVM_FFI_FAST_MODULE_CXX_H_

#include "core.h"
#include "functions.h"

/* A zeroed Module object of size bytes (header first) with upstream's
 * ModuleObj vtable pointer 8 bytes before the header; NULL on failure. */
FR_HIDDEN void* fr_module_alloc(size_t size, void (*deleter)(void* self, int flags));
/* Frees the block of a module fr_module_alloc made. */
FR_HIDDEN void fr_module_free(void* module);
/* 1 when module was made by C++ (a ModuleObj subclass with its own vtable). */
FR_HIDDEN int fr_module_is_foreign(void* module);
/* The global ffi.Module<method> on a foreign module: the num_args converted
 * arguments a (a[0] the module) go to its virtual function. */
FR_HIDDEN int fr_module_foreign_global(const char* method, const FrArg* a, int32_t num_args,
                                       TVMFFIAny* rv);
/* method (GetFunction, GetFunctionDoc or GetFunctionMetadata) of a foreign
 * module for name, into *out (None when absent). */
FR_HIDDEN int fr_module_foreign_lookup(void* module, const char* method, const char* name,
                                       size_t size, int query_imports, TVMFFIAny* out);

/* Defines the typed global body fn: a foreign module's call goes to its
 * virtual function (method, num_args arguments), any other to fn_native,
 * defined after it. */
#define FR_MODULE_GLOBAL(fn, method, num_args)                                          \
  static int fn##_native(void* ctx, const FrArg* a, TVMFFIAny* rv);                     \
  static int fn(void* ctx, const FrArg* a, TVMFFIAny* rv) {                             \
    if (fr_module_is_foreign(a[0].value.v_obj)) {                                       \
      return fr_module_foreign_global(method, a, num_args, rv);                         \
    }                                                                                   \
    return fn##_native(ctx, a, rv);                                                     \
  }

#endif /* TVM_FFI_FAST_MODULE_CXX_H_ */
