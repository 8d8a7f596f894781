/*
 * structural_mutate.c -- ffi.StructuralMap, ffi.StructuralMutate and the
 * mutator's methods; the native __s_mutate__ / __s_maybe_inplace_mutate__ hooks
 * of the containers, strings and BigInt.
 *
 * A mutator here is an upstream StructuralMutatorObj to C++ (a real vtable at
 * offset 24: mutate, maybe_inplace_mutate, var_remap_get, var_remap_set), so a
 * C++ hook handed one of ours mutates children through it. Results are raw
 * TVMFFIAny: a replacement, the kTVMFFIUnchanged marker, or an Error.
 * tvm_ffi_ref/runtime/structural_mutate.py states the rules (copy-on-write,
 * in place along uniquely owned paths, the variable remap, map callbacks
 * before or after default mutation, callback-owned mutation).
 */
#include "structural.h"

#include "containers.h"
#include "functions.h"
#include "registry.h"
#include "runtime.h"
#include "structural_traversal.h"
#include "walk.h"

typedef TVMFFIAny (*FrMutateFn)(void* mutator, TVMFFIAny value);
typedef TVMFFIAny (*FrRemapSetFn)(void* mutator, TVMFFIAny var, TVMFFIAny mapped);

typedef struct {
  FrMutateFn mutate;
  FrMutateFn maybe_inplace_mutate;
  FrMutateFn var_remap_get;
  FrRemapSetFn var_remap_set;
} FrMutatorVTable;

typedef struct {
  FrTraversal base;
  void* lists[2];             /* the callback entry Arrays, held */
  FrCallbackEntry* callbacks;
  size_t n_callbacks;
  FrCallbackEntry* with_kind;
  size_t n_with_kind;
  int pre_order;
  FrPtrMap remap;             /* variable -> index into remap_values (the variable is held) */
  TVMFFIAny* remap_values;    /* owned */
  void** remap_keys;
  size_t n_remap;
  size_t cap_remap;
  int depth;
} Mutator;

enum { DISALLOW = 0, ALLOW = 1 };

static const TVMFFITypeAttrColumn* g_mutate = NULL;
static const TVMFFITypeAttrColumn* g_inplace = NULL;
static const TVMFFITypeAttrColumn* g_shallow_copy = NULL;
static int32_t g_mutator_index = -1;

static TVMFFIAny unchanged(void) {
  TVMFFIAny marker = fr_any_none();
  marker.type_index = kTVMFFIUnchanged;
  return marker;
}

static int is_unchanged(const TVMFFIAny* v) { return v->type_index == kTVMFFIUnchanged; }
static int is_error(const TVMFFIAny* v) { return v->type_index == kTVMFFIError; }

static int same_as(const TVMFFIAny* a, const TVMFFIAny* b) {
  return a->type_index == b->type_index && a->v_int64 == b->v_int64;
}

static const FrMutatorVTable* vtable_of(void* mutator) {
  return (const FrMutatorVTable*)((FrTraversal*)mutator)->vtable;
}

static TVMFFIAny error_now(void) { return fr_s_raised(); }

/* MutateExpected: in place only when allowed and value is an object held once. */
static TVMFFIAny mutate(void* mutator, TVMFFIAny value, int inplace) {
  if (inplace == ALLOW && value.type_index >= kTVMFFIStaticObjectBegin &&
      fr_strong_count(value.v_obj) == 1) {
    return vtable_of(mutator)->maybe_inplace_mutate(mutator, value);
  }
  return vtable_of(mutator)->mutate(mutator, value);
}

/* A changed result, or a copy of original when it is unchanged. */
static TVMFFIAny value_or(TVMFFIAny result, const TVMFFIAny* original) {
  return is_unchanged(&result) ? fr_any_copy(original) : result;
}

/* ------------------------------------------------------------ default mutation */

static TVMFFIAny call_hook(void* mutator, TVMFFIAny hook, TVMFFIAny value) {
  TVMFFIAny args[2];
  if (hook.type_index == kTVMFFIOpaquePtr) return ((FrMutateFn)hook.v_ptr)(mutator, value);
  if (hook.type_index != kTVMFFIFunction) {
    fr_raise("TypeError", "__s_mutate__ must be a direct hook pointer or ffi.Function");
    return error_now();
  }
  args[0] = fr_object_view(mutator);
  args[1] = value;
  return fr_s_call(hook.v_obj, args, 2);
}

/* The fields of a shallow copy mutated; 1 when one changed, 0 not, -1 on error (*error set). */
static int mutate_copy_fields(void* mutator, void* copy, TVMFFIAny* error) {
  FrTraversal* t = (FrTraversal*)mutator;
  int32_t ti = fr_type_index(copy);
  const TVMFFIFieldInfo** fields;
  size_t n, i;
  int changed = 0;
  if (fr_collect_fields(ti, FR_S_IGNORE, &fields, &n) != 0) {
    *error = error_now();
    return -1;
  }
  for (i = 0; i < n; ++i) {
    const TVMFFIFieldInfo* f = fields[i];
    TVMFFIAny child, result;
    int32_t saved = t->region;
    if (fr_read_field(copy, f, &child) != 0) {
      *error = error_now();
      changed = -1;
      break;
    }
    if (saved != kTVMFFIDefRegionKindPattern && (f->flags & (FR_S_DEF_SIMPLE | FR_S_DEF_PATTERN))) {
      t->region = (f->flags & FR_S_DEF_SIMPLE) ? kTVMFFIDefRegionKindSimple
                                               : kTVMFFIDefRegionKindPattern;
    }
    result = mutate(mutator, child, DISALLOW);
    t->region = saved;
    if (is_error(&result)) {
      *error = result;
      changed = -1;
    } else if (!is_unchanged(&result) && !same_as(&child, &result)) {
      if (f->setter == NULL) {
        fr_raise("TypeError",
                 "Cannot structurally mutate field `%.*s` of type `%s` because it does not define "
                 "a setter",
                 (int)f->name.size, f->name.data, fr_type_key_of(ti));
        *error = error_now();
        changed = -1;
      } else if (fr_call_field_setter(f, (char*)copy + f->offset, &result) != 0) {
        *error = error_now();
        changed = -1;
      } else {
        changed = 1;
      }
    }
    if (!is_error(&result)) fr_any_release(&result);
    fr_any_release(&child);
    if (changed < 0) break;
  }
  free(fields);
  return changed;
}

/* A shallow copy with the changed fields set, or unchanged. */
static TVMFFIAny mutate_fields(void* mutator, TVMFFIAny value, int free_var) {
  FrTraversal* t = (FrTraversal*)mutator;
  TVMFFIAny shallow = fr_type_attr_entry(g_shallow_copy, value.type_index), copy, error;
  int32_t saved = t->region;
  int changed;
  if (shallow.type_index != kTVMFFIFunction) {
    fr_raise("TypeError", "__ffi_shallow_copy__ must be an ffi.Function");
    return error_now();
  }
  copy = fr_s_call(shallow.v_obj, &value, 1);
  if (is_error(&copy)) return copy;
  if (copy.type_index != value.type_index || copy.v_obj == value.v_obj) {
    fr_any_release(&copy);
    fr_raise("TypeError",
             "Shallow copy callback must return a distinct object with the same type as its "
             "input");
    return error_now();
  }
  if (free_var && saved == kTVMFFIDefRegionKindSimple) t->region = kTVMFFIDefRegionKindNone;
  changed = mutate_copy_fields(mutator, copy.v_obj, &error);
  t->region = saved;
  if (changed <= 0) {
    fr_any_release(&copy);
    return changed < 0 ? error : unchanged();
  }
  return copy;
}

static TVMFFIAny default_mutate(void* mutator, TVMFFIAny value);

static TVMFFIAny mutate_object(void* mutator, TVMFFIAny value) {
  FrTraversal* t = (FrTraversal*)mutator;
  int32_t kind = fr_s_kind_or_unsupported(value.type_index);
  int free_var = kind == kTVMFFISEqHashKindFreeVar, dag = kind == kTVMFFISEqHashKindDAGNode;
  TVMFFIAny result;
  if (free_var || dag) {
    TVMFFIAny recorded = vtable_of(mutator)->var_remap_get(mutator, value);
    if (recorded.type_index != kTVMFFINone) return recorded;
  }
  if (free_var && t->region == kTVMFFIDefRegionKindNone) return unchanged();
  result = mutate_fields(mutator, value, free_var);
  if (is_error(&result)) return result;
  if (dag || (free_var && (t->region == kTVMFFIDefRegionKindPattern || !is_unchanged(&result)))) {
    TVMFFIAny set = vtable_of(mutator)->var_remap_set(mutator, value, result);
    if (is_error(&set)) {
      fr_any_release(&result);
      return set;
    }
  }
  return result;
}

static TVMFFIAny default_mutate(void* mutator, TVMFFIAny value) {
  TVMFFIAny hook = fr_type_attr_entry(g_mutate, value.type_index), result;
  if (hook.type_index != kTVMFFINone) result = call_hook(mutator, hook, value);
  else if (value.type_index < kTVMFFIStaticObjectBegin) return value;
  else result = mutate_object(mutator, value);
  fr_s_record_visit(&result, &value);
  return result;
}

static TVMFFIAny default_mutate_mode(void* mutator, TVMFFIAny value, int inplace) {
  if (inplace == ALLOW) {
    TVMFFIAny hook = fr_type_attr_entry(g_inplace, value.type_index), result;
    if (hook.type_index == kTVMFFIOpaquePtr || hook.type_index == kTVMFFIFunction) {
      result = call_hook(mutator, hook, value);
      fr_s_record_visit(&result, &value);
      return result;
    }
  }
  return default_mutate(mutator, value);
}

/* ------------------------------------------------------------ the variable remap */

static TVMFFIAny remap_key_error(void) {
  fr_raise("TypeError", "Variable-remap key must be an object-backed value");
  return error_now();
}

static TVMFFIAny remap_get(void* self, TVMFFIAny var) {
  Mutator* m = (Mutator*)self;
  FrPtrSlot* slot;
  if (var.type_index < kTVMFFIStaticObjectBegin) return remap_key_error();
  slot = fr_ptrmap_find(&m->remap, var.v_obj, NULL);
  return slot == NULL ? fr_any_none() : fr_any_copy(&m->remap_values[slot->value]);
}

static TVMFFIAny remap_set(void* self, TVMFFIAny var, TVMFFIAny mapped) {
  Mutator* m = (Mutator*)self;
  FrPtrSlot* slot;
  TVMFFIAny owned;
  if (var.type_index < kTVMFFIStaticObjectBegin) return remap_key_error();
  if (fr_any_view_to_owned(&mapped, &owned) != 0) return error_now();
  slot = fr_ptrmap_find(&m->remap, var.v_obj, NULL);
  if (slot != NULL) {
    fr_any_release(&m->remap_values[slot->value]);
    m->remap_values[slot->value] = owned;
    return fr_any_none();
  }
  if (m->n_remap == m->cap_remap) {
    size_t capacity = m->cap_remap == 0 ? 16 : m->cap_remap * 2;
    TVMFFIAny* values = (TVMFFIAny*)realloc(m->remap_values, capacity * sizeof(TVMFFIAny));
    void** keys = values == NULL ? NULL : (void**)realloc(m->remap_keys, capacity * sizeof(void*));
    if (values != NULL) m->remap_values = values;
    if (keys == NULL) {
      fr_any_release(&owned);
      fr_raise_oom();
      return error_now();
    }
    m->remap_keys = keys;
    m->cap_remap = capacity;
  }
  if (fr_ptrmap_put(&m->remap, var.v_obj, NULL, m->n_remap) != 0) {
    fr_any_release(&owned);
    return error_now();
  }
  fr_incref(var.v_obj);
  m->remap_keys[m->n_remap] = var.v_obj;
  m->remap_values[m->n_remap++] = owned;
  return fr_any_none();
}

/* ------------------------------------------------------------ the engines */

/* The matching map callback's owned result; *matched 0 when no entry matches. */
static TVMFFIAny map_callback(Mutator* m, TVMFFIAny value, int* matched) {
  const FrCallbackEntry* entry = fr_s_find_entry(m->callbacks, m->n_callbacks, value.type_index);
  TVMFFIAny args[2], result;
  int32_t n = 1;
  *matched = 1;
  args[0] = value;
  if (entry == NULL) {
    entry = fr_s_find_entry(m->with_kind, m->n_with_kind, value.type_index);
    if (entry == NULL) {
      *matched = 0;
      return fr_any_none();
    }
    args[1] = fr_any_int(m->base.region);
    n = 2;
  }
  result = fr_s_call(entry->fn, args, n);
  fr_s_record_visit(&result, &value);
  return result;
}

static TVMFFIAny map_dispatch(void* self, TVMFFIAny value, int inplace) {
  Mutator* m = (Mutator*)self;
  TVMFFIAny out, mapped, descent;
  int matched;
  if (!m->pre_order) {
    out = default_mutate_mode(self, value, inplace);
    if (is_error(&out)) return out;
    mapped = map_callback(m, is_unchanged(&out) ? value : out, &matched);
    if (!matched || is_unchanged(&mapped)) return out;
    fr_any_release(&out); /* the marker holds nothing */
    return mapped;
  }
  mapped = map_callback(m, value, &matched);
  if (!matched) return default_mutate_mode(self, value, inplace);
  if (is_error(&mapped)) return mapped;
  descent = is_unchanged(&mapped) ? value : mapped;
  if (inplace == ALLOW && !same_as(&descent, &value)) {
    inplace = descent.type_index >= kTVMFFIStaticObjectBegin && fr_strong_count(descent.v_obj) == 1
                  ? ALLOW
                  : DISALLOW;
  }
  out = default_mutate_mode(self, descent, inplace);
  if (is_error(&out) || !is_unchanged(&out)) {
    fr_any_release(&mapped);
    return out;
  }
  return mapped;
}

static TVMFFIAny map_mutate(void* self, TVMFFIAny value) {
  Mutator* m = (Mutator*)self;
  TVMFFIAny out;
  if (m->depth >= FR_S_MAX_DEPTH) {
    fr_s_too_deep("StructuralMutate");
    return error_now();
  }
  m->depth++;
  out = map_dispatch(self, value, DISALLOW);
  m->depth--;
  return out;
}

static TVMFFIAny map_inplace(void* self, TVMFFIAny value) {
  Mutator* m = (Mutator*)self;
  TVMFFIAny out;
  if (m->depth >= FR_S_MAX_DEPTH) {
    fr_s_too_deep("StructuralMutate");
    return error_now();
  }
  m->depth++;
  out = map_dispatch(self, value, ALLOW);
  m->depth--;
  return out;
}

static TVMFFIAny callback_dispatch(void* self, TVMFFIAny value, int inplace) {
  Mutator* m = (Mutator*)self;
  const FrCallbackEntry* entry = fr_s_find_entry(m->callbacks, m->n_callbacks, value.type_index);
  TVMFFIAny args[3], result;
  if (entry == NULL) return default_mutate_mode(self, value, inplace);
  args[0] = value;
  args[1] = fr_object_view(self);
  args[2] = fr_any_int(inplace);
  result = fr_s_call(entry->fn, args, entry->flag ? 3 : 2);
  fr_s_record_visit(&result, &value);
  return result;
}

static TVMFFIAny callback_mutate(void* self, TVMFFIAny value) {
  Mutator* m = (Mutator*)self;
  TVMFFIAny out;
  if (m->depth >= FR_S_MAX_DEPTH) {
    fr_s_too_deep("StructuralMutate");
    return error_now();
  }
  m->depth++;
  out = callback_dispatch(self, value, DISALLOW);
  m->depth--;
  return out;
}

static TVMFFIAny callback_inplace(void* self, TVMFFIAny value) {
  Mutator* m = (Mutator*)self;
  TVMFFIAny out;
  if (m->depth >= FR_S_MAX_DEPTH) {
    fr_s_too_deep("StructuralMutate");
    return error_now();
  }
  m->depth++;
  out = callback_dispatch(self, value, ALLOW);
  m->depth--;
  return out;
}

static const FrMutatorVTable kMapVTable = {map_mutate, map_inplace, remap_get, remap_set};
static const FrMutatorVTable kCallbackVTable = {callback_mutate, callback_inplace, remap_get,
                                                remap_set};

static void mutator_deleter(void* self, int flags) {
  Mutator* m = (Mutator*)self;
  size_t i;
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    for (i = 0; i < m->n_remap; ++i) {
      fr_decref(m->remap_keys[i]);
      fr_any_release(&m->remap_values[i]);
    }
    free(m->remap_keys);
    free(m->remap_values);
    fr_ptrmap_free(&m->remap);
    free(m->callbacks);
    free(m->with_kind);
    for (i = 0; i < 2; ++i) {
      if (m->lists[i] != NULL) fr_decref(m->lists[i]);
    }
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) free(self);
}

static Mutator* mutator_new(const FrMutatorVTable* vtable, void* callbacks, int width,
                            void* with_kind) {
  Mutator* m = (Mutator*)fr_object_alloc(sizeof(Mutator), g_mutator_index, mutator_deleter);
  if (m == NULL) return NULL;
  m->base.vtable = vtable;
  m->lists[0] = callbacks;
  m->lists[1] = with_kind;
  fr_incref(callbacks);
  if (with_kind != NULL) fr_incref(with_kind);
  if (fr_s_entries(callbacks, width, &m->callbacks, &m->n_callbacks) != 0 ||
      (with_kind != NULL && fr_s_entries(with_kind, 2, &m->with_kind, &m->n_with_kind) != 0)) {
    fr_decref(m);
    return NULL;
  }
  return m;
}

/* ------------------------------------------------------------ native hooks */

static TVMFFIAny keep(void* mutator, TVMFFIAny value) {
  (void)mutator;
  (void)value;
  return unchanged();
}

/* Copy-on-write over a sequence: copied at the first changed element. */
static TVMFFIAny mutate_sequence(void* mutator, TVMFFIAny value) {
  void* seq = value.v_obj;
  int64_t n = fr_seq_size(seq), i, j;
  for (i = 0; i < n; ++i) {
    const TVMFFIAny* item = &fr_seq_items(seq)[i];
    TVMFFIAny result = mutate(mutator, *item, DISALLOW);
    void* copy;
    if (is_error(&result)) return result;
    if (is_unchanged(&result) || same_as(&result, item)) {
      fr_any_release(&result);
      continue;
    }
    copy = value.type_index == kTVMFFIArray ? fr_array_new(n) : fr_list_new(n);
    if (copy == NULL) {
      fr_any_release(&result);
      return error_now();
    }
    for (j = 0; j < i; ++j) fr_seq_items(copy)[j] = fr_any_copy(&fr_seq_items(seq)[j]);
    fr_seq_items(copy)[i] = result;
    ((FrSeq*)copy)->cell.size = i + 1;
    for (j = i + 1; j < n; ++j) {
      const TVMFFIAny* rest = &fr_seq_items(seq)[j];
      TVMFFIAny mapped = mutate(mutator, *rest, DISALLOW);
      if (is_error(&mapped)) {
        fr_decref(copy);
        return mapped;
      }
      fr_seq_items(copy)[j] = value_or(mapped, rest);
      ((FrSeq*)copy)->cell.size = j + 1;
    }
    return fr_any_object(copy);
  }
  return unchanged();
}

static TVMFFIAny mutate_sequence_in_place(void* mutator, TVMFFIAny value) {
  void* seq = value.v_obj;
  int64_t i;
  for (i = 0; i < fr_seq_size(seq); ++i) {
    TVMFFIAny* item = &fr_seq_items(seq)[i];
    TVMFFIAny result = mutate(mutator, *item, ALLOW);
    if (is_error(&result)) return result;
    item = &fr_seq_items(seq)[i];
    if (!is_unchanged(&result) && !same_as(&result, item)) {
      TVMFFIAny old = *item;
      *item = result;
      fr_any_release(&old);
    } else {
      fr_any_release(&result);
    }
  }
  return unchanged();
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
    TVMFFIAny result = mutate(mutator, *item, DISALLOW);
    void* copy;
    if (is_error(&result)) return result;
    if (is_unchanged(&result) || same_as(&result, item)) {
      fr_any_release(&result);
      continue;
    }
    copy = fr_map_copy(map, value.type_index);
    if (copy == NULL) {
      fr_any_release(&result);
      return error_now();
    }
    /* the copy has the same layout: the same positions walk it in the same order */
    copy_it = it;
    replace_value(&fr_map_entry(copy, copy_it)->value, result);
    for (it = fr_map_next(map, it); it != end; it = fr_map_next(map, it)) {
      const TVMFFIAny* rest = &fr_map_entry(map, it)->value;
      TVMFFIAny mapped = mutate(mutator, *rest, DISALLOW);
      if (is_error(&mapped)) {
        fr_decref(copy);
        return mapped;
      }
      if (!is_unchanged(&mapped) && !same_as(&mapped, rest)) {
        replace_value(&fr_map_entry(copy, it)->value, mapped);
      } else {
        fr_any_release(&mapped);
      }
    }
    return fr_any_object(copy);
  }
  return unchanged();
}

static TVMFFIAny mutate_map_values_in_place(void* mutator, TVMFFIAny value) {
  void* map = value.v_obj;
  uint64_t it, end = fr_map_end(map);
  for (it = fr_map_begin(map); it != end; it = fr_map_next(map, it)) {
    TVMFFIAny* item = &fr_map_entry(map, it)->value;
    TVMFFIAny result = mutate(mutator, *item, ALLOW);
    if (is_error(&result)) return result;
    item = &fr_map_entry(map, it)->value;
    if (!is_unchanged(&result) && !same_as(&result, item)) {
      replace_value(item, result);
    } else {
      fr_any_release(&result);
    }
  }
  return unchanged();
}

int fr_structural_mutate_init(void) {
  static const TVMFFIByteArray kMutator = {"ffi.StructuralMutator", 21};
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
  if (fr_type_key_to_index(&kMutator, &g_mutator_index) != 0 ||
      fr_register_attr_cstr(kTVMFFINone, "__s_mutate__", NULL) != 0 ||
      fr_register_attr_cstr(kTVMFFINone, "__s_maybe_inplace_mutate__", NULL) != 0) {
    return -1;
  }
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
  g_mutate = fr_s_column("__s_mutate__");
  g_inplace = fr_s_column("__s_maybe_inplace_mutate__");
  g_shallow_copy = fr_s_column("__ffi_shallow_copy__");
  return 0;
}

/* ------------------------------------------------------------ globals */

/* The result of a mutation of a view: an unchanged value is returned owned (a raw C string
 * becomes a String, as a view converted to Any does). */
static int finish_view_mutation(TVMFFIAny result, const TVMFFIAny* view, TVMFFIAny* rv) {
  if (is_error(&result)) return fr_s_finish(result, rv);
  if (is_unchanged(&result)) return fr_any_view_to_owned(view, rv);
  *rv = result;
  return 0;
}

static int mutator_mutate(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  (void)ctx;
  return finish_view_mutation(mutate(args[0].value.v_obj, args[1].value, DISALLOW),
                              &args[1].value, rv);
}

static int mutator_default_mutate(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  (void)ctx;
  return finish_view_mutation(default_mutate(args[0].value.v_obj, args[1].value),
                              &args[1].value, rv);
}

static int mutator_remap_get(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  (void)ctx;
  return fr_s_finish(vtable_of(args[0].value.v_obj)->var_remap_get(args[0].value.v_obj,
                                                                   args[1].value), rv);
}

static int mutator_remap_set(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  (void)ctx;
  return fr_s_finish(vtable_of(args[0].value.v_obj)->var_remap_set(args[0].value.v_obj,
                                                                   args[1].value, args[2].value),
                     rv);
}

static int mutator_region(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  (void)ctx;
  *rv = fr_any_int(((FrTraversal*)args[0].value.v_obj)->region);
  return 0;
}

static int mutator_with_region(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  (void)ctx;
  return fr_s_with_region((FrTraversal*)args[0].value.v_obj, (int32_t)args[1].value.v_int64,
                          args[2].value.v_obj, rv);
}

static int run(Mutator* m, const TVMFFIAny* root, TVMFFIAny* rv) {
  TVMFFIAny result;
  if (m == NULL) return -1;
  result = mutate(m, *root, ALLOW);
  fr_decref(m);
  if (is_error(&result)) return fr_s_finish(result, rv);
  *rv = value_or(result, root);
  return 0;
}

static int structural_map(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  Mutator* m = mutator_new(&kMapVTable, args[1].value.v_obj, 2, args[2].value.v_obj);
  (void)ctx;
  if (m != NULL) m->pre_order = args[3].value.v_int64 == 0;
  return run(m, &args[0].value, rv);
}

static int structural_mutate(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  (void)ctx;
  return run(mutator_new(&kCallbackVTable, args[1].value.v_obj, 3, NULL), &args[0].value, rv);
}

int fr_structural_mutate_globals(void) {
  static const FrBuiltin kBuiltins[] = {
      {"ffi.StructuralMutatorMutate", mutator_mutate, NULL, 2, {FR_T_MUTATOR, FR_T_ANYVIEW},
       FR_T_ANY},
      {"ffi.StructuralMutatorDefaultMutate", mutator_default_mutate, NULL, 2,
       {FR_T_MUTATOR, FR_T_ANYVIEW}, FR_T_ANY},
      {"ffi.StructuralMutatorVarRemapGet", mutator_remap_get, NULL, 2,
       {FR_T_MUTATOR, FR_T_ANYVIEW}, FR_T_ANY},
      {"ffi.StructuralMutatorVarRemapSet", mutator_remap_set, NULL, 3,
       {FR_T_MUTATOR, FR_T_ANYVIEW, FR_T_ANYVIEW}, FR_T_VOID},
      {"ffi.StructuralMutatorDefRegionKind", mutator_region, NULL, 1, {FR_T_MUTATOR}, FR_T_INT},
      {"ffi.StructuralMutatorWithDefRegionKind", mutator_with_region, NULL, 3,
       {FR_T_MUTATOR, FR_T_INT, FR_T_FUNCTION}, FR_T_ANY},
      {"ffi.StructuralMap", structural_map, NULL, 4,
       {FR_T_ANY, FR_T_CALLBACKS, FR_T_CALLBACKS, FR_T_INT}, FR_T_ANY},
      {"ffi.StructuralMutate", structural_mutate, NULL, 2, {FR_T_ANY, FR_T_MUTATE_CALLBACKS},
       FR_T_ANY},
  };
  return fr_register_builtins(kBuiltins, sizeof(kBuiltins) / sizeof(kBuiltins[0]));
}
