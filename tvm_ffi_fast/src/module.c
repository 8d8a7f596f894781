/*
 * module.c -- Module objects: shared libraries loaded with dlopen and the
 * system library, their imports, and the ffi.Module* global functions.
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
 */
#include "core.h"

#include <dlfcn.h>
#include <stdio.h>

#include "containers.h"
#include "functions.h"
#include "module_cxx.h"
#include "runtime.h"

enum { MODULE_LIBRARY = 0, MODULE_SYSTEM = 1 };

typedef struct {
  TVMFFIObject header;
  void* imports; /* an Array of modules */
  FrStrMap lookup_cache; /* name -> Function (owned), for TVMFFIEnvModLookupFromImports */
  int kind;
  void* dl_handle;    /* MODULE_LIBRARY */
  char* prefix;       /* MODULE_SYSTEM: the symbol prefix */
  size_t prefix_size;
} FrModule;

static FrMutex g_mutex = FR_MUTEX_INIT;
static FrStrMap g_system_symbols;  /* name -> address */
static FrStrMap g_system_modules;  /* prefix -> FrModule (owned) */
static char** g_context_names = NULL;
static void** g_context_values = NULL;
static size_t g_context_count = 0;
static void** g_module_globals = NULL; /* modules kept alive by ffi.ModuleGlobalsAdd */
static size_t g_module_globals_count = 0;

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

static FrModule* module_new(int kind) {
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
  fr_mutex_lock(&g_mutex);
  found = fr_strmap_get(&g_system_symbols, name, size);
  fr_mutex_unlock(&g_mutex);
  return found;
}

/* Library::GetSymbol: the raw symbol (the system library tries prefix+name, then name). */
static void* module_symbol(FrModule* m, const char* name) {
  if (m->kind == MODULE_LIBRARY) return dlsym(m->dl_handle, name);
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
  if (m->kind == MODULE_LIBRARY) {
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
static int find_function(FrModule* m, const char* name, size_t size, int query_imports,
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
    if (find_function(import, name, size, 1, out) != 0) return -1;
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
  getter = module_symbol(m, fr_buf_cstr(&buf));
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

static int find_string_symbol(FrModule* m, const char* prefix, const char* name, size_t size,
                              int query_imports, TVMFFIAny* out) {
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
    found = find_string_symbol(import, prefix, name, size, 1, out);
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
static int push_import(FrModule* m, void* other) {
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

static int import_module(FrModule* m, FrModule* other) {
  if (reaches(other, m)) return fr_raise("RuntimeError", "Cyclic dependency detected during import");
  return push_import(m, other);
}

static int clear_imports(FrModule* m) {
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
  fr_mutex_lock(&g_mutex);
  func = fr_strmap_get(&m->lookup_cache, func_name, size);
  if (func != NULL) {
    fr_mutex_unlock(&g_mutex);
    *out = func;
    return 0;
  }
  for (i = 0; i < fr_seq_size(m->imports) && func == NULL; ++i) {
    FrModule* import = (FrModule*)fr_seq_items(m->imports)[i].v_obj;
    if (find_function(import, func_name, size, 1, &func) != 0) goto fail;
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
  fr_mutex_unlock(&g_mutex);
  *out = func; /* borrowed: the cache keeps it */
  return 0;
fail:
  fr_mutex_unlock(&g_mutex);
  return -1;
}

/* ------------------------------------------------------------- loading */

/* Sets every registered context symbol the module defines. */
static void init_context_symbols(FrModule* m) {
  size_t i;
  fr_mutex_lock(&g_mutex);
  for (i = 0; i < g_context_count; ++i) {
    void** addr = (void**)module_symbol(m, g_context_names[i]);
    if (addr != NULL) *addr = g_context_values[i];
  }
  fr_mutex_unlock(&g_mutex);
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
      if (push_import(modules[i], modules[children[j]]) != 0) goto done;
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
  const char* bin = (const char*)module_symbol(m, "__tvm_ffi__library_bin");
  void** ctx_addr = (void**)module_symbol(m, "__tvm_ffi__library_ctx");
  init_context_symbols(m);
  if (bin != NULL) {
    FrModule* root = process_library_bin(m, bin, ctx_addr);
    fr_decref(m);
    return root;
  }
  if (ctx_addr != NULL) *ctx_addr = m;
  return m;
}

static FrModule* load_library(const char* path) {
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
  m = module_new(MODULE_LIBRARY);
  if (m == NULL) {
    dlclose(handle);
    return NULL;
  }
  m->dl_handle = handle;
  return finish_library(m);
}

static FrModule* system_lib(const char* prefix, size_t size) {
  FrModule* m;
  fr_mutex_lock(&g_mutex);
  m = (FrModule*)fr_strmap_get(&g_system_modules, prefix, size);
  if (m == NULL) {
    m = module_new(MODULE_SYSTEM);
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
  fr_mutex_unlock(&g_mutex);
  return m;
}

int fr_env_mod_register_context_symbol(const char* name, void* symbol) {
  char** names;
  void** values;
  if (name == NULL) {
    return fr_raise("ValueError", "TVMFFIEnvModRegisterContextSymbol: name must not be NULL");
  }
  fr_mutex_lock(&g_mutex);
  names = (char**)realloc(g_context_names, (g_context_count + 1) * sizeof(char*));
  if (names != NULL) g_context_names = names;
  values = (void**)realloc(g_context_values, (g_context_count + 1) * sizeof(void*));
  if (values != NULL) g_context_values = values;
  if (names == NULL || values == NULL ||
      (g_context_names[g_context_count] = fr_strndup(name, strlen(name))) == NULL) {
    fr_mutex_unlock(&g_mutex);
    return fr_raise_oom();
  }
  g_context_values[g_context_count] = symbol;
  g_context_count += 1;
  fr_mutex_unlock(&g_mutex);
  return 0;
}

int fr_env_mod_register_system_lib_symbol(const char* name, void* symbol) {
  void* previous;
  int status;
  if (name == NULL) {
    return fr_raise("ValueError", "TVMFFIEnvModRegisterSystemLibSymbol: name must not be NULL");
  }
  fr_mutex_lock(&g_mutex);
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
  fr_mutex_unlock(&g_mutex);
  return status == 0 ? 0 : fr_raise_oom();
}

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
  m = load_library(cpath);
  free(cpath);
  if (m == NULL) return -1;
  *rv = fr_any_object(m);
  return 0;
}

FR_MODULE_GLOBAL(module_implements, "ImplementsFunction", 3)
static int module_implements_native(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  TVMFFIByteArray name;
  void* f = NULL;
  (void)ctx;
  str_arg(&a[1], &name);
  if (find_function((FrModule*)a[0].value.v_obj, name.data, name.size, (int)a[2].value.v_int64,
                    &f) != 0) {
    return -1;
  }
  *rv = fr_any_bool(f != NULL);
  if (f != NULL) fr_decref(f);
  return 0;
}

FR_MODULE_GLOBAL(module_get_function, "GetFunction", 3)
static int module_get_function_native(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  TVMFFIByteArray name;
  void* f = NULL;
  (void)ctx;
  str_arg(&a[1], &name);
  if (find_function((FrModule*)a[0].value.v_obj, name.data, name.size, (int)a[2].value.v_int64,
                    &f) != 0) {
    return -1;
  }
  *rv = fr_any_object(f);
  return 0;
}

static int module_string_symbol(const FrArg* a, const char* prefix, TVMFFIAny* rv) {
  TVMFFIByteArray name;
  int found;
  str_arg(&a[1], &name);
  /* a foreign module answers in find_string_symbol */
  found = find_string_symbol((FrModule*)a[0].value.v_obj, prefix, name.data, name.size,
                             (int)a[2].value.v_int64, rv);
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
  return import_module((FrModule*)a[0].value.v_obj, (FrModule*)a[1].value.v_obj);
}

FR_MODULE_GLOBAL(module_clear_imports, "ClearImports", 1)
static int module_clear_imports_native(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  (void)ctx;
  *rv = fr_any_none();
  return clear_imports((FrModule*)a[0].value.v_obj);
}

static int module_globals_add(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  void* m = a[0].value.v_obj;
  size_t i;
  (void)ctx;
  *rv = fr_any_none();
  fr_mutex_lock(&g_mutex);
  for (i = 0; i < g_module_globals_count; ++i) {
    if (g_module_globals[i] == m) {
      fr_mutex_unlock(&g_mutex);
      return 0;
    }
  }
  {
    void** grown = (void**)realloc(g_module_globals, (g_module_globals_count + 1) * sizeof(void*));
    if (grown == NULL) {
      fr_mutex_unlock(&g_mutex);
      return fr_raise_oom();
    }
    g_module_globals = grown;
  }
  fr_incref(m);
  g_module_globals[g_module_globals_count++] = m;
  fr_mutex_unlock(&g_mutex);
  return 0;
}

static int module_globals_remove(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  void* m = a[0].value.v_obj;
  size_t i;
  (void)ctx;
  *rv = fr_any_none();
  fr_mutex_lock(&g_mutex);
  for (i = 0; i < g_module_globals_count; ++i) {
    if (g_module_globals[i] == m) {
      g_module_globals[i] = g_module_globals[--g_module_globals_count];
      fr_mutex_unlock(&g_mutex);
      fr_decref(m);
      return 0;
    }
  }
  fr_mutex_unlock(&g_mutex);
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
  m = system_lib(prefix.data, prefix.size);
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
