/*
 * deep_copy.c -- ffi.DeepCopy: a copy of a value graph sharing nothing mutable
 * with it, sharing and cycles kept.
 *
 * tvm_ffi_ref/runtime/deep_copy.py states the rules: immutable leaves are
 * kept; Arrays and Maps are rebuilt from their copied children; Lists, Dicts
 * and objects (through __ffi_shallow_copy__) are made first and filled; an
 * Array or Map met again while its children are copied stands in for itself
 * until the fix-up pass replaces it in the Lists, Dicts and objects that hold it.
 */
#include "structural.h"

#include "containers.h"
#include "functions.h"
#include "registry.h"
#include "runtime.h"
#include "walk.h"

typedef struct {
  FrPtrMap copies;       /* original -> index into `made` */
  TVMFFIAny* made;       /* the copies, owned, with their originals in `originals` */
  void** originals;
  size_t n_made;
  size_t cap_made;
  FrPtrMap in_progress;  /* Arrays and Maps whose children are being copied */
  int deferred;
  int depth;
} Copier;

static const TVMFFITypeAttrColumn* g_shallow_copy = NULL;
static int32_t g_enum = -1;

static int copy_value(Copier* c, const TVMFFIAny* value, TVMFFIAny* out);

static int is_enum(int32_t ti) {
  const TVMFFITypeInfo* info;
  int32_t d;
  if (ti == g_enum) return 1;
  info = ti >= kTVMFFIStaticObjectEnd ? fr_type_info_or_null(ti) : NULL;
  for (d = 0; info != NULL && d < info->type_depth; ++d) {
    if (info->type_ancestors[d]->type_index == g_enum) return 1;
  }
  return 0;
}

/* Records the copy (owned, consumed) of original. */
static int remember(Copier* c, void* original, TVMFFIAny copy) {
  if (c->n_made == c->cap_made) {
    size_t capacity = c->cap_made == 0 ? 16 : c->cap_made * 2;
    TVMFFIAny* made = (TVMFFIAny*)realloc(c->made, capacity * sizeof(TVMFFIAny));
    void** originals;
    if (made == NULL) {
      fr_any_release(&copy);
      return fr_raise_oom();
    }
    c->made = made;
    originals = (void**)realloc(c->originals, capacity * sizeof(void*));
    if (originals == NULL) {
      fr_any_release(&copy);
      return fr_raise_oom();
    }
    c->originals = originals;
    c->cap_made = capacity;
  }
  c->made[c->n_made] = copy;
  c->originals[c->n_made] = original;
  return fr_ptrmap_put(&c->copies, original, NULL, c->n_made++);
}

/* The copy made of original, or NULL (borrowed). */
static const TVMFFIAny* copy_of(const Copier* c, const TVMFFIAny* original) {
  FrPtrSlot* slot;
  if (!fr_any_is_object(original)) return NULL;
  slot = fr_ptrmap_find(&c->copies, original->v_obj, NULL);
  return slot == NULL ? NULL : &c->made[slot->value];
}

/* Owned copies of a container's children (key, value, ... for maps). */
static int children(void* obj, int is_map, TVMFFIAny** out, size_t* n) {
  size_t count = is_map ? (size_t)fr_map_size(obj) * 2 : (size_t)fr_seq_size(obj), i = 0;
  *out = (TVMFFIAny*)malloc((count + 1) * sizeof(TVMFFIAny));
  if (*out == NULL) return fr_raise_oom();
  if (is_map) {
    uint64_t it, end = fr_map_end(obj);
    for (it = fr_map_begin(obj); it != end; it = fr_map_next(obj, it)) {
      FrKV* kv = fr_map_entry(obj, it);
      (*out)[i++] = fr_any_copy(&kv->key);
      (*out)[i++] = fr_any_copy(&kv->value);
    }
  } else {
    for (i = 0; i < count; ++i) (*out)[i] = fr_any_copy(&fr_seq_items(obj)[i]);
  }
  *n = count;
  return 0;
}

static void release_all(TVMFFIAny* values, size_t n) {
  size_t i;
  for (i = 0; i < n; ++i) fr_any_release(&values[i]);
  free(values);
}

/* An Array (capacity max(4, n), as Array() then reserve) or Map rebuilt from copied children. */
static int copy_immutable(Copier* c, void* obj, int32_t ti, TVMFFIAny* out) {
  TVMFFIAny* items;
  TVMFFIAny* copies;
  size_t n, i;
  void* made = NULL;
  int status = 0;
  if (children(obj, ti == kTVMFFIMap, &items, &n) != 0) return -1;
  copies = (TVMFFIAny*)malloc((n + 1) * sizeof(TVMFFIAny)); /* borrowed from the copier */
  if (copies == NULL || fr_ptrmap_put(&c->in_progress, obj, NULL, 1) != 0) {
    free(copies);
    release_all(items, n);
    return copies == NULL ? fr_raise_oom() : -1;
  }
  for (i = 0; status == 0 && i < n; ++i) status = copy_value(c, &items[i], &copies[i]);
  fr_ptrmap_erase(&c->in_progress, obj, NULL);
  if (status == 0) {
    if (ti == kTVMFFIArray) {
      made = fr_array_new(n > 4 ? (int64_t)n : 4);
      for (i = 0; made != NULL && i < n; ++i) fr_array_push_unchecked(made, fr_any_copy(&copies[i]));
    } else {
      made = fr_map_new(kTVMFFIMap);
      for (i = 0; made != NULL && i < n; i += 2) {
        if (fr_map_set(&made, fr_any_copy(&copies[i]), fr_any_copy(&copies[i + 1])) != 0) {
          fr_decref(made);
          made = NULL;
        }
      }
    }
  }
  free(copies);
  release_all(items, n);
  if (status != 0 || made == NULL || remember(c, obj, fr_any_object(made)) != 0) return -1;
  *out = c->made[c->n_made - 1];
  return 0;
}

/* A List or Dict made empty first (so a cycle back finds it), then filled. */
static int copy_mutable(Copier* c, void* obj, int32_t ti, TVMFFIAny* out) {
  TVMFFIAny* items;
  size_t n, i, slot;
  void* made;
  int status = 0;
  if (children(obj, ti == kTVMFFIDict, &items, &n) != 0) return -1;
  made = ti == kTVMFFIList ? fr_list_new(0) : fr_map_new(kTVMFFIDict);
  if (made == NULL || (ti == kTVMFFIList && fr_list_reserve(made, (int64_t)n) != 0) ||
      remember(c, obj, fr_any_object(made)) != 0) {
    release_all(items, n);
    return -1;
  }
  slot = c->n_made - 1;
  for (i = 0; status == 0 && i < n; i += ti == kTVMFFIList ? 1 : 2) {
    TVMFFIAny key, value;
    void* target = c->made[slot].v_obj;
    status = copy_value(c, &items[i], &key);
    if (status != 0) break;
    if (ti == kTVMFFIList) {
      fr_seq_items(target)[((FrSeq*)target)->cell.size++] = fr_any_copy(&key);
      continue;
    }
    status = copy_value(c, &items[i + 1], &value);
    if (status == 0) status = fr_map_set(&target, fr_any_copy(&key), fr_any_copy(&value));
  }
  release_all(items, n);
  *out = c->made[slot];
  return status;
}

static int same_as(const TVMFFIAny* a, const TVMFFIAny* b) {
  return a->type_index == b->type_index && a->v_int64 == b->v_int64;
}

/* An object: shallow-copied, then each field whose copy differs set on the copy. */
static int copy_object(Copier* c, void* obj, int32_t ti, TVMFFIAny* out) {
  const TVMFFIFieldInfo** fields;
  TVMFFIAny* values;
  TVMFFIAny entry, copy;
  size_t n, i, read = 0, slot;
  int status = 0;
  if (fr_collect_fields(ti, 0, &fields, &n) != 0) return -1;
  values = (TVMFFIAny*)malloc((n + 1) * sizeof(TVMFFIAny));
  if (values == NULL) {
    free(fields);
    return fr_raise_oom();
  }
  for (; status == 0 && read < n; ++read) status = fr_read_field(obj, fields[read], &values[read]);
  entry = fr_type_attr_entry(g_shallow_copy, ti);
  if (status == 0 && entry.type_index != kTVMFFIFunction) {
    status = fr_raise("InternalError",
                      "Check failed: (copy_fn.has_value()) is false: Cannot deep copy object of "
                      "type \"%s\" because it is not copy-constructible",
                      fr_type_key_of(ti));
  }
  if (status == 0) {
    TVMFFIAny self = fr_object_view(obj);
    status = fr_call(entry.v_obj, &self, 1, &copy);
    if (status == 0) status = remember(c, obj, copy);
  }
  slot = c->n_made - 1;
  for (i = 0; status == 0 && i < n; ++i) {
    TVMFFIAny copied;
    status = copy_value(c, &values[i], &copied);
    if (status == 0 && !same_as(&values[i], &copied)) {
      status = fr_call_field_setter(fields[i], (char*)c->made[slot].v_obj + fields[i]->offset, &copied);
    }
  }
  release_all(values, read);
  free(fields);
  if (status == 0) *out = c->made[slot];
  return status;
}

/* The copy of a value (borrowed: owned by the copier, or value itself). */
static int copy_value(Copier* c, const TVMFFIAny* value, TVMFFIAny* out) {
  int32_t ti = value->type_index;
  const TVMFFIAny* made;
  int status;
  *out = *value;
  if (ti < kTVMFFIStaticObjectBegin) return 0;
  made = copy_of(c, value);
  if (made != NULL) {
    *out = *made;
    return 0;
  }
  if (fr_ptrmap_find(&c->in_progress, value->v_obj, NULL) != NULL) {
    c->deferred = 1;
    return 0;
  }
  if (ti == kTVMFFIStr || ti == kTVMFFIBytes || ti == kTVMFFIShape || ti == kTVMFFIBigInt ||
      is_enum(ti)) {
    return 0;
  }
  if (c->depth >= FR_S_MAX_DEPTH || tvm_ffi_runtime_stack_low()) return fr_s_too_deep("DeepCopy");
  c->depth++;
  if (ti == kTVMFFIArray || ti == kTVMFFIMap) status = copy_immutable(c, value->v_obj, ti, out);
  else if (ti == kTVMFFIList || ti == kTVMFFIDict) status = copy_mutable(c, value->v_obj, ti, out);
  else status = copy_object(c, value->v_obj, ti, out);
  c->depth--;
  return status;
}

/* ------------------------------------------------------------ the fix-ups */

static int fix_dict(Copier* c, void* dict) {
  uint64_t it, end = fr_map_end(dict);
  TVMFFIAny* fixes;
  size_t n = 0, i;
  int status = 0;
  fixes = (TVMFFIAny*)malloc(((size_t)fr_map_size(dict) * 3 + 1) * sizeof(TVMFFIAny));
  if (fixes == NULL) return fr_raise_oom();
  for (it = fr_map_begin(dict); it != end; it = fr_map_next(dict, it)) {
    FrKV* kv = fr_map_entry(dict, it);
    const TVMFFIAny* key = copy_of(c, &kv->key);
    const TVMFFIAny* value = copy_of(c, &kv->value);
    if (key == NULL && value == NULL) continue;
    fixes[n++] = fr_any_copy(&kv->key);
    fixes[n++] = fr_any_copy(key != NULL ? key : &kv->key);
    fixes[n++] = fr_any_copy(value != NULL ? value : &kv->value);
  }
  for (i = 0; status == 0 && i < n; i += 3) {
    status = fr_map_erase(dict, &fixes[i]);
    if (status == 0) status = fr_map_set(&dict, fr_any_copy(&fixes[i + 1]), fr_any_copy(&fixes[i + 2]));
  }
  release_all(fixes, n);
  return status;
}

static int fix_object(Copier* c, void* obj, int32_t ti) {
  const TVMFFIFieldInfo** fields;
  size_t n, i;
  int status = 0;
  if (fr_collect_fields(ti, 0, &fields, &n) != 0) return -1;
  for (i = 0; status == 0 && i < n; ++i) {
    TVMFFIAny value;
    const TVMFFIAny* made;
    status = fr_read_field(obj, fields[i], &value);
    if (status != 0) break;
    made = copy_of(c, &value);
    if (made != NULL && !same_as(made, &value)) {
      status = fr_call_field_setter(fields[i], (char*)obj + fields[i]->offset, made);
    }
    fr_any_release(&value);
  }
  free(fields);
  return status;
}

static int fix_deferred(Copier* c) {
  size_t k;
  for (k = 0; k < c->n_made; ++k) {
    const TVMFFIAny* copy = &c->made[k];
    int32_t ti = copy->type_index;
    if (ti == kTVMFFIList) {
      int64_t i;
      for (i = 0; i < fr_seq_size(copy->v_obj); ++i) {
        TVMFFIAny* item = &fr_seq_items(copy->v_obj)[i];
        const TVMFFIAny* made = copy_of(c, item);
        if (made != NULL) {
          TVMFFIAny old = *item;
          *item = fr_any_copy(made);
          fr_any_release(&old);
        }
      }
    } else if (ti == kTVMFFIDict) {
      if (fix_dict(c, copy->v_obj) != 0) return -1;
    } else if (ti >= kTVMFFIStaticObjectEnd) {
      if (fix_object(c, copy->v_obj, ti) != 0) return -1;
    }
  }
  return 0;
}

static int deep_copy(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  Copier c;
  TVMFFIAny result;
  size_t i;
  int status;
  (void)ctx;
  memset(&c, 0, sizeof(c));
  status = copy_value(&c, &args[0].value, &result);
  if (status == 0) *rv = fr_any_copy(&result);
  if (status == 0 && c.deferred) status = fix_deferred(&c);
  for (i = 0; i < c.n_made; ++i) fr_any_release(&c.made[i]);
  free(c.made);
  free(c.originals);
  fr_ptrmap_free(&c.copies);
  fr_ptrmap_free(&c.in_progress);
  if (status != 0 && rv->type_index != kTVMFFINone) fr_any_release(rv);
  return status;
}

int fr_deep_copy_globals(void) {
  static const FrBuiltin kBuiltins[] = {
      {"ffi.DeepCopy", deep_copy, NULL, 1, {FR_T_ANY}, FR_T_ANY},
  };
  static const TVMFFIByteArray kEnum = {"ffi.Enum", 8};
  if (fr_type_key_to_index(&kEnum, &g_enum) != 0) return -1;
  g_shallow_copy = fr_s_column("__ffi_shallow_copy__");
  return fr_register_builtins(kBuiltins, 1);
}
