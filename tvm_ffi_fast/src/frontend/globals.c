/*
 * globals.c -- the runtime's ffi.* functions the core calls on hot paths.
 *
 * Containers are built and looked up through the runtime's own global
 * functions (ffi.Array, ffi.Map, ffi.MapGetItemOrMissing, ...), exactly as
 * C++ code would, so the core works over any runtime. Each is looked up once
 * and kept (like tvm_ffi_ref's container._ffi); calls go straight to the
 * function's safe_call.
 */
#include "frontend.h"

static const char* global_names[FX_G_COUNT] = {
    [FX_G_ARRAY] = "ffi.Array",
    [FX_G_MAP] = "ffi.Map",
    [FX_G_DICT] = "ffi.Dict",
    [FX_G_MAP_GET_ITEM_OR_MISSING] = "ffi.MapGetItemOrMissing",
    [FX_G_DICT_GET_ITEM_OR_MISSING] = "ffi.DictGetItemOrMissing",
    [FX_G_CONTAINER_FIND_FIRST_NON_CPU_DEVICE] = "ffi.ContainerFindFirstNonCPUDevice",
    [FX_G_SHAPE] = "ffi.Shape",
};

static void* globals[FX_G_COUNT];
static void* missing_marker;

static void* lookup(const char* name) {
  TVMFFIByteArray key;
  TVMFFIObjectHandle handle = NULL;
  key.data = name;
  key.size = strlen(name);
  if (TVMFFIFunctionGetGlobal(&key, &handle) != 0) return fx_raise_last_error(), NULL;
  if (handle == NULL) {
    PyErr_Format(PyExc_RuntimeError,
                 "the installed TVM FFI runtime has no global function %s", name);
  }
  return handle;
}

void* fx_global(FxGlobal which) {
  if (FX_UNLIKELY(globals[which] == NULL)) globals[which] = lookup(global_names[which]);
  return globals[which];
}

int fx_call_runtime(void* func, TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  int status = fx_safe_call(func, args, num_args, result);
  if (FX_UNLIKELY(status != 0)) {
    fx_any_clear(result);
    fx_raise_status(status);
    return -1;
  }
  return 0;
}

void* fx_missing_marker(void) {
  if (FX_UNLIKELY(missing_marker == NULL)) {
    void* func = lookup("ffi.GetInvalidObject");
    TVMFFIAny result;
    if (func == NULL) return NULL;
    fx_any_clear(&result);
    if (fx_call_runtime(func, NULL, 0, &result) == 0) {
      if (result.type_index >= kTVMFFIStaticObjectBegin) {
        missing_marker = result.v_ptr; /* kept for the process */
      } else {
        PyErr_SetString(PyExc_RuntimeError, "ffi.GetInvalidObject returned no object");
      }
    }
    fx_decref(func);
  }
  return missing_marker;
}
