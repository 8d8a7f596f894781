/*
 * module.h -- what the native modules' files share: the Module object this
 * runtime makes (module.c), how modules are made (module_load.c) and their
 * ffi.Module* globals (module_globals.c). Modules C++ made: module_cxx.h.
 */
#ifndef TVM_FFI_FAST_MODULE_H_
#define TVM_FFI_FAST_MODULE_H_

#include "core.h"

enum { FR_MODULE_LIBRARY = 0, FR_MODULE_SYSTEM = 1 };

typedef struct {
  TVMFFIObject header;
  void* imports; /* an Array of modules */
  FrStrMap lookup_cache; /* name -> Function (owned), for TVMFFIEnvModLookupFromImports */
  int kind;
  void* dl_handle;    /* FR_MODULE_LIBRARY */
  char* prefix;       /* FR_MODULE_SYSTEM: the symbol prefix */
  size_t prefix_size;
} FrModule;

/* Guards the symbol tables, the system-library modules, every module's lookup
 * cache and the modules ffi.ModuleGlobalsAdd keeps (recursive: loading a
 * system library sets its context symbols under it). */
FR_HIDDEN extern FrMutex fr_module_mutex;

/* module.c: the object, its symbols, functions and imports. */
FR_HIDDEN FrModule* fr_module_new(int kind);
/* Library::GetSymbol: the raw symbol (the system library tries prefix+name, then name). */
FR_HIDDEN void* fr_module_symbol(FrModule* m, const char* name);
/* GetFunction(name, query_imports): a new Function or NULL in *out; -1 on error. */
FR_HIDDEN int fr_module_find_function(FrModule* m, const char* name, size_t size,
                                      int query_imports, void** out);
/* The metadata/doc string (symbol prefix) of a function: 1 found, 0 absent, -1 error. */
FR_HIDDEN int fr_module_find_string_symbol(FrModule* m, const char* prefix, const char* name,
                                           size_t size, int query_imports, TVMFFIAny* out);
/* Appends other to m's imports (no cycle check); -1 on error. */
FR_HIDDEN int fr_module_push_import(FrModule* m, void* other);
/* ImportModule: a RuntimeError when other already reaches m. */
FR_HIDDEN int fr_module_import(FrModule* m, FrModule* other);
FR_HIDDEN int fr_module_clear_imports(FrModule* m);

/* module_load.c: a module made from a shared library at path, or the system
 * library of a symbol prefix (one per prefix); a new reference, NULL on error. */
FR_HIDDEN FrModule* fr_module_load_library(const char* path);
FR_HIDDEN FrModule* fr_module_system_lib(const char* prefix, size_t size);

#endif /* TVM_FFI_FAST_MODULE_H_ */
