/*
 * registry.c -- the type table: indices, keys, ancestors, reflection records
 * and type attribute columns.
 *
 * Its twin in the reference runtime: tvm_ffi_ref/runtime/registry.py.
 *
 * Indices follow upstream's allocation rule: static indices as given; a
 * dynamic type takes the next free slot of its parent's reserved child range,
 * or, when that range is used up and may overflow, the next index of a global
 * counter starting at kTVMFFIDynObjectBegin, reserving num_child_slots more
 * after it. Records never move once created (TVMFFIGetTypeInfo hands out
 * their addresses); the fields and methods arrays are re-pointed as they grow,
 * as upstream does. Everything registered stays alive for the process.
 *
 * This file: the table, index allocation and lookups. A type's fields,
 * methods and metadata are type_reflection.c; attribute columns, type_attrs.c.
 */
#include "type_table.h"

#include "containers.h"
#include "registry.h"

/*
 * The table is two-level (chunks of 1024 entries that never move), so that
 * TVMFFIGetTypeInfo -- which C++ kernels call in every non-final IsInstance
 * check -- reads it without taking the lock while registrations append.
 */
#define CHUNK_BITS 10
#define CHUNK_SIZE ((size_t)1 << CHUNK_BITS)
#define MAX_CHUNKS 4096

FrMutex fr_registry_mutex = FR_MUTEX_INIT;
static FrTypeEntry** g_chunks[MAX_CHUNKS];
static size_t g_table_size = 0; /* slots reserved; read atomically */
static int g_initialized = 0;
static int64_t g_type_counter = kTVMFFIDynObjectBegin;
static FrStrMap g_key_to_index; /* values: index + 1 */

/* ----------------------------------------------------------- helpers */

static int table_reserve(size_t size) {
  size_t chunk;
  if (size <= g_table_size) return 0;
  if (size > CHUNK_SIZE * MAX_CHUNKS) {
    return fr_raise("RuntimeError", "the type table is full (%zu types)", CHUNK_SIZE * MAX_CHUNKS);
  }
  for (chunk = g_table_size >> CHUNK_BITS; chunk <= (size - 1) >> CHUNK_BITS; ++chunk) {
    if (g_chunks[chunk] == NULL) {
      FrTypeEntry** fresh = (FrTypeEntry**)calloc(CHUNK_SIZE, sizeof(FrTypeEntry*));
      if (fresh == NULL) return fr_raise_oom();
      __atomic_store_n(&g_chunks[chunk], fresh, __ATOMIC_RELEASE);
    }
  }
  __atomic_store_n(&g_table_size, size, __ATOMIC_RELEASE);
  return 0;
}

/* Lock-free: entries and chunks are published with release stores and never move. */
static FrTypeEntry* entry_or_null(int32_t type_index) {
  FrTypeEntry** chunk;
  if (type_index < 0 || (size_t)type_index >= __atomic_load_n(&g_table_size, __ATOMIC_ACQUIRE)) {
    return NULL;
  }
  chunk = __atomic_load_n(&g_chunks[(size_t)type_index >> CHUNK_BITS], __ATOMIC_ACQUIRE);
  if (chunk == NULL) return NULL;
  return __atomic_load_n(&chunk[(size_t)type_index & (CHUNK_SIZE - 1)], __ATOMIC_ACQUIRE);
}

static void table_set(int32_t type_index, FrTypeEntry* entry) {
  FrTypeEntry** chunk = g_chunks[(size_t)type_index >> CHUNK_BITS];
  __atomic_store_n(&chunk[(size_t)type_index & (CHUNK_SIZE - 1)], entry, __ATOMIC_RELEASE);
}

/* upstream's GetTypeEntry check, kind and text */
static int raise_no_type_info(int32_t type_index) {
  return fr_raise("InternalError",
                  "Check failed: (entry != nullptr) is false: Cannot find type info for "
                  "type_index=%d",
                  (int)type_index);
}

FrTypeEntry* fr_type_entry_or_raise(int32_t type_index) {
  FrTypeEntry* entry = entry_or_null(type_index);
  if (entry == NULL) raise_no_type_info(type_index);
  return entry;
}

/* A permanent copy of a registration string; empty strings become {NULL, 0} as upstream's. */
int fr_registry_copy_bytes(TVMFFIByteArray in, TVMFFIByteArray* out) {
  if (in.size == 0 || in.data == NULL) {
    out->data = NULL;
    out->size = 0;
    return 0;
  }
  out->data = fr_strndup(in.data, in.size);
  if (out->data == NULL) return fr_raise_oom();
  out->size = in.size;
  return 0;
}

static void type_key_text(const FrTypeEntry* entry, const char** data, int* size) {
  *data = entry->info.type_key.data;
  *size = (int)entry->info.type_key.size;
}

/* ----------------------------------------------------- index allocation */

/*
 * Upstream checks these in this order and aborts the process when one fails
 * (its checks throw out of a TVM_FFI_LOG_EXCEPTION_CALL function). Here each
 * raises the error its check throws -- InternalError with the check's text --
 * before anything is changed, and the call returns -1.
 */
static int32_t get_or_alloc_locked(const char* key, size_t key_size, int32_t static_index,
                                   int32_t depth, int32_t child_slots, int can_overflow,
                                   int32_t parent_index) {
  FrTypeEntry* parent = NULL;
  FrTypeEntry* entry;
  int32_t index, num_slots;
  int from_counter = 0;
  void* found = fr_strmap_get(&g_key_to_index, key, key_size);
  if (found != NULL) return (int32_t)((intptr_t)found - 1);
  if (parent_index == -2) return -2;
  if (parent_index >= 0) {
    if ((size_t)parent_index >= g_table_size) {
      fr_raise("InternalError",
               "Check failed: parent_type_index < type_table_.size() (%d vs. %zu) :  "
               "type_key=%.*s, static_index=%d",
               (int)parent_index, g_table_size, (int)key_size, key, (int)static_index);
      return -1;
    }
    parent = entry_or_null(parent_index);
  }
  if (child_slots < 0) child_slots = 0;
  num_slots = child_slots + 1;
  if (static_index >= 0) {
    if ((size_t)static_index >= g_table_size) {
      fr_raise("InternalError",
               "Check failed: static_type_index < type_table_.size() (%d vs. %zu) : ",
               (int)static_index, g_table_size);
      return -1;
    }
    if (entry_or_null(static_index) != NULL) {
      const char* other;
      int other_size;
      type_key_text(entry_or_null(static_index), &other, &other_size);
      fr_raise("InternalError",
               "Check failed: (type_table_[static_type_index] == nullptr) is false: "
               "Conflicting static index %d between %.*s and %.*s",
               (int)static_index, other_size, other, (int)key_size, key);
      return -1;
    }
    index = static_index;
  } else {
    if (parent == NULL) {
      fr_raise("InternalError", "Check not null: parent ");
      return -1;
    }
    if (parent->allocated_slots + num_slots <= parent->num_slots) {
      index = parent->info.type_index + parent->allocated_slots;
    } else if (!parent->child_slots_can_overflow) {
      fr_raise("InternalError",
               "Check failed: (parent->child_slots_can_overflow) is false: "
               "Reach maximum number of sub-classes for %.*s",
               (int)parent->info.type_key.size, parent->info.type_key.data);
      return -1;
    } else {
      index = (int32_t)g_type_counter;
      from_counter = 1;
    }
  }
  if (parent != NULL && index <= parent->info.type_index) {
    fr_raise("InternalError",
             "Check failed: allocated_tindex > parent->type_index (%d vs. %d) : ", (int)index,
             (int)parent->info.type_index);
    return -1;
  }
  if (depth != 0) {
    if (parent == NULL) {
      fr_raise("InternalError", "Check not null: parent ");
      return -1;
    }
    if (depth != parent->info.type_depth + 1) {
      fr_raise("InternalError", "Check failed: type_depth == parent->type_depth + 1 (%d vs. %d) : ",
               (int)depth, (int)parent->info.type_depth + 1);
      return -1;
    }
  }
  /* every check passed: take the index */
  if (from_counter) {
    if (table_reserve((size_t)(g_type_counter + num_slots)) != 0) return -1;
    g_type_counter += num_slots;
  } else if (static_index < 0) {
    parent->allocated_slots += num_slots;
  }
  if (parent != NULL && !parent->child_slots_can_overflow) can_overflow = 0;

  entry = (FrTypeEntry*)calloc(1, sizeof(FrTypeEntry));
  if (entry == NULL) return fr_raise_oom();
  entry->key_storage = fr_strndup(key, key_size);
  if (depth > 0) {
    entry->info.type_ancestors =
        (const TVMFFITypeInfo**)calloc((size_t)depth, sizeof(const TVMFFITypeInfo*));
  }
  if (entry->key_storage == NULL || (depth > 0 && entry->info.type_ancestors == NULL)) {
    free(entry->key_storage);
    free((void*)entry->info.type_ancestors);
    free(entry);
    return fr_raise_oom();
  }
  if (depth > 0) {
    int32_t d;
    for (d = 0; d < parent->info.type_depth; ++d) {
      entry->info.type_ancestors[d] = parent->info.type_ancestors[d];
    }
    entry->info.type_ancestors[parent->info.type_depth] = &parent->info;
  }
  entry->info.type_index = index;
  entry->info.type_depth = depth;
  entry->info.type_key.data = entry->key_storage;
  entry->info.type_key.size = key_size;
  entry->info.type_key_hash = fr_std_hash_bytes(key, key_size);
  entry->num_slots = child_slots + 1;
  entry->allocated_slots = 1;
  entry->child_slots_can_overflow = can_overflow != 0;
  if (fr_strmap_put(&g_key_to_index, key, key_size, (void*)(intptr_t)(index + 1)) != 0) {
    free(entry->key_storage);
    free((void*)entry->info.type_ancestors);
    free(entry);
    return fr_raise_oom();
  }
  table_set(index, entry);
  return index;
}

int32_t fr_type_get_or_alloc_index(const TVMFFIByteArray* type_key, int32_t static_type_index,
                                   int32_t type_depth, int32_t num_child_slots,
                                   int32_t child_slots_can_overflow, int32_t parent_type_index) {
  int32_t index;
  FR_REQUIRE(type_key, "TVMFFITypeGetOrAllocIndex", "type_key");
  fr_mutex_lock(&fr_registry_mutex);
  index = get_or_alloc_locked(type_key->data, type_key->size, static_type_index, type_depth,
                              num_child_slots, child_slots_can_overflow != 0, parent_type_index);
  fr_mutex_unlock(&fr_registry_mutex);
  return index;
}

int32_t fr_register_type(const char* key, int32_t static_index, int32_t depth,
                         int32_t child_slots, int can_overflow, int32_t parent) {
  TVMFFIByteArray bytes;
  bytes.data = key;
  bytes.size = strlen(key);
  return fr_type_get_or_alloc_index(&bytes, static_index, depth, child_slots, can_overflow,
                                    parent);
}

int fr_type_key_to_index(const TVMFFIByteArray* type_key, int32_t* out_tindex) {
  void* found;
  FR_REQUIRE(type_key, "TVMFFITypeKeyToIndex", "type_key");
  FR_REQUIRE(out_tindex, "TVMFFITypeKeyToIndex", "out_tindex");
  fr_mutex_lock(&fr_registry_mutex);
  found = fr_strmap_get(&g_key_to_index, type_key->data, type_key->size);
  fr_mutex_unlock(&fr_registry_mutex);
  if (found == NULL) {
    return fr_raise("InternalError",
                    "Check failed: (it != type_key2index_.end()) is false: Cannot find type `%.*s`",
                    (int)type_key->size,
                    type_key->data != NULL ? type_key->data : "");
  }
  *out_tindex = (int32_t)((intptr_t)found - 1);
  return 0;
}

const TVMFFITypeInfo* fr_type_info_or_null(int32_t type_index) {
  FrTypeEntry* entry = entry_or_null(type_index);
  return entry != NULL ? &entry->info : NULL;
}

int fr_type_is_instance(int32_t ti, int32_t base) {
  const TVMFFITypeInfo* info;
  int32_t d;
  if (ti == base) return 1;
  if (ti < kTVMFFIStaticObjectBegin || base < 0) return 0;
  info = fr_type_info_or_null(ti);
  if (info == NULL) return 0;
  for (d = 0; d < info->type_depth; ++d) {
    if (info->type_ancestors[d]->type_index == base) return 1;
  }
  return 0;
}

const TVMFFITypeInfo* fr_get_type_info(int32_t type_index) {
  const TVMFFITypeInfo* info = fr_type_info_or_null(type_index);
  if (info == NULL) raise_no_type_info(type_index);
  return info;
}

const char* fr_type_key_of(int32_t type_index) {
  const TVMFFITypeInfo* info = fr_type_info_or_null(type_index);
  return info != NULL ? info->type_key.data : "<unknown>";
}

void* fr_registered_type_keys(void) {
  size_t i, count = 0;
  void* array;
  fr_mutex_lock(&fr_registry_mutex);
  for (i = 0; i < g_table_size; ++i) count += entry_or_null((int32_t)i) != NULL;
  array = fr_array_new((int64_t)count);
  if (array != NULL) {
    for (i = 0; i < g_table_size; ++i) {
      TVMFFIAny key;
      FrTypeEntry* entry = entry_or_null((int32_t)i);
      if (entry == NULL) continue;
      if (fr_string_from_bytes(entry->info.type_key.data, entry->info.type_key.size, &key) != 0) {
        fr_decref(array);
        array = NULL;
        break;
      }
      fr_array_push_unchecked(array, key);
    }
  }
  fr_mutex_unlock(&fr_registry_mutex);
  return array;
}

/* ---------------------------------------------------------- start-up */

static const char* const kPodKeys[] = {
    "None",        "int",      "bool",           "float",         "void*",
    "DataType",    "Device",   "DLTensor*",      "const char*",   "TVMFFIByteArray*",
    "ObjectRValueRef", "ffi.SmallStr", "ffi.SmallBytes", "ffi.Unchanged",
};

/* Depth-one static object types, in upstream's reservation order. */
static const struct {
  const char* key;
  int32_t index;
} kStaticObjects[] = {
    {"ffi.String", kTVMFFIStr},     {"ffi.BigInt", kTVMFFIBigInt},
    {"ffi.Bytes", kTVMFFIBytes},    {"ffi.Error", kTVMFFIError},
    {"ffi.Function", kTVMFFIFunction}, {"ffi.Shape", kTVMFFIShape},
    {"ffi.Tensor", kTVMFFITensor},  {"ffi.Array", kTVMFFIArray},
    {"ffi.List", kTVMFFIList},      {"ffi.Map", kTVMFFIMap},
    {"ffi.Dict", kTVMFFIDict},      {"ffi.Module", kTVMFFIModule},
    {"ffi.OpaquePyObject", kTVMFFIOpaquePyObject},
};

int fr_registry_init(void) {
  size_t i;
  TVMFFITypeMetadata object_info;
  fr_mutex_lock(&fr_registry_mutex);
  if (g_initialized) {
    fr_mutex_unlock(&fr_registry_mutex);
    return 0;
  }
  g_initialized = 1;
  if (table_reserve(kTVMFFIDynObjectBegin) != 0) goto fail;
  fr_mutex_unlock(&fr_registry_mutex);

  if (fr_register_type("ffi.Object", kTVMFFIObject, 0, 0, 1, -1) < 0) return -1;
  memset(&object_info, 0, sizeof(object_info));
  object_info.total_size = (int32_t)sizeof(TVMFFIObject);
  object_info.structural_eq_hash_kind = kTVMFFISEqHashKindUnsupported;
  if (fr_type_register_metadata(kTVMFFIObject, &object_info) != 0) return -1;
  for (i = 0; i < sizeof(kPodKeys) / sizeof(kPodKeys[0]); ++i) {
    if (fr_register_type(kPodKeys[i], (int32_t)i, 0, 0, 0, -1) < 0) return -1;
  }
  for (i = 0; i < sizeof(kStaticObjects) / sizeof(kStaticObjects[0]); ++i) {
    if (fr_register_type(kStaticObjects[i].key, kStaticObjects[i].index, 1, 0, 0,
                         kTVMFFIObject) < 0) {
      return -1;
    }
  }
  if (fr_type_attrs_init() != 0) return -1;
  return 0;
fail:
  fr_mutex_unlock(&fr_registry_mutex);
  return -1;
}
