/*
 * structural_mutate_hooks.c -- the native __s_mutate__ and
 * __s_maybe_inplace_mutate__ entries of the built-in types: strings, bytes and
 * BigInt never change; Arrays and Lists copy on write at the first changed
 * element (or change in place); Maps and Dicts the same over their values.
 * Separate from the mutator: these are column entries, called like any
 * type's hooks.
 *
 * Its twin in the reference runtime: tvm_ffi_ref/runtime/structural_mutate.py.
 */
#include "structural_mutate.h"

#include "containers.h"
#include "registry.h"

static TVMFFIAny keep(void* mutator, TVMFFIAny value) {
  (void)mutator;
  (void)value;
  return fr_s_unchanged();
}

/* Copy-on-write over a sequence: copied at the first changed element. */
static TVMFFIAny mutate_sequence(void* mutator, TVMFFIAny value) {
  void* seq = value.v_obj;
  int64_t n = fr_seq_size(seq), i, j;
  for (i = 0; i < n; ++i) {
    const TVMFFIAny* item = &fr_seq_items(seq)[i];
    TVMFFIAny result = fr_s_mutate_expected(mutator, *item, FR_S_DISALLOW);
    void* copy;
    if (fr_s_is_error(&result)) return result;
    if (fr_s_is_unchanged(&result) || fr_s_same_as(&result, item)) {
      fr_any_release(&result);
      continue;
    }
    copy = value.type_index == kTVMFFIArray ? fr_array_new(n) : fr_list_new(n);
    if (copy == NULL) {
      fr_any_release(&result);
      return fr_s_raised();
    }
    for (j = 0; j < i; ++j) fr_seq_items(copy)[j] = fr_any_copy(&fr_seq_items(seq)[j]);
    fr_seq_items(copy)[i] = result;
    ((FrSeq*)copy)->cell.size = i + 1;
    for (j = i + 1; j < n; ++j) {
      const TVMFFIAny* rest = &fr_seq_items(seq)[j];
      TVMFFIAny mapped = fr_s_mutate_expected(mutator, *rest, FR_S_DISALLOW);
      if (fr_s_is_error(&mapped)) {
        fr_decref(copy);
        return mapped;
      }
      fr_seq_items(copy)[j] = fr_s_value_or(mapped, rest);
      ((FrSeq*)copy)->cell.size = j + 1;
    }
    return fr_any_object(copy);
  }
  return fr_s_unchanged();
}

static TVMFFIAny mutate_sequence_in_place(void* mutator, TVMFFIAny value) {
  void* seq = value.v_obj;
  int64_t i;
  for (i = 0; i < fr_seq_size(seq); ++i) {
    TVMFFIAny* item = &fr_seq_items(seq)[i];
    TVMFFIAny result = fr_s_mutate_expected(mutator, *item, FR_S_ALLOW);
    if (fr_s_is_error(&result)) return result;
    item = &fr_seq_items(seq)[i];
    if (!fr_s_is_unchanged(&result) && !fr_s_same_as(&result, item)) {
      TVMFFIAny old = *item;
      *item = result;
      fr_any_release(&old);
    } else {
      fr_any_release(&result);
    }
  }
  return fr_s_unchanged();
}

static void replace_value(TVMFFIAny* slot, TVMFFIAny owned) {
  TVMFFIAny old = *slot;
  *slot = owned;
  fr_any_release(&old);
}

/* Copy-on-write over map values (keys never change): copied at the first changed value. */
static TVMFFIAny mutate_map_values(void* mutator, TVMFFIAny value) {
  void* map = value.v_obj;
  uint64_t it, end = fr_map_end(map), copy_it;
  for (it = fr_map_begin(map); it != end; it = fr_map_next(map, it)) {
    TVMFFIAny* item = &fr_map_entry(map, it)->value;
    TVMFFIAny result = fr_s_mutate_expected(mutator, *item, FR_S_DISALLOW);
    void* copy;
    if (fr_s_is_error(&result)) return result;
    if (fr_s_is_unchanged(&result) || fr_s_same_as(&result, item)) {
      fr_any_release(&result);
      continue;
    }
    copy = fr_map_copy(map, value.type_index);
    if (copy == NULL) {
      fr_any_release(&result);
      return fr_s_raised();
    }
    /* the copy has the same layout: the same positions walk it in the same order */
    copy_it = it;
    replace_value(&fr_map_entry(copy, copy_it)->value, result);
    for (it = fr_map_next(map, it); it != end; it = fr_map_next(map, it)) {
      const TVMFFIAny* rest = &fr_map_entry(map, it)->value;
      TVMFFIAny mapped = fr_s_mutate_expected(mutator, *rest, FR_S_DISALLOW);
      if (fr_s_is_error(&mapped)) {
        fr_decref(copy);
        return mapped;
      }
      if (!fr_s_is_unchanged(&mapped) && !fr_s_same_as(&mapped, rest)) {
        replace_value(&fr_map_entry(copy, it)->value, mapped);
      } else {
        fr_any_release(&mapped);
      }
    }
    return fr_any_object(copy);
  }
  return fr_s_unchanged();
}

static TVMFFIAny mutate_map_values_in_place(void* mutator, TVMFFIAny value) {
  void* map = value.v_obj;
  uint64_t it, end = fr_map_end(map);
  for (it = fr_map_begin(map); it != end; it = fr_map_next(map, it)) {
    TVMFFIAny* item = &fr_map_entry(map, it)->value;
    TVMFFIAny result = fr_s_mutate_expected(mutator, *item, FR_S_ALLOW);
    if (fr_s_is_error(&result)) return result;
    item = &fr_map_entry(map, it)->value;
    if (!fr_s_is_unchanged(&result) && !fr_s_same_as(&result, item)) {
      replace_value(item, result);
    } else {
      fr_any_release(&result);
    }
  }
  return fr_s_unchanged();
}

int fr_structural_mutate_native_hooks(void) {
  const struct {
    int32_t type_index;
    FrMutateFn copy_on_write;
    FrMutateFn in_place;
  } hooks[] = {
      {kTVMFFIStr, keep, keep},
      {kTVMFFIBytes, keep, keep},
      {kTVMFFIArray, mutate_sequence, mutate_sequence_in_place},
      {kTVMFFIMap, mutate_map_values, mutate_map_values_in_place},
      {kTVMFFIList, mutate_sequence, mutate_sequence_in_place},
      {kTVMFFIDict, mutate_map_values, mutate_map_values_in_place},
      {kTVMFFIBigInt, keep, keep},
  };
  size_t i;
  for (i = 0; i < sizeof(hooks) / sizeof(hooks[0]); ++i) {
    TVMFFIAny native = fr_any_none();
    native.type_index = kTVMFFIOpaquePtr;
    native.v_ptr = (void*)hooks[i].copy_on_write;
    if (fr_register_attr_cstr(hooks[i].type_index, "__s_mutate__", &native) != 0) return -1;
    native.v_ptr = (void*)hooks[i].in_place;
    if (fr_register_attr_cstr(hooks[i].type_index, "__s_maybe_inplace_mutate__", &native) != 0) {
      return -1;
    }
  }
  return 0;
}
