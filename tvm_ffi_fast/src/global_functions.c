/*
 * global_functions.c -- the global function table and its ffi.* functions.
 *
 * Its twin in the reference runtime: tvm_ffi_ref/runtime/global_functions.py.
 *
 * Upstream keeps the table in a Map<String, Entry>; listing the names walks
 * that map, so the order names come back in (insertion order, with an
 * overridden name moving to the end once the table is in the dense layout) is
 * the map's. The table here is the same kind of map, so it lists the same way.
 */
#include "core.h"

#include "containers.h"
#include "functions.h"
#include "registry.h"

/* One registered function: name, doc, metadata and the Function (an ffi.Object). */
typedef struct {
  TVMFFIObject header;
  char* name;
  size_t name_size;
  char* doc;
  size_t doc_size;
  char* metadata;
  size_t metadata_size;
  void* func;
  int64_t flags;
} FrGlobalEntry;

static FrMutex g_mutex = FR_MUTEX_INIT;
static void* g_table = NULL; /* a Map: String -> FrGlobalEntry */

static void entry_deleter(void* self, int flags) {
  FrGlobalEntry* e = (FrGlobalEntry*)self;
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    free(e->name);
    free(e->doc);
    free(e->metadata);
    if (e->func != NULL) fr_decref(e->func);
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) free(e);
}

static FrGlobalEntry* entry_new(const TVMFFIByteArray* name, const TVMFFIByteArray* doc,
                                const TVMFFIByteArray* metadata, void* func, int64_t flags) {
  FrGlobalEntry* e =
      (FrGlobalEntry*)fr_object_alloc(sizeof(FrGlobalEntry), kTVMFFIObject, entry_deleter);
  if (e == NULL) return NULL;
  e->name = fr_strndup(name->data, name->size);
  e->name_size = name->size;
  e->doc = fr_strndup(doc != NULL ? doc->data : "", doc != NULL ? doc->size : 0);
  e->doc_size = doc != NULL ? doc->size : 0;
  e->metadata = fr_strndup(metadata != NULL ? metadata->data : "",
                           metadata != NULL ? metadata->size : 0);
  e->metadata_size = metadata != NULL ? metadata->size : 0;
  e->flags = flags;
  if (e->name == NULL || e->doc == NULL || e->metadata == NULL) {
    fr_decref(e);
    fr_raise_oom();
    return NULL;
  }
  fr_incref(func);
  e->func = func;
  return e;
}

static int ensure_table(void) {
  if (g_table == NULL) {
    g_table = fr_map_new(kTVMFFIMap);
    if (g_table == NULL) return -1;
  }
  return 0;
}

/*
 * A String key viewing name without allocating: the small form, or a String
 * object on the caller's stack (lookups only read keys, never keep them).
 */
typedef struct {
  TVMFFIObject header;
  TVMFFIByteArray cell;
} FrStackString;

static TVMFFIAny stack_key(const char* name, size_t size, FrStackString* storage) {
  TVMFFIAny key;
  if (size <= 7) {
    key.type_index = kTVMFFISmallStr;
    key.small_str_len = (uint32_t)size;
    key.v_int64 = 0;
    if (size != 0) memcpy(key.v_bytes, name, size);
    return key;
  }
  memset(&storage->header, 0, sizeof(storage->header));
  storage->header.combined_ref_count = FR_BOTH_ONE;
  storage->header.type_index = kTVMFFIStr;
  storage->cell.data = name;
  storage->cell.size = size;
  key.type_index = kTVMFFIStr;
  key.zero_padding = 0;
  key.v_ptr = storage;
  return key;
}

/* The entry of name (borrowed; caller holds the lock), or NULL. */
static FrGlobalEntry* find_locked(const char* name, size_t size, int* status) {
  FrStackString storage;
  TVMFFIAny key;
  TVMFFIAny* slot = NULL;
  int found;
  *status = 0;
  if (g_table == NULL) return NULL;
  key = stack_key(name, size, &storage);
  found = fr_map_find(g_table, &key, &slot);
  if (found < 0) *status = -1;
  return found == 1 ? (FrGlobalEntry*)slot->v_obj : NULL;
}

/*
 * The table's lock is never held while a reference the table drops reaches
 * zero: the entry being replaced or removed is kept alive past the unlock,
 * because its function's deleter may run foreign code (a Python callback's
 * needs the GIL, and a thread holding the GIL may be waiting for this lock).
 */
static int update(const TVMFFIByteArray* name, const TVMFFIByteArray* doc,
                  const TVMFFIByteArray* metadata, void* func, int64_t flags,
                  int allow_override, int detailed_message) {
  FrGlobalEntry* entry;
  FrGlobalEntry* replaced;
  TVMFFIAny key;
  int status;
  fr_mutex_lock(&g_mutex);
  if (ensure_table() != 0) goto fail;
  replaced = find_locked(name->data, name->size, &status);
  if (replaced != NULL && !allow_override) {
    if (detailed_message) {
      fr_raise("RuntimeError",
               "Global Function `%.*s` is already registered, possible causes:\n"
               "- Two GlobalDef().def registrations for the same function \n"
               "Please remove the duplicate registration.",
               (int)name->size, name->data);
    } else {
      fr_raise("RuntimeError", "Global Function `%.*s` is already registered", (int)name->size,
               name->data);
    }
    goto fail;
  }
  if (status != 0) goto fail;
  entry = entry_new(name, doc, metadata, func, flags);
  if (entry == NULL) goto fail;
  if (fr_string_from_bytes(name->data, name->size, &key) != 0) {
    fr_mutex_unlock(&g_mutex);
    fr_decref(entry);
    return -1;
  }
  if (replaced != NULL) fr_incref(replaced);
  status = fr_map_set(&g_table, key, fr_any_object(entry));
  fr_mutex_unlock(&g_mutex);
  if (replaced != NULL) fr_decref(replaced);
  return status != 0 ? -1 : 0;
fail:
  fr_mutex_unlock(&g_mutex);
  return -1;
}

int fr_function_set_global(const TVMFFIByteArray* name, TVMFFIObjectHandle f, int allow_override) {
  FR_REQUIRE(name, "TVMFFIFunctionSetGlobal", "name");
  FR_REQUIRE(f, "TVMFFIFunctionSetGlobal", "f");
  if (fr_type_index(f) != kTVMFFIFunction) {
    /* upstream stores it and crashes when it is called; refuse it here instead */
    const TVMFFITypeInfo* info = fr_type_info_or_null(fr_type_index(f));
    if (info == NULL) {
      return fr_raise("TypeError", "TVMFFIFunctionSetGlobal: expected a ffi.Function, got type "
                      "index %d", (int)fr_type_index(f));
    }
    return fr_raise("TypeError", "TVMFFIFunctionSetGlobal: expected a ffi.Function, got %.*s",
                    (int)info->type_key.size, info->type_key.data);
  }
  return update(name, NULL, NULL, f, kTVMFFIFieldFlagBitMaskIsStaticMethod, allow_override, 0);
}

int fr_function_set_global_from_method_info(const TVMFFIMethodInfo* info, int allow_override) {
  void* func;
  int status;
  FR_REQUIRE(info, "TVMFFIFunctionSetGlobalFromMethodInfo", "method_info");
  if (info->method.type_index != kTVMFFIFunction) {
    return fr_raise("TypeError", "Cannot convert from type `%s` to `ffi.Function`",
                    fr_type_key_of(info->method.type_index));
  }
  func = info->method.v_obj;
  fr_incref(func);
  status = update(&info->name, &info->doc, &info->metadata, func, info->flags, allow_override, 1);
  fr_decref(func);
  return status;
}

void* fr_global_lookup(const char* name, size_t size) {
  FrGlobalEntry* entry;
  void* func = NULL;
  int status;
  fr_mutex_lock(&g_mutex);
  entry = find_locked(name, size, &status);
  if (entry != NULL) {
    func = entry->func;
    fr_incref(func);
  }
  fr_mutex_unlock(&g_mutex);
  (void)status; /* only out-of-memory fails here, and it leaves its error raised */
  return func;
}

int fr_function_get_global(const TVMFFIByteArray* name, TVMFFIObjectHandle* out) {
  FR_REQUIRE(name, "TVMFFIFunctionGetGlobal", "name");
  FR_REQUIRE(out, "TVMFFIFunctionGetGlobal", "out");
  *out = fr_global_lookup(name->data, name->size);
  return 0;
}

/* ------------------------------------------------------- ffi.* functions */

static int remove_global(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  TVMFFIByteArray name;
  FrGlobalEntry* entry;
  int status, removed = 0;
  (void)ctx;
  fr_any_str_view(&args[0].value, 0, &name);
  fr_mutex_lock(&g_mutex);
  entry = find_locked(name.data, name.size, &status);
  if (entry != NULL) {
    fr_incref(entry); /* released after the unlock, see update() */
    removed = fr_map_erase(g_table, &args[0].value) == 0;
  }
  fr_mutex_unlock(&g_mutex);
  if (entry != NULL) fr_decref(entry);
  if (status != 0) return -1;
  *rv = fr_any_bool(removed);
  return 0;
}

static int get_metadata(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  TVMFFIByteArray name;
  FrGlobalEntry* entry;
  int status, rc;
  (void)ctx;
  fr_any_str_view(&args[0].value, 0, &name);
  fr_mutex_lock(&g_mutex);
  entry = find_locked(name.data, name.size, &status);
  if (entry == NULL) {
    fr_mutex_unlock(&g_mutex);
    if (status != 0) return -1;
    return fr_raise("RuntimeError", "Global Function is not found: %.*s", (int)name.size,
                    name.data);
  }
  rc = fr_string_from_bytes(entry->metadata, entry->metadata_size, rv);
  fr_mutex_unlock(&g_mutex);
  return rc;
}

/* The functor ffi.FunctionListGlobalNamesFunctor returns: -1 -> count, i -> name i. */
static int names_functor(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  void* names = ctx;
  int64_t i = args[0].value.v_int64;
  if (i < 0) {
    *rv = fr_any_int(fr_seq_size(names));
    return 0;
  }
  if (i >= fr_seq_size(names)) {
    return fr_raise("IndexError", "Index %lld out of bounds %lld", (long long)i,
                    (long long)fr_seq_size(names));
  }
  *rv = fr_any_copy(&fr_seq_items(names)[i]);
  return 0;
}

static const FrBuiltin kNamesFunctorSpec = {"", names_functor, NULL, 1, {FR_T_INT}, FR_T_ANY};

static void release_object(void* obj) { fr_decref(obj); }

static int list_names(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  void* names;
  void* functor;
  uint64_t it, end;
  (void)ctx;
  (void)args;
  fr_mutex_lock(&g_mutex);
  if (ensure_table() != 0) {
    fr_mutex_unlock(&g_mutex);
    return -1;
  }
  names = fr_array_new((int64_t)fr_map_size(g_table));
  if (names == NULL) {
    fr_mutex_unlock(&g_mutex);
    return -1;
  }
  end = fr_map_end(g_table);
  for (it = fr_map_begin(g_table); it != end; it = fr_map_next(g_table, it)) {
    fr_array_push_unchecked(names, fr_any_copy(&fr_map_entry(g_table, it)->key));
  }
  fr_mutex_unlock(&g_mutex);
  functor = fr_typed_function_new(&kNamesFunctorSpec, names, release_object);
  if (functor == NULL) {
    fr_decref(names);
    return -1;
  }
  *rv = fr_any_object(functor);
  return 0;
}

static int identity(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  (void)ctx;
  *rv = fr_any_copy(&args[0].value);
  return 0;
}

static int function_from_extern_c(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  TVMFFIObjectHandle out;
  (void)ctx;
  if (fr_function_create(args[0].value.v_ptr, (TVMFFISafeCallType)args[1].value.v_ptr,
                         (void (*)(void*))args[2].value.v_ptr, &out) != 0) {
    return -1;
  }
  *rv = fr_any_object(out);
  return 0;
}

static int registered_type_keys(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  void* keys;
  (void)ctx;
  (void)args;
  keys = fr_registered_type_keys();
  if (keys == NULL) return -1;
  *rv = fr_any_object(keys);
  return 0;
}

static void* g_invalid_object = NULL;
static void* g_kwargs_object = NULL;

static void plain_object_deleter(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) free(self);
}

static int singleton(void** slot, TVMFFIAny* rv) {
  fr_mutex_lock(&g_mutex);
  if (*slot == NULL) *slot = fr_object_alloc(sizeof(TVMFFIObject), kTVMFFIObject,
                                             plain_object_deleter);
  fr_mutex_unlock(&g_mutex);
  if (*slot == NULL) return -1;
  fr_incref(*slot);
  *rv = fr_any_object(*slot);
  return 0;
}

static int invalid_object(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  (void)ctx;
  (void)args;
  return singleton(&g_invalid_object, rv);
}

static int kwargs_object(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  (void)ctx;
  (void)args;
  return singleton(&g_kwargs_object, rv);
}

/* ffi.GetInvalidObject: the "missing" marker ffi.MapGetItemOrMissing returns. */
int fr_missing_object(TVMFFIAny* rv) { return singleton(&g_invalid_object, rv); }

void* fr_missing_object_peek(void) { return __atomic_load_n(&g_invalid_object, __ATOMIC_ACQUIRE); }
void* fr_kwargs_object_peek(void) { return __atomic_load_n(&g_kwargs_object, __ATOMIC_ACQUIRE); }

static const FrBuiltin kBuiltins[] = {
    {"ffi.GetRegisteredTypeKeys", registered_type_keys, NULL, 0, {0}, FR_T_ARRAY_STR},
    {"ffi.GetInvalidObject", invalid_object, NULL, 0, {0}, FR_T_OBJECT},
    {"ffi.GetKwargsObject", kwargs_object, NULL, 0, {0}, FR_T_OBJECT},
    {"ffi.FunctionRemoveGlobal", remove_global, NULL, 1, {FR_T_STR}, FR_T_BOOL},
    {"ffi.FunctionListGlobalNamesFunctor", list_names, NULL, 0, {0}, FR_T_FUNCTION},
    {"ffi.String", identity, NULL, 1, {FR_T_STR}, FR_T_STR},
    {"ffi.Bytes", identity, NULL, 1, {FR_T_BYTES}, FR_T_BYTES},
    {"ffi.GetGlobalFuncMetadata", get_metadata, NULL, 1, {FR_T_STR}, FR_T_STR},
    {"ffi.FunctionFromExternC", function_from_extern_c, NULL, 3,
     {FR_T_VOIDP, FR_T_VOIDP, FR_T_VOIDP}, FR_T_FUNCTION},
};

int fr_functions_register_globals(void) {
  return fr_register_builtins(kBuiltins, sizeof(kBuiltins) / sizeof(kBuiltins[0]));
}
