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
  int depth;
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
  if (h->callback != NULL) fr_walk_callback_done(h->callback, h->callback_state);
}

/* ------------------------------------------------------------ containers */

static int hash_sequence(Hasher* h, void* seq, uint64_t* out) {
  int64_t n = fr_seq_size(seq), i;
  uint64_t result = fr_hash_combine(key_hash(fr_type_index(seq)), (uint64_t)n), item;
  for (i = 0; i < n; ++i) {
    if (hash_any(h, &fr_seq_items(seq)[i], &item) != 0) return -1;
    result = fr_hash_combine(result, item);
  }
  *out = result;
  return 0;
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

static int hash_map(Hasher* h, void* map, uint64_t* out) {
  uint64_t size = fr_map_size(map), it, end = fr_map_end(map), result, value;
  KeyedEntry few[8]; /* most maps are small: no allocation for them */
  KeyedEntry* entries = few;
  size_t n = 0, i, k;
  int status = 0;
  result = fr_hash_combine(key_hash(fr_type_index(map)), size);
  if (size > sizeof(few) / sizeof(few[0])) {
    entries = (KeyedEntry*)malloc((size_t)size * sizeof(KeyedEntry));
    if (entries == NULL) return fr_raise_oom();
  }
  for (it = fr_map_begin(map); it != end; it = fr_map_next(map, it)) {
    FrKV* kv = fr_map_entry(map, it);
    if (order_independent_hash(h, &kv->key, &entries[n].key_hash)) entries[n++].value = &kv->value;
  }
  /* entries whose key hashes tie add no value, so the order a sort leaves them in never shows */
  qsort(entries, n, sizeof(KeyedEntry), compare_keyed);
  for (i = 0; i < n; i = k) {
    for (k = i + 1; k < n && entries[k].key_hash == entries[i].key_hash; ++k) {
    }
    result = fr_hash_combine(result, entries[i].key_hash);
    if (k == i + 1) {
      if (hash_any(h, entries[i].value, &value) != 0) {
        status = -1;
        break;
      }
      result = fr_hash_combine(result, value);
    }
  }
  if (entries != few) free(entries);
  *out = result;
  return status;
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

static int hash_fields(Hasher* h, void* obj, int32_t ti, uint64_t* out) {
  void* hook = NULL;
  const TVMFFIFieldInfo** fields;
  size_t n, i;
  uint64_t result = key_hash(ti), item;
  int status = 0;
  int found = fr_hook_of(g_s_hash, ti, SIG_S_HASH, &hook);
  if (found < 0) return -1;
  if (found) {
    TVMFFIAny args[3], returned;
    int64_t value;
    if (h->callback == NULL) {
      h->callback = fr_walk_callback_new(&kHashCallback, h, &h->callback_state);
      if (h->callback == NULL) return -1;
    }
    args[0] = fr_object_view(obj);
    args[1] = fr_any_int((int64_t)result);
    args[2] = fr_object_view(h->callback);
    if (fr_call(hook, args, 3, &returned) != 0) return -1;
    if (fr_result_as_int(&returned, "int", &value) != 0) return -1;
    *out = (uint64_t)value;
    return 0;
  }
  if (fr_cached_fields(&h->fields, ti, FR_S_IGNORE, &fields, &n) != 0) return -1;
  for (i = 0; i < n; ++i) {
    TVMFFIAny value;
    if (fr_read_field(obj, fields[i], &value) != 0) {
      status = -1;
      break;
    }
    status = hash_in_region(h, fr_s_field_region(fields[i]->flags, h->region), &value, &item);
    fr_any_release(&value);
    if (status != 0) break;
    result = fr_hash_combine(result, item);
  }
  *out = result;
  return status;
}

static int hash_object(Hasher* h, void* obj, uint64_t* out) {
  int32_t ti = fr_type_index(obj), kind, region;
  FrPtrSlot* slot;
  uint64_t result;
  int status;
  if (fr_s_kind(ti, &kind) != 0) return -1;
  slot = fr_ptrmap_find(&h->memo, obj, NULL);
  if (slot != NULL) {
    *out = slot->value;
    return 0;
  }
  if (kind != kTVMFFISEqHashKindFreeVar) {
    if (hash_fields(h, obj, ti, &result) != 0) return -1;
  } else {
    /* its fields are uses even in a Simple region, and are walked even when the result is
       the address: they may count variables */
    region = h->region;
    if (region == kTVMFFIDefRegionKindSimple) h->region = kTVMFFIDefRegionKindNone;
    status = hash_fields(h, obj, ti, &result);
    h->region = region;
    if (status != 0) return -1;
    if (region != kTVMFFIDefRegionKindNone) {
      result = fr_hash_combine(result, h->free_vars++);
    } else {
      result = (uint64_t)(uintptr_t)obj; /* std::hash of a pointer is its value */
    }
  }
  if (kind == kTVMFFISEqHashKindDAGNode) result = fr_hash_combine(result, h->dag_nodes++);
  if (memoize(h, obj, result) != 0) return -1;
  *out = result;
  return 0;
}

/* ------------------------------------------------------------ any value */

static int hash_any(Hasher* h, const TVMFFIAny* value, uint64_t* out) {
  int32_t ti = value->type_index;
  int status;
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
  if (h->depth >= FR_S_MAX_DEPTH || tvm_ffi_runtime_stack_low()) return fr_s_too_deep("StructuralHash");
  h->depth++;
  if (ti == kTVMFFIArray || ti == kTVMFFIList) {
    status = hash_sequence(h, value->v_obj, out);
  } else if (ti == kTVMFFIMap || ti == kTVMFFIDict) {
    status = hash_map(h, value->v_obj, out);
  } else if (ti == kTVMFFIShape) {
    const TVMFFIShapeCell* cell = FR_CELL(value->v_obj, TVMFFIShapeCell);
    uint64_t result = fr_hash_combine(key_hash(ti), (uint64_t)cell->size);
    size_t i;
    for (i = 0; i < cell->size; ++i) result = fr_hash_combine(result, (uint64_t)cell->data[i]);
    *out = result;
    status = 0;
  } else if (ti == kTVMFFITensor) {
    status = hash_tensor(h, value->v_obj, out);
  } else {
    status = hash_object(h, value->v_obj, out);
  }
  h->depth--;
  return status;
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
