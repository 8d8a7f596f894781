/*
 * structural_hash.c -- ffi.StructuralHash: the 64-bit hash that agrees with
 * structural equality, bit for bit upstream's (users store it, C++ compares it).
 *
 * tvm_ffi_ref/runtime/structural_hash.py states every rule: inline values
 * (NaN canonical, small strings as String objects), strings, BigInts,
 * sequences, maps (entries sorted by an order-independent key hash, ties
 * without their values), shapes, tensors, objects by kind (the memo, the free
 * variable and DAG node counters) and the __s_hash__ hook.
 */
#include "structural.h"

#include <math.h>

#include "containers.h"
#include "functions.h"
#include "registry.h"
#include "runtime.h"
#include "walk.h"

#define SIG_S_HASH "(0: ffi.Object, 1: int, 2: (0: AnyView, 1: int, 2: int) -> int) -> int"
#define QUIET_NAN_BITS 0x7FF8000000000000ULL

typedef struct {
  int32_t region;
  int skip_tensor_content;
  uint32_t free_vars; /* free variables hashed inside a region so far */
  uint32_t dag_nodes; /* DAG nodes finished so far */
  FrPtrMap memo;      /* object -> its hash (the object is held) */
  void** held;
  size_t n_held;
  size_t cap_held;
  void* callback;
  FrWalkCallback* callback_state;
  FrFieldCache fields;
  FrHookCache hooks;
} Hasher;

static int hash_any(Hasher* h, const TVMFFIAny* value, uint64_t* out);

static uint64_t key_hash(int32_t type_index) {
  const TVMFFITypeInfo* info = fr_type_info_or_null(type_index);
  return info == NULL ? 0 : info->type_key_hash;
}

static uint64_t bytes_hash(int32_t type_index, TVMFFIByteArray bytes) {
  return fr_hash_combine((uint64_t)type_index, fr_stable_hash_bytes(bytes.data, bytes.size));
}

static uint64_t bigint_hash(const TVMFFIAny* value) {
  size_t n;
  const int64_t* words = fr_bigint_words(value, &n);
  return fr_hash_combine((uint64_t)value->type_index,
                         fr_stable_hash_bytes(words, n * sizeof(int64_t)));
}

static int memoize(Hasher* h, void* obj, uint64_t value) {
  if (h->n_held == h->cap_held) {
    size_t capacity = h->cap_held == 0 ? 16 : h->cap_held * 2;
    void** grown = (void**)realloc(h->held, capacity * sizeof(void*));
    if (grown == NULL) return fr_raise_oom();
    h->held = grown;
    h->cap_held = capacity;
  }
  fr_incref(obj);
  h->held[h->n_held++] = obj;
  return fr_ptrmap_put(&h->memo, obj, NULL, value);
}

static void hasher_free(Hasher* h) {
  size_t i;
  for (i = 0; i < h->n_held; ++i) fr_decref(h->held[i]);
  free(h->held);
  fr_ptrmap_free(&h->memo);
  fr_field_cache_free(&h->fields);
  fr_hook_cache_free(&h->hooks);
  if (h->callback != NULL) fr_walk_callback_done(h->callback, h->callback_state);
}

/* A key hash that cannot depend on the visiting order: 1 and *out, or 0 when there is none. */
static int order_independent_hash(Hasher* h, const TVMFFIAny* key, uint64_t* out) {
  int32_t ti = key->type_index;
  FrPtrSlot* slot;
  if (ti < kTVMFFIStaticObjectBegin) {
    *out = ti == kTVMFFISmallStr ? bytes_hash(kTVMFFIStr, fr_text_of(key))
                                 : fr_hash_combine((uint64_t)ti, key->v_uint64);
    return 1;
  }
  if (ti == kTVMFFIStr || ti == kTVMFFIBytes) {
    *out = bytes_hash(ti, fr_text_of(key));
    return 1;
  }
  if (ti == kTVMFFIBigInt) {
    *out = bigint_hash(key);
    return 1;
  }
  slot = fr_ptrmap_find(&h->memo, key->v_obj, NULL);
  if (slot == NULL) return 0;
  *out = slot->value;
  return 1;
}

typedef struct {
  uint64_t key_hash;
  const TVMFFIAny* value;
} KeyedEntry;

static int compare_keyed(const void* a, const void* b) {
  uint64_t x = ((const KeyedEntry*)a)->key_hash, y = ((const KeyedEntry*)b)->key_hash;
  return x < y ? -1 : x > y;
}

/* Sorts by key hash: by insertion for the few entries most maps have (qsort's merge sort
 * costs about 200 instructions even for two), by qsort past that. */
static void sort_keyed(KeyedEntry* entries, size_t n) {
  size_t i, j;
  if (n > 16) {
    qsort(entries, n, sizeof(KeyedEntry), compare_keyed);
    return;
  }
  for (i = 1; i < n; ++i) {
    KeyedEntry moving = entries[i];
    for (j = i; j > 0 && entries[j - 1].key_hash > moving.key_hash; --j) {
      entries[j] = entries[j - 1];
    }
    entries[j] = moving;
  }
}

/* ------------------------------------------------------------ the work list
 *
 * A container or object whose children must be hashed is a frame on an explicit stack in heap
 * memory, not a C call, so a value a million levels deep costs no C stack. A frame hands out
 * its children one at a time (frame_next), combines each child's hash into its own
 * (frame_child) and, when done, yields its hash to its parent. Only __s_hash__ hooks nest (the
 * callback hashes through a walk of its own), guarded by the C stack check. */

enum { FRAME_SEQ, FRAME_MAP, FRAME_OBJ };

typedef struct {
  int kind;
  void* obj; /* first: fr_s_check_path reads it */
  uint64_t result;
  int32_t outer_region; /* the region the frame was entered in (restored when it ends) */
  int32_t region;       /* the region its children's regions derive from */
  /* FRAME_SEQ: items; FRAME_MAP: entries grouped by key hash; FRAME_OBJ: fields */
  size_t index, n;
  KeyedEntry* entries;
  /* FRAME_OBJ */
  int32_t type_index, kind_of_object;
  const TVMFFIFieldInfo** fields;
  TVMFFIAny field; /* the field whose hash is being taken (owned while it is) */
  int holding;
} HashFrame;

typedef struct {
  HashFrame* frames;
  size_t n, capacity;
} HashStack;

static void drop_frame(HashFrame* f) {
  if (f->holding) fr_any_release(&f->field);
  f->holding = 0;
  free(f->entries);
  f->entries = NULL;
}

static HashFrame* push_frame(Hasher* h, HashStack* st, int kind, void* obj) {
  HashFrame* f;
  HashFrame* frames =
      (HashFrame*)fr_s_stack_room(st->frames, st->n, &st->capacity, sizeof(HashFrame));
  if (frames == NULL) return NULL;
  st->frames = frames;
  f = &frames[st->n++];
  memset(f, 0, sizeof(*f));
  f->kind = kind;
  f->obj = obj;
  f->region = f->outer_region = h->region;
  if (fr_s_check_path("StructuralHash", st->frames, st->n, sizeof(HashFrame),
                      offsetof(HashFrame, obj)) != 0) {
    st->n--;
    return NULL;
  }
  return f;
}

/* A map's frame: the entries whose key hash does not depend on the visiting order, sorted by
 * it (computed when the map is entered, as the memo stands then). */
static int start_map(Hasher* h, HashStack* st, void* map) {
  uint64_t size = fr_map_size(map), it, end = fr_map_end(map);
  HashFrame* f = push_frame(h, st, FRAME_MAP, map);
  size_t n = 0;
  if (f == NULL) return -1;
  f->result = fr_hash_combine(key_hash(fr_type_index(map)), size);
  f->entries = (KeyedEntry*)malloc(((size_t)size + 1) * sizeof(KeyedEntry));
  if (f->entries == NULL) return fr_raise_oom();
  for (it = fr_map_begin(map); it != end; it = fr_map_next(map, it)) {
    FrKV* kv = fr_map_entry(map, it);
    if (order_independent_hash(h, &kv->key, &f->entries[n].key_hash)) {
      f->entries[n++].value = &kv->value;
    }
  }
  /* entries whose key hashes tie add no value, so the order a sort leaves them in never shows */
  sort_keyed(f->entries, n);
  f->n = n;
  return 1;
}

static int hash_tensor(Hasher* h, void* obj, uint64_t* out) {
  const DLTensor* t = (const DLTensor*)((char*)obj + FR_HEADER_SIZE);
  uint64_t result = fr_hash_combine(key_hash(kTVMFFITensor), (uint64_t)(int64_t)t->ndim), count = 1;
  int32_t i;
  for (i = 0; i < t->ndim; ++i) {
    result = fr_hash_combine(result, (uint64_t)t->shape[i]);
    count *= (uint64_t)t->shape[i];
  }
  result = fr_hash_combine(result, (uint64_t)t->dtype.code | (uint64_t)t->dtype.bits << 8 |
                                       (uint64_t)t->dtype.lanes << 16);
  if (!h->skip_tensor_content) {
    size_t size = (size_t)((count * t->dtype.bits * t->dtype.lanes + 7) / 8);
    if (t->device.device_type != kDLCPU) {
      return fr_raise("InternalError",
                      "Check failed: tensor.device().device_type == kDLCPU (%d vs. 1) : can only "
                      "hash CPU tensor",
                      (int)t->device.device_type);
    }
    if (!fr_tensor_is_contiguous(t)) {
      return fr_raise("InternalError",
                      "Check failed: (tensor.IsContiguous()) is false: Can only hash contiguous "
                      "tensor");
    }
    result = fr_hash_combine(result, fr_stable_hash_bytes(size ? t->data : "", size));
  }
  *out = result;
  return 0;
}

/* ------------------------------------------------------------ objects */

static const TVMFFITypeAttrColumn* g_s_hash = NULL;

static int hash_in_region(Hasher* h, int32_t region, const TVMFFIAny* value, uint64_t* out) {
  int32_t saved = h->region;
  int status;
  h->region = region;
  status = hash_any(h, value, out);
  h->region = saved;
  return status;
}

/* hash_cb(value, init, region) -> int: combine(init, hash(value)), with the hash's state. */
static int hash_callback(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  Hasher* h = (Hasher*)((FrWalkCallback*)ctx)->walk;
  TVMFFIAny value;
  uint64_t inner;
  int status;
  if (h == NULL) {
    return fr_raise("RuntimeError",
                    "a structural hash hook callback was called after its hash finished");
  }
  if (fr_any_view_to_owned(&args[0].value, &value) != 0) return -1;
  status = hash_in_region(h, fr_s_hook_region((int32_t)args[2].value.v_int64, h->region), &value,
                          &inner);
  fr_any_release(&value);
  if (status != 0) return -1;
  *rv = fr_any_int((int64_t)fr_hash_combine((uint64_t)args[1].value.v_int64, inner));
  return 0;
}

static const FrBuiltin kHashCallback = {
    "", hash_callback, NULL, 3, {FR_T_ANYVIEW, FR_T_INT, FR_T_INT}, FR_T_INT};

/* An object's hash when memoized or through its __s_hash__ hook (0, *out), else a frame over its
 * fields (1), or -1. A free variable's own fields are uses even in a Simple region. */
static int start_object(Hasher* h, HashStack* st, void* obj, uint64_t* out) {
  int32_t ti = fr_type_index(obj), kind;
  void* hook = NULL;
  HashFrame* f;
  int found;
  FrPtrSlot* slot;
  if (fr_s_kind(ti, &kind) != 0) return -1;
  slot = fr_ptrmap_find(&h->memo, obj, NULL);
  if (slot != NULL) {
    *out = slot->value;
    return 0;
  }
  found = fr_cached_hook(&h->hooks, g_s_hash, ti, SIG_S_HASH, &hook);
  if (found < 0) return -1;
  f = push_frame(h, st, FRAME_OBJ, obj);
  if (f == NULL) return -1;
  f->type_index = ti;
  f->kind_of_object = kind;
  f->result = key_hash(ti);
  if (kind == kTVMFFISEqHashKindFreeVar && f->region == kTVMFFIDefRegionKindSimple) {
    f->region = kTVMFFIDefRegionKindNone;
  }
  if (found) {
    TVMFFIAny args[3], returned;
    int64_t value;
    int32_t saved = h->region;
    if (tvm_ffi_runtime_stack_low()) return fr_s_too_deep("StructuralHash");
    if (h->callback == NULL) {
      h->callback = fr_walk_callback_new(&kHashCallback, h, &h->callback_state);
      if (h->callback == NULL) return -1;
    }
    args[0] = fr_object_view(obj);
    args[1] = fr_any_int((int64_t)f->result);
    args[2] = fr_object_view(h->callback);
    h->region = f->region;
    if (fr_call(hook, args, 3, &returned) != 0) return -1;
    h->region = saved;
    if (fr_result_as_int(&returned, "int", &value) != 0) return -1;
    f = &st->frames[st->n - 1];
    f->result = (uint64_t)value;
    return 1; /* no fields: the frame ends at once */
  }
  if (fr_cached_fields(&h->fields, ti, FR_S_IGNORE, &f->fields, &f->n) != 0) return -1;
  return 1;
}

/* The end of an object's frame: free variables and DAG nodes numbered, the hash memoized. */
static int finish_object(Hasher* h, HashFrame* f) {
  uint64_t result = f->result;
  if (f->kind_of_object == kTVMFFISEqHashKindFreeVar) {
    if (f->outer_region != kTVMFFIDefRegionKindNone) {
      result = fr_hash_combine(result, h->free_vars++);
    } else {
      result = (uint64_t)(uintptr_t)f->obj; /* std::hash of a pointer is its value */
    }
  }
  if (f->kind_of_object == kTVMFFISEqHashKindDAGNode) {
    result = fr_hash_combine(result, h->dag_nodes++);
  }
  f->result = result;
  return memoize(h, f->obj, result);
}

/* ------------------------------------------------------------ any value */

/* Hashes what needs no frame (0, *out); pushes a frame for the rest (1); or -1. */
static int start(Hasher* h, HashStack* st, const TVMFFIAny* value, uint64_t* out) {
  int32_t ti = value->type_index;
  HashFrame* f;
  if (ti < kTVMFFIStaticObjectBegin) {
    if (ti == kTVMFFIFloat && isnan(value->v_float64)) {
      *out = fr_hash_combine((uint64_t)ti, QUIET_NAN_BITS);
    } else if (ti == kTVMFFISmallStr) {
      *out = bytes_hash(kTVMFFIStr, fr_text_of(value));
    } else {
      *out = fr_hash_combine((uint64_t)ti, value->v_uint64);
    }
    return 0;
  }
  if (ti == kTVMFFIBigInt) {
    *out = bigint_hash(value);
    return 0;
  }
  if (ti == kTVMFFIStr || ti == kTVMFFIBytes) {
    *out = bytes_hash(ti, fr_text_of(value));
    return 0;
  }
  if (ti == kTVMFFIArray || ti == kTVMFFIList) {
    f = push_frame(h, st, FRAME_SEQ, value->v_obj);
    if (f == NULL) return -1;
    f->n = (size_t)fr_seq_size(value->v_obj);
    f->result = fr_hash_combine(key_hash(ti), (uint64_t)f->n);
    return 1;
  }
  if (ti == kTVMFFIMap || ti == kTVMFFIDict) return start_map(h, st, value->v_obj);
  if (ti == kTVMFFIShape) {
    const TVMFFIShapeCell* cell = FR_CELL(value->v_obj, TVMFFIShapeCell);
    uint64_t result = fr_hash_combine(key_hash(ti), (uint64_t)cell->size);
    size_t i;
    for (i = 0; i < cell->size; ++i) result = fr_hash_combine(result, (uint64_t)cell->data[i]);
    *out = result;
    return 0;
  }
  if (ti == kTVMFFITensor) return hash_tensor(h, value->v_obj, out);
  return start_object(h, st, value->v_obj, out);
}

/* The frame's next child to hash (1, h->region set for it), its end (0), or -1. */
static int frame_next(Hasher* h, HashFrame* f, const TVMFFIAny** child) {
  if (f->kind == FRAME_SEQ) {
    if (f->index >= f->n) return 0;
    *child = &fr_seq_items(f->obj)[f->index++];
    return 1;
  }
  if (f->kind == FRAME_MAP) {
    /* a group of entries whose key hashes tie adds the key hash alone */
    while (f->index < f->n) {
      size_t i = f->index, k = i + 1;
      while (k < f->n && f->entries[k].key_hash == f->entries[i].key_hash) ++k;
      f->result = fr_hash_combine(f->result, f->entries[i].key_hash);
      f->index = k;
      if (k == i + 1) {
        *child = f->entries[i].value;
        return 1;
      }
    }
    return 0;
  }
  if (f->index >= f->n) return finish_object(h, f) < 0 ? -1 : 0;
  {
    const TVMFFIFieldInfo* field = f->fields[f->index++];
    if (fr_read_field(f->obj, field, &f->field) != 0) return -1;
    f->holding = 1;
    *child = &f->field;
    h->region = fr_s_field_region(field->flags, f->region);
    return 1;
  }
}

static int hash_any(Hasher* h, const TVMFFIAny* value, uint64_t* out) {
  HashStack st = {NULL, 0, 0};
  int32_t entry_region = h->region;
  uint64_t result = 0;
  int status = start(h, &st, value, &result);
  while (status > 0 && st.n > 0) {
    HashFrame* f = &st.frames[st.n - 1];
    const TVMFFIAny* child;
    uint64_t item;
    status = frame_next(h, f, &child);
    if (status < 0) break;
    if (status == 1) {
      status = start(h, &st, child, &item);
      if (status != 0) continue; /* a frame was pushed (1), or an error (-1) */
      f = &st.frames[st.n - 1];
    } else {
      item = f->result;
      h->region = f->outer_region;
      drop_frame(f);
      if (--st.n == 0) {
        result = item;
        break;
      }
      f = &st.frames[st.n - 1];
    }
    /* the child's hash, into its parent's */
    if (f->holding) {
      fr_any_release(&f->field);
      f->holding = 0;
      h->region = f->region;
    }
    f->result = fr_hash_combine(f->result, item);
    status = 1;
  }
  while (st.n > 0) drop_frame(&st.frames[--st.n]);
  free(st.frames);
  h->region = entry_region;
  if (status < 0) return -1;
  *out = result;
  return 0;
}

int fr_structural_hash(const TVMFFIAny* value, int map_free_vars, int skip_tensor_content,
                       uint64_t* out) {
  Hasher h;
  int status;
  memset(&h, 0, sizeof(h));
  h.region = map_free_vars ? kTVMFFIDefRegionKindPattern : kTVMFFIDefRegionKindNone;
  h.skip_tensor_content = skip_tensor_content;
  status = hash_any(&h, value, out);
  hasher_free(&h);
  return status;
}

static int structural_hash(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  uint64_t hash;
  (void)ctx;
  if (fr_structural_hash(&args[0].value, (int)args[1].value.v_int64, (int)args[2].value.v_int64,
                         &hash) != 0) {
    return -1;
  }
  *rv = fr_any_int((int64_t)hash);
  return 0;
}

int fr_structural_hash_globals(void) {
  static const FrBuiltin kBuiltins[] = {
      {"ffi.StructuralHash", structural_hash, NULL, 3, {FR_T_ANY, FR_T_BOOL, FR_T_BOOL},
       FR_T_INT},
  };
  g_s_hash = fr_s_column("__s_hash__");
  return fr_register_builtins(kBuiltins, 1);
}
