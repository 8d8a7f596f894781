/*
 * module.c -- Module objects: shared libraries loaded with dlopen and the
 * system library, their symbols, the functions they export and their imports.
 *
 * Its twin in the reference runtime: tvm_ffi_ref/runtime/module.py.
 *
 * A library module exposes each `__tvm_ffi_<name>` symbol as a function
 * (called with a NULL handle), `__tvm_ffi__metadata_<name>` and
 * `__tvm_ffi__doc_<name>` as the function's metadata and doc, and receives
 * its own address in `__tvm_ffi__library_ctx` (a borrowed pointer kernels pass
 * back to TVMFFIEnvModLookupFromImports). A `__tvm_ffi__library_bin` blob
 * describes an import tree of modules to rebuild (kind "_lib" is the library
 * itself; other kinds load through ffi.Module.load_from_bytes.<kind>).
 *
 * Layout: header, then the imports Array at offset 24 (where upstream's
 * reflected `imports_` field sits), then private state; 8 bytes before the
 * header, upstream's ModuleObj vtable pointer (module_cxx.c). A module C++ made
 * is served through its virtual functions instead (module_cxx.c).
 *
 * This file: the object, its symbols (and the system library's symbol
 * table), its functions and its imports. Making modules (dlopen, the system library, the import tree of a
 * library binary) is module_load.c; the ffi.Module* globals, module_globals.c.
 */
#include "module.h"

#include <dlfcn.h>
#include <stdio.h>

#include "containers.h"
#include "functions.h"
#include "module_cxx.h"
#include "runtime.h"

FrMutex fr_module_mutex = FR_MUTEX_INIT;
static FrStrMap g_system_symbols;  /* name -> address */

static void module_deleter(void* self, int flags) {
  FrModule* m = (FrModule*)self;
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    size_t i;
    if (m->imports != NULL) fr_decref(m->imports);
    for (i = 0; i < m->lookup_cache.capacity; ++i) {
      if (m->lookup_cache.keys[i] != NULL) {
        free(m->lookup_cache.keys[i]);
        fr_decref(m->lookup_cache.values[i]);
      }
    }
    free(m->lookup_cache.keys);
    free(m->lookup_cache.key_sizes);
    free(m->lookup_cache.values);
    free(m->prefix);
    if (m->dl_handle != NULL) dlclose(m->dl_handle);
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) fr_module_free(m);
}

FrModule* fr_module_new(int kind) {
  FrModule* m = (FrModule*)fr_module_alloc(sizeof(FrModule), module_deleter);
  if (m == NULL) return NULL;
  m->kind = kind;
  m->imports = fr_array_new(FR_SEQ_INIT_CAPACITY);
  if (m->imports == NULL) {
    fr_module_free(m);
    return NULL;
  }
  return m;
}

/* ------------------------------------------------------------- symbols */

static void* system_symbol(const char* name, size_t size) {
  void* found;
  fr_mutex_lock(&fr_module_mutex);
  found = fr_strmap_get(&g_system_symbols, name, size);
  fr_mutex_unlock(&fr_module_mutex);
  return found;
}

/* Library::GetSymbol: the raw symbol (the system library tries prefix+name, then name). */
void* fr_module_symbol(FrModule* m, const char* name) {
  if (m->kind == FR_MODULE_LIBRARY) return dlsym(m->dl_handle, name);
  {
    FrBuf buf;
    void* found;
    fr_buf_init(&buf);
    fr_buf_append(&buf, m->prefix, m->prefix_size);
    fr_buf_puts(&buf, name);
    found = system_symbol(fr_buf_cstr(&buf), buf.size);
    fr_buf_free(&buf);
    return found != NULL ? found : system_symbol(name, strlen(name));
  }
}

/* Library::GetSymbolWithSymbolPrefix: the symbol of the function `name`. */
static void* function_symbol(FrModule* m, const char* name, size_t size) {
  FrBuf buf;
  void* found;
  fr_buf_init(&buf);
  fr_buf_puts(&buf, "__tvm_ffi_");
  if (m->kind == FR_MODULE_LIBRARY) {
    fr_buf_append(&buf, name, size);
    found = dlsym(m->dl_handle, fr_buf_cstr(&buf));
  } else {
    fr_buf_append(&buf, m->prefix, m->prefix_size);
    fr_buf_append(&buf, name, size);
    found = system_symbol(fr_buf_cstr(&buf), buf.size);
    if (found == NULL) {
      buf.size = 0;
      fr_buf_puts(&buf, "__tvm_ffi_");
      fr_buf_append(&buf, name, size);
      found = system_symbol(fr_buf_cstr(&buf), buf.size);
    }
  }
  fr_buf_free(&buf);
  return found;
}

/* ------------------------------------------------------ module functions */

typedef struct {
  TVMFFISafeCallType faddr;
  void* module; /* keeps the library loaded while the function lives */
} FrLibFunction;

static void lib_function_free(void* p) {
  FrLibFunction* f = (FrLibFunction*)p;
  fr_decref(f->module);
  free(f);
}

static int lib_function_call(void* ctx, const TVMFFIAny* args, int32_t n, TVMFFIAny* rv) {
  FrLibFunction* f = (FrLibFunction*)ctx;
  if (rv->type_index >= kTVMFFIStaticObjectBegin) {
    return fr_raise("InternalError",
                    "Check failed: (rv->type_index()) < (ffi::TypeIndex::kTVMFFIStaticObjectBegin)");
  }
  return f->faddr(NULL, args, n, rv);
}

/* Module::GetFunction(name) of this module alone: a new Function or NULL (-1 on error). */
static int own_function(FrModule* m, const char* name, size_t size, void** out) {
  void* faddr = function_symbol(m, name, size);
  FrLibFunction* ctx;
  *out = NULL;
  if (faddr == NULL) return 0;
  ctx = (FrLibFunction*)malloc(sizeof(FrLibFunction));
  if (ctx == NULL) return fr_raise_oom();
  ctx->faddr = (TVMFFISafeCallType)faddr;
  ctx->module = m;
  fr_incref(m);
  *out = fr_function_new(lib_function_call, ctx, lib_function_free);
  if (*out == NULL) {
    lib_function_free(ctx);
    return -1;
  }
  return 0;
}

/* GetFunction(name, query_imports): self first, then each import depth first. */
int fr_module_find_function(FrModule* m, const char* name, size_t size, int query_imports,
                            void** out) {
  int64_t i;
  if (fr_module_is_foreign(m)) {
    TVMFFIAny found;
    if (fr_module_foreign_lookup(m, "GetFunction", name, size, query_imports, &found) != 0) {
      return -1;
    }
    *out = found.type_index == kTVMFFINone ? NULL : found.v_obj;
    return 0;
  }
  if (own_function(m, name, size, out) != 0) return -1;
  if (*out != NULL || !query_imports) return 0;
  for (i = 0; i < fr_seq_size(m->imports); ++i) {
    FrModule* import = (FrModule*)fr_seq_items(m->imports)[i].v_obj;
    if (fr_module_find_function(import, name, size, 1, out) != 0) return -1;
    if (*out != NULL) return 0;
  }
  return 0;
}

/* The string an exported metadata/doc getter returns: 1 found, 0 absent, -1 error. */
static int own_string_symbol(FrModule* m, const char* prefix, const char* name, size_t size,
                             TVMFFIAny* out) {
  FrBuf buf;
  void* getter;
  TVMFFIAny result = fr_any_none();
  TVMFFIByteArray text;
  fr_buf_init(&buf);
  fr_buf_puts(&buf, prefix);
  fr_buf_append(&buf, name, size);
  getter = fr_module_symbol(m, fr_buf_cstr(&buf));
  fr_buf_free(&buf);
  if (getter == NULL) return 0;
  if (((TVMFFISafeCallType)getter)(NULL, NULL, 0, &result) != 0) return -1;
  if (fr_any_str_view(&result, 0, &text) != 0) {
    fr_raise("TypeError", "Cannot convert from type `%s` to `str`",
             fr_type_key_of(result.type_index));
    fr_any_release(&result);
    return -1;
  }
  if (result.type_index == kTVMFFIRawStr) {
    if (fr_string_from_bytes(text.data, text.size, out) != 0) return -1;
  } else {
    *out = result;
  }
  return 1;
}

int fr_module_find_string_symbol(FrModule* m, const char* prefix, const char* name,
                                 size_t size, int query_imports, TVMFFIAny* out) {
  int64_t i;
  int found;
  if (fr_module_is_foreign(m)) {
    const char* method = strstr(prefix, "metadata") ? "GetFunctionMetadata" : "GetFunctionDoc";
    if (fr_module_foreign_lookup(m, method, name, size, query_imports, out) != 0) return -1;
    return out->type_index != kTVMFFINone;
  }
  found = own_string_symbol(m, prefix, name, size, out);
  if (found != 0 || !query_imports) return found;
  for (i = 0; i < fr_seq_size(m->imports); ++i) {
    FrModule* import = (FrModule*)fr_seq_items(m->imports)[i].v_obj;
    found = fr_module_find_string_symbol(import, prefix, name, size, 1, out);
    if (found != 0) return found;
  }
  return 0;
}

/* ------------------------------------------------------------- imports */

static int reaches(FrModule* from, FrModule* target) {
  int64_t i;
  if (from == target) return 1;
  for (i = 0; i < fr_seq_size(from->imports); ++i) {
    if (reaches((FrModule*)fr_seq_items(from->imports)[i].v_obj, target)) return 1;
  }
  return 0;
}

/* Appends to the imports Array (copy on write, growing by doubling as Array::push_back). */
int fr_module_push_import(FrModule* m, void* other) {
  FrSeq* imports = (FrSeq*)m->imports;
  if (fr_strong_count(imports) != 1 || imports->cell.size >= imports->cell.capacity) {
    int64_t cap = imports->cell.capacity;
    void* grown;
    if (imports->cell.size >= cap) cap = cap * 2 > cap + 1 ? cap * 2 : cap + 1;
    grown = fr_array_new(cap);
    if (grown == NULL) return -1;
    {
      int64_t i;
      for (i = 0; i < imports->cell.size; ++i) {
        fr_array_push_unchecked(grown, fr_any_copy(&fr_seq_items(imports)[i]));
      }
    }
    fr_decref(imports);
    m->imports = grown;
  }
  fr_incref(other);
  fr_array_push_unchecked(m->imports, fr_any_object(other));
  return 0;
}

int fr_module_import(FrModule* m, FrModule* other) {
  if (reaches(other, m)) return fr_raise("RuntimeError", "Cyclic dependency detected during import");
  return fr_module_push_import(m, other);
}

int fr_module_clear_imports(FrModule* m) {
  if (fr_strong_count(m->imports) == 1) {
    FrSeq* imports = (FrSeq*)m->imports;
    while (imports->cell.size > 0) {
      imports->cell.size -= 1;
      fr_any_release(&fr_seq_items(imports)[imports->cell.size]);
    }
  } else {
    void* fresh = fr_array_new(((FrSeq*)m->imports)->cell.capacity);
    if (fresh == NULL) return -1;
    fr_decref(m->imports);
    m->imports = fresh;
  }
  return 0;
}

int fr_env_mod_lookup_from_imports(TVMFFIObjectHandle library_ctx, const char* func_name,
                                   TVMFFIObjectHandle* out) {
  FrModule* m = (FrModule*)library_ctx;
  void* func = NULL;
  size_t size;
  int64_t i;
  FR_REQUIRE(m, "TVMFFIEnvModLookupFromImports", "library_ctx");
  FR_REQUIRE(func_name, "TVMFFIEnvModLookupFromImports", "func_name");
  FR_REQUIRE(out, "TVMFFIEnvModLookupFromImports", "out");
  if (fr_type_index(m) != kTVMFFIModule) {
    return fr_raise("TypeError", "TVMFFIEnvModLookupFromImports: library_ctx is not a module");
  }
  size = strlen(func_name);
  fr_mutex_lock(&fr_module_mutex);
  func = fr_strmap_get(&m->lookup_cache, func_name, size);
  if (func != NULL) {
    fr_mutex_unlock(&fr_module_mutex);
    *out = func;
    return 0;
  }
  for (i = 0; i < fr_seq_size(m->imports) && func == NULL; ++i) {
    FrModule* import = (FrModule*)fr_seq_items(m->imports)[i].v_obj;
    if (fr_module_find_function(import, func_name, size, 1, &func) != 0) goto fail;
  }
  if (func == NULL) func = fr_global_lookup(func_name, size);
  if (func == NULL) {
    fr_raise("RuntimeError", "Cannot find function %s in the imported modules or global registry.",
             func_name);
    goto fail;
  }
  if (fr_strmap_put(&m->lookup_cache, func_name, size, func) != 0) {
    fr_decref(func);
    fr_raise_oom();
    goto fail;
  }
  fr_mutex_unlock(&fr_module_mutex);
  *out = func; /* borrowed: the cache keeps it */
  return 0;
fail:
  fr_mutex_unlock(&fr_module_mutex);
  return -1;
}

int fr_env_mod_register_system_lib_symbol(const char* name, void* symbol) {
  void* previous;
  int status;
  if (name == NULL) {
    return fr_raise("ValueError", "TVMFFIEnvModRegisterSystemLibSymbol: name must not be NULL");
  }
  fr_mutex_lock(&fr_module_mutex);
  previous = fr_strmap_get(&g_system_symbols, name, strlen(name));
  if (previous != NULL && previous != symbol) {
    /* upstream's warning; a C++ stream prints a NULL void* as 0 */
    fprintf(stderr, "Warning:SystemLib symbol %s get overriden to a different address ", name);
    if (symbol != NULL) {
      fprintf(stderr, "%p->%p\n", symbol, previous);
    } else {
      fprintf(stderr, "0->%p\n", previous);
    }
  }
  status = fr_strmap_put(&g_system_symbols, name, strlen(name), symbol);
  fr_mutex_unlock(&fr_module_mutex);
  return status == 0 ? 0 : fr_raise_oom();
}
