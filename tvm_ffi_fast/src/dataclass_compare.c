/*
 * dataclass_compare.c -- ffi.RecursiveEq/Lt/Le/Gt/Ge: a three-way comparison
 * of two values walked in step, in equality mode (unlike types are unequal,
 * NaN equals NaN) or ordering mode (TypeErrors where upstream has no order),
 * tracking the (lhs, rhs) pairs being compared. Its own file: one walk per
 * file (dataclass_ops.c); BigInt's hooks (dataclass_hooks.c) reuse its word
 * order.
 *
 * Its twin in the reference runtime: tvm_ffi_ref/runtime/dataclass_compare.py.
 */
#include "dataclass.h"

#include <math.h>
#include <stdio.h>

#include "containers.h"
#include "functions.h"
#include "registry.h"
#include "runtime.h"
#include "walk.h"

/* The types upstream converts hook entries to, named in their "Cannot treat" errors. */
#define SIG_EQ "(0: ffi.Object, 1: ffi.Object, 2: (0: AnyView, 1: AnyView) -> bool) -> bool"
#define SIG_CMP "(0: ffi.Object, 1: ffi.Object, 2: (0: AnyView, 1: AnyView) -> int) -> int"

/* =========================================================== compare */

/* One comparison call: the mode and the (lhs, rhs) object pairs being compared. */
typedef struct {
  int eq_only;
  FrPtrMap on_stack;
} CmpWalk;

typedef struct {
  int kind;
  TVMFFIAny* items; /* owned: lhs of pair i at 2i, rhs at 2i + 1 */
  size_t n;         /* pairs */
  size_t idx;
  uint64_t lhs_size;
  uint64_t rhs_size;
  void* lhs_obj;
  void* rhs_obj;
} CmpFrame;

typedef struct {
  CmpFrame* frames;
  size_t n;
  size_t capacity;
} CmpStack;

static int cmp_run(CmpWalk* walk, const TVMFFIAny* lhs, const TVMFFIAny* rhs, int32_t* out);

/* Upstream's Bytes::memncmp: bytes as (signed, on x86-64) char, then the shorter first. */
static int32_t compare_chars(TVMFFIByteArray a, TVMFFIByteArray b) {
  size_t i, n = a.size < b.size ? a.size : b.size;
  if (a.data == b.data && a.size == b.size) return 0;
  for (i = 0; i < n; ++i) {
    signed char x = (signed char)a.data[i], y = (signed char)b.data[i];
    if (x < y) return -1;
    if (x > y) return 1;
  }
  return a.size < b.size ? -1 : (a.size > b.size ? 1 : 0);
}

/* Signed order of two's-complement words (upstream's int_ops::CompareFallback). */
int32_t fr_dc_compare_words(const int64_t* a, size_t na, const int64_t* b, size_t nb) {
  int neg_a = a[na - 1] < 0, neg_b = b[nb - 1] < 0;
  uint64_t sign_a = neg_a ? ~(uint64_t)0 : 0, sign_b = neg_b ? ~(uint64_t)0 : 0;
  size_t i;
  if (neg_a != neg_b) return neg_a ? -1 : 1;
  for (i = na > nb ? na : nb; i != 0; --i) {
    uint64_t x = i <= na ? (uint64_t)a[i - 1] : sign_a;
    uint64_t y = i <= nb ? (uint64_t)b[i - 1] : sign_b;
    if (x != y) return x > y ? 1 : -1;
  }
  return 0;
}

int fr_dc_words_equal(const int64_t* a, size_t na, const int64_t* b, size_t nb) {
  return na == nb && memcmp(a, b, na * sizeof(int64_t)) == 0;
}

/* In equality mode "unequal" (1); in ordering mode a TypeError. 1 and *out, or -1. */
static int cmp_cannot_order(const CmpWalk* walk, int32_t* out, const char* message) {
  if (walk->eq_only) {
    *out = 1;
    return 1;
  }
  return fr_raise("TypeError", "%s", message);
}

static int cmp_pod(const CmpWalk* walk, const TVMFFIAny* lhs, const TVMFFIAny* rhs, int32_t* out) {
  switch (lhs->type_index) {
    case kTVMFFIBool: *out = (int32_t)(lhs->v_int64 != 0) - (int32_t)(rhs->v_int64 != 0); return 1;
    case kTVMFFIInt:
      *out = lhs->v_int64 < rhs->v_int64 ? -1 : (lhs->v_int64 > rhs->v_int64 ? 1 : 0);
      return 1;
    case kTVMFFIFloat: {
      double a = lhs->v_float64, b = rhs->v_float64;
      if (isnan(a) || isnan(b)) {
        if (!walk->eq_only) return fr_raise("TypeError", "Cannot order NaN values");
        *out = isnan(a) && isnan(b) ? 0 : 1;
        return 1;
      }
      *out = a < b ? -1 : (a > b ? 1 : 0);
      return 1;
    }
    case kTVMFFIDataType: {
      DLDataType a = lhs->v_dtype, b = rhs->v_dtype;
      if (a.code != b.code) *out = a.code < b.code ? -1 : 1;
      else if (a.bits != b.bits) *out = a.bits < b.bits ? -1 : 1;
      else if (a.lanes != b.lanes) *out = a.lanes < b.lanes ? -1 : 1;
      else *out = 0;
      return 1;
    }
    case kTVMFFIDevice: {
      int32_t ta = (int32_t)lhs->v_device.device_type, tb = (int32_t)rhs->v_device.device_type;
      int32_t ia = lhs->v_device.device_id, ib = rhs->v_device.device_id;
      if (ta != tb) *out = ta < tb ? -1 : 1;
      else if (ia != ib) *out = ia < ib ? -1 : 1;
      else *out = 0;
      return 1;
    }
    default: {
      char message[128];
      if (lhs->zero_padding == rhs->zero_padding && lhs->v_int64 == rhs->v_int64) {
        *out = 0;
        return 1;
      }
      snprintf(message, sizeof(message), "Cannot order values of type %s",
               fr_type_key_of(lhs->type_index));
      return cmp_cannot_order(walk, out, message);
    }
  }
}

/* The walk's callbacks: both order their two arguments (owned for the walk); eq answers
 * whether they are equal, cmp the order itself. */
static int cb_order(void* ctx, const FrArg* args, int32_t* result) {
  CmpWalk* walk = (CmpWalk*)((FrWalkCallback*)ctx)->walk;
  TVMFFIAny lhs, rhs;
  int status;
  if (walk == NULL) return fr_dc_raise_expired_callback();
  if (fr_any_view_to_owned(&args[0].value, &lhs) != 0) return -1;
  if (fr_any_view_to_owned(&args[1].value, &rhs) != 0) {
    fr_any_release(&lhs);
    return -1;
  }
  status = cmp_run(walk, &lhs, &rhs, result);
  fr_any_release(&lhs);
  fr_any_release(&rhs);
  return status;
}

static int cb_eq(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  int32_t result;
  int status = cb_order(ctx, args, &result);
  if (status == 0) *rv = fr_any_bool(result == 0);
  return status;
}

static int cb_cmp(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  int32_t result;
  int status = cb_order(ctx, args, &result);
  if (status == 0) *rv = fr_any_int(result);
  return status;
}

static const FrBuiltin kEqCallback = {"", cb_eq, NULL, 2, {FR_T_ANYVIEW, FR_T_ANYVIEW},
                                      FR_T_BOOL};
static const FrBuiltin kCmpCallback = {"", cb_cmp, NULL, 2, {FR_T_ANYVIEW, FR_T_ANYVIEW},
                                       FR_T_INT};

/* Calls an __ffi_eq__ (is_eq) or __ffi_compare__ hook on two objects of one type. */
static int cmp_call_hook(CmpWalk* walk, void* hook, int is_eq, void* lhs, void* rhs,
                         int32_t* out) {
  FrWalkCallback* cb = NULL;
  TVMFFIAny args[3], result;
  int64_t value;
  void* fn;
  int status;
  if (fr_ptrmap_put(&walk->on_stack, lhs, rhs, 1) != 0) return -1;
  fn = fr_walk_callback_new(is_eq ? &kEqCallback : &kCmpCallback, walk, &cb);
  if (fn == NULL) return -1;
  args[0] = fr_object_view(lhs);
  args[1] = fr_object_view(rhs);
  args[2] = fr_object_view(fn);
  status = fr_call(hook, args, 3, &result);
  fr_walk_callback_done(fn, cb);
  if (status != 0 || fr_result_as_int(&result, is_eq ? "bool" : "int", &value) != 0) return -1;
  fr_ptrmap_erase(&walk->on_stack, lhs, rhs);
  *out = is_eq ? (value != 0 ? 0 : 1) : (int32_t)value;
  return 0;
}

/* The hook comparison of two objects of a type from kTVMFFIStaticObjectEnd: 1, 0 (none), -1. */
static int cmp_custom(CmpWalk* walk, void* lhs, void* rhs, int32_t ti, int32_t* out) {
  void* hook = NULL;
  int found;
  if (walk->eq_only) {
    found = fr_hook_of(fr_dc.col_eq, ti, SIG_EQ, &hook);
    if (found < 0) return -1;
    if (found) return cmp_call_hook(walk, hook, 1, lhs, rhs, out) == 0 ? 1 : -1;
  }
  found = fr_hook_of(fr_dc.col_cmp, ti, SIG_CMP, &hook);
  if (found < 0) return -1;
  if (found) return cmp_call_hook(walk, hook, 0, lhs, rhs, out) == 0 ? 1 : -1;
  return 0;
}

/* The comparison of two values that needs no frame: 1 and *out; 0 when it needs one; -1. */
static int cmp_immediate(CmpWalk* walk, const TVMFFIAny* lhs, const TVMFFIAny* rhs,
                         int32_t* out) {
  int32_t lti = lhs->type_index, rti = rhs->type_index;
  void* lobj;
  void* robj;
  if (lti == kTVMFFINone || rti == kTVMFFINone) { /* None sorts before everything */
    *out = (int32_t)(lti != kTVMFFINone) - (int32_t)(rti != kTVMFFINone);
    return 1;
  }
  if ((fr_dc_is_str(lti) && fr_dc_is_str(rti)) || (fr_dc_is_bytes(lti) && fr_dc_is_bytes(rti))) {
    *out = compare_chars(fr_text_of(lhs), fr_text_of(rhs));
    return 1;
  }
  if (lti != rti) {
    if (walk->eq_only) {
      *out = 1;
      return 1;
    }
    if ((lti == kTVMFFIInt && rti == kTVMFFIBigInt) ||
        (lti == kTVMFFIBigInt && rti == kTVMFFIInt)) {
      size_t na, nb;
      const int64_t* a = fr_bigint_words(lhs, &na);
      const int64_t* b = fr_bigint_words(rhs, &nb);
      *out = fr_dc_compare_words(a, na, b, nb);
      return 1;
    }
    return fr_raise("TypeError", "Cannot compare values of different types: %s vs %s",
                    fr_type_key_of(lti), fr_type_key_of(rti));
  }
  if (lti < kTVMFFIStaticObjectBegin) return cmp_pod(walk, lhs, rhs, out);
  if (lti == kTVMFFIBigInt) {
    size_t na, nb;
    const int64_t* a = fr_bigint_words(lhs, &na);
    const int64_t* b = fr_bigint_words(rhs, &nb);
    *out = walk->eq_only ? !fr_dc_words_equal(a, na, b, nb) : fr_dc_compare_words(a, na, b, nb);
    return 1;
  }
  lobj = lhs->v_obj;
  robj = rhs->v_obj;
  if (lobj == robj) { /* one object equals itself, unopened */
    *out = 0;
    return 1;
  }
  if (lobj == NULL || robj == NULL) {
    *out = lobj == NULL ? -1 : 1;
    return 1;
  }
  if (lti == kTVMFFIShape) {
    const TVMFFIShapeCell* a = FR_CELL(lobj, TVMFFIShapeCell);
    const TVMFFIShapeCell* b = FR_CELL(robj, TVMFFIShapeCell);
    size_t i, n = a->size < b->size ? a->size : b->size;
    for (i = 0; i < n; ++i) {
      if (a->data[i] != b->data[i]) {
        *out = a->data[i] < b->data[i] ? -1 : 1;
        return 1;
      }
    }
    *out = a->size < b->size ? -1 : (a->size > b->size ? 1 : 0);
    return 1;
  }
  if (fr_ptrmap_find(&walk->on_stack, lobj, robj) != NULL) {
    if (walk->eq_only) {
      *out = 0;
      return 1;
    }
    return fr_raise("ValueError", "RecursiveCompare: cyclic reference detected in ordering");
  }
  if (lti >= kTVMFFIStaticObjectEnd) return cmp_custom(walk, lobj, robj, lti, out);
  return 0;
}

static void cmp_frame_release(CmpFrame* f) {
  size_t i;
  for (i = 0; i < 2 * f->n; ++i) fr_any_release(&f->items[i]);
  free(f->items);
  f->items = NULL;
  f->n = 0;
}

/* Maps that cannot match: "unequal" in equality mode, else the ordering TypeError. */
static int cmp_map_mismatch(CmpWalk* walk, void* lhs, void* rhs, int32_t* eager) {
  fr_ptrmap_erase(&walk->on_stack, lhs, rhs);
  if (!walk->eq_only) return fr_raise("TypeError", "Cannot order Map/Dict values");
  *eager = 1;
  return 1;
}

/*
 * Pushes the frame of two containers or objects of one type: 0 when pushed, 1
 * and *eager when the pair is decided before any child is compared (maps of
 * different sizes or keys), -1 on error.
 */
static int cmp_push(CmpWalk* walk, CmpStack* st, const TVMFFIAny* lhs, const TVMFFIAny* rhs,
                    int32_t* eager) {
  CmpFrame frame;
  void* lobj = lhs->v_obj;
  void* robj = rhs->v_obj;
  int32_t ti = lhs->type_index;
  size_t i;
  if (st->n >= FR_DC_MAX_DEPTH) {
    return fr_raise("ValueError", "RecursiveCompare: " FR_DC_DEPTH_TEXT);
  }
  if (st->n == st->capacity) {
    size_t capacity = st->capacity == 0 ? 16 : st->capacity * 2;
    CmpFrame* grown = (CmpFrame*)realloc(st->frames, capacity * sizeof(CmpFrame));
    if (grown == NULL) return fr_raise_oom();
    st->frames = grown;
    st->capacity = capacity;
  }
  if (fr_ptrmap_put(&walk->on_stack, lobj, robj, 1) != 0) return -1;
  memset(&frame, 0, sizeof(frame));
  frame.lhs_obj = lobj;
  frame.rhs_obj = robj;
  if (ti == kTVMFFIArray || ti == kTVMFFIList) {
    int64_t nl = fr_seq_size(lobj), nr = fr_seq_size(robj);
    size_t n = (size_t)(nl < nr ? nl : nr);
    frame.kind = FR_DC_SEQ;
    frame.lhs_size = (uint64_t)nl;
    frame.rhs_size = (uint64_t)nr;
    if (n > 0) {
      frame.items = (TVMFFIAny*)malloc(2 * n * sizeof(TVMFFIAny));
      if (frame.items == NULL) return fr_raise_oom();
      for (i = 0; i < n; ++i) {
        frame.items[2 * i] = fr_any_copy(&fr_seq_items(lobj)[i]);
        frame.items[2 * i + 1] = fr_any_copy(&fr_seq_items(robj)[i]);
      }
      frame.n = n;
    }
  } else if (ti == kTVMFFIMap || ti == kTVMFFIDict) {
    uint64_t it, end = fr_map_end(lobj), size = fr_map_size(lobj);
    frame.kind = FR_DC_MAP;
    frame.lhs_size = size;
    frame.rhs_size = fr_map_size(robj);
    if (size != frame.rhs_size) return cmp_map_mismatch(walk, lobj, robj, eager);
    if (size > 0) {
      frame.items = (TVMFFIAny*)malloc(2 * (size_t)size * sizeof(TVMFFIAny));
      if (frame.items == NULL) return fr_raise_oom();
    }
    for (it = fr_map_begin(lobj); it != end; it = fr_map_next(lobj, it)) {
      FrKV* kv = fr_map_entry(lobj, it);
      TVMFFIAny* other = NULL;
      int found = fr_map_find(robj, &kv->key, &other);
      if (found <= 0) {
        cmp_frame_release(&frame);
        if (found < 0) return -1;
        return cmp_map_mismatch(walk, lobj, robj, eager);
      }
      frame.items[2 * frame.n] = fr_any_copy(&kv->value);
      frame.items[2 * frame.n + 1] = fr_any_copy(other);
      frame.n++;
    }
  } else {
    const TVMFFIFieldInfo** fields = NULL;
    size_t count = 0;
    frame.kind = FR_DC_OBJ;
    if (fr_collect_fields(ti, kTVMFFIFieldFlagBitMaskCompareOff, &fields, &count) != 0) return -1;
    if (count > 0) {
      frame.items = (TVMFFIAny*)malloc(2 * count * sizeof(TVMFFIAny));
      if (frame.items == NULL) {
        free(fields);
        return fr_raise_oom();
      }
    }
    for (i = 0; i < count; ++i) {
      /* upstream reads the pair as the arguments of one C++ call: right to left */
      if (fr_read_field(robj, fields[i], &frame.items[2 * i + 1]) != 0) break;
      if (fr_read_field(lobj, fields[i], &frame.items[2 * i]) != 0) {
        fr_any_release(&frame.items[2 * i + 1]);
        break;
      }
      frame.n = i + 1;
    }
    free(fields);
    if (frame.n != count) {
      cmp_frame_release(&frame);
      return -1;
    }
  }
  st->frames[st->n++] = frame;
  return 0;
}

/*
 * A nonzero result ends the walk. In ordering mode a difference found under a
 * map, at any depth, is a TypeError: maps have no order. Releases every frame.
 */
static int cmp_terminate(CmpWalk* walk, CmpStack* st, int32_t result, int32_t* out) {
  int under_map = 0;
  while (st->n > 0) {
    CmpFrame* f = &st->frames[--st->n];
    if (f->kind == FR_DC_MAP) under_map = 1;
    fr_ptrmap_erase(&walk->on_stack, f->lhs_obj, f->rhs_obj);
    cmp_frame_release(f);
  }
  free(st->frames);
  st->frames = NULL;
  if (under_map && !walk->eq_only) return fr_raise("TypeError", "Cannot order Map/Dict values");
  *out = result;
  return 0;
}

/* -1, 0 or 1 (or a hook's raw int) for two owned values: one run of the walk. */
static int cmp_run(CmpWalk* walk, const TVMFFIAny* lhs, const TVMFFIAny* rhs, int32_t* out) {
  CmpStack st = {NULL, 0, 0};
  int32_t result;
  int status = cmp_immediate(walk, lhs, rhs, out);
  if (status != 0) return status < 0 ? -1 : 0;
  status = cmp_push(walk, &st, lhs, rhs, &result);
  if (status < 0) goto fail;
  if (status == 1) {
    *out = result;
    free(st.frames);
    return 0;
  }
  while (st.n > 0) {
    CmpFrame* f = &st.frames[st.n - 1];
    int pushed = 0;
    while (f->idx < f->n) {
      size_t i = f->idx++;
      const TVMFFIAny* a = &f->items[2 * i];
      const TVMFFIAny* b = &f->items[2 * i + 1];
      status = cmp_immediate(walk, a, b, &result);
      if (status < 0) goto fail;
      if (status == 0) {
        status = cmp_push(walk, &st, a, b, &result);
        if (status < 0) goto fail;
        if (status == 0) {
          pushed = 1;
          break;
        }
      }
      if (result != 0) return cmp_terminate(walk, &st, result, out);
    }
    if (pushed) continue;
    result = 0;
    if (f->kind == FR_DC_SEQ && f->lhs_size != f->rhs_size) result = f->lhs_size < f->rhs_size ? -1 : 1;
    fr_ptrmap_erase(&walk->on_stack, f->lhs_obj, f->rhs_obj);
    cmp_frame_release(f);
    st.n--;
    if (st.n == 0) {
      *out = result;
      break;
    }
    if (result != 0) return cmp_terminate(walk, &st, result, out);
  }
  free(st.frames);
  return 0;
fail:
  while (st.n > 0) cmp_frame_release(&st.frames[--st.n]);
  free(st.frames);
  return -1;
}

/* The five comparison globals: the mode and the test applied to the three-way result. */
enum { OP_EQ, OP_LT, OP_LE, OP_GT, OP_GE };

static int compare_op(int op, const FrArg* args, TVMFFIAny* rv) {
  CmpWalk walk;
  int32_t c;
  int status, holds = 0;
  memset(&walk, 0, sizeof(walk));
  walk.eq_only = op == OP_EQ;
  status = cmp_run(&walk, &args[0].value, &args[1].value, &c);
  fr_ptrmap_free(&walk.on_stack);
  if (status != 0) return -1;
  switch (op) {
    case OP_EQ: holds = c == 0; break;
    case OP_LT: holds = c < 0; break;
    case OP_LE: holds = c <= 0; break;
    case OP_GT: holds = c > 0; break;
    default: holds = c >= 0; break;
  }
  *rv = fr_any_bool(holds);
  return 0;
}

static int recursive_eq(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  (void)ctx;
  return compare_op(OP_EQ, args, rv);
}
static int recursive_lt(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  (void)ctx;
  return compare_op(OP_LT, args, rv);
}
static int recursive_le(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  (void)ctx;
  return compare_op(OP_LE, args, rv);
}
static int recursive_gt(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  (void)ctx;
  return compare_op(OP_GT, args, rv);
}
static int recursive_ge(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  (void)ctx;
  return compare_op(OP_GE, args, rv);
}

static const FrBuiltin kCompareBuiltins[] = {
    {"ffi.RecursiveEq", recursive_eq, NULL, 2, {FR_T_ANY, FR_T_ANY}, FR_T_BOOL},
    {"ffi.RecursiveLt", recursive_lt, NULL, 2, {FR_T_ANY, FR_T_ANY}, FR_T_BOOL},
    {"ffi.RecursiveLe", recursive_le, NULL, 2, {FR_T_ANY, FR_T_ANY}, FR_T_BOOL},
    {"ffi.RecursiveGt", recursive_gt, NULL, 2, {FR_T_ANY, FR_T_ANY}, FR_T_BOOL},
    {"ffi.RecursiveGe", recursive_ge, NULL, 2, {FR_T_ANY, FR_T_ANY}, FR_T_BOOL},
};

int fr_dataclass_compare_globals(void) {
  return fr_register_builtins(kCompareBuiltins,
                              sizeof(kCompareBuiltins) / sizeof(kCompareBuiltins[0]));
}
