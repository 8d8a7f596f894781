/*
 * module_globals.c -- the ffi.Module* global functions (loading from a file,
 * function lookups, properties, imports, ffi.ModuleGlobalsAdd/Remove,
 * ffi.SystemLib, the ".so" loader), in upstream's signatures. A module C++
 * made answers through its virtual functions (FR_MODULE_GLOBAL, module_cxx.h).
 *
 * Its twin in the reference runtime: tvm_ffi_ref/runtime/module.py.
 */
#include "module.h"

#include "containers.h"
#include "functions.h"
#include "module_cxx.h"
#include "runtime.h"

static void** g_module_globals = NULL; /* modules kept alive by ffi.ModuleGlobalsAdd */
static size_t g_module_globals_count = 0;

/* ---------------------------------------------------------- ffi.* globals */

static int str_arg(const FrArg* a, TVMFFIByteArray* out) { return fr_any_str_view(&a->value, 0, out); }

static int module_load_from_file(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  TVMFFIByteArray path;
  size_t i, dot = 0;
  int found = 0, status;
  FrBuf format, loader_name;
  void* loader;
  TVMFFIAny args[2], result;
  (void)ctx;
  str_arg(&a[0], &path);
  for (i = path.size; i > 0; --i) {
    if (path.data[i - 1] == '.') {
      dot = i;
      found = 1;
      break;
    }
  }
  if (!found) {
    return fr_raise("RuntimeError", "Failed to get file format from %.*s", (int)path.size,
                    path.data);
  }
  fr_buf_init(&format);
  fr_buf_append(&format, path.data + dot, path.size - dot);
  if (strcmp(fr_buf_cstr(&format), "dll") == 0 || strcmp(fr_buf_cstr(&format), "dylib") == 0 ||
      strcmp(fr_buf_cstr(&format), "dso") == 0) {
    format.size = 0;
    fr_buf_puts(&format, "so");
  }
  fr_buf_init(&loader_name);
  fr_buf_puts(&loader_name, "ffi.Module.load_from_file.");
  fr_buf_append(&loader_name, fr_buf_cstr(&format), format.size);
  loader = fr_global_lookup(fr_buf_cstr(&loader_name), loader_name.size);
  if (loader == NULL) {
    fr_raise("RuntimeError",
             "Loader for `.%s` files is not registered, resolved to (%s) in the global "
             "registry.Ensure that you have loaded the correct runtime code, andthat you are on "
             "the correct hardware architecture.",
             fr_buf_cstr(&format), fr_buf_cstr(&loader_name));
    fr_buf_free(&format);
    fr_buf_free(&loader_name);
    return -1;
  }
  args[0] = a[0].value;
  status = fr_string_from_bytes(fr_buf_cstr(&format), format.size, &args[1]);
  fr_buf_free(&format);
  fr_buf_free(&loader_name);
  if (status != 0) {
    fr_decref(loader);
    return -1;
  }
  status = fr_call(loader, args, 2, &result);
  fr_any_release(&args[1]);
  fr_decref(loader);
  if (status != 0) return -1;
  if (result.type_index != kTVMFFIModule) {
    fr_raise("TypeError", "Cannot convert from type `%s` to `ffi.Module`",
             fr_type_key_of(result.type_index));
    fr_any_release(&result);
    return -1;
  }
  *rv = result;
  return 0;
}

static int load_so(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  TVMFFIByteArray path;
  char* cpath;
  FrModule* m;
  (void)ctx;
  str_arg(&a[0], &path);
  cpath = fr_strndup(path.data, path.size);
  if (cpath == NULL) return fr_raise_oom();
  m = fr_module_load_library(cpath);
  free(cpath);
  if (m == NULL) return -1;
  *rv = fr_any_object(m);
  return 0;
}

/* (module, name, query imports): the module's function of that name, into *f (NULL when it
 * has none); shared by ImplementsFunction and GetFunction. */
static int find_named_function(const FrArg* a, void** f) {
  TVMFFIByteArray name;
  str_arg(&a[1], &name);
  return fr_module_find_function((FrModule*)a[0].value.v_obj, name.data, name.size,
                                 (int)a[2].value.v_int64, f);
}

FR_MODULE_GLOBAL(module_implements, "ImplementsFunction", 3)
static int module_implements_native(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  void* f = NULL;
  (void)ctx;
  if (find_named_function(a, &f) != 0) return -1;
  *rv = fr_any_bool(f != NULL);
  if (f != NULL) fr_decref(f);
  return 0;
}

FR_MODULE_GLOBAL(module_get_function, "GetFunction", 3)
static int module_get_function_native(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  void* f = NULL;
  (void)ctx;
  if (find_named_function(a, &f) != 0) return -1;
  *rv = fr_any_object(f);
  return 0;
}

static int module_string_symbol(const FrArg* a, const char* prefix, TVMFFIAny* rv) {
  TVMFFIByteArray name;
  int found;
  str_arg(&a[1], &name);
  /* a foreign module answers in fr_module_find_string_symbol */
  found = fr_module_find_string_symbol((FrModule*)a[0].value.v_obj, prefix, name.data,
                                       name.size, (int)a[2].value.v_int64, rv);
  if (found < 0) return -1;
  if (found == 0) *rv = fr_any_none();
  return 0;
}

static int module_get_metadata(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  (void)ctx;
  return module_string_symbol(a, "__tvm_ffi__metadata_", rv);
}

static int module_get_doc(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  (void)ctx;
  return module_string_symbol(a, "__tvm_ffi__doc_", rv);
}

FR_MODULE_GLOBAL(module_property_mask, "GetPropertyMask", 1)
static int module_property_mask_native(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  (void)ctx;
  (void)a;
  *rv = fr_any_int(0x3); /* kBinarySerializable | kRunnable */
  return 0;
}

FR_MODULE_GLOBAL(module_inspect_source, "InspectSource", 2)
static int module_inspect_source_native(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  (void)ctx;
  (void)a;
  return fr_string_from_bytes("", 0, rv);
}

FR_MODULE_GLOBAL(module_kind, "GetKind", 1)
static int module_kind_native(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  (void)ctx;
  (void)a;
  return fr_string_from_bytes("library", 7, rv);
}

FR_MODULE_GLOBAL(module_write_formats, "GetWriteFormats", 1)
static int module_write_formats_native(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  void* array = fr_array_new(0);
  (void)ctx;
  (void)a;
  if (array == NULL) return -1;
  *rv = fr_any_object(array);
  return 0;
}

FR_MODULE_GLOBAL(module_write_to_file, "WriteToFile", 3)
static int module_write_to_file_native(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  (void)ctx;
  (void)a;
  (void)rv;
  return fr_raise("RuntimeError", "Module[library] does not support WriteToFile");
}

FR_MODULE_GLOBAL(module_import, "ImportModule", 2)
static int module_import_native(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  (void)ctx;
  *rv = fr_any_none();
  return fr_module_import((FrModule*)a[0].value.v_obj, (FrModule*)a[1].value.v_obj);
}

FR_MODULE_GLOBAL(module_clear_imports, "ClearImports", 1)
static int module_clear_imports_native(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  (void)ctx;
  *rv = fr_any_none();
  return fr_module_clear_imports((FrModule*)a[0].value.v_obj);
}

static int module_globals_add(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  void* m = a[0].value.v_obj;
  size_t i;
  (void)ctx;
  *rv = fr_any_none();
  fr_mutex_lock(&fr_module_mutex);
  for (i = 0; i < g_module_globals_count; ++i) {
    if (g_module_globals[i] == m) {
      fr_mutex_unlock(&fr_module_mutex);
      return 0;
    }
  }
  {
    void** grown = (void**)realloc(g_module_globals, (g_module_globals_count + 1) * sizeof(void*));
    if (grown == NULL) {
      fr_mutex_unlock(&fr_module_mutex);
      return fr_raise_oom();
    }
    g_module_globals = grown;
  }
  fr_incref(m);
  g_module_globals[g_module_globals_count++] = m;
  fr_mutex_unlock(&fr_module_mutex);
  return 0;
}

static int module_globals_remove(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  void* m = a[0].value.v_obj;
  size_t i;
  (void)ctx;
  *rv = fr_any_none();
  fr_mutex_lock(&fr_module_mutex);
  for (i = 0; i < g_module_globals_count; ++i) {
    if (g_module_globals[i] == m) {
      g_module_globals[i] = g_module_globals[--g_module_globals_count];
      fr_mutex_unlock(&fr_module_mutex);
      fr_decref(m);
      return 0;
    }
  }
  fr_mutex_unlock(&fr_module_mutex);
  return 0;
}

static int system_lib_fn(void* ctx, const TVMFFIAny* args, int32_t n, TVMFFIAny* rv) {
  TVMFFIByteArray prefix = {"", 0};
  FrModule* m;
  (void)ctx;
  if (n != 0 && fr_any_str_view(&args[0], 0, &prefix) != 0) {
    return fr_raise("TypeError", "Cannot convert from type `%s` to `str`",
                    fr_type_key_of(args[0].type_index));
  }
  m = fr_module_system_lib(prefix.data, prefix.size);
  if (m == NULL) return -1;
  *rv = fr_any_object(m);
  return 0;
}

#define T(x) FR_T_##x
static const FrBuiltin kBuiltins[] = {
    {"ffi.ModuleLoadFromFile", module_load_from_file, NULL, 1, {T(STR)}, T(MODULE)},
    {"ffi.ModuleImplementsFunction", module_implements, NULL, 3, {T(MODULE), T(STR), T(BOOL)},
     T(BOOL)},
    {"ffi.ModuleGetFunctionMetadata", module_get_metadata, NULL, 3, {T(MODULE), T(STR), T(BOOL)},
     T(OPT_STR)},
    {"ffi.ModuleGetFunctionDoc", module_get_doc, NULL, 3, {T(MODULE), T(STR), T(BOOL)},
     T(OPT_STR)},
    {"ffi.ModuleGetFunction", module_get_function, NULL, 3, {T(MODULE), T(STR), T(BOOL)},
     T(OPT_FUNC)},
    {"ffi.ModuleGetPropertyMask", module_property_mask, NULL, 1, {T(MODULE)}, T(INT)},
    {"ffi.ModuleInspectSource", module_inspect_source, NULL, 2, {T(MODULE), T(STR)}, T(STR)},
    {"ffi.ModuleGetKind", module_kind, NULL, 1, {T(MODULE)}, T(STR)},
    {"ffi.ModuleGetWriteFormats", module_write_formats, NULL, 1, {T(MODULE)}, T(ARRAY_STR)},
    {"ffi.ModuleWriteToFile", module_write_to_file, NULL, 3, {T(MODULE), T(STR), T(STR)},
     T(VOID)},
    {"ffi.ModuleImportModule", module_import, NULL, 2, {T(MODULE), T(MODULE)}, T(VOID)},
    {"ffi.ModuleClearImports", module_clear_imports, NULL, 1, {T(MODULE)}, T(VOID)},
    {"ffi.ModuleGlobalsAdd", module_globals_add, NULL, 1, {T(MODULE)}, T(VOID)},
    {"ffi.ModuleGlobalsRemove", module_globals_remove, NULL, 1, {T(MODULE)}, T(VOID)},
    {"ffi.SystemLib", NULL, system_lib_fn, 0, {0}, T(VOID)},
    {"ffi.Module.load_from_file.so", load_so, NULL, 2, {T(STR), T(STR)}, T(MODULE)},
};
#undef T

int fr_module_register_globals(void) {
  return fr_register_builtins(kBuiltins, sizeof(kBuiltins) / sizeof(kBuiltins[0]));
}
