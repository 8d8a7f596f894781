/*
 * structural_equal_walk.c -- the structural comparison itself: how each kind of value
 * compares (inline values, strings, BigInt, Shape, tensors, containers, objects by kind),
 * the bindings of free variables and DAG nodes, the __s_equal__ hook and the callback it
 * compares through, all over an explicit work list (see "the work list" below).
 *
 * The hot part of ffi.StructuralEqual: everything a comparison runs per value is here, in
 * one translation unit, so the compiler may inline the static helpers into the loop
 * (fr_se_equal_any). The entry points are structural_equal.c, the mismatch trail (reached
 * only on a mismatch) structural_equal_trail.c; tvm_ffi_ref/runtime/structural_equal.py
 * states every rule.
 */
#include "structural_equal.h"

#include <math.h>

#include "containers.h"
#include "functions.h"
#include "runtime.h"
#include "structural.h"

#define SIG_S_EQUAL                                                                  \
  "(0: ffi.Object, 1: ffi.Object, 2: (0: AnyView, 1: AnyView, 2: int, 3: AnyView) -> " \
  "bool) -> bool"

/* ------------------------------------------------------------ bindings */

static int bind(Equality* eq, void* lhs, void* rhs) {
  fr_incref(lhs);
  if (refs_push(&eq->held, lhs) != 0) return -1;
  fr_incref(rhs);
  if (refs_push(&eq->held, rhs) != 0) return -1;
  if (fr_ptrmap_put(&eq->lhs_to_rhs, lhs, NULL, (uint64_t)(uintptr_t)rhs) != 0) return -1;
  return fr_ptrmap_put(&eq->rhs_to_lhs, rhs, NULL, (uint64_t)(uintptr_t)lhs);
}

/* ------------------------------------------------------------ containers */

/* An object key bound to a partner stands for the partner on the other side. */
static TVMFFIAny translate(const FrPtrMap* bindings, const TVMFFIAny* key) {
  FrPtrSlot* slot;
  if (!fr_any_is_object(key)) return *key;
  slot = fr_ptrmap_find(bindings, key->v_obj, NULL);
  return slot == NULL ? *key : fr_object_view((void*)(uintptr_t)slot->value);
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
  status = fr_se_equal_any(eq, lhs, rhs, out);
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
    if (fr_se_record_attr(eq, name.data, name.size) != 0) return -1;
  }
  *rv = fr_any_bool(equal);
  return 0;
}

/* ------------------------------------------------------------ any value */

static int is_cross_encoding(int32_t l, int32_t r) {
  return (l == kTVMFFIStr && r == kTVMFFISmallStr) || (l == kTVMFFISmallStr && r == kTVMFFIStr) ||
         (l == kTVMFFIBytes && r == kTVMFFISmallBytes) ||
         (l == kTVMFFISmallBytes && r == kTVMFFIBytes);
}

/* ------------------------------------------------------------ the work list
 *
 * A container or object whose children must be compared is a frame on an explicit stack, not
 * a C call: a value nested a million levels deep costs a million frames of heap, no C stack.
 * A frame hands out its children one pair at a time (frame_next), learns each child's result
 * (frame_child_result: a mismatch records the step to that child, innermost first, and stops
 * the frame) and, when done, yields its own result to its parent. */

enum { FRAME_SEQ, FRAME_MAP, FRAME_OBJ };

typedef struct {
  int kind;
  void* lhs;
  void* rhs;
  int32_t region;       /* the region its children's regions derive from */
  int32_t outer_region; /* the region it was compared in (restored when it ends) */
  int stop;             /* a child mismatched: the frame ends with result 0 */
  int result;
  /* FRAME_SEQ */
  int64_t index, n, nl, nr;
  /* FRAME_MAP: the lhs iterator (then, for a size mismatch, the rhs one) */
  uint64_t it, end;
  TVMFFIAny key, rhs_key; /* the current child's keys (views), for the trail */
  /* FRAME_OBJ */
  int32_t kind_of_object;
  const TVMFFIFieldInfo** fields;
  size_t num_fields, field;
  TVMFFIAny a, b; /* the current field's values (owned while compared) */
  int holding;
} EqFrame;

typedef struct {
  EqFrame* frames;
  size_t n, capacity;
} EqStack;

static EqFrame* push_frame(Equality* eq, EqStack* st, int kind, void* lhs, void* rhs) {
  EqFrame* f;
  EqFrame* frames =
      (EqFrame*)fr_s_stack_room(st->frames, st->n, &st->capacity, sizeof(EqFrame));
  if (frames == NULL) return NULL;
  st->frames = frames;
  f = &frames[st->n++];
  /* what every kind reads before it writes (not a memset of the whole frame: one is pushed
   * per container and object compared); each kind's own fields are set by start() */
  f->kind = kind;
  f->lhs = lhs;
  f->rhs = rhs;
  f->region = f->outer_region = eq->region;
  f->stop = 0;
  f->result = 0;
  f->index = 0;
  f->kind_of_object = 0;
  f->fields = NULL;
  f->num_fields = 0;
  f->field = 0;
  f->holding = 0;
  eq->depth++;
  if (st->n >= FR_S_MAX_DEPTH &&  /* (fr_s_check_path looks only from there on) */
      fr_s_check_path("StructuralEqual", st->frames, st->n, sizeof(EqFrame),
                      offsetof(EqFrame, lhs)) != 0) {
    st->n--;
    eq->depth--;
    return NULL;
  }
  return f;
}

static void release_field_values(EqFrame* f) {
  if (!f->holding) return;
  fr_any_release(&f->a);
  fr_any_release(&f->b);
  f->holding = 0;
}

static void pop_frame(Equality* eq, EqStack* st) {
  release_field_values(&st->frames[--st->n]);
  eq->depth--;
}

/* An object whose kind and bindings do not decide it: through its __s_equal__ hook (a leaf
 * here: the hook compares through the callback, nested), or a frame over its fields. */
static int start_object(Equality* eq, EqStack* st, void* lhs, void* rhs, int* out) {
  int32_t ti = fr_type_index(lhs), kind;
  void* hook = NULL;
  int found;
  EqFrame* f;
  size_t cached = (size_t)ti % (sizeof(eq->plain_types) / sizeof(eq->plain_types[0]));
  int plain = eq->plain_types[cached].type_index == ti;
  if (plain) {
    kind = eq->plain_types[cached].kind;
  } else if (fr_s_kind(ti, &kind) != 0) {
    return -1;
  }
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
  found = plain ? 0 : fr_hook_of(g_s_equal, ti, SIG_S_EQUAL, &hook);
  if (found < 0) return -1;
  f = push_frame(eq, st, FRAME_OBJ, lhs, rhs);
  if (f == NULL) return -1;
  f->kind_of_object = kind;
  /* a free variable: its own fields are uses, even in a Simple region */
  if (kind == kTVMFFISEqHashKindFreeVar && f->region == kTVMFFIDefRegionKindSimple) {
    f->region = kTVMFFIDefRegionKindNone;
  }
  if (found) {
    TVMFFIAny args[3], result;
    int64_t value;
    int32_t saved = eq->region;
    if (eq->callback == NULL) {
      eq->callback = fr_walk_callback_new(&kEqCallback, eq, &eq->callback_state);
      if (eq->callback == NULL) return -1;
    }
    if (tvm_ffi_runtime_stack_low()) return fr_s_too_deep("StructuralEqual");
    args[0] = fr_object_view(lhs);
    args[1] = fr_object_view(rhs);
    args[2] = fr_object_view(eq->callback);
    eq->region = f->region;
    if (fr_call(hook, args, 3, &result) != 0) return -1;
    eq->region = saved;
    if (fr_result_as_int(&result, "bool", &value) != 0) return -1;
    f = &st->frames[st->n - 1]; /* the callback may not touch this stack, but be exact */
    f->result = value != 0;
    f->stop = 1;
    f->num_fields = 0;
    return 1;
  }
  if (plain) {
    f->fields = eq->plain_types[cached].fields;
    f->num_fields = eq->plain_types[cached].num_fields;
  } else {
    if (fr_cached_fields(&eq->fields, ti, FR_S_IGNORE, &f->fields, &f->num_fields) != 0) return -1;
    eq->plain_types[cached].type_index = ti;
    eq->plain_types[cached].kind = kind;
    eq->plain_types[cached].fields = f->fields;
    eq->plain_types[cached].num_fields = f->num_fields;
  }
  f->result = 1;
  return 1;
}

/* Compares what needs no frame; pushes a frame for the rest. 0: *out is the result; 1: a frame
 * was pushed; -1: an error was raised. */
static int start(Equality* eq, EqStack* st, const TVMFFIAny* lhs, const TVMFFIAny* rhs, int* out) {
  int32_t ti = lhs->type_index;
  EqFrame* f;
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
  if (ti == kTVMFFIShape) {
    const TVMFFIShapeCell* a = FR_CELL(lhs->v_obj, TVMFFIShapeCell);
    const TVMFFIShapeCell* b = FR_CELL(rhs->v_obj, TVMFFIShapeCell);
    *out = a->size == b->size && memcmp(a->data, b->data, a->size * sizeof(int64_t)) == 0;
    return 0;
  }
  if (ti == kTVMFFITensor) return equal_tensors(eq, lhs->v_obj, rhs->v_obj, out);
  /* no depth limit (push_frame looks for cycles); the C stack is checked before a
   * __s_equal__ hook is called (start_object), the one place this walk nests on it */
  if (ti == kTVMFFIArray || ti == kTVMFFIList) {
    int64_t nl = fr_seq_size(lhs->v_obj), nr = fr_seq_size(rhs->v_obj);
    if (nl != nr && !eq->trace) {
      *out = 0;
      return 0;
    }
    f = push_frame(eq, st, FRAME_SEQ, lhs->v_obj, rhs->v_obj);
    if (f == NULL) return -1;
    f->nl = nl;
    f->nr = nr;
    f->n = nl < nr ? nl : nr;
    return 1;
  }
  if (ti == kTVMFFIMap || ti == kTVMFFIDict) {
    if (fr_map_size(lhs->v_obj) != fr_map_size(rhs->v_obj) && !eq->trace) {
      *out = 0;
      return 0;
    }
    f = push_frame(eq, st, FRAME_MAP, lhs->v_obj, rhs->v_obj);
    if (f == NULL) return -1;
    f->it = fr_map_begin(lhs->v_obj);
    f->end = fr_map_end(lhs->v_obj);
    return 1;
  }
  return start_object(eq, st, lhs->v_obj, rhs->v_obj, out);
}

/* The end of an object's frame: DAG nodes and free variables that matched are bound. */
static int finish_object(Equality* eq, EqFrame* f) {
  int kind = f->kind_of_object;
  if (kind != kTVMFFISEqHashKindFreeVar) {
    if (f->result && kind == kTVMFFISEqHashKindDAGNode) return bind(eq, f->lhs, f->rhs);
    return 0;
  }
  if (!f->result) return 0;
  if (f->lhs == f->rhs || f->outer_region != kTVMFFIDefRegionKindNone) {
    return bind(eq, f->lhs, f->rhs);
  }
  f->result = 0;
  return 0;
}

/* The next pair of children to compare (1, with their region), or the frame's end (0, its
 * result in f->result), or -1. */
static int frame_next(Equality* eq, EqFrame* f, const TVMFFIAny** a, const TVMFFIAny** b,
                      int32_t* region) {
  *region = f->region;
  if (f->kind == FRAME_SEQ) {
    if (f->stop) return 0;
    if (f->index < f->n) {
      *a = &fr_seq_items(f->lhs)[f->index];
      *b = &fr_seq_items(f->rhs)[f->index];
      f->index++;
      return 1;
    }
    f->result = f->nl == f->nr;
    if (f->nl > f->nr) return fr_se_record_index(eq, ARRAY_ITEM, ARRAY_ITEM_MISSING, f->n);
    if (f->nl < f->nr) return fr_se_record_index(eq, ARRAY_ITEM_MISSING, ARRAY_ITEM, f->n);
    return 0;
  }
  if (f->kind == FRAME_MAP) {
    TVMFFIAny* found;
    if (f->stop) return 0;
    if (f->it != f->end) {
      FrKV* kv = fr_map_entry(f->lhs, f->it);
      int has;
      f->it = fr_map_next(f->lhs, f->it);
      f->key = kv->key;
      f->rhs_key = translate(&eq->lhs_to_rhs, &kv->key);
      has = fr_map_find(f->rhs, &f->rhs_key, &found);
      if (has < 0) return -1;
      if (!has) {
        f->result = 0; /* an earlier entry may have compared equal */
        return fr_se_record(eq, MAP_ITEM, &f->key, MAP_ITEM_MISSING, &f->rhs_key) < 0 ? -1 : 0;
      }
      *a = &kv->value;
      *b = found;
      return 1;
    }
    f->result = fr_map_size(f->lhs) == fr_map_size(f->rhs);
    if (f->result) return 0;
    for (f->it = fr_map_begin(f->rhs), f->end = fr_map_end(f->rhs); f->it != f->end;
         f->it = fr_map_next(f->rhs, f->it)) {
      FrKV* kv = fr_map_entry(f->rhs, f->it);
      TVMFFIAny lhs_key = translate(&eq->rhs_to_lhs, &kv->key);
      int has = fr_map_find(f->lhs, &lhs_key, &found);
      if (has < 0) return -1;
      if (!has) {
        return fr_se_record(eq, MAP_ITEM_MISSING, &lhs_key, MAP_ITEM, &kv->key) < 0 ? -1 : 0;
      }
    }
    return 0;
  }
  /* FRAME_OBJ */
  if (!f->stop && f->field < f->num_fields) {
    const TVMFFIFieldInfo* field = f->fields[f->field++];
    if (fr_read_field(f->lhs, field, &f->a) != 0) return -1;
    if (fr_read_field(f->rhs, field, &f->b) != 0) {
      fr_any_release(&f->a);
      return -1;
    }
    f->holding = 1;
    *a = &f->a;
    *b = &f->b;
    *region = fr_s_field_region(field->flags, f->region);
    return 1;
  }
  return finish_object(eq, f) < 0 ? -1 : 0;
}

/* A child's result: a mismatch records the step to it and ends the frame. */
static int frame_child_result(Equality* eq, EqFrame* f, int equal) {
  release_field_values(f);
  if (equal) return 0;
  f->stop = 1;
  f->result = 0;
  if (f->kind == FRAME_SEQ) return fr_se_record_index(eq, ARRAY_ITEM, ARRAY_ITEM, f->index - 1);
  if (f->kind == FRAME_MAP) return fr_se_record(eq, MAP_ITEM, &f->key, MAP_ITEM, &f->rhs_key);
  {
    const TVMFFIFieldInfo* field = f->fields[f->field - 1];
    return fr_se_record_attr(eq, field->name.data, field->name.size);
  }
}

int fr_se_equal_any(Equality* eq, const TVMFFIAny* lhs, const TVMFFIAny* rhs, int* out) {
  EqStack st = {NULL, 0, 0};
  int32_t entry_region = eq->region;
  int status = start(eq, &st, lhs, rhs, out), result = 0;
  if (status <= 0) goto done;
  while (st.n > 0) {
    EqFrame* f = &st.frames[st.n - 1];
    const TVMFFIAny *a, *b;
    int32_t region;
    status = frame_next(eq, f, &a, &b, &region);
    if (status < 0) goto done;
    if (status == 1) {
      int equal;
      eq->region = region;
      status = start(eq, &st, a, b, &equal);
      if (status < 0) goto done;
      if (status == 0 && frame_child_result(eq, &st.frames[st.n - 1], equal) != 0) {
        status = -1;
        goto done;
      }
      continue;
    }
    result = f->result;
    pop_frame(eq, &st);
    if (st.n > 0 && frame_child_result(eq, &st.frames[st.n - 1], result) != 0) {
      status = -1;
      goto done;
    }
  }
  *out = result;
  status = 0;
done:
  while (st.n > 0) pop_frame(eq, &st);
  free(st.frames);
  eq->region = entry_region;
  return status < 0 ? -1 : 0;
}

/* The column's address never changes once the columns are created at load. */
void fr_se_walk_init(void) { g_s_equal = fr_s_column("__s_equal__"); }
