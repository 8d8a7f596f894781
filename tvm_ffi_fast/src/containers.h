/*
 * containers.h -- object layouts and operations of Array, List, Shape, Map
 * and Dict, shared by the container files and the global functions.
 *
 * The layouts are the ABI: C++ compiled from the upstream headers reads and
 * mutates these objects inline, so each struct below is laid out exactly as
 * the upstream object it stands for (noted per struct).
 */
#ifndef TVM_FFI_FAST_CONTAINERS_H_
#define TVM_FFI_FAST_CONTAINERS_H_

#include "core.h"

/* -------------------------------------------------- Array, List (seq_base) */

/* ArrayObj / ListObj: header, then TVMFFISeqCell; Array elements follow inline. */
typedef struct {
  TVMFFIObject header;
  TVMFFISeqCell cell;
} FrSeq;

#define FR_SEQ_INIT_CAPACITY 4

static inline TVMFFIAny* fr_seq_items(void* seq) { return (TVMFFIAny*)((FrSeq*)seq)->cell.data; }
static inline int64_t fr_seq_size(const void* seq) { return ((const FrSeq*)seq)->cell.size; }

/* An empty Array with room for `capacity` inline elements. NULL + raised on failure. */
FR_HIDDEN void* fr_array_new(int64_t capacity);
/* An Array holding copies of (or, with take, the owned) items[0:n]. */
FR_HIDDEN void* fr_array_from_items(TVMFFIAny* items, int64_t n, int take);
/* Appends an owned value to an Array created with enough capacity. */
static inline void fr_array_push_unchecked(void* array, TVMFFIAny owned) {
  FrSeq* seq = (FrSeq*)array;
  ((TVMFFIAny*)seq->cell.data)[seq->cell.size++] = owned;
}

/* An empty List with a separately allocated buffer of `capacity` elements. */
FR_HIDDEN void* fr_list_new(int64_t capacity);
/* Grows a List's buffer to at least n elements (List::Reserve). */
FR_HIDDEN int fr_list_reserve(void* list, int64_t n);
/* The List growth rule before adding `extra` elements (List::EnsureCapacity). */
FR_HIDDEN int fr_list_ensure_extra(void* list, int64_t extra);

/* ----------------------------------------------------------------- Shape */

/* ShapeObj: header, TVMFFIShapeCell, then the dimensions inline. */
FR_HIDDEN void* fr_shape_new(const int64_t* dims, size_t ndim);

/* --------------------------------------------------------- Map and Dict */

/* MapBaseObj (map_base.h): the part small and dense maps share. 56 bytes. */
typedef struct {
  TVMFFIObject header;
  void* data;      /* small: the KV array; dense: the blocks */
  uint64_t size;   /* number of entries */
  uint64_t slots;  /* number of slots; bit 63 set for the small layout */
  void (*data_deleter)(void*);
} FrMapBase;

/* DenseMapBaseObj: MapBaseObj, then the Fibonacci shift and the insertion-order list. */
typedef struct {
  FrMapBase base;
  uint32_t fib_shift;
  uint64_t head;
  uint64_t tail;
} FrDenseMap;

/* A key-value pair (MapBaseObj::KVRawStorageType). */
typedef struct {
  TVMFFIAny key;
  TVMFFIAny value;
} FrKV;

#define FR_MAP_SMALL_TAG ((uint64_t)1 << 63)
#define FR_MAP_END UINT64_MAX

static inline int fr_map_is_small(const void* map) {
  return (((const FrMapBase*)map)->slots & FR_MAP_SMALL_TAG) != 0;
}
static inline uint64_t fr_map_size(const void* map) { return ((const FrMapBase*)map)->size; }

/* Key hashing and equality exactly as upstream's AnyHash / AnyEqual. -1 + raised on error. */
FR_HIDDEN int fr_any_hash(const TVMFFIAny* value, uint64_t* out);
FR_HIDDEN int fr_any_equal(const TVMFFIAny* lhs, const TVMFFIAny* rhs, int* out);

/* An empty map of type index kTVMFFIMap or kTVMFFIDict (a small map, 2 slots). */
FR_HIDDEN void* fr_map_new(int32_t type_index);
/*
 * Looks key up: 1 and *value_slot when found, 0 when absent, -1 on error.
 * *value_slot points into the map (borrowed).
 */
FR_HIDDEN int fr_map_find(void* map, const TVMFFIAny* key, TVMFFIAny** value_slot);
/*
 * Inserts or overwrites an entry (consuming the owned key and value).
 * Map semantics when the map is a kTVMFFIMap: *map_ref may be replaced by a
 * new container (the old reference is released); the caller must hold the
 * only reference (copy first otherwise). Dict semantics (in place, the object
 * keeps its address) when it is a kTVMFFIDict. 0 or -1.
 */
FR_HIDDEN int fr_map_set(void** map_ref, TVMFFIAny key, TVMFFIAny value);
/* Removes key if present (in place). 0 or -1. */
FR_HIDDEN int fr_map_erase(void* map, const TVMFFIAny* key);
/* Removes every entry (in place; the slot count stays). */
FR_HIDDEN void fr_map_clear(void* map);
/* A map made from copies of entries[0:count] at once (MapBaseObj::CreateFromRange). */
FR_HIDDEN void* fr_map_from_range(int32_t type_index, const FrKV* entries, uint64_t count);
/* A copy with the same layout (MapBaseObj::CopyFrom); NULL + raised on failure. */
FR_HIDDEN void* fr_map_copy(void* map, int32_t type_index);

/* Iteration in upstream's order: begin, next, end, and the entry at a position. */
FR_HIDDEN uint64_t fr_map_begin(const void* map);
FR_HIDDEN uint64_t fr_map_next(const void* map, uint64_t position);
FR_HIDDEN uint64_t fr_map_end(const void* map);
FR_HIDDEN FrKV* fr_map_entry(const void* map, uint64_t position);
/* Whether position still names an entry (or the end) of map: false once it changed under it. */
FR_HIDDEN int fr_map_position_valid(const void* map, uint64_t position);

/* Registers the container global functions (ffi.Array, ffi.Map, ...). */
FR_HIDDEN int fr_containers_register_globals(void);
/* Their parts: sequence_globals.c (ffi.Array*, ffi.List*), map_globals.c (ffi.Map*, ffi.Dict*). */
FR_HIDDEN int fr_sequence_register_globals(void);
FR_HIDDEN int fr_map_register_globals(void);

#endif /* TVM_FFI_FAST_CONTAINERS_H_ */
