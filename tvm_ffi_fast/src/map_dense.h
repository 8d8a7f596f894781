/*
 * map_dense.h -- what maps.c and map_dense.c share: the dense layout's storage
 * (blocks of 16 metadata bytes then 16 items) read inline by the map
 * interface, the dense operations it calls, and the map object's deleter.
 */
#ifndef TVM_FFI_FAST_MAP_DENSE_H_
#define TVM_FFI_FAST_MAP_DENSE_H_

#include "core.h"

#include "containers.h"

#define FR_DENSE_BLOCK_CAP 16
#define FR_DENSE_META_EMPTY 0xFFu
#define FR_DENSE_META_PROTECTED 0xFEu

/* An entry of the dense layout: the pair and its insertion-order links. 48 bytes. */
typedef struct {
  FrKV kv;
  uint64_t prev;
  uint64_t next;
} FrDenseItem;

#define FR_DENSE_BLOCK_BYTES (FR_DENSE_BLOCK_CAP + FR_DENSE_BLOCK_CAP * sizeof(FrDenseItem))

static inline uint8_t* fr_dense_meta_at(const FrDenseMap* m, uint64_t i) {
  return (uint8_t*)m->base.data + (i / FR_DENSE_BLOCK_CAP) * FR_DENSE_BLOCK_BYTES +
         (i % FR_DENSE_BLOCK_CAP);
}

static inline FrDenseItem* fr_dense_item_at(const FrDenseMap* m, uint64_t i) {
  return (FrDenseItem*)((char*)m->base.data + (i / FR_DENSE_BLOCK_CAP) * FR_DENSE_BLOCK_BYTES +
                        FR_DENSE_BLOCK_CAP + (i % FR_DENSE_BLOCK_CAP) * sizeof(FrDenseItem));
}

static inline void fr_map_release_kv(FrKV* kv) {
  fr_any_release(&kv->key);
  fr_any_release(&kv->value);
}

/* maps.c: the deleter of every Map and Dict object (either layout). */
FR_HIDDEN void fr_map_deleter(void* self, int flags);

/* map_dense.c: DenseMapBaseObj's operations, step for step as upstream's. */
/* An empty dense map of n_slots slots (all metadata bytes empty); NULL + raised. */
FR_HIDDEN FrDenseMap* fr_dense_empty(int32_t type_index, uint32_t fib_shift, uint64_t n_slots);
/* The slots and Fibonacci shift of a table for cap entries. */
FR_HIDDEN void fr_dense_table_size_for(uint64_t cap, uint32_t* fib_shift, uint64_t* n_slots);
/* Search: the slot holding key, FR_MAP_END when absent; -1 + raised on error via *status. */
FR_HIDDEN uint64_t fr_dense_search(const FrDenseMap* m, const TVMFFIAny* key, int* status);
/* InsertMaybeReHash (takes kv's references): *grown is a new map or stays NULL (in place). */
FR_HIDDEN int fr_dense_insert(FrDenseMap* m, FrKV kv, void** grown);
FR_HIDDEN int fr_dense_erase_at(FrDenseMap* m, uint64_t i);
FR_HIDDEN void fr_dense_clear(FrDenseMap* m);
/* Frees the blocks (entries already gone) and leaves an empty, slot-less map. */
FR_HIDDEN void fr_dense_release_memory(FrDenseMap* m);
/* A copy with the same slots, links and metadata (CopyFrom); NULL + raised. */
FR_HIDDEN FrDenseMap* fr_dense_copy(const FrDenseMap* from, int32_t type_index);

#endif /* TVM_FFI_FAST_MAP_DENSE_H_ */
