/*
 * module_load.c -- how library modules are made: dlopen'ed shared libraries and
 * the system library (one module per symbol prefix), the context symbols set
 * in each, and the import tree a `__tvm_ffi__library_bin` blob describes
 * (kind "_lib" is the library itself; other kinds load through
 * ffi.Module.load_from_bytes.<kind>). Separate from module.c: it builds
 * modules, module.c serves them.
 *
 * Its twin in the reference runtime: tvm_ffi_ref/runtime/module.py.
 */
#include "module.h"

#include <dlfcn.h>

#include "containers.h"
#include "functions.h"
#include "runtime.h"

static FrStrMap g_system_modules;  /* prefix -> FrModule (owned) */
static char** g_context_names = NULL;
static void** g_context_values = NULL;
static size_t g_context_count = 0;

/* ------------------------------------------------------------- loading */

/* Sets every registered context symbol the module defines. */
static void init_context_symbols(FrModule* m) {
  size_t i;
  fr_mutex_lock(&fr_module_mutex);
  for (i = 0; i < g_context_count; ++i) {
    void** addr = (void**)fr_module_symbol(m, g_context_names[i]);
    if (addr != NULL) *addr = g_context_values[i];
  }
  fr_mutex_unlock(&fr_module_mutex);
}

typedef struct {
  const char* data;
  size_t size;
  size_t pos;
} FrReader;

static int read_u64(FrReader* r, uint64_t* out) {
  if (r->size - r->pos < 8) return -1;
  memcpy(out, r->data + r->pos, 8);
  r->pos += 8;
  return 0;
}

static int read_u64_vector(FrReader* r, uint64_t** out, uint64_t* count) {
  uint64_t i;
  if (read_u64(r, count) != 0 || *count > (r->size - r->pos) / 8) return -1;
  *out = (uint64_t*)malloc((size_t)(*count == 0 ? 1 : *count) * sizeof(uint64_t));
  if (*out == NULL) return -1;
  for (i = 0; i < *count; ++i) read_u64(r, &(*out)[i]);
  return 0;
}

static int read_string(FrReader* r, const char** data, uint64_t* size) {
  if (read_u64(r, size) != 0 || *size > r->size - r->pos) return -1;
  *data = r->data + r->pos;
  r->pos += (size_t)*size;
  return 0;
}

/* Rebuilds the import tree a library's __tvm_ffi__library_bin describes. */
static FrModule* process_library_bin(FrModule* lib, const char* bin, void** ctx_addr) {
  FrReader r;
  uint64_t nbytes = 0, num_ptr = 0, num_child = 0, i, j, num_modules;
  uint64_t* indptr = NULL;
  uint64_t* children = NULL;
  FrModule** modules = NULL;
  FrModule* root = NULL;
  size_t k;
  for (k = 0; k < 8; ++k) nbytes |= (uint64_t)(unsigned char)bin[k] << (k * 8);
  r.data = bin + 8;
  r.size = (size_t)nbytes;
  r.pos = 0;
  if (read_u64_vector(&r, &indptr, &num_ptr) != 0 || num_ptr == 0 ||
      read_u64_vector(&r, &children, &num_child) != 0) {
    fr_raise("InternalError", "Check failed: stream.Read(&import_tree): malformed library binary");
    goto done;
  }
  num_modules = num_ptr - 1;
  modules = (FrModule**)calloc((size_t)(num_modules == 0 ? 1 : num_modules), sizeof(FrModule*));
  if (modules == NULL) {
    fr_raise_oom();
    goto done;
  }
  for (i = 0; i < num_modules; ++i) {
    const char* kind;
    uint64_t kind_size;
    if (read_string(&r, &kind, &kind_size) != 0) {
      fr_raise("InternalError", "Check failed: stream.Read(&kind): malformed library binary");
      goto done;
    }
    if (kind_size == 4 && memcmp(kind, "_lib", 4) == 0) {
      fr_incref(lib);
      modules[i] = lib;
      if (ctx_addr != NULL) *ctx_addr = lib;
    } else {
      const char* bytes;
      uint64_t bytes_size;
      FrBuf loader_name;
      void* loader;
      TVMFFIAny arg, result;
      int status;
      if (read_string(&r, &bytes, &bytes_size) != 0) {
        fr_raise("InternalError", "Check failed: stream.Read(&module_bytes): malformed binary");
        goto done;
      }
      fr_buf_init(&loader_name);
      fr_buf_puts(&loader_name, "ffi.Module.load_from_bytes.");
      fr_buf_append(&loader_name, kind, (size_t)kind_size);
      loader = fr_global_lookup(fr_buf_cstr(&loader_name), loader_name.size);
      if (loader == NULL) {
        fr_raise("RuntimeError",
                 "Library binary was created using {%.*s} but a loader of that name is not "
                 "registered. Make sure to have runtime that registers %s",
                 (int)kind_size, kind, fr_buf_cstr(&loader_name));
        fr_buf_free(&loader_name);
        goto done;
      }
      fr_buf_free(&loader_name);
      if (fr_bytes_from_bytes(bytes, (size_t)bytes_size, &arg) != 0) {
        fr_decref(loader);
        goto done;
      }
      status = fr_call(loader, &arg, 1, &result);
      fr_any_release(&arg);
      fr_decref(loader);
      if (status != 0) goto done;
      if (result.type_index != kTVMFFIModule) {
        fr_raise("TypeError", "Cannot convert from type `%s` to `ffi.Module`",
                 fr_type_key_of(result.type_index));
        fr_any_release(&result);
        goto done;
      }
      modules[i] = (FrModule*)result.v_obj;
    }
  }
  for (i = 0; i < num_modules; ++i) {
    for (j = indptr[i]; j < indptr[i + 1]; ++j) {
      if (j >= num_child || children[j] >= num_modules) {
        fr_raise("InternalError", "Check failed: child_index < modules.size()");
        goto done;
      }
      if (fr_module_push_import(modules[i], modules[children[j]]) != 0) goto done;
    }
  }
  root = modules[0];
  fr_incref(root);
done:
  if (modules != NULL) {
    for (i = 0; i < num_modules; ++i) {
      if (modules[i] != NULL) fr_decref(modules[i]);
    }
  }
  free(modules);
  free(indptr);
  free(children);
  return root;
}

/* CreateLibraryModule: context symbols, then the import tree or the module itself. */
static FrModule* finish_library(FrModule* m) {
  const char* bin = (const char*)fr_module_symbol(m, "__tvm_ffi__library_bin");
  void** ctx_addr = (void**)fr_module_symbol(m, "__tvm_ffi__library_ctx");
  init_context_symbols(m);
  if (bin != NULL) {
    FrModule* root = process_library_bin(m, bin, ctx_addr);
    fr_decref(m);
    return root;
  }
  if (ctx_addr != NULL) *ctx_addr = m;
  return m;
}

FrModule* fr_module_load_library(const char* path) {
  FrModule* m;
  void* handle = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
  if (handle == NULL) {
    const char* why = dlerror();
    fr_raise("InternalError",
             "Check failed: (lib_handle_ != nullptr) is false: Failed to load dynamic shared "
             "library %s %s",
             path, why != NULL ? why : "");
    return NULL;
  }
  m = fr_module_new(FR_MODULE_LIBRARY);
  if (m == NULL) {
    dlclose(handle);
    return NULL;
  }
  m->dl_handle = handle;
  return finish_library(m);
}

FrModule* fr_module_system_lib(const char* prefix, size_t size) {
  FrModule* m;
  fr_mutex_lock(&fr_module_mutex);
  m = (FrModule*)fr_strmap_get(&g_system_modules, prefix, size);
  if (m == NULL) {
    m = fr_module_new(FR_MODULE_SYSTEM);
    if (m != NULL) {
      m->prefix = fr_strndup(prefix, size);
      m->prefix_size = size;
      m = m->prefix != NULL ? finish_library(m) : (fr_decref(m), fr_raise_oom(), NULL);
    }
    if (m != NULL && fr_strmap_put(&g_system_modules, prefix, size, m) != 0) {
      fr_decref(m);
      m = NULL;
      fr_raise_oom();
    }
  }
  if (m != NULL) fr_incref(m);
  fr_mutex_unlock(&fr_module_mutex);
  return m;
}

int fr_env_mod_register_context_symbol(const char* name, void* symbol) {
  char** names;
  void** values;
  if (name == NULL) {
    return fr_raise("ValueError", "TVMFFIEnvModRegisterContextSymbol: name must not be NULL");
  }
  fr_mutex_lock(&fr_module_mutex);
  names = (char**)realloc(g_context_names, (g_context_count + 1) * sizeof(char*));
  if (names != NULL) g_context_names = names;
  values = (void**)realloc(g_context_values, (g_context_count + 1) * sizeof(void*));
  if (values != NULL) g_context_values = values;
  if (names == NULL || values == NULL ||
      (g_context_names[g_context_count] = fr_strndup(name, strlen(name))) == NULL) {
    fr_mutex_unlock(&fr_module_mutex);
    return fr_raise_oom();
  }
  g_context_values[g_context_count] = symbol;
  g_context_count += 1;
  fr_mutex_unlock(&fr_module_mutex);
  return 0;
}
