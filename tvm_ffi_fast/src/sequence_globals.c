/*
 * sequence_globals.c -- the ffi.Array* and ffi.List* global functions:
 * construction, indexing, membership, and the List's in-place edits (set,
 * append, insert, pop, erase, slices, reverse, clear, reserve) with upstream's
 * bounds checks and error texts. Separate from containers.c, which lays the
 * objects out.
 *
 * Its twin in the reference runtime: tvm_ffi_ref/runtime/sequence_globals.py.
 */
#include "core.h"

#include "containers.h"
#include "functions.h"

/* ------------------------------------------------------ seq operations */

static int raise_index(int64_t i, int64_t size) {
  return fr_raise("IndexError", "Index %lld out of bounds %lld", (long long)i, (long long)size);
}

static int seq_contains(void* seq, const TVMFFIAny* value, TVMFFIAny* rv) {
  int64_t i;
  for (i = 0; i < fr_seq_size(seq); ++i) {
    int eq;
    if (fr_any_equal(&fr_seq_items(seq)[i], value, &eq) != 0) return -1;
    if (eq) {
      *rv = fr_any_bool(1);
      return 0;
    }
  }
  *rv = fr_any_bool(0);
  return 0;
}

static int seq_get(void* seq, int64_t i, TVMFFIAny* rv) {
  if (i < 0 || i >= fr_seq_size(seq)) return raise_index(i, fr_seq_size(seq));
  *rv = fr_any_copy(&fr_seq_items(seq)[i]);
  return 0;
}

/* Removes items [first, last) (bounds checked by the caller). */
static void seq_erase_range(void* seq, int64_t first, int64_t last) {
  FrSeq* s = (FrSeq*)seq;
  TVMFFIAny* items = fr_seq_items(seq);
  int64_t i, count = last - first;
  for (i = first; i < last; ++i) fr_any_release(&items[i]);
  memmove(&items[first], &items[last], (size_t)(s->cell.size - last) * sizeof(TVMFFIAny));
  s->cell.size -= count;
}

/* Opens a gap of count items at idx (capacity ensured, idx checked). */
static void seq_open_gap(void* seq, int64_t idx, int64_t count) {
  FrSeq* s = (FrSeq*)seq;
  TVMFFIAny* items = fr_seq_items(seq);
  int64_t i;
  memmove(&items[idx + count], &items[idx], (size_t)(s->cell.size - idx) * sizeof(TVMFFIAny));
  for (i = idx; i < idx + count; ++i) items[i] = fr_any_none();
  s->cell.size += count;
}

/* ------------------------------------------------------- Array globals */

static int array_ctor(void* ctx, const TVMFFIAny* args, int32_t n, TVMFFIAny* rv) {
  void* array = fr_array_new(n);
  int32_t i;
  (void)ctx;
  if (array == NULL) return -1;
  for (i = 0; i < n; ++i) {
    TVMFFIAny owned;
    if (fr_any_view_to_owned(&args[i], &owned) != 0) {
      fr_decref(array);
      return -1;
    }
    fr_array_push_unchecked(array, owned);
  }
  *rv = fr_any_object(array);
  return 0;
}

static int seq_get_item(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  (void)ctx;
  return seq_get(a[0].value.v_obj, a[1].value.v_int64, rv);
}

static int seq_size(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  (void)ctx;
  *rv = fr_any_int(fr_seq_size(a[0].value.v_obj));
  return 0;
}

static int seq_contains_fn(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  (void)ctx;
  return seq_contains(a[0].value.v_obj, &a[1].value, rv);
}

/* -------------------------------------------------------- List globals */

static int list_ctor(void* ctx, const TVMFFIAny* args, int32_t n, TVMFFIAny* rv) {
  void* list = fr_list_new(FR_SEQ_INIT_CAPACITY);
  int32_t i;
  (void)ctx;
  if (list == NULL) return -1;
  if (fr_list_reserve(list, n) != 0) {
    fr_decref(list);
    return -1;
  }
  for (i = 0; i < n; ++i) {
    TVMFFIAny owned;
    if (fr_any_view_to_owned(&args[i], &owned) != 0) {
      fr_decref(list);
      return -1;
    }
    fr_seq_items(list)[i] = owned;
    ((FrSeq*)list)->cell.size = i + 1;
  }
  *rv = fr_any_object(list);
  return 0;
}

static int list_set_item(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  void* list = a[0].value.v_obj;
  int64_t i = a[1].value.v_int64;
  (void)ctx;
  if (i < 0 || i >= fr_seq_size(list)) return raise_index(i, fr_seq_size(list));
  fr_any_release(&fr_seq_items(list)[i]);
  fr_seq_items(list)[i] = fr_any_copy(&a[2].value);
  *rv = fr_any_none();
  return 0;
}

static int list_append(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  void* list = a[0].value.v_obj;
  (void)ctx;
  if (fr_list_ensure_extra(list, 1) != 0) return -1;
  fr_seq_items(list)[fr_seq_size(list)] = fr_any_copy(&a[1].value);
  ((FrSeq*)list)->cell.size += 1;
  *rv = fr_any_none();
  return 0;
}

static int list_insert(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  void* list = a[0].value.v_obj;
  int64_t idx = a[1].value.v_int64, size;
  (void)ctx;
  if (fr_list_ensure_extra(list, 1) != 0) return -1;
  size = fr_seq_size(list);
  if (idx < 0 || idx > size) {
    return fr_raise("IndexError", "Index %lld out of bounds [0, %lld]", (long long)idx,
                    (long long)size);
  }
  seq_open_gap(list, idx, 1);
  fr_seq_items(list)[idx] = fr_any_copy(&a[2].value);
  *rv = fr_any_none();
  return 0;
}

static int list_pop(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  void* list = a[0].value.v_obj;
  int64_t i = a[1].value.v_int64;
  (void)ctx;
  if (seq_get(list, i, rv) != 0) return -1;
  seq_erase_range(list, i, i + 1);
  return 0;
}

static int list_erase(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  void* list = a[0].value.v_obj;
  int64_t i = a[1].value.v_int64;
  (void)ctx;
  if (i < 0 || i >= fr_seq_size(list)) return raise_index(i, fr_seq_size(list));
  seq_erase_range(list, i, i + 1);
  *rv = fr_any_none();
  return 0;
}

static int check_erase_range(void* list, int64_t first, int64_t last) {
  if (first < 0 || last > fr_seq_size(list) || first >= last) {
    return fr_raise("IndexError", "Erase range [%lld, %lld) out of bounds %lld",
                    (long long)first, (long long)last, (long long)fr_seq_size(list));
  }
  return 0;
}

static int list_erase_range(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  void* list = a[0].value.v_obj;
  int64_t first = a[1].value.v_int64, last = a[2].value.v_int64;
  (void)ctx;
  *rv = fr_any_none();
  if (first == last) return 0;
  if (check_erase_range(list, first, last) != 0) return -1;
  seq_erase_range(list, first, last);
  return 0;
}

static int list_replace_slice(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  void* list = a[0].value.v_obj;
  void* replacement = a[3].value.v_obj;
  int64_t start = a[1].value.v_int64, stop = a[2].value.v_int64, count, size, i;
  TVMFFIAny* snapshot = NULL;
  (void)ctx;
  *rv = fr_any_none();
  count = fr_seq_size(replacement);
  if (count != 0) {
    snapshot = (TVMFFIAny*)malloc((size_t)count * sizeof(TVMFFIAny));
    if (snapshot == NULL) return fr_raise_oom();
    for (i = 0; i < count; ++i) snapshot[i] = fr_any_copy(&fr_seq_items(replacement)[i]);
  }
  if (start != stop) {
    if (check_erase_range(list, start, stop) != 0) goto fail;
    seq_erase_range(list, start, stop);
  }
  if (count == 0) return 0;
  if (fr_list_ensure_extra(list, count) != 0) goto fail;
  size = fr_seq_size(list);
  if (start < 0 || start > size) {
    fr_raise("IndexError", "Index %lld out of bounds [0, %lld]", (long long)start,
             (long long)size);
    goto fail;
  }
  seq_open_gap(list, start, count);
  memcpy(&fr_seq_items(list)[start], snapshot, (size_t)count * sizeof(TVMFFIAny));
  free(snapshot);
  return 0;
fail:
  for (i = 0; i < count; ++i) fr_any_release(&snapshot[i]);
  free(snapshot);
  return -1;
}

static int list_reverse(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  void* list = a[0].value.v_obj;
  TVMFFIAny* items = fr_seq_items(list);
  int64_t i, j;
  (void)ctx;
  for (i = 0, j = fr_seq_size(list) - 1; i < j; ++i, --j) {
    TVMFFIAny t = items[i];
    items[i] = items[j];
    items[j] = t;
  }
  *rv = fr_any_none();
  return 0;
}

static int list_clear(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  void* list = a[0].value.v_obj;
  FrSeq* seq = (FrSeq*)list;
  (void)ctx;
  while (seq->cell.size > 0) {
    seq->cell.size -= 1;
    fr_any_release(&fr_seq_items(list)[seq->cell.size]);
  }
  *rv = fr_any_none();
  return 0;
}

static int list_reserve(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  (void)ctx;
  *rv = fr_any_none();
  return fr_list_reserve(a[0].value.v_obj, a[1].value.v_int64);
}

#define T(x) FR_T_##x
static const FrBuiltin kBuiltins[] = {
    {"ffi.Array", NULL, array_ctor, 0, {0}, T(VOID)},
    {"ffi.ArrayGetItem", seq_get_item, NULL, 2, {T(ARRAY), T(INT)}, T(ANY)},
    {"ffi.ArraySize", seq_size, NULL, 1, {T(ARRAY)}, T(INT)},
    {"ffi.ArrayContains", seq_contains_fn, NULL, 2, {T(ARRAY), T(ANY)}, T(BOOL)},
    {"ffi.List", NULL, list_ctor, 0, {0}, T(VOID)},
    {"ffi.ListGetItem", seq_get_item, NULL, 2, {T(LIST), T(INT)}, T(ANY)},
    {"ffi.ListSetItem", list_set_item, NULL, 3, {T(LIST_REF), T(INT), T(ANY)}, T(VOID)},
    {"ffi.ListSize", seq_size, NULL, 1, {T(LIST)}, T(INT)},
    {"ffi.ListContains", seq_contains_fn, NULL, 2, {T(LIST), T(ANY)}, T(BOOL)},
    {"ffi.ListAppend", list_append, NULL, 2, {T(LIST_REF), T(ANY)}, T(VOID)},
    {"ffi.ListInsert", list_insert, NULL, 3, {T(LIST_REF), T(INT), T(ANY)}, T(VOID)},
    {"ffi.ListPop", list_pop, NULL, 2, {T(LIST_REF), T(INT)}, T(ANY)},
    {"ffi.ListErase", list_erase, NULL, 2, {T(LIST_REF), T(INT)}, T(VOID)},
    {"ffi.ListEraseRange", list_erase_range, NULL, 3, {T(LIST_REF), T(INT), T(INT)}, T(VOID)},
    {"ffi.ListReplaceSlice", list_replace_slice, NULL, 4,
     {T(LIST_REF), T(INT), T(INT), T(LIST_REF)}, T(VOID)},
    {"ffi.ListReverse", list_reverse, NULL, 1, {T(LIST_REF)}, T(VOID)},
    {"ffi.ListClear", list_clear, NULL, 1, {T(LIST_REF)}, T(VOID)},
    {"ffi.ListReserve", list_reserve, NULL, 2, {T(LIST_REF), T(INT)}, T(VOID)},
};
#undef T

int fr_sequence_register_globals(void) {
  return fr_register_builtins(kBuiltins, sizeof(kBuiltins) / sizeof(kBuiltins[0]));
}
