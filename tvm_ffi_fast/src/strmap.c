/*
 * strmap.c -- a small open-addressing hash table keyed by byte strings, for
 * the runtime's own lookups (type keys, attribute names, symbol tables).
 */
#include "core.h"

static uint64_t key_hash(const char* key, size_t size) {
  /* FNV-1a: the table is private, so any good spread will do */
  uint64_t h = 1469598103934665603ULL;
  size_t i;
  for (i = 0; i < size; ++i) {
    h ^= (unsigned char)key[i];
    h *= 1099511628211ULL;
  }
  return h;
}

static size_t find_slot(const FrStrMap* map, const char* key, size_t size) {
  size_t mask = map->capacity - 1;
  size_t i = (size_t)key_hash(key, size) & mask;
  while (map->keys[i] != NULL) {
    if (map->key_sizes[i] == size && memcmp(map->keys[i], key, size) == 0) return i;
    i = (i + 1) & mask;
  }
  return i;
}

void* fr_strmap_get(const FrStrMap* map, const char* key, size_t size) {
  size_t i;
  if (map->capacity == 0) return NULL;
  i = find_slot(map, key, size);
  return map->keys[i] != NULL ? map->values[i] : NULL;
}

static int grow(FrStrMap* map) {
  size_t cap = map->capacity == 0 ? 64 : map->capacity * 2, i;
  FrStrMap bigger;
  bigger.keys = (char**)calloc(cap, sizeof(char*));
  bigger.key_sizes = (size_t*)calloc(cap, sizeof(size_t));
  bigger.values = (void**)calloc(cap, sizeof(void*));
  bigger.capacity = cap;
  bigger.count = map->count;
  if (bigger.keys == NULL || bigger.key_sizes == NULL || bigger.values == NULL) {
    free(bigger.keys);
    free(bigger.key_sizes);
    free(bigger.values);
    return -1;
  }
  for (i = 0; i < map->capacity; ++i) {
    if (map->keys[i] != NULL) {
      size_t j = find_slot(&bigger, map->keys[i], map->key_sizes[i]);
      bigger.keys[j] = map->keys[i];
      bigger.key_sizes[j] = map->key_sizes[i];
      bigger.values[j] = map->values[i];
    }
  }
  free(map->keys);
  free(map->key_sizes);
  free(map->values);
  *map = bigger;
  return 0;
}

int fr_strmap_put(FrStrMap* map, const char* key, size_t size, void* value) {
  size_t i;
  if ((map->count + 1) * 2 > map->capacity && grow(map) != 0) return -1;
  i = find_slot(map, key, size);
  if (map->keys[i] == NULL) {
    char* copy = fr_strndup(key, size);
    if (copy == NULL) return -1;
    map->keys[i] = copy;
    map->key_sizes[i] = size;
    map->count += 1;
  }
  map->values[i] = value;
  return 0;
}
