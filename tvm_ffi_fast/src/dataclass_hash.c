/*
 * dataclass_hash.c -- ffi.RecursiveHash: upstream's hash numbers bit for bit
 * (the type key hash, StableHashCombine, map entries sorted), with a memo of
 * finished objects and the type key hash standing in for one met again on the
 * way down. Its own file: one walk per file (dataclass_ops.c).
 *
 * Its twin in the reference runtime: tvm_ffi_ref/runtime/dataclass_hash.py.
 */
#include "dataclass.h"

#include <math.h>

#include "containers.h"
#include "functions.h"
#include "registry.h"
#include "runtime.h"
#include "walk.h"

/* The type upstream converts a hook entry to, named in its "Cannot treat" error. */
#define SIG_HASH "(0: ffi.Object, 1: (0: AnyView) -> int) -> int"

/* ============================================================== hash */

/* One ffi.RecursiveHash call: the memo and the objects on the way down. */
typedef struct {
  FrPtrMap memo;     /* object -> its hash */
  FrPtrMap on_stack; /* objects being hashed */
} HashWalk;

typedef struct {
  FrDcChildren ch;
  void* obj;
  size_t idx;
  uint64_t hash;
  uint64_t key_hash;
  uint64_t* entries; /* maps: fr_hash_combine(key hash, value hash) per entry */
  size_t num_entries;
} HashFrame;

typedef struct {
  HashFrame* frames;
  size_t n;
  size_t capacity;
} HashStack;

static int hash_run(HashWalk* walk, const TVMFFIAny* value, uint64_t* out);

static uint64_t hash_bytes_value(int32_t kind, const TVMFFIAny* value) {
  TVMFFIByteArray bytes = fr_text_of(value);
  return fr_hash_combine((uint64_t)kind, fr_stable_hash_bytes(bytes.data, bytes.size));
}

static uint64_t hash_pod(const TVMFFIAny* value) {
  int32_t ti = value->type_index;
  switch (ti) {
    case kTVMFFIBool: return fr_hash_combine((uint64_t)ti, value->v_int64 != 0 ? 1 : 0);
    case kTVMFFIInt: return fr_hash_combine((uint64_t)ti, (uint64_t)value->v_int64);
    case kTVMFFIFloat: {
      double v = value->v_float64;
      uint64_t bits;
      if (isnan(v)) {
        bits = 0x7FF8000000000000ULL; /* the canonical quiet NaN */
      } else if (v == 0.0) {
        bits = 0; /* -0.0 hashes as 0.0 */
      } else {
        memcpy(&bits, &v, sizeof(bits));
      }
      return fr_hash_combine((uint64_t)ti, bits);
    }
    case kTVMFFIDataType: {
      uint64_t h = fr_hash_combine((uint64_t)ti, (uint64_t)value->v_dtype.code);
      h = fr_hash_combine(h, (uint64_t)value->v_dtype.bits);
      return fr_hash_combine(h, (uint64_t)value->v_dtype.lanes);
    }
    case kTVMFFIDevice: {
      uint64_t h = fr_hash_combine((uint64_t)ti, (uint64_t)(int64_t)(int32_t)value->v_device.device_type);
      return fr_hash_combine(h, (uint64_t)(int64_t)value->v_device.device_id);
    }
    default: return fr_hash_combine((uint64_t)ti, value->v_uint64);
  }
}

static int cb_hash(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  HashWalk* walk = (HashWalk*)((FrWalkCallback*)ctx)->walk;
  TVMFFIAny value;
  uint64_t h;
  int status;
  if (walk == NULL) return fr_dc_raise_expired_callback();
  if (fr_any_view_to_owned(&args[0].value, &value) != 0) return -1;
  status = hash_run(walk, &value, &h);
  fr_any_release(&value);
  if (status == 0) *rv = fr_any_int((int64_t)h);
  return status;
}

static const FrBuiltin kHashCallback = {"", cb_hash, NULL, 1, {FR_T_ANYVIEW}, FR_T_INT};

static int hash_hook(HashWalk* walk, void* hook, void* obj, uint64_t* out) {
  FrWalkCallback* cb = NULL;
  TVMFFIAny args[2], result;
  int64_t value;
  void* fn;
  int status;
  if (fr_ptrmap_put(&walk->on_stack, obj, NULL, 1) != 0) return -1;
  fn = fr_walk_callback_new(&kHashCallback, walk, &cb);
  if (fn == NULL) return -1;
  args[0] = fr_object_view(obj);
  args[1] = fr_object_view(fn);
  status = fr_call(hook, args, 2, &result);
  fr_walk_callback_done(fn, cb);
  if (status != 0 || fr_result_as_int(&result, "int", &value) != 0) return -1;
  *out = (uint64_t)value;
  if (fr_ptrmap_put(&walk->memo, obj, NULL, *out) != 0) return -1;
  fr_ptrmap_erase(&walk->on_stack, obj, NULL);
  return 0;
}

/* The hash of a value that needs no frame: 1 and *out; 0 when it needs one; -1 on error. */
static int hash_immediate(HashWalk* walk, const TVMFFIAny* value, uint64_t* out) {
  int32_t ti = value->type_index;
  const TVMFFITypeInfo* info;
  FrPtrSlot* slot;
  void* obj;
  void* hook = NULL;
  int found;
  if (ti == kTVMFFINone) {
    *out = fr_hash_combine(0, 0);
    return 1;
  }
  if (fr_dc_is_str(ti)) {
    *out = hash_bytes_value(kTVMFFIStr, value);
    return 1;
  }
  if (fr_dc_is_bytes(ti)) {
    *out = hash_bytes_value(kTVMFFIBytes, value);
    return 1;
  }
  if (ti < kTVMFFIStaticObjectBegin) {
    *out = hash_pod(value);
    return 1;
  }
  obj = value->v_obj;
  if (obj == NULL) {
    *out = fr_hash_combine(0, 0);
    return 1;
  }
  slot = fr_ptrmap_find(&walk->memo, obj, NULL);
  if (slot != NULL) {
    *out = slot->value;
    return 1;
  }
  if (fr_ptrmap_find(&walk->on_stack, obj, NULL) != NULL) {
    /* a cycle: the type key hash stands in for the object being hashed */
    info = fr_type_info_checked(ti);
    if (info == NULL) return -1;
    *out = info->type_key_hash;
    return 1;
  }
  if (ti == kTVMFFIShape) {
    const TVMFFIShapeCell* cell = FR_CELL(obj, TVMFFIShapeCell);
    uint64_t h;
    size_t i;
    info = fr_type_info_checked(ti);
    if (info == NULL) return -1;
    h = fr_hash_combine(info->type_key_hash, (uint64_t)cell->size);
    for (i = 0; i < cell->size; ++i) h = fr_hash_combine(h, (uint64_t)cell->data[i]);
    *out = h;
    return fr_ptrmap_put(&walk->memo, obj, NULL, h) == 0 ? 1 : -1;
  }
  found = fr_hook_of(fr_dc.col_hash, ti, SIG_HASH, &hook);
  if (found < 0) return -1;
  if (found) {
    if (hook == fr_dc.bigint_hash_hook && ti == kTVMFFIBigInt) {
      /* BigInt's own hook, answered here: StableHashBytes of its words */
      size_t n;
      const int64_t* words = fr_bigint_words(value, &n);
      *out = fr_stable_hash_bytes(words, n * sizeof(int64_t));
      return fr_ptrmap_put(&walk->memo, obj, NULL, *out) == 0 ? 1 : -1;
    }
    return hash_hook(walk, hook, obj, out) == 0 ? 1 : -1;
  }
  if (ti >= kTVMFFIStaticObjectEnd &&
      (fr_type_attr_entry(fr_dc.col_eq, ti).type_index != kTVMFFINone ||
       fr_type_attr_entry(fr_dc.col_cmp, ti).type_index != kTVMFFINone)) {
    info = fr_type_info_checked(ti);
    if (info == NULL) return -1;
    return fr_raise("ValueError",
                    "RecursiveHash: type '%.*s' defines __ffi_eq__ or __ffi_compare__ but not "
                    "__ffi_hash__. Add a __ffi_hash__ hook to maintain the invariant "
                    "RecursiveEq(a,b) => RecursiveHash(a)==RecursiveHash(b).",
                    (int)info->type_key.size, info->type_key.data);
  }
  return 0;
}

static void hash_frame_release(HashFrame* f) {
  fr_dc_children_release(&f->ch);
  free(f->entries);
  f->entries = NULL;
}

static int hash_push(HashWalk* walk, HashStack* st, const TVMFFIAny* value) {
  HashFrame* f;
  void* obj = value->v_obj;
  int32_t ti = fr_type_index(obj);
  const TVMFFITypeInfo* info;
  if (st->n >= FR_DC_MAX_DEPTH) {
    return fr_raise("ValueError", "ObjectGraphDFS: " FR_DC_DEPTH_TEXT);
  }
  if (st->n == st->capacity) {
    size_t capacity = st->capacity == 0 ? 16 : st->capacity * 2;
    HashFrame* grown = (HashFrame*)realloc(st->frames, capacity * sizeof(HashFrame));
    if (grown == NULL) return fr_raise_oom();
    st->frames = grown;
    st->capacity = capacity;
  }
  if (fr_ptrmap_put(&walk->on_stack, obj, NULL, 1) != 0) return -1;
  f = &st->frames[st->n];
  memset(f, 0, sizeof(*f));
  f->obj = obj;
  if (fr_dc_children_of(obj, ti,
                  kTVMFFIFieldFlagBitMaskHashOff | kTVMFFIFieldFlagBitMaskCompareOff,
                  &f->ch) != 0) {
    return -1;
  }
  st->n++;
  info = fr_type_info_checked(ti);
  if (info == NULL) return -1;
  f->hash = f->ch.kind == FR_DC_OBJ ? info->type_key_hash
                                : fr_hash_combine(info->type_key_hash, (uint64_t)f->ch.size);
  if (f->ch.kind == FR_DC_MAP && f->ch.size > 0) {
    f->entries = (uint64_t*)malloc(f->ch.size * sizeof(uint64_t));
    if (f->entries == NULL) return fr_raise_oom();
  }
  return 0;
}

static void hash_feed(HashFrame* f, size_t i, uint64_t h) {
  switch (f->ch.kind) {
    case FR_DC_SEQ: f->hash = fr_hash_combine(f->hash, fr_hash_combine(h, (uint64_t)i)); break;
    case FR_DC_MAP:
      if (i % 2 == 0) {
        f->key_hash = h;
      } else {
        f->entries[f->num_entries++] = fr_hash_combine(f->key_hash, h);
      }
      break;
    default: f->hash = fr_hash_combine(f->hash, h); break;
  }
}

static int compare_u64(const void* a, const void* b) {
  uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
  return (x > y) - (x < y);
}

/* Finishes the top frame: its hash (a map's entries sorted first), memoized. */
static int hash_complete(HashWalk* walk, HashFrame* f, uint64_t* out) {
  size_t i;
  if (f->ch.kind == FR_DC_MAP) {
    /* an empty map has no entries array, and qsort's base must not be NULL even for none */
    if (f->num_entries > 1) qsort(f->entries, f->num_entries, sizeof(uint64_t), compare_u64);
    for (i = 0; i < f->num_entries; ++i) f->hash = fr_hash_combine(f->hash, f->entries[i]);
  }
  *out = f->hash;
  if (fr_ptrmap_put(&walk->memo, f->obj, NULL, f->hash) != 0) return -1;
  fr_ptrmap_erase(&walk->on_stack, f->obj, NULL);
  return 0;
}

/* The hash of an owned value: one run of the walk. */
static int hash_run(HashWalk* walk, const TVMFFIAny* value, uint64_t* out) {
  HashStack st = {NULL, 0, 0};
  uint64_t h;
  int status = hash_immediate(walk, value, out);
  if (status != 0) return status < 0 ? -1 : 0;
  if (hash_push(walk, &st, value) != 0) goto fail;
  while (st.n > 0) {
    HashFrame* f = &st.frames[st.n - 1];
    int pushed = 0;
    while (f->idx < f->ch.n) {
      size_t i = f->idx++;
      status = hash_immediate(walk, &f->ch.items[i], &h);
      if (status < 0) goto fail;
      if (status == 0) {
        if (hash_push(walk, &st, &f->ch.items[i]) != 0) goto fail;
        pushed = 1;
        break;
      }
      hash_feed(f, i, h);
    }
    if (pushed) continue;
    if (hash_complete(walk, f, &h) != 0) goto fail;
    hash_frame_release(f);
    st.n--;
    if (st.n == 0) {
      *out = h;
      break;
    }
    f = &st.frames[st.n - 1];
    hash_feed(f, f->idx - 1, h);
  }
  free(st.frames);
  return 0;
fail:
  while (st.n > 0) hash_frame_release(&st.frames[--st.n]);
  free(st.frames);
  return -1;
}

static int recursive_hash(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  HashWalk walk;
  uint64_t h;
  int status;
  (void)ctx;
  memset(&walk, 0, sizeof(walk));
  status = hash_run(&walk, &args[0].value, &h);
  fr_ptrmap_free(&walk.memo);
  fr_ptrmap_free(&walk.on_stack);
  if (status == 0) *rv = fr_any_int((int64_t)h);
  return status;
}

static const FrBuiltin kHashBuiltins[] = {
    {"ffi.RecursiveHash", recursive_hash, NULL, 1, {FR_T_ANY}, FR_T_INT},
};

int fr_dataclass_hash_globals(void) {
  return fr_register_builtins(kHashBuiltins, sizeof(kHashBuiltins) / sizeof(kHashBuiltins[0]));
}
