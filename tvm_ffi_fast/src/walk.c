/*
 * walk.c -- the helpers of walk.h: address-keyed tables, reflected fields,
 * hook columns and hook callbacks.
 */
#include "walk.h"

#include "registry.h"

static size_t ptr_hash(const void* a, const void* b) {
  uint64_t h = (uint64_t)(uintptr_t)a * 0x9E3779B97F4A7C15ULL;
  h ^= (uint64_t)(uintptr_t)b * 0xC2B2AE3D27D4EB4FULL;
  return (size_t)(h ^ (h >> 31));
}

FrPtrSlot* fr_ptrmap_find(const FrPtrMap* map, const void* a, const void* b) {
  size_t i;
  if (map->slots == NULL) return NULL;
  for (i = ptr_hash(a, b) & map->mask; map->slots[i].a != NULL; i = (i + 1) & map->mask) {
    if (map->slots[i].a == a && map->slots[i].b == b) return &map->slots[i];
  }
  return NULL;
}

static int ptrmap_grow(FrPtrMap* map) {
  size_t capacity = map->slots == NULL ? 16 : (map->mask + 1) * 2, i, j;
  FrPtrSlot* fresh = (FrPtrSlot*)calloc(capacity, sizeof(FrPtrSlot));
  if (fresh == NULL) return fr_raise_oom();
  if (map->slots != NULL) {
    for (i = 0; i <= map->mask; ++i) {
      if (map->slots[i].a == NULL) continue;
      for (j = ptr_hash(map->slots[i].a, map->slots[i].b) & (capacity - 1); fresh[j].a != NULL;
           j = (j + 1) & (capacity - 1)) {
      }
      fresh[j] = map->slots[i];
    }
    free(map->slots);
  }
  map->slots = fresh;
  map->mask = capacity - 1;
  return 0;
}

int fr_ptrmap_put(FrPtrMap* map, const void* a, const void* b, uint64_t value) {
  FrPtrSlot* slot = fr_ptrmap_find(map, a, b);
  size_t i;
  if (slot != NULL) {
    slot->value = value;
    return 0;
  }
  if (map->slots == NULL || (map->count + 1) * 2 > map->mask + 1) {
    if (ptrmap_grow(map) != 0) return -1;
  }
  for (i = ptr_hash(a, b) & map->mask; map->slots[i].a != NULL; i = (i + 1) & map->mask) {
  }
  map->slots[i].a = a;
  map->slots[i].b = b;
  map->slots[i].value = value;
  map->count++;
  return 0;
}

void fr_ptrmap_erase(FrPtrMap* map, const void* a, const void* b) {
  FrPtrSlot* slot = fr_ptrmap_find(map, a, b);
  size_t hole, j;
  if (slot == NULL) return;
  hole = (size_t)(slot - map->slots);
  for (j = (hole + 1) & map->mask; map->slots[j].a != NULL; j = (j + 1) & map->mask) {
    size_t home = ptr_hash(map->slots[j].a, map->slots[j].b) & map->mask;
    /* the entry at j may fill the hole unless its home lies cyclically in (hole, j] */
    int stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
    if (stays) continue;
    map->slots[hole] = map->slots[j];
    hole = j;
  }
  map->slots[hole].a = NULL;
  map->slots[hole].b = NULL;
  map->count--;
}

void fr_ptrmap_free(FrPtrMap* map) {
  free(map->slots);
  map->slots = NULL;
  map->mask = 0;
  map->count = 0;
}

/* ------------------------------------------------------------ helpers */

const TVMFFITypeInfo* fr_type_info_checked(int32_t ti) {
  const TVMFFITypeInfo* info = fr_type_info_or_null(ti);
  if (info == NULL) fr_raise("InternalError", "Check not null: type_info (type index %d)", (int)ti);
  return info;
}

TVMFFIByteArray fr_text_of(const TVMFFIAny* value) {
  TVMFFIByteArray out;
  out.data = "";
  out.size = 0;
  fr_any_str_view(value, 1, &out);
  return out;
}

int fr_hook_of(const TVMFFITypeAttrColumn* column, int32_t type_index, const char* signature,
               void** fn) {
  TVMFFIAny entry = fr_type_attr_entry(column, type_index);
  if (entry.type_index == kTVMFFINone) return 0;
  if (entry.type_index != kTVMFFIFunction) {
    return fr_raise("TypeError", "Cannot treat type `%s` as type `%s`",
                    fr_type_key_of(entry.type_index), signature);
  }
  *fn = entry.v_obj;
  return 1;
}

int fr_cached_hook(FrHookCache* cache, const TVMFFITypeAttrColumn* column, int32_t type_index,
                   const char* signature, void** fn) {
  int found;
  FrHookSlot* slot = &cache->slots[(uint32_t)type_index % FR_HOOK_CACHE_SLOTS];
  if (slot->type_index == type_index) {
    *fn = slot->fn;
    return slot->fn != NULL;
  }
  found = fr_hook_of(column, type_index, signature, fn);
  if (found < 0) return -1;
  if (slot->fn != NULL) fr_decref(slot->fn);
  slot->type_index = type_index;
  slot->fn = found ? *fn : NULL;
  if (found) fr_incref(*fn);
  return found;
}

void fr_hook_cache_free(FrHookCache* cache) {
  int i;
  for (i = 0; i < FR_HOOK_CACHE_SLOTS; ++i) {
    if (cache->slots[i].fn != NULL) fr_decref(cache->slots[i].fn);
    cache->slots[i].fn = NULL;
    cache->slots[i].type_index = 0;
  }
}

int fr_result_as_int(TVMFFIAny* result, const char* target, int64_t* out) {
  int32_t ti = result->type_index;
  if (ti != kTVMFFIInt && ti != kTVMFFIBool) {
    fr_raise("TypeError", "Cannot convert from type `%s` to `%s`", fr_type_key_of(ti), target);
    fr_any_release(result);
    return -1;
  }
  *out = result->v_int64;
  return 0;
}

/* ------------------------------------------------------------ callbacks */

static void walk_callback_free(void* ctx) { free(ctx); }

void* fr_walk_callback_new(const FrBuiltin* spec, void* walk, FrWalkCallback** out) {
  FrWalkCallback* cb = (FrWalkCallback*)malloc(sizeof(FrWalkCallback));
  void* fn;
  if (cb == NULL) {
    fr_raise_oom();
    return NULL;
  }
  cb->walk = walk;
  fn = fr_typed_function_new(spec, cb, walk_callback_free);
  if (fn == NULL) {
    free(cb);
    return NULL;
  }
  *out = cb;
  return fn;
}

void fr_walk_callback_done(void* fn, FrWalkCallback* cb) {
  cb->walk = NULL;
  fr_decref(fn);
}

/* ------------------------------------------------------------ fields */

int fr_collect_fields(int32_t type_index, int64_t skip, const TVMFFIFieldInfo*** out,
                      size_t* count) {
  const TVMFFITypeInfo* info = fr_type_info_checked(type_index);
  const TVMFFIFieldInfo** fields;
  size_t n = 0, k = 0;
  int32_t d, i;
  *out = NULL;
  *count = 0;
  if (info == NULL) return -1;
  for (d = 1; d < info->type_depth; ++d) n += (size_t)info->type_ancestors[d]->num_fields;
  n += (size_t)info->num_fields;
  if (n == 0) return 0;
  fields = (const TVMFFIFieldInfo**)malloc(n * sizeof(*fields));
  if (fields == NULL) return fr_raise_oom();
  for (d = 1; d < info->type_depth; ++d) {
    const TVMFFITypeInfo* parent = info->type_ancestors[d];
    for (i = 0; i < parent->num_fields; ++i) {
      if (!(parent->fields[i].flags & skip)) fields[k++] = &parent->fields[i];
    }
  }
  for (i = 0; i < info->num_fields; ++i) {
    if (!(info->fields[i].flags & skip)) fields[k++] = &info->fields[i];
  }
  *out = fields;
  *count = k;
  return 0;
}

int fr_cached_fields(FrFieldCache* cache, int32_t type_index, int64_t skip,
                     const TVMFFIFieldInfo*** out, size_t* count) {
  FrCachedFields* entry;
  size_t i;
  for (i = 0; i < cache->size; ++i) {
    entry = &cache->entries[i];
    if (entry->type_index == type_index && entry->skip == skip) {
      *out = entry->fields;
      *count = entry->count;
      return 0;
    }
  }
  if (cache->size == cache->capacity) {
    size_t capacity = cache->capacity == 0 ? 8 : cache->capacity * 2;
    FrCachedFields* grown =
        (FrCachedFields*)realloc(cache->entries, capacity * sizeof(FrCachedFields));
    if (grown == NULL) return fr_raise_oom();
    cache->entries = grown;
    cache->capacity = capacity;
  }
  entry = &cache->entries[cache->size];
  if (fr_collect_fields(type_index, skip, &entry->fields, &entry->count) != 0) return -1;
  entry->type_index = type_index;
  entry->skip = skip;
  cache->size++;
  *out = entry->fields;
  *count = entry->count;
  return 0;
}

void fr_field_cache_free(FrFieldCache* cache) {
  size_t i;
  for (i = 0; i < cache->size; ++i) free((void*)cache->entries[i].fields);
  free(cache->entries);
  cache->entries = NULL;
  cache->size = cache->capacity = 0;
}

int fr_read_field(void* obj, const TVMFFIFieldInfo* field, TVMFFIAny* out) {
  *out = fr_any_none();
  if (field->getter == NULL) {
    return fr_raise("TypeError", "Field `%.*s` has no getter", (int)field->name.size,
                    field->name.data);
  }
  if (field->getter((char*)obj + field->offset, out) != 0) {
    *out = fr_any_none();
    return -1;
  }
  return 0;
}

