/*
 * structural_equal.h -- what the three files of the structural comparison share:
 * structural_equal.c (ffi.StructuralEqual, ffi.GetFirstStructuralMismatch: a
 * comparison set up, run and torn down), structural_equal_walk.c (the
 * comparison itself, over a work list) and structural_equal_trail.c (the
 * mismatch trail, as access paths).
 *
 * The state is one struct, Equality, that lives on the entry point's C stack
 * for one comparison; the walk and the trail read and write it.
 */
#ifndef TVM_FFI_FAST_STRUCTURAL_EQUAL_H_
#define TVM_FFI_FAST_STRUCTURAL_EQUAL_H_

#include "core.h"

#include "walk.h"

/* The kinds of access step the trail records (AccessStep's kinds, upstream's order). */
enum { ATTR, ARRAY_ITEM, MAP_ITEM, ATTR_MISSING, ARRAY_ITEM_MISSING, MAP_ITEM_MISSING };

/* A growable list of object references (owned). Inline: bind() pushes two per DAG node. */
typedef struct {
  void** items;
  size_t size;
  size_t capacity;
} Refs;

static inline int refs_push(Refs* refs, void* obj) {
  if (refs->size == refs->capacity) {
    size_t capacity = refs->capacity == 0 ? 16 : refs->capacity * 2;
    void** grown = (void**)realloc(refs->items, capacity * sizeof(void*));
    if (grown == NULL) {
      fr_decref(obj);
      return fr_raise_oom();
    }
    refs->items = grown;
    refs->capacity = capacity;
  }
  refs->items[refs->size++] = obj;
  return 0;
}

static inline void refs_free(Refs* refs) {
  size_t i;
  for (i = 0; i < refs->size; ++i) fr_decref(refs->items[i]);
  free(refs->items);
  memset(refs, 0, sizeof(*refs));
}

typedef struct {
  int32_t region;
  int skip_tensor_content;
  int trace;            /* record the mismatch trail */
  Refs lhs_steps;       /* the trail, innermost step first */
  Refs rhs_steps;
  FrPtrMap lhs_to_rhs;  /* bindings (value: the partner's address) */
  FrPtrMap rhs_to_lhs;
  Refs held;            /* references keeping bound objects alive */
  void* callback;       /* the hook callback, made once */
  FrWalkCallback* callback_state;
  FrFieldCache fields;
  int depth;
  /* Per-type facts looked up once per comparison rather than once per object (the kind
   * and the hook lookup took a lock and two registry reads each time): types without an
   * __s_equal__ hook only, a hook being a Function the registry may replace meanwhile. */
  struct {
    int32_t type_index; /* -1: empty */
    int32_t kind;
    const TVMFFIFieldInfo** fields; /* owned by `fields` above */
    size_t num_fields;
  } plain_types[8];
} Equality;

/* structural_equal_walk.c: whether lhs and rhs are structurally equal, into *out, under
 * eq's options and bindings (0, or -1 with an error raised). */
FR_HIDDEN int fr_se_equal_any(Equality* eq, const TVMFFIAny* lhs, const TVMFFIAny* rhs,
                             int* out);
/* structural_equal_walk.c: the __s_equal__ column, read once when the globals register. */
FR_HIDDEN void fr_se_walk_init(void);

/* structural_equal_trail.c: each records one step on both sides when eq->trace is set (a
 * no-op otherwise); 0, or -1 with an error raised. */
FR_HIDDEN int fr_se_record(Equality* eq, int lhs_kind, const TVMFFIAny* lhs_key,
                                int rhs_kind, const TVMFFIAny* rhs_key);
FR_HIDDEN int fr_se_record_attr(Equality* eq, const char* name, size_t size);
FR_HIDDEN int fr_se_record_index(Equality* eq, int lhs_kind, int rhs_kind, int64_t index);
/* structural_equal_trail.c: the Array of the two paths the trail spells (a new reference),
 * or NULL with an error raised. */
FR_HIDDEN void* fr_se_trail_paths(Equality* eq);

#endif /* TVM_FFI_FAST_STRUCTURAL_EQUAL_H_ */
