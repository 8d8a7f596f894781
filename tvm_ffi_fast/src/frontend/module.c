/*
 * module.c -- creates tvm_ffi_fast._frontend, the module the Python API's core lives in.
 *
 * cffi builds tvm_ffi_fast._core and exposes plain C functions; the front
 * end needs real extension types (vectorcall, a handle slot freed without a
 * Python call). So _core exports one cffi-declared function,
 * tvm_ffi_fast_frontend_init(), which builds this second module with the
 * CPython API and puts it in sys.modules, where `from ._frontend import ...`
 * finds it. cffi releases the GIL around its calls: the function takes it.
 *
 * Also here: the hooks (the few Python objects the C reaches, looked up in
 * the package's modules on first use) and the interned attribute names.
 */
#include "frontend.h"

FxNames fx_names;

static struct PyModuleDef fx_module_def = {
    PyModuleDef_HEAD_INIT,
    "tvm_ffi_fast._frontend",
    "The compiled core of tvm_ffi_fast's Python API (see tvm_ffi_fast/src/frontend).",
    -1,
    NULL, /* methods are added in init, from pyapi.c */
    NULL, NULL, NULL, NULL};

/* ------------------------------------------------------------ hooks */

static const struct {
  const char* module;
  const char* path; /* attribute path inside the module, dotted */
} hook_specs[FX_HOOK_COUNT] = {
    [FX_HOOK_CHOOSE_SETTER] = {"tvm_ffi_fast.convert", "_choose_setter"},
    [FX_HOOK_FALLBACK_SET] = {"tvm_ffi_fast.convert", "_fallback_set"},
    [FX_HOOK_CALL_SCOPE] = {"tvm_ffi_fast.convert", "CallScope"},
    [FX_HOOK_CLASS_FOR_INDEX] = {"tvm_ffi_fast.object", "class_for_type_index"},
    [FX_HOOK_DTYPE] = {"tvm_ffi_fast.dtype", "dtype"},
    [FX_HOOK_DEVICE] = {"tvm_ffi_fast.device", "Device"},
    [FX_HOOK_ABI_VIOLATION] = {"tvm_ffi_fast.rules", "ABIViolation"},
    [FX_HOOK_ERROR_RAISED] = {"tvm_ffi_fast.error", "exception_to_error_raised"},
    [FX_HOOK_C_VOID_P] = {"ctypes", "c_void_p"},
    [FX_HOOK_INTEGRAL] = {"numbers", "Integral"},
};

static PyObject* hooks[FX_HOOK_COUNT];

PyObject* fx_hook(FxHook which) {
  PyObject* found = hooks[which];
  if (FX_LIKELY(found != NULL)) return found;
  found = PyImport_ImportModule(hook_specs[which].module);
  if (found == NULL) return NULL;
  {
    const char* path = hook_specs[which].path;
    while (*path) {
      const char* dot = strchr(path, '.');
      size_t n = dot ? (size_t)(dot - path) : strlen(path);
      PyObject* name = PyUnicode_FromStringAndSize(path, (Py_ssize_t)n);
      PyObject* next = name ? PyObject_GetAttr(found, name) : NULL;
      Py_XDECREF(name);
      Py_DECREF(found);
      if (next == NULL) return NULL;
      found = next;
      path += n + (dot != NULL);
    }
  }
  hooks[which] = found; /* kept for the life of the process */
  return found;
}

void fx_set_hook(FxHook which, PyObject* value) {
  PyObject* old = hooks[which];
  Py_INCREF(value);
  hooks[which] = value;
  Py_XDECREF(old);
}

/* ------------------------------------------------------------ init */

static int intern(PyObject** slot, const char* text) {
  *slot = PyUnicode_InternFromString(text);
  return *slot == NULL ? -1 : 0;
}

static int init_names(void) {
  if (intern(&fx_names.cached_object, "_tvm_ffi_cached_object") ||
      intern(&fx_names.dtype_tuple, "_tvm_ffi_dtype_tuple") ||
      intern(&fx_names.dlpack, "__dlpack__") ||
      intern(&fx_names.dlpack_device_type, "dlpack_device_type") ||
      intern(&fx_names.type_, "_type") || intern(&fx_names.index_, "_index") ||
      intern(&fx_names.index, "index") || intern(&fx_names.value, "value") ||
      intern(&fx_names.py_error, "py_error") || intern(&fx_names.close, "close") ||
      intern(&fx_names.owned, "owned") || intern(&fx_names.items, "items") ||
      intern(&fx_names.adopt, "_adopt") || intern(&fx_names.from_handle, "_tvm_ffi_from_handle") ||
      intern(&fx_names.exchange_attr, "__dlpack_c_exchange_api__") ||
      intern(&fx_names.env_stream, "__tvm_ffi_env_stream__") ||
      intern(&fx_names.view_of, "_view_of_dltensor") ||
      intern(&fx_names.ctx_api, "exchange_api") ||
      intern(&fx_names.ctx_device_type, "device_type") ||
      intern(&fx_names.ctx_device_id, "device_id") || intern(&fx_names.ctx_stream, "stream") ||
      intern(&fx_names.dlpack_keywords[0], "stream") ||
      intern(&fx_names.dlpack_keywords[1], "max_version") ||
      intern(&fx_names.dlpack_keywords[2], "dl_device") ||
      intern(&fx_names.dlpack_keywords[3], "copy")) {
    return -1;
  }
  fx_names.empty_tuple = PyTuple_New(0);
  return fx_names.empty_tuple == NULL ? -1 : 0;
}

static int add_int(PyObject* module, const char* name, long value) {
  return PyModule_AddIntConstant(module, name, value);
}

static int add_constants(PyObject* module) {
  static const struct {
    const char* name;
    long value;
  } constants[] = {
      {"KIND_NONE", FX_KIND_NONE},
      {"KIND_OBJECT", FX_KIND_OBJECT},
      {"KIND_DLPACK", FX_KIND_DLPACK},
      {"KIND_BOOL", FX_KIND_BOOL},
      {"KIND_INT", FX_KIND_INT},
      {"KIND_FLOAT", FX_KIND_FLOAT},
      {"KIND_DTYPE", FX_KIND_DTYPE},
      {"KIND_DEVICE", FX_KIND_DEVICE},
      {"KIND_NATIVE_STR", FX_KIND_NATIVE_STR},
      {"KIND_NATIVE_BYTES", FX_KIND_NATIVE_BYTES},
      {"KIND_NATIVE_SHAPE", FX_KIND_NATIVE_SHAPE},
      {"KIND_STR", FX_KIND_STR},
      {"KIND_BYTES", FX_KIND_BYTES},
      {"KIND_SEQUENCE", FX_KIND_SEQUENCE},
      {"KIND_DICT", FX_KIND_DICT},
      {"KIND_VOID_P", FX_KIND_VOID_P},
      {"KIND_CALLABLE", FX_KIND_CALLABLE},
      {"MODE_PLAIN", FX_MODE_PLAIN},
      {"MODE_STR", FX_MODE_STR},
      {"MODE_BYTES", FX_MODE_BYTES},
      {"MODE_SHAPE", FX_MODE_SHAPE},
      {"MODE_FROM_HANDLE", FX_MODE_FROM_HANDLE},
      {"MODE_ADOPT", FX_MODE_ADOPT},
  };
  size_t i;
  for (i = 0; i < sizeof(constants) / sizeof(constants[0]); ++i) {
    if (add_int(module, constants[i].name, constants[i].value) < 0) return -1;
  }
  return 0;
}

/*
 * Kernels reach Python's signal handling through the environment API
 * (TVMFFIEnvCheckSignals calls these, GIL taken), so that Ctrl-C during a
 * long kernel call becomes KeyboardInterrupt, as upstream and tvm_ffi_ref do.
 */
static int register_signal_checks(void) {
  if (TVMFFIEnvRegisterCAPI("PyErr_CheckSignals", (void*)PyErr_CheckSignals) != 0 ||
      TVMFFIEnvRegisterCAPI("PyGILState_Ensure", (void*)PyGILState_Ensure) != 0 ||
      TVMFFIEnvRegisterCAPI("PyGILState_Release", (void*)PyGILState_Release) != 0) {
    fx_raise_last_error();
    return -1;
  }
  return 0;
}

static int init_module(void) {
  PyObject *module, *modules, *name = NULL, *cache;
  PyMethodDef* def;
  if (init_names() < 0) return -1;
  module = PyModule_Create(&fx_module_def);
  if (module == NULL) return -1;
  name = PyModule_GetNameObject(module);
  if (name == NULL) goto fail;
  for (def = fx_module_methods; def->ml_name != NULL; ++def) {
    PyObject* func = PyCFunction_NewEx(def, NULL, name);
    if (func == NULL) goto fail;
    if (PyModule_AddObject(module, def->ml_name, func) < 0) {
      Py_DECREF(func);
      goto fail;
    }
  }
  if (PyModule_AddFunctions(module, fx_field_methods) < 0 ||
      PyModule_AddFunctions(module, fx_hold_methods) < 0) {
    goto fail;
  }
  if (fx_object_types_init(module) < 0 || fx_tensor_type_init(module) < 0 ||
      fx_field_types_init(module) < 0 ||
      fx_dlpack_init(module) < 0 ||
      add_constants(module) < 0) {
    goto fail;
  }
  cache = fx_kind_cache();
  if (cache == NULL) goto fail;
  Py_INCREF(cache);
  if (PyModule_AddObject(module, "kind_cache", cache) < 0) {
    Py_DECREF(cache);
    goto fail;
  }
  if (register_signal_checks() < 0) goto fail;
  modules = PyImport_GetModuleDict();
  if (PyDict_SetItemString(modules, "tvm_ffi_fast._frontend", module) < 0) goto fail;
  Py_DECREF(name);
  Py_DECREF(module);
  return 0;
fail:
  Py_XDECREF(name);
  Py_DECREF(module);
  return -1;
}

/*
 * Declared to cffi (_build.py): builds tvm_ffi_fast._frontend once. Returns 0,
 * or -1 with the Python error printed (cffi cannot carry a Python exception).
 */
int tvm_ffi_fast_frontend_init(void) {
  static int status = 1; /* 1: not yet run */
  PyGILState_STATE gil = PyGILState_Ensure();
  if (status == 1) {
    status = init_module();
    if (status != 0) PyErr_Print();
  }
  PyGILState_Release(gil);
  return status;
}
