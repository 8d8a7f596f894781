/*
 * structural_equal.c -- ffi.StructuralEqual and ffi.GetFirstStructuralMismatch.
 *
 * The comparison recurses as upstream's does; tvm_ffi_ref/runtime/structural_equal.py
 * states every rule (inline values, strings, containers, tensors, objects by
 * kind, bindings of free variables and DAG nodes, the __s_equal__ hook and the
 * mismatch trail of access steps).
 */
#include "structural.h"

#include <math.h>

#include "containers.h"
#include "functions.h"
#include "registry.h"
#include "runtime.h"
#include "walk.h"

#define SIG_S_EQUAL                                                                  \
  "(0: ffi.Object, 1: ffi.Object, 2: (0: AnyView, 1: AnyView, 2: int, 3: AnyView) -> " \
  "bool) -> bool"

enum { ATTR, ARRAY_ITEM, MAP_ITEM, ATTR_MISSING, ARRAY_ITEM_MISSING, MAP_ITEM_MISSING };

/* A growable list of object references (owned). */
typedef struct {
  void** items;
  size_t size;
  size_t capacity;
} Refs;

static int refs_push(Refs* refs, void* obj) {
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

static void refs_free(Refs* refs) {
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
} Equality;

static int equal_any(Equality* eq, const TVMFFIAny* lhs, const TVMFFIAny* rhs, int* out);

/* ------------------------------------------------------------ the trail */

static int record(Equality* eq, int lhs_kind, const TVMFFIAny* lhs_key, int rhs_kind,
                  const TVMFFIAny* rhs_key) {
  void* step;
  if (!eq->trace) return 0;
  step = fr_access_step_new(lhs_kind, lhs_key);
  if (step == NULL || refs_push(&eq->lhs_steps, step) != 0) return -1;
  step = fr_access_step_new(rhs_kind, rhs_key);
  if (step == NULL || refs_push(&eq->rhs_steps, step) != 0) return -1;
  return 0;
}

static int record_attr(Equality* eq, const char* name, size_t size) {
  TVMFFIAny key;
  int status;
  if (!eq->trace) return 0;
  if (fr_string_from_bytes(name, size, &key) != 0) return -1;
  status = record(eq, ATTR, &key, ATTR, &key);
  fr_any_release(&key);
  return status;
}

static int record_index(Equality* eq, int lhs_kind, int rhs_kind, int64_t index) {
  TVMFFIAny key = fr_any_int(index);
  return record(eq, lhs_kind, &key, rhs_kind, &key);
}

/* The Array of the two paths the trail spells (a new reference), or NULL. */
static void* trail_paths(Equality* eq) {
  Refs* trails[2] = {&eq->lhs_steps, &eq->rhs_steps};
  void* pair = fr_array_new(2);
  int side;
  if (pair == NULL) return NULL;
  for (side = 0; side < 2; ++side) {
    void* path = fr_access_path_new(NULL, NULL);
    size_t i;
    for (i = trails[side]->size; path != NULL && i > 0; --i) {
      void* deeper = fr_access_path_new(path, trails[side]->items[i - 1]);
      fr_decref(path);
      path = deeper;
    }
    if (path == NULL) {
      fr_decref(pair);
      return NULL;
    }
    fr_array_push_unchecked(pair, fr_any_object(path));
  }
  return pair;
}

static void equality_free(Equality* eq) {
  refs_free(&eq->lhs_steps);
  refs_free(&eq->rhs_steps);
  refs_free(&eq->held);
  fr_ptrmap_free(&eq->lhs_to_rhs);
  fr_ptrmap_free(&eq->rhs_to_lhs);
  fr_field_cache_free(&eq->fields);
  if (eq->callback != NULL) fr_walk_callback_done(eq->callback, eq->callback_state);
}

static int bind(Equality* eq, void* lhs, void* rhs) {
  fr_incref(lhs);
  if (refs_push(&eq->held, lhs) != 0) return -1;
  fr_incref(rhs);
  if (refs_push(&eq->held, rhs) != 0) return -1;
  if (fr_ptrmap_put(&eq->lhs_to_rhs, lhs, NULL, (uint64_t)(uintptr_t)rhs) != 0) return -1;
  return fr_ptrmap_put(&eq->rhs_to_lhs, rhs, NULL, (uint64_t)(uintptr_t)lhs);
}

/* ------------------------------------------------------------ containers */

static int equal_sequences(Equality* eq, void* lhs, void* rhs, int* out) {
  int64_t nl = fr_seq_size(lhs), nr = fr_seq_size(rhs), n = nl < nr ? nl : nr, i;
  *out = 0;
  if (nl != nr && !eq->trace) return 0;
  for (i = 0; i < n; ++i) {
    if (equal_any(eq, &fr_seq_items(lhs)[i], &fr_seq_items(rhs)[i], out) != 0) return -1;
    if (!*out) return record_index(eq, ARRAY_ITEM, ARRAY_ITEM, i);
  }
  *out = nl == nr;
  if (nl > nr) return record_index(eq, ARRAY_ITEM, ARRAY_ITEM_MISSING, n);
  if (nl < nr) return record_index(eq, ARRAY_ITEM_MISSING, ARRAY_ITEM, n);
  return 0;
}

/* An object key bound to a partner stands for the partner on the other side. */
static TVMFFIAny translate(const FrPtrMap* bindings, const TVMFFIAny* key) {
  FrPtrSlot* slot;
  if (!fr_any_is_object(key)) return *key;
  slot = fr_ptrmap_find(bindings, key->v_obj, NULL);
  return slot == NULL ? *key : fr_object_view((void*)(uintptr_t)slot->value);
}

static int equal_maps(Equality* eq, void* lhs, void* rhs, int* out) {
  uint64_t it, end;
  TVMFFIAny* found;
  *out = 0;
  if (fr_map_size(lhs) != fr_map_size(rhs) && !eq->trace) return 0;
  end = fr_map_end(lhs);
  for (it = fr_map_begin(lhs); it != end; it = fr_map_next(lhs, it)) {
    FrKV* kv = fr_map_entry(lhs, it);
    TVMFFIAny rhs_key = translate(&eq->lhs_to_rhs, &kv->key);
    int has = fr_map_find(rhs, &rhs_key, &found);
    if (has < 0) return -1;
    if (!has) {
      *out = 0;  /* an earlier entry may have compared equal */
      return record(eq, MAP_ITEM, &kv->key, MAP_ITEM_MISSING, &rhs_key);
    }
    if (equal_any(eq, &kv->value, found, out) != 0) return -1;
    if (!*out) return record(eq, MAP_ITEM, &kv->key, MAP_ITEM, &rhs_key);
  }
  *out = fr_map_size(lhs) == fr_map_size(rhs);
  if (*out) return 0;
  end = fr_map_end(rhs);
  for (it = fr_map_begin(rhs); it != end; it = fr_map_next(rhs, it)) {
    FrKV* kv = fr_map_entry(rhs, it);
    TVMFFIAny lhs_key = translate(&eq->rhs_to_lhs, &kv->key);
    int has = fr_map_find(lhs, &lhs_key, &found);
    if (has < 0) return -1;
    if (!has) return record(eq, MAP_ITEM_MISSING, &lhs_key, MAP_ITEM, &kv->key);
  }
  return 0;
}

static size_t data_size(const DLTensor* t) {
  uint64_t count = 1;
  int32_t i;
  for (i = 0; i < t->ndim; ++i) count *= (uint64_t)t->shape[i];
  return (size_t)((count * t->dtype.bits * t->dtype.lanes + 7) / 8);
}

static int equal_tensors(Equality* eq, void* lhs, void* rhs, int* out) {
  const DLTensor* a = (const DLTensor*)((char*)lhs + FR_HEADER_SIZE);
  const DLTensor* b = (const DLTensor*)((char*)rhs + FR_HEADER_SIZE);
  int32_t i;
  size_t size;
  *out = lhs == rhs;
  if (*out) return 0;
  if (a->ndim != b->ndim) return 0;
  for (i = 0; i < a->ndim; ++i) {
    if (a->shape[i] != b->shape[i]) return 0;
  }
  if (a->dtype.code != b->dtype.code || a->dtype.bits != b->dtype.bits ||
      a->dtype.lanes != b->dtype.lanes) {
    return 0;
  }
  *out = 1;
  if (eq->skip_tensor_content) return 0;
  if (a->device.device_type != kDLCPU || b->device.device_type != kDLCPU) {
    const char* name = a->device.device_type != kDLCPU ? "lhs" : "rhs";
    int type = a->device.device_type != kDLCPU ? a->device.device_type : b->device.device_type;
    return fr_raise("InternalError",
                    "Check failed: %s.device().device_type == kDLCPU (%d vs. 1) : can only "
                    "compare CPU tensor",
                    name, type);
  }
  if (!fr_tensor_is_contiguous(a) || !fr_tensor_is_contiguous(b)) {
    return fr_raise("InternalError",
                    "Check failed: (%s.IsContiguous()) is false: Can only compare contiguous "
                    "tensor",
                    fr_tensor_is_contiguous(a) ? "rhs" : "lhs");
  }
  size = data_size(a);
  *out = size == 0 || memcmp(a->data, b->data, size) == 0;
  return 0;
}

/* ------------------------------------------------------------ objects */

static const TVMFFITypeAttrColumn* g_s_equal = NULL;

static int eq_callback(void* ctx, const FrArg* args, TVMFFIAny* rv);
static const FrBuiltin kEqCallback = {
    "", eq_callback, NULL, 4, {FR_T_ANYVIEW, FR_T_ANYVIEW, FR_T_INT, FR_T_ANYVIEW}, FR_T_BOOL};

static int equal_in_region(Equality* eq, int32_t region, const TVMFFIAny* lhs,
                           const TVMFFIAny* rhs, int* out) {
  int32_t saved = eq->region;
  int status;
  eq->region = region;
  status = equal_any(eq, lhs, rhs, out);
  eq->region = saved;
  return status;
}

/* eq_cb(lhs, rhs, region, field_name) -> bool, with the comparison's state. */
static int eq_callback(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  Equality* eq = (Equality*)((FrWalkCallback*)ctx)->walk;
  TVMFFIAny lhs, rhs;
  int equal, status;
  if (eq == NULL) {
    return fr_raise("RuntimeError",
                    "a structural equality hook callback was called after its comparison "
                    "finished");
  }
  if (fr_any_view_to_owned(&args[0].value, &lhs) != 0) return -1;
  if (fr_any_view_to_owned(&args[1].value, &rhs) != 0) {
    fr_any_release(&lhs);
    return -1;
  }
  status = equal_in_region(eq, fr_s_hook_region((int32_t)args[2].value.v_int64, eq->region),
                           &lhs, &rhs, &equal);
  fr_any_release(&lhs);
  fr_any_release(&rhs);
  if (status != 0) return -1;
  if (!equal && eq->trace) {
    TVMFFIByteArray name;
    if (fr_any_str_view(&args[3].value, 0, &name) != 0) {
      return fr_raise("TypeError", "Cannot convert from type `%s` to `ffi.String`",
                      fr_type_key_of(args[3].value.type_index));
    }
    if (record_attr(eq, name.data, name.size) != 0) return -1;
  }
  *rv = fr_any_bool(equal);
  return 0;
}

static int equal_fields(Equality* eq, void* lhs, void* rhs, int32_t ti, int* out) {
  void* hook = NULL;
  const TVMFFIFieldInfo** fields;
  size_t n, i;
  int status = 0;
  int found = fr_hook_of(g_s_equal, ti, SIG_S_EQUAL, &hook);
  if (found < 0) return -1;
  if (found) {
    TVMFFIAny args[3], result;
    int64_t value;
    if (eq->callback == NULL) {
      eq->callback = fr_walk_callback_new(&kEqCallback, eq, &eq->callback_state);
      if (eq->callback == NULL) return -1;
    }
    args[0] = fr_object_view(lhs);
    args[1] = fr_object_view(rhs);
    args[2] = fr_object_view(eq->callback);
    if (fr_call(hook, args, 3, &result) != 0) return -1;
    if (fr_result_as_int(&result, "bool", &value) != 0) return -1;
    *out = value != 0;
    return 0;
  }
  if (fr_cached_fields(&eq->fields, ti, FR_S_IGNORE, &fields, &n) != 0) return -1;
  *out = 1;
  for (i = 0; i < n; ++i) {
    TVMFFIAny a, b;
    if (fr_read_field(lhs, fields[i], &a) != 0) {
      status = -1;
      break;
    }
    if (fr_read_field(rhs, fields[i], &b) != 0) {
      fr_any_release(&a);
      status = -1;
      break;
    }
    status = equal_in_region(eq, fr_s_field_region(fields[i]->flags, eq->region), &a, &b, out);
    fr_any_release(&a);
    fr_any_release(&b);
    if (status != 0) break;
    if (!*out) {
      status = record_attr(eq, fields[i]->name.data, fields[i]->name.size);
      break;
    }
  }
  return status;
}

static int equal_objects(Equality* eq, void* lhs, void* rhs, int* out) {
  int32_t ti = fr_type_index(lhs), kind, region;
  int status;
  if (fr_s_kind(ti, &kind) != 0) return -1;
  *out = 0;
  if (kind == kTVMFFISEqHashKindUniqueInstance) {
    *out = lhs == rhs;
    return 0;
  }
  if (kind == kTVMFFISEqHashKindConstTreeNode && lhs == rhs) {
    *out = 1;
    return 0;
  }
  if (kind == kTVMFFISEqHashKindDAGNode || kind == kTVMFFISEqHashKindFreeVar) {
    FrPtrSlot* slot = fr_ptrmap_find(&eq->lhs_to_rhs, lhs, NULL);
    if (slot != NULL) {
      *out = (void*)(uintptr_t)slot->value == rhs;
      return 0;
    }
    if (fr_ptrmap_find(&eq->rhs_to_lhs, rhs, NULL) != NULL) return 0;
  }
  if (kind != kTVMFFISEqHashKindFreeVar) {
    if (equal_fields(eq, lhs, rhs, ti, out) != 0) return -1;
    if (*out && kind == kTVMFFISEqHashKindDAGNode) return bind(eq, lhs, rhs);
    return 0;
  }
  /* a free variable: its own fields are uses, even in a Simple region */
  region = eq->region;
  if (region == kTVMFFIDefRegionKindSimple) eq->region = kTVMFFIDefRegionKindNone;
  status = equal_fields(eq, lhs, rhs, ti, out);
  eq->region = region;
  if (status != 0 || !*out) return status;
  if (lhs == rhs || region != kTVMFFIDefRegionKindNone) return bind(eq, lhs, rhs);
  *out = 0;
  return 0;
}

/* ------------------------------------------------------------ any value */

static int is_cross_encoding(int32_t l, int32_t r) {
  return (l == kTVMFFIStr && r == kTVMFFISmallStr) || (l == kTVMFFISmallStr && r == kTVMFFIStr) ||
         (l == kTVMFFIBytes && r == kTVMFFISmallBytes) ||
         (l == kTVMFFISmallBytes && r == kTVMFFIBytes);
}

static int equal_any(Equality* eq, const TVMFFIAny* lhs, const TVMFFIAny* rhs, int* out) {
  int32_t ti = lhs->type_index;
  int status;
  if (ti != rhs->type_index) {
    *out = 0;
    if (is_cross_encoding(ti, rhs->type_index)) {
      TVMFFIByteArray a = fr_text_of(lhs), b = fr_text_of(rhs);
      *out = a.size == b.size && memcmp(a.data, b.data, a.size) == 0;
    }
    return 0;
  }
  if (ti < kTVMFFIStaticObjectBegin) {
    if (ti == kTVMFFIFloat && isnan(lhs->v_float64)) {
      *out = isnan(rhs->v_float64) != 0;
    } else {
      *out = lhs->zero_padding == rhs->zero_padding && lhs->v_int64 == rhs->v_int64;
    }
    return 0;
  }
  if (ti == kTVMFFIBigInt) {
    size_t na, nb;
    const int64_t* a = fr_bigint_words(lhs, &na);
    const int64_t* b = fr_bigint_words(rhs, &nb);
    *out = na == nb && memcmp(a, b, na * sizeof(int64_t)) == 0;
    return 0;
  }
  if (ti == kTVMFFIStr || ti == kTVMFFIBytes) {
    TVMFFIByteArray a = fr_text_of(lhs), b = fr_text_of(rhs);
    *out = a.size == b.size && memcmp(a.data, b.data, a.size) == 0;
    return 0;
  }
  if (eq->depth >= FR_S_MAX_DEPTH || tvm_ffi_runtime_stack_low()) return fr_s_too_deep("StructuralEqual");
  eq->depth++;
  if (ti == kTVMFFIArray || ti == kTVMFFIList) {
    status = equal_sequences(eq, lhs->v_obj, rhs->v_obj, out);
  } else if (ti == kTVMFFIMap || ti == kTVMFFIDict) {
    status = equal_maps(eq, lhs->v_obj, rhs->v_obj, out);
  } else if (ti == kTVMFFIShape) {
    const TVMFFIShapeCell* a = FR_CELL(lhs->v_obj, TVMFFIShapeCell);
    const TVMFFIShapeCell* b = FR_CELL(rhs->v_obj, TVMFFIShapeCell);
    *out = a->size == b->size && memcmp(a->data, b->data, a->size * sizeof(int64_t)) == 0;
    status = 0;
  } else if (ti == kTVMFFITensor) {
    status = equal_tensors(eq, lhs->v_obj, rhs->v_obj, out);
  } else {
    status = equal_objects(eq, lhs->v_obj, rhs->v_obj, out);
  }
  eq->depth--;
  return status;
}

/* ------------------------------------------------------------ entry points */

int fr_structural_equal(const TVMFFIAny* lhs, const TVMFFIAny* rhs, int map_free_vars,
                        int skip_tensor_content, int* out) {
  Equality eq;
  int status;
  memset(&eq, 0, sizeof(eq));
  eq.region = map_free_vars ? kTVMFFIDefRegionKindPattern : kTVMFFIDefRegionKindNone;
  eq.skip_tensor_content = skip_tensor_content;
  status = equal_any(&eq, lhs, rhs, out);
  equality_free(&eq);
  return status;
}

static int structural_equal(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  int equal;
  (void)ctx;
  if (fr_structural_equal(&args[0].value, &args[1].value, (int)args[2].value.v_int64,
                          (int)args[3].value.v_int64, &equal) != 0) {
    return -1;
  }
  *rv = fr_any_bool(equal);
  return 0;
}

static int first_mismatch(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  Equality eq;
  int equal, status;
  (void)ctx;
  memset(&eq, 0, sizeof(eq));
  eq.region = args[2].value.v_int64 ? kTVMFFIDefRegionKindPattern : kTVMFFIDefRegionKindNone;
  eq.skip_tensor_content = (int)args[3].value.v_int64;
  eq.trace = 1;
  status = equal_any(&eq, &args[0].value, &args[1].value, &equal);
  if (status == 0 && !equal) {
    void* pair = trail_paths(&eq);
    if (pair == NULL) status = -1;
    else *rv = fr_any_object(pair);
  }
  equality_free(&eq);
  return status;
}

int fr_structural_equal_globals(void) {
  static const FrBuiltin kBuiltins[] = {
      {"ffi.StructuralEqual", structural_equal, NULL, 4,
       {FR_T_ANY, FR_T_ANY, FR_T_BOOL, FR_T_BOOL}, FR_T_BOOL},
      {"ffi.GetFirstStructuralMismatch", first_mismatch, NULL, 4,
       {FR_T_ANY, FR_T_ANY, FR_T_BOOL, FR_T_BOOL}, FR_T_OPT_PATH_PAIR},
  };
  g_s_equal = fr_s_column("__s_equal__");
  return fr_register_builtins(kBuiltins, 2);
}
