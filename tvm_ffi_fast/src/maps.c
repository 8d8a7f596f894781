/*
 * maps.c -- Map and Dict: key hashing and equality, the small layout (a flat
 * array of up to four entries) and the dense layout (blocks of 16 slots with
 * one metadata byte each, probing chains and an insertion-order list).
 *
 * Its twin in the reference runtime: tvm_ffi_ref/runtime/maps.py.
 *
 * C++ code compiled from the upstream headers walks, searches and mutates
 * these maps inline, so every step that leaves a trace in memory -- which slot
 * an entry lands in, the metadata byte, the list links, when the table grows
 * and to what size -- follows upstream's container/map_base.h algorithm.
 *
 * This file: the small layout, switching to the dense one, and the map
 * interface of containers.h. The dense layout is map_dense.c; key hashing
 * and equality, any_hash.c.
 */
#include "map_dense.h"

/* ---------------------------------------------------------- small layout */

#define SMALL_INIT_SLOTS 2
#define SMALL_MAX_SLOTS 4

static uint64_t small_num_slots(const FrMapBase* map) { return map->slots & ~FR_MAP_SMALL_TAG; }

static FrKV* small_entries(const FrMapBase* map) { return (FrKV*)map->data; }

static FrMapBase* small_empty(int32_t type_index, uint64_t n) {
  FrMapBase* m;
  if (n < SMALL_INIT_SLOTS) n = SMALL_INIT_SLOTS;
  m = (FrMapBase*)fr_object_alloc(sizeof(FrMapBase) + n * sizeof(FrKV), type_index,
                                  fr_map_deleter);
  if (m == NULL) return NULL;
  m->data = (char*)m + sizeof(FrMapBase);
  m->size = 0;
  m->slots = n | FR_MAP_SMALL_TAG;
  m->data_deleter = NULL;
  return m;
}

static int small_find(const FrMapBase* m, const TVMFFIAny* key, uint64_t* out) {
  FrKV* kv = small_entries(m);
  uint64_t i;
  for (i = 0; i < m->size; ++i) {
    int eq;
    if (fr_any_equal(&kv[i].key, key, &eq) != 0) return -1;
    if (eq) {
      *out = i;
      return 1;
    }
  }
  *out = m->size;
  return 0;
}

/* A small map of n slots holding copies of entries[0:count] (no de-duplication). */
static FrMapBase* small_from_entries(int32_t type_index, uint64_t n, const FrKV* entries,
                                     uint64_t count) {
  FrMapBase* m = small_empty(type_index, n);
  uint64_t i;
  if (m == NULL) return NULL;
  for (i = 0; i < count; ++i) {
    small_entries(m)[i].key = fr_any_copy(&entries[i].key);
    small_entries(m)[i].value = fr_any_copy(&entries[i].value);
  }
  m->size = count;
  return m;
}

static int small_insert(FrMapBase* m, FrKV kv, void** grown) {
  uint64_t index, next_size;
  FrMapBase* bigger;
  void* again = NULL;
  int found = small_find(m, &kv.key, &index);
  if (found < 0) {
    fr_map_release_kv(&kv);
    return -1;
  }
  if (found) {
    FrKV* slot = &small_entries(m)[index];
    fr_any_release(&slot->value);
    slot->value = kv.value;
    fr_any_release(&kv.key);
    return 0;
  }
  if (m->size < small_num_slots(m)) {
    small_entries(m)[m->size] = kv;
    m->size += 1;
    return 0;
  }
  next_size = small_num_slots(m) * 2;
  if (next_size < SMALL_INIT_SLOTS) next_size = SMALL_INIT_SLOTS;
  if (next_size > SMALL_MAX_SLOTS) next_size = SMALL_MAX_SLOTS;
  bigger = small_from_entries(m->header.type_index, next_size, small_entries(m), m->size);
  if (bigger == NULL) {
    fr_map_release_kv(&kv);
    return -1;
  }
  if (small_insert(bigger, kv, &again) != 0) {
    fr_decref(bigger);
    return -1;
  }
  *grown = bigger;
  return 0;
}

/* MapBaseObj::CreateFromRange over copies of entries[0:count]. */
void* fr_map_from_range(int32_t type_index, const FrKV* entries, uint64_t count) {
  uint64_t i;
  if (count < SMALL_MAX_SLOTS) {
    FrMapBase* m;
    if (count < 2) return small_from_entries(type_index, count, entries, count);
    m = small_empty(type_index, count);
    if (m == NULL) return NULL;
    for (i = 0; i < count; ++i) {
      void* grown = NULL;
      FrKV kv = {fr_any_copy(&entries[i].key), fr_any_copy(&entries[i].value)};
      if (small_insert(m, kv, &grown) != 0) {
        fr_decref(m);
        return NULL;
      }
      if (grown != NULL) {
        fr_decref(m);
        m = (FrMapBase*)grown;
      }
    }
    return m;
  } else {
    uint32_t fib_shift;
    uint64_t n_slots;
    FrDenseMap* m;
    fr_dense_table_size_for(count, &fib_shift, &n_slots);
    m = fr_dense_empty(type_index, fib_shift, n_slots);
    if (m == NULL) return NULL;
    for (i = 0; i < count; ++i) {
      void* grown = NULL;
      FrKV kv = {fr_any_copy(&entries[i].key), fr_any_copy(&entries[i].value)};
      if (fr_dense_insert(m, kv, &grown) != 0) {
        fr_decref(m);
        return NULL;
      }
      if (grown != NULL) {
        fr_decref(m);
        m = (FrDenseMap*)grown;
      }
    }
    return m;
  }
}

/* MapBaseObj::InsertMaybeReHash. */
static int map_insert(void* map, FrKV kv, void** grown) {
  FrMapBase* base = (FrMapBase*)map;
  *grown = NULL;
  if (fr_map_is_small(base)) {
    uint64_t slots = small_num_slots(base);
    if (slots < SMALL_MAX_SLOTS || base->size < slots) return small_insert(base, kv, grown);
    if (slots == SMALL_MAX_SLOTS) {
      void* again = NULL;
      FrDenseMap* dense =
          (FrDenseMap*)fr_map_from_range(base->header.type_index, small_entries(base), base->size);
      if (dense == NULL) {
        fr_map_release_kv(&kv);
        return -1;
      }
      if (fr_dense_insert(dense, kv, &again) != 0) {
        fr_decref(dense);
        return -1;
      }
      if (again != NULL) {
        fr_decref(dense);
        dense = (FrDenseMap*)again;
      }
      *grown = dense;
      return 0;
    }
    fr_map_release_kv(&kv);
    return 0;
  }
  return fr_dense_insert((FrDenseMap*)base, kv, grown);
}

/* ------------------------------------------------------ whole-map operations */

static void small_clear(FrMapBase* m) {
  uint64_t i;
  for (i = 0; i < m->size; ++i) fr_map_release_kv(&small_entries(m)[i]);
  m->size = 0;
}

/* Frees what a map owns (the destructor of Small/DenseMapBaseObj). */
static void map_destroy(FrMapBase* m) {
  if (fr_map_is_small(m)) {
    small_clear(m);
    if (m->data_deleter != NULL) {
      m->data_deleter(m->data);
      m->slots = 0;
      m->data = NULL;
      m->data_deleter = NULL;
    }
  } else {
    FrDenseMap* d = (FrDenseMap*)m;
    if (d->base.data != NULL) fr_dense_clear(d);
    fr_dense_release_memory(d);
  }
}

void fr_map_deleter(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) map_destroy((FrMapBase*)self);
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) free(self);
}

/* Releases the map whose inline storage another small map now uses. */
static void inplace_small_data_deleter(void* data) {
  fr_decref((char*)data - sizeof(FrMapBase));
}

/* MapBaseObj::InplaceSwitchTo: self takes over other's storage; other is consumed. */
static void map_switch_to(FrMapBase* self, void* other_ptr) {
  FrMapBase* other = (FrMapBase*)other_ptr;
  map_destroy(self);
  if (fr_map_is_small(other)) {
    self->size = other->size;
    self->slots = other->slots;
    self->data = other->data;
    if (other->data_deleter != NULL) {
      self->data_deleter = other->data_deleter;
      other->data_deleter = NULL;
      other->data = NULL;
      other->size = 0;
      other->slots = 0;
      fr_decref(other);
    } else {
      /* other's entries live inline in other: keep other alive as the storage */
      self->data_deleter = inplace_small_data_deleter;
      other->data = NULL;
      other->size = 0;
      other->slots = 0;
    }
  } else {
    FrDenseMap* d = (FrDenseMap*)self;
    FrDenseMap* o = (FrDenseMap*)other;
    d->base.size = o->base.size;
    d->base.slots = o->base.slots;
    d->base.data = o->base.data;
    d->base.data_deleter = o->base.data_deleter;
    d->fib_shift = o->fib_shift;
    d->head = o->head;
    d->tail = o->tail;
    o->base.data = NULL;
    o->base.data_deleter = NULL;
    o->base.size = 0;
    o->base.slots = 0;
    fr_decref(o);
  }
}

/* ------------------------------------------------------------- interface */

void* fr_map_new(int32_t type_index) { return small_empty(type_index, SMALL_INIT_SLOTS); }

int fr_map_find(void* map, const TVMFFIAny* key, TVMFFIAny** value_slot) {
  FrMapBase* m = (FrMapBase*)map;
  if (fr_map_is_small(m)) {
    uint64_t index;
    int found = small_find(m, key, &index);
    if (found == 1) *value_slot = &small_entries(m)[index].value;
    return found;
  } else {
    int status;
    uint64_t slot = fr_dense_search((FrDenseMap*)m, key, &status);
    if (status != 0) return -1;
    if (slot == FR_MAP_END) return 0;
    *value_slot = &fr_dense_item_at((FrDenseMap*)m, slot)->kv.value;
    return 1;
  }
}

int fr_map_set(void** map_ref, TVMFFIAny key, TVMFFIAny value) {
  FrMapBase* m = (FrMapBase*)*map_ref;
  void* grown = NULL;
  FrKV kv;
  kv.key = key;
  kv.value = value;
  if (map_insert(m, kv, &grown) != 0) return -1;
  if (grown == NULL) return 0;
  if (m->header.type_index == kTVMFFIDict) {
    map_switch_to(m, grown);
  } else {
    *map_ref = grown;
    fr_decref(m);
  }
  return 0;
}

int fr_map_erase(void* map, const TVMFFIAny* key) {
  FrMapBase* m = (FrMapBase*)map;
  if (fr_map_is_small(m)) {
    uint64_t index;
    int found = small_find(m, key, &index);
    FrKV* kv = small_entries(m);
    if (found <= 0) return found;
    fr_map_release_kv(&kv[index]);
    if (index + 1 < m->size) {
      memmove(&kv[index], &kv[index + 1], (m->size - index - 1) * sizeof(FrKV));
    }
    m->size -= 1;
    return 0;
  } else {
    int status;
    uint64_t slot = fr_dense_search((FrDenseMap*)m, key, &status);
    if (status != 0) return -1;
    if (slot == FR_MAP_END) return 0;
    return fr_dense_erase_at((FrDenseMap*)m, slot);
  }
}

void fr_map_clear(void* map) {
  FrMapBase* m = (FrMapBase*)map;
  if (fr_map_is_small(m)) {
    small_clear(m);
  } else if (m->data != NULL) {
    fr_dense_clear((FrDenseMap*)m);
  }
}

void* fr_map_copy(void* map, int32_t type_index) {
  FrMapBase* m = (FrMapBase*)map;
  if (fr_map_is_small(m)) return small_from_entries(type_index, m->size, small_entries(m), m->size);
  return fr_dense_copy((FrDenseMap*)m, type_index);
}

uint64_t fr_map_begin(const void* map) {
  const FrMapBase* m = (const FrMapBase*)map;
  if (fr_map_is_small(m)) return 0;
  return ((const FrDenseMap*)m)->head;
}

uint64_t fr_map_end(const void* map) {
  const FrMapBase* m = (const FrMapBase*)map;
  return fr_map_is_small(m) ? m->size : FR_MAP_END;
}

uint64_t fr_map_next(const void* map, uint64_t position) {
  const FrMapBase* m = (const FrMapBase*)map;
  if (fr_map_is_small(m)) return position + 1 < m->size ? position + 1 : m->size;
  if (position == FR_MAP_END) return position;
  return fr_dense_item_at((const FrDenseMap*)m, position)->next;
}

int fr_map_position_valid(const void* map, uint64_t position) {
  const FrMapBase* m = (const FrMapBase*)map;
  uint8_t meta;
  if (fr_map_is_small(m)) return position <= m->size;
  if (position == FR_MAP_END) return 1;
  if (position >= m->slots || m->data == NULL) return 0;
  meta = *fr_dense_meta_at((const FrDenseMap*)m, position);
  return meta != FR_DENSE_META_EMPTY && meta != FR_DENSE_META_PROTECTED;
}

FrKV* fr_map_entry(const void* map, uint64_t position) {
  const FrMapBase* m = (const FrMapBase*)map;
  if (fr_map_is_small(m)) return &small_entries(m)[position];
  return &fr_dense_item_at((const FrDenseMap*)m, position)->kv;
}
