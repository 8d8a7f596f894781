/*
 * registry.c -- the type table: indices, keys, ancestors, reflection records
 * and type attribute columns.
 *
 * Indices follow upstream's allocation rule: static indices as given; a
 * dynamic type takes the next free slot of its parent's reserved child range,
 * or, when that range is used up and may overflow, the next index of a global
 * counter starting at kTVMFFIDynObjectBegin, reserving num_child_slots more
 * after it. Records never move once created (TVMFFIGetTypeInfo hands out
 * their addresses); the fields and methods arrays are re-pointed as they grow,
 * as upstream does. Everything registered stays alive for the process.
 */
#include "core.h"

#include <stdio.h>

#include "containers.h"
#include "registry.h"

typedef struct {
  TVMFFITypeInfo info; /* first: the record's address is the entry's */
  char* key_storage;
  TVMFFIFieldInfo* field_storage;
  size_t field_capacity;
  TVMFFIMethodInfo* method_storage;
  size_t method_capacity;
  TVMFFITypeMetadata metadata_storage;
  int32_t num_slots;       /* this type plus its reserved children */
  int32_t allocated_slots; /* used part of the reserved range (1 = the type itself) */
  int child_slots_can_overflow;
} FrTypeEntry;

/* A type attribute column; the TVMFFITypeAttrColumn part is what callers see. */
typedef struct {
  TVMFFITypeAttrColumn column;
  TVMFFIAny* storage;
  size_t capacity;
} FrColumn;

/*
 * The table is two-level (chunks of 1024 entries that never move), so that
 * TVMFFIGetTypeInfo -- which C++ kernels call in every non-final IsInstance
 * check -- reads it without taking the lock while registrations append.
 */
#define CHUNK_BITS 10
#define CHUNK_SIZE ((size_t)1 << CHUNK_BITS)
#define MAX_CHUNKS 4096

static FrMutex g_mutex = FR_MUTEX_INIT;
static FrTypeEntry** g_chunks[MAX_CHUNKS];
static size_t g_table_size = 0; /* slots reserved; read atomically */
static int g_initialized = 0;
static int64_t g_type_counter = kTVMFFIDynObjectBegin;
static FrStrMap g_key_to_index; /* values: index + 1 */
static FrStrMap g_columns;      /* values: FrColumn* */
static const TVMFFITypeAttrColumn* g_any_hash_column = NULL;
static const TVMFFITypeAttrColumn* g_any_equal_column = NULL;

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

static FrTypeEntry* entry_or_raise(int32_t type_index) {
  FrTypeEntry* entry = entry_or_null(type_index);
  if (entry == NULL) raise_no_type_info(type_index);
  return entry;
}

/* A permanent copy of a registration string; empty strings become {NULL, 0} as upstream's. */
static int copy_bytes(TVMFFIByteArray in, TVMFFIByteArray* out) {
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
  fr_mutex_lock(&g_mutex);
  index = get_or_alloc_locked(type_key->data, type_key->size, static_type_index, type_depth,
                              num_child_slots, child_slots_can_overflow != 0, parent_type_index);
  fr_mutex_unlock(&g_mutex);
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
  fr_mutex_lock(&g_mutex);
  found = fr_strmap_get(&g_key_to_index, type_key->data, type_key->size);
  fr_mutex_unlock(&g_mutex);
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
  fr_mutex_lock(&g_mutex);
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
  fr_mutex_unlock(&g_mutex);
  return array;
}

/* ------------------------------------------------------------ reflection */

int fr_type_register_field(int32_t type_index, const TVMFFIFieldInfo* info) {
  FrTypeEntry* entry;
  TVMFFIFieldInfo field;
  int32_t i, d;
  FR_REQUIRE(info, "TVMFFITypeRegisterField", "info");
  fr_mutex_lock(&g_mutex);
  entry = entry_or_raise(type_index);
  if (entry == NULL) goto fail;
  for (i = 0; i < entry->info.num_fields; ++i) {
    const TVMFFIByteArray* name = &entry->info.fields[i].name;
    if (name->size == info->name.size &&
        (name->size == 0 || memcmp(name->data, info->name.data, name->size) == 0)) {
      fr_raise("InternalError",
               "Check failed: (std::string_view(existing.name.data, existing.name.size) != "
               "new_name) is false: Duplicate field name \"%.*s\" in type \"%.*s\"",
               (int)info->name.size, info->name.data, (int)entry->info.type_key.size,
               entry->info.type_key.data);
      goto fail;
    }
  }
  for (d = 0; d < entry->info.type_depth; ++d) {
    const TVMFFITypeInfo* ancestor = entry->info.type_ancestors[d];
    for (i = 0; i < ancestor->num_fields; ++i) {
      const TVMFFIByteArray* name = &ancestor->fields[i].name;
      if (name->size == info->name.size &&
          (name->size == 0 || memcmp(name->data, info->name.data, name->size) == 0)) {
        fprintf(stderr,
                "[WARNING] Field \"%.*s\" in type \"%.*s\" duplicates an ancestor field in "
                "\"%.*s\". Child types should not re-register inherited fields.\n",
                (int)info->name.size, info->name.data, (int)entry->info.type_key.size,
                entry->info.type_key.data, (int)ancestor->type_key.size,
                ancestor->type_key.data);
      }
    }
  }
  field = *info;
  if (copy_bytes(info->name, &field.name) != 0 || copy_bytes(info->doc, &field.doc) != 0 ||
      copy_bytes(info->metadata, &field.metadata) != 0) {
    goto fail;
  }
  if ((field.flags & kTVMFFIFieldFlagBitSetterIsFunctionObj) && field.setter != NULL) {
    fr_incref(field.setter); /* kept for the process, as upstream's pool does */
  }
  if (info->flags & kTVMFFIFieldFlagBitMaskHasDefault) {
    if (fr_any_view_to_owned(&info->default_value_or_factory, &field.default_value_or_factory) !=
        0) {
      goto fail;
    }
  } else {
    field.default_value_or_factory = fr_any_none();
  }
  if ((size_t)entry->info.num_fields == entry->field_capacity) {
    size_t cap = entry->field_capacity == 0 ? 4 : entry->field_capacity * 2;
    TVMFFIFieldInfo* grown =
        (TVMFFIFieldInfo*)realloc(entry->field_storage, cap * sizeof(TVMFFIFieldInfo));
    if (grown == NULL) {
      fr_raise_oom();
      goto fail;
    }
    entry->field_storage = grown;
    entry->field_capacity = cap;
  }
  entry->field_storage[entry->info.num_fields] = field;
  entry->info.fields = entry->field_storage;
  entry->info.num_fields += 1;
  fr_mutex_unlock(&g_mutex);
  return 0;
fail:
  fr_mutex_unlock(&g_mutex);
  return -1;
}

int fr_type_register_method(int32_t type_index, const TVMFFIMethodInfo* info) {
  FrTypeEntry* entry;
  TVMFFIMethodInfo method;
  FR_REQUIRE(info, "TVMFFITypeRegisterMethod", "info");
  fr_mutex_lock(&g_mutex);
  entry = entry_or_raise(type_index);
  if (entry == NULL) goto fail;
  method = *info;
  if (copy_bytes(info->name, &method.name) != 0 || copy_bytes(info->doc, &method.doc) != 0 ||
      copy_bytes(info->metadata, &method.metadata) != 0 ||
      fr_any_view_to_owned(&info->method, &method.method) != 0) {
    goto fail;
  }
  if ((size_t)entry->info.num_methods == entry->method_capacity) {
    size_t cap = entry->method_capacity == 0 ? 4 : entry->method_capacity * 2;
    TVMFFIMethodInfo* grown =
        (TVMFFIMethodInfo*)realloc(entry->method_storage, cap * sizeof(TVMFFIMethodInfo));
    if (grown == NULL) {
      fr_raise_oom();
      goto fail;
    }
    entry->method_storage = grown;
    entry->method_capacity = cap;
  }
  entry->method_storage[entry->info.num_methods] = method;
  entry->info.methods = entry->method_storage;
  entry->info.num_methods += 1;
  fr_mutex_unlock(&g_mutex);
  return 0;
fail:
  fr_mutex_unlock(&g_mutex);
  return -1;
}

int fr_type_register_metadata(int32_t type_index, const TVMFFITypeMetadata* metadata) {
  FrTypeEntry* entry;
  TVMFFITypeMetadata copy;
  FR_REQUIRE(metadata, "TVMFFITypeRegisterMetadata", "metadata");
  fr_mutex_lock(&g_mutex);
  entry = entry_or_raise(type_index);
  if (entry == NULL) goto fail;
  if (entry->info.metadata != NULL) {
    fr_raise("RuntimeError",
             "Overriding %.*s, possible causes:\n"
             "- two ObjectDef<T>() calls for the same T \n"
             "- when we forget to assign _type_key to ObjectRef<Y> that inherits from T\n"
             "- another type with the same key is already registered\n"
             "Cross check the reflection registration.",
             (int)entry->info.type_key.size, entry->info.type_key.data);
    goto fail;
  }
  copy = *metadata;
  if (copy_bytes(metadata->doc, &copy.doc) != 0) goto fail;
  entry->metadata_storage = copy;
  entry->info.metadata = &entry->metadata_storage;
  fr_mutex_unlock(&g_mutex);
  return 0;
fail:
  fr_mutex_unlock(&g_mutex);
  return -1;
}

/* ------------------------------------------------------ attribute columns */

static FrColumn* column_get_or_create(const char* name, size_t size) {
  FrColumn* column = (FrColumn*)fr_strmap_get(&g_columns, name, size);
  if (column != NULL) return column;
  column = (FrColumn*)calloc(1, sizeof(FrColumn));
  if (column == NULL || fr_strmap_put(&g_columns, name, size, column) != 0) {
    free(column);
    fr_raise_oom();
    return NULL;
  }
  return column;
}

int fr_type_register_attr(int32_t type_index, const TVMFFIByteArray* attr_name,
                          const TVMFFIAny* attr_value) {
  FrColumn* column;
  TVMFFIAny* slot;
  FR_REQUIRE(attr_name, "TVMFFITypeRegisterAttr", "attr_name");
  /* a NULL value is tolerated for the sentinel index 0, which only makes the column */
  if (type_index != kTVMFFINone) FR_REQUIRE(attr_value, "TVMFFITypeRegisterAttr", "attr_value");
  fr_mutex_lock(&g_mutex);
  column = column_get_or_create(attr_name->data, attr_name->size);
  if (column == NULL) goto fail;
  if (type_index == kTVMFFINone) {
    fr_mutex_unlock(&g_mutex);
    return 0;
  }
  if (type_index < 0) {
    /* upstream resizes the column to index + 1 entries: std::vector refuses a negative
       size with length_error (at -1 it writes out of bounds instead) */
    fr_raise("InternalError", "vector::_M_fill_insert");
    goto fail;
  }
  if ((size_t)type_index >= (size_t)column->column.size) {
    size_t need = (size_t)type_index + 1, i;
    if (need > column->capacity) {
      size_t cap = column->capacity == 0 ? need : column->capacity;
      TVMFFIAny* grown;
      while (cap < need) cap *= 2;
      grown = (TVMFFIAny*)realloc(column->storage, cap * sizeof(TVMFFIAny));
      if (grown == NULL) {
        fr_raise_oom();
        goto fail;
      }
      column->storage = grown;
      column->capacity = cap;
    }
    for (i = (size_t)column->column.size; i < need; ++i) column->storage[i] = fr_any_none();
    column->column.data = column->storage;
    column->column.size = (int32_t)need;
    column->column.begin_index = 0;
  }
  slot = &column->storage[type_index];
  if (slot->type_index != kTVMFFINone) {
    fr_raise("RuntimeError",
             "TypeAttr `%.*s` is already registered for type index %d. To update the stored "
             "value, register a mutable container (e.g., Dict/List) once and mutate it in place "
             "on subsequent calls.",
             (int)attr_name->size, attr_name->data, (int)type_index);
    goto fail;
  }
  if (fr_any_view_to_owned(attr_value, slot) != 0) goto fail;
  fr_mutex_unlock(&g_mutex);
  return 0;
fail:
  fr_mutex_unlock(&g_mutex);
  return -1;
}

int fr_register_attr_cstr(int32_t type_index, const char* name, const TVMFFIAny* value) {
  TVMFFIByteArray bytes;
  bytes.data = name;
  bytes.size = strlen(name);
  return fr_type_register_attr(type_index, &bytes, value);
}

const TVMFFITypeAttrColumn* fr_get_type_attr_column(const TVMFFIByteArray* attr_name) {
  FrColumn* column;
  if (attr_name == NULL) {
    fr_raise("ValueError", "TVMFFIGetTypeAttrColumn: attr_name must not be NULL");
    return NULL;
  }
  fr_mutex_lock(&g_mutex);
  column = (FrColumn*)fr_strmap_get(&g_columns, attr_name->data, attr_name->size);
  fr_mutex_unlock(&g_mutex);
  return column != NULL ? &column->column : NULL;
}

TVMFFIAny fr_type_attr_entry(const TVMFFITypeAttrColumn* column, int32_t type_index) {
  TVMFFIAny entry = fr_any_none();
  int32_t offset;
  if (column == NULL) return entry;
  fr_mutex_lock(&g_mutex); /* a registration may be moving the column's storage */
  offset = type_index - column->begin_index;
  if (column->data != NULL && offset >= 0 && offset < column->size) entry = column->data[offset];
  fr_mutex_unlock(&g_mutex);
  return entry;
}

const TVMFFITypeAttrColumn* fr_any_hash_column(void) { return g_any_hash_column; }
const TVMFFITypeAttrColumn* fr_any_equal_column(void) { return g_any_equal_column; }

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
  TVMFFIByteArray name;
  fr_mutex_lock(&g_mutex);
  if (g_initialized) {
    fr_mutex_unlock(&g_mutex);
    return 0;
  }
  g_initialized = 1;
  if (table_reserve(kTVMFFIDynObjectBegin) != 0) goto fail;
  fr_mutex_unlock(&g_mutex);

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
  /* columns every object key consults, present from the start */
  name.data = "__any_hash__";
  name.size = strlen(name.data);
  if (fr_type_register_attr(kTVMFFINone, &name, NULL) != 0) return -1;
  g_any_hash_column = fr_get_type_attr_column(&name);
  name.data = "__any_equal__";
  name.size = strlen(name.data);
  if (fr_type_register_attr(kTVMFFINone, &name, NULL) != 0) return -1;
  g_any_equal_column = fr_get_type_attr_column(&name);
  return 0;
fail:
  fr_mutex_unlock(&g_mutex);
  return -1;
}
