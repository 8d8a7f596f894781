/*
 * walk.h -- what the fast runtime's object-graph walks share (dataclass_*.c,
 * the structural operations, JSON graphs and deep copy): tables keyed by
 * object addresses, reflected fields, hook columns and the callbacks handed to
 * hooks.
 */
#ifndef TVM_FFI_FAST_WALK_H_
#define TVM_FFI_FAST_WALK_H_

#include "core.h"
#include "functions.h"

/*
 * An open-addressing table keyed by one object address (b NULL) or a pair of
 * them, with a 64-bit value: the repr states, the hash memo, the objects and
 * pairs on the way down. Linear probing, deletion by backward shift.
 */
typedef struct {
  const void* a; /* NULL: empty slot */
  const void* b;
  uint64_t value;
} FrPtrSlot;

typedef struct {
  FrPtrSlot* slots;
  size_t mask; /* capacity - 1 */
  size_t count;
} FrPtrMap;

/* The slot of key (a, b), or NULL. */
FR_HIDDEN FrPtrSlot* fr_ptrmap_find(const FrPtrMap* map, const void* a, const void* b);
/* Sets (a, b) -> value; -1 (raised) when out of memory. */
FR_HIDDEN int fr_ptrmap_put(FrPtrMap* map, const void* a, const void* b, uint64_t value);
FR_HIDDEN void fr_ptrmap_erase(FrPtrMap* map, const void* a, const void* b);
FR_HIDDEN void fr_ptrmap_free(FrPtrMap* map);

/* upstream's StableHashCombine on uint64. */
static inline uint64_t fr_hash_combine(uint64_t key, uint64_t value) {
  return key ^ (value + 0x9e3779b9ULL + (key << 6) + (key >> 2));
}

/* A borrowed value holding obj (how C++ passes a const Object*). */
static inline TVMFFIAny fr_object_view(void* obj) {
  TVMFFIAny view;
  view.type_index = fr_type_index(obj);
  view.zero_padding = 0;
  view.v_int64 = 0;
  view.v_ptr = obj;
  return view;
}

/* The TVMFFITypeInfo of ti; NULL with upstream's InternalError when there is none. */
FR_HIDDEN const TVMFFITypeInfo* fr_type_info_checked(int32_t ti);
/* The bytes of a str or bytes value of one of the four string type indices. */
FR_HIDDEN TVMFFIByteArray fr_text_of(const TVMFFIAny* value);
/*
 * The Function a hook column holds for type_index: 1 and *fn (borrowed: the
 * column keeps it), 0 when there is none, -1 with upstream's TypeError (naming
 * signature) when the entry is not a Function.
 */
FR_HIDDEN int fr_hook_of(const TVMFFITypeAttrColumn* column, int32_t type_index,
                         const char* signature, void** fn);
/*
 * fr_hook_of remembered for one walk, by type index (direct-mapped): a hook column is read under
 * the registry's lock, and a walk asks it once per object of a type that a graph holds
 * thousands of. Each remembered Function is held until fr_hook_cache_free, so a hook that
 * registers another in its place cannot free one the walk still calls. A zeroed cache is empty
 * (no object's type index is 0); a registration during a walk shows from the next walk on.
 */
#define FR_HOOK_CACHE_SLOTS 16
typedef struct {
  int32_t type_index;
  void* fn; /* NULL: the type has no hook */
} FrHookSlot;
typedef struct {
  FrHookSlot slots[FR_HOOK_CACHE_SLOTS];
} FrHookCache;
FR_HIDDEN int fr_cached_hook(FrHookCache* cache, const TVMFFITypeAttrColumn* column,
                             int32_t type_index, const char* signature, void** fn);
FR_HIDDEN void fr_hook_cache_free(FrHookCache* cache);
/* A hook's int (or bool) result as int64; the result is released. */
FR_HIDDEN int fr_result_as_int(TVMFFIAny* result, const char* target, int64_t* out);

/*
 * The callback handed to a hook: a typed Function over a context that points
 * at the walk's state while the hook runs. A hook that keeps the callback and
 * calls it later finds walk NULL (the walk reports that instead of using a
 * finished walk).
 */
typedef struct {
  void* walk;
} FrWalkCallback;
FR_HIDDEN void* fr_walk_callback_new(const FrBuiltin* spec, void* walk, FrWalkCallback** out);
/* Detaches a callback from its walk once the hook has returned, and drops our reference. */
FR_HIDDEN void fr_walk_callback_done(void* fn, FrWalkCallback* cb);

/*
 * The reflected fields of a type, ancestors' first (from depth 1: ffi.Object
 * has none), without those whose flags meet skip. *out is malloc'd (NULL when
 * there are none).
 */
FR_HIDDEN int fr_collect_fields(int32_t type_index, int64_t skip, const TVMFFIFieldInfo*** out,
                                size_t* count);
/*
 * fr_collect_fields remembered for one walk: a graph has few types and many
 * objects, so each type's list is collected once. The arrays stay owned by
 * the cache (freed by fr_field_cache_free); a zeroed cache is empty.
 */
typedef struct {
  int32_t type_index;
  int64_t skip;
  const TVMFFIFieldInfo** fields;
  size_t count;
} FrCachedFields;
typedef struct {
  FrCachedFields* entries;
  size_t size;
  size_t capacity;
} FrFieldCache;
FR_HIDDEN int fr_cached_fields(FrFieldCache* cache, int32_t type_index, int64_t skip,
                               const TVMFFIFieldInfo*** out, size_t* count);
FR_HIDDEN void fr_field_cache_free(FrFieldCache* cache);
/* Reads one reflected field through its getter (an owned value). */
FR_HIDDEN int fr_read_field(void* obj, const TVMFFIFieldInfo* field, TVMFFIAny* out);

#endif /* TVM_FFI_FAST_WALK_H_ */
