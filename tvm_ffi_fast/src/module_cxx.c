/*
 * module_cxx.c -- modules and C++. Upstream's ModuleObj is a C++ class whose
 * vtable pointer sits 8 bytes before the object header; libtvm_ffi.so's C++
 * face (c_api/src/cxx_module.cc) supplies one whose virtual functions call
 * this runtime's ffi.Module* globals, and every module made here carries it.
 * A module C++ made carries its own vtable: the ffi.Module* globals and the
 * import walks hand it to libtvm_ffi.so, which calls its virtual functions.
 *
 * Its twin in the reference runtime: tvm_ffi_ref/runtime/module_cxx.py.
 */
#include "module_cxx.h"

#include <tvm_ffi_runtime.h>


void* fr_module_alloc(size_t size, void (*deleter)(void* self, int flags)) {
  void** block = (void**)calloc(1, sizeof(void*) + size);
  TVMFFIObject* obj;
  if (block == NULL) {
    fr_raise_oom();
    return NULL;
  }
  block[0] = tvm_ffi_runtime_module_vtable();
  obj = (TVMFFIObject*)(block + 1);
  obj->combined_ref_count = FR_BOTH_ONE;
  obj->type_index = kTVMFFIModule;
  obj->deleter = deleter;
  return obj;
}

void fr_module_free(void* module) { free((void**)module - 1); }

int fr_module_is_foreign(void* module) { return tvm_ffi_runtime_module_is_foreign(module); }

int fr_module_foreign_global(const char* method, const FrArg* a, int32_t num_args,
                             TVMFFIAny* rv) {
  TVMFFIAny args[3];
  int32_t i;
  for (i = 0; i < num_args && i < 3; ++i) args[i] = a[i].value;
  *rv = fr_any_none();
  return tvm_ffi_runtime_module_call(method, args, num_args, rv);
}

int fr_module_foreign_lookup(void* module, const char* method, const char* name, size_t size,
                             int query_imports, TVMFFIAny* out) {
  TVMFFIAny args[3];
  int status;
  args[0] = fr_any_object(module);
  if (fr_string_from_bytes(name, size, &args[1]) != 0) return -1;
  args[2] = fr_any_bool(query_imports);
  *out = fr_any_none();
  status = tvm_ffi_runtime_module_call(method, args, 3, out);
  fr_any_release(&args[1]);
  return status;
}
