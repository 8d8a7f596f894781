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
  FrPtrMap copies;       /* original -> index into `made`, or IN_PROGRESS */
  TVMFFIAny* made;       /* the copies, owned, with their originals in `originals` */
  void** originals;
  size_t n_made;
  size_t cap_made;
  int deferred;
} Copier;

/* An Array or Map whose children are being copied (one table: one lookup a value). */
#define IN_PROGRESS UINT64_MAX

static const TVMFFITypeAttrColumn* g_shallow_copy = NULL;
static int32_t g_enum = -1;

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

/* Records the copy (owned, consumed) of original; in the table only when it can be met again
 * (an unshared original cannot). */
static int remember(Copier* c, void* original, TVMFFIAny copy, int unshared) {
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
  if (unshared) {
    c->n_made++;
    return 0;
  }
  return fr_ptrmap_put(&c->copies, original, NULL, c->n_made++);
}

/* The copy made of original, or NULL (borrowed). */
static const TVMFFIAny* copy_of(const Copier* c, const TVMFFIAny* original) {
  FrPtrSlot* slot;
  if (!fr_any_is_object(original)) return NULL;
  slot = fr_ptrmap_find(&c->copies, original->v_obj, NULL);
  return slot == NULL || slot->value == IN_PROGRESS ? NULL : &c->made[slot->value];
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

/* ------------------------------------------------------------ the work list
 *
 * A container or object whose children must be copied is a frame on an explicit stack in heap
 * memory, not a C call: a chain a million levels deep costs no C stack. A frame hands out its
 * children one at a time; each child's copy (borrowed from the copier) is taken in by
 * frame_take, and the frame's end makes or yields its own copy. Arrays and Maps are rebuilt
 * from copied children (capacity max(4, n), as Array() then reserve); Lists, Dicts and objects
 * (through __ffi_shallow_copy__) are made when entered, so a cycle back finds them. */

enum { FRAME_IMMUTABLE, FRAME_MUTABLE, FRAME_OBJECT };

typedef struct {
  int kind;
  int unshared; /* the original has no other holder than its parent: never met again */
  void* obj; /* the original (fr_s_check_path reads it) */
  int32_t type_index;
  TVMFFIAny* items;  /* owned: the children (key, value, ... for maps) or the field values */
  size_t n, index;
  TVMFFIAny* copies; /* FRAME_IMMUTABLE: the children's copies (borrowed) */
  size_t slot;       /* FRAME_MUTABLE, FRAME_OBJECT: the copy's index in c->made */
  TVMFFIAny key;     /* a Dict entry's copied key while its value is copied (borrowed) */
  const TVMFFIFieldInfo** fields;
} CopyFrame;

typedef struct {
  CopyFrame* frames;
  size_t n, capacity;
} CopyStack;

static void drop_frame(CopyFrame* f) {
  if (f->items != NULL) release_all(f->items, f->n);
  free(f->copies);
  free(f->fields);
}

static CopyFrame* push_frame(CopyStack* st, int kind, void* obj, int32_t ti, int unshared) {
  CopyFrame* f;
  CopyFrame* frames =
      (CopyFrame*)fr_s_stack_room(st->frames, st->n, &st->capacity, sizeof(CopyFrame));
  if (frames == NULL) return NULL;
  st->frames = frames;
  f = &frames[st->n++];
  memset(f, 0, sizeof(*f));
  f->kind = kind;
  f->unshared = unshared;
  f->obj = obj;
  f->type_index = ti;
  if (fr_s_check_path("DeepCopy", st->frames, st->n, sizeof(CopyFrame),
                      offsetof(CopyFrame, obj)) != 0) {
    st->n--;
    return NULL;
  }
  return f;
}

/* An Array or Map: its children copied first (it is in progress meanwhile). */
static int start_immutable(Copier* c, CopyStack* st, void* obj, int32_t ti, int unshared) {
  CopyFrame* f = push_frame(st, FRAME_IMMUTABLE, obj, ti, unshared);
  if (f == NULL) return -1;
  if (children(obj, ti == kTVMFFIMap, &f->items, &f->n) != 0) return -1;
  f->copies = (TVMFFIAny*)malloc((f->n + 1) * sizeof(TVMFFIAny));
  if (f->copies == NULL) return fr_raise_oom();
  if (unshared) return 1;
  return fr_ptrmap_put(&c->copies, obj, NULL, IN_PROGRESS) != 0 ? -1 : 1;
}

/* A List or Dict made empty first (so a cycle back finds it), then filled. */
static int start_mutable(Copier* c, CopyStack* st, void* obj, int32_t ti, int unshared) {
  CopyFrame* f = push_frame(st, FRAME_MUTABLE, obj, ti, unshared);
  void* made;
  if (f == NULL) return -1;
  if (children(obj, ti == kTVMFFIDict, &f->items, &f->n) != 0) return -1;
  made = ti == kTVMFFIList ? fr_list_new(0) : fr_map_new(kTVMFFIDict);
  if (made == NULL) return -1;
  if (ti == kTVMFFIList && fr_list_reserve(made, (int64_t)f->n) != 0) {
    fr_decref(made);
    return -1;
  }
  if (remember(c, obj, fr_any_object(made), unshared) != 0) return -1;
  f->slot = c->n_made - 1;
  return 1;
}

/* An object: its field values read, then shallow-copied; each field whose copy differs is set
 * on the copy as it comes. */
static int start_object(Copier* c, CopyStack* st, void* obj, int32_t ti, int unshared) {
  CopyFrame* f = push_frame(st, FRAME_OBJECT, obj, ti, unshared);
  TVMFFIAny entry, copy, self;
  size_t n;
  if (f == NULL) return -1;
  if (fr_collect_fields(ti, 0, &f->fields, &n) != 0) return -1;
  f->items = (TVMFFIAny*)malloc((n + 1) * sizeof(TVMFFIAny));
  if (f->items == NULL) return fr_raise_oom();
  for (; f->n < n; ++f->n) {
    if (fr_read_field(obj, f->fields[f->n], &f->items[f->n]) != 0) return -1;
  }
  entry = fr_type_attr_entry(g_shallow_copy, ti);
  if (entry.type_index != kTVMFFIFunction) {
    return fr_raise("InternalError",
                    "Check failed: (copy_fn.has_value()) is false: Cannot deep copy object of "
                    "type \"%s\" because it is not copy-constructible",
                    fr_type_key_of(ti));
  }
  self = fr_object_view(obj);
  if (fr_call(entry.v_obj, &self, 1, &copy) != 0 || remember(c, obj, copy, unshared) != 0) {
    return -1;
  }
  f = &st->frames[st->n - 1]; /* the copy hook may not touch this stack, but be exact */
  f->slot = c->n_made - 1;
  return 1;
}

static int same_as(const TVMFFIAny* a, const TVMFFIAny* b) {
  return a->type_index == b->type_index && a->v_int64 == b->v_int64;
}

/* The copy of a value that needs no frame (0, *out borrowed: owned by the copier, or value
 * itself); pushes a frame for the rest (1); or -1. held: the references the copier holds to
 * value itself (0 for the root). An object whose only other holder is the parent it was read
 * from is unshared: no other path and no cycle leads to it, so it is neither looked up nor
 * entered in the table (at a million objects each look-up is a cache miss). */
static int start(Copier* c, CopyStack* st, const TVMFFIAny* value, uint32_t held,
                 TVMFFIAny* out) {
  int32_t ti = value->type_index;
  FrPtrSlot* slot = NULL;
  int unshared;
  *out = *value;
  if (ti < kTVMFFIStaticObjectBegin) return 0;
  unshared = held > 0 && fr_strong_count(value->v_obj) == held + 1;
  if (!unshared) slot = fr_ptrmap_find(&c->copies, value->v_obj, NULL);
  if (slot != NULL) {
    if (slot->value == IN_PROGRESS) c->deferred = 1; /* it stands in for itself until fixed */
    else *out = c->made[slot->value];
    return 0;
  }
  if (ti == kTVMFFIStr || ti == kTVMFFIBytes || ti == kTVMFFIShape || ti == kTVMFFIBigInt ||
      is_enum(ti)) {
    return 0;
  }
  if (ti == kTVMFFIArray || ti == kTVMFFIMap) {
    return start_immutable(c, st, value->v_obj, ti, unshared);
  }
  if (ti == kTVMFFIList || ti == kTVMFFIDict) {
    return start_mutable(c, st, value->v_obj, ti, unshared);
  }
  return start_object(c, st, value->v_obj, ti, unshared);
}

/* The copy of the frame's child index - 1, taken in. */
static int frame_take(Copier* c, CopyFrame* f, const TVMFFIAny* copied) {
  size_t i = f->index - 1;
  if (f->kind == FRAME_IMMUTABLE) {
    f->copies[i] = *copied;
    return 0;
  }
  if (f->kind == FRAME_OBJECT) {
    const TVMFFIFieldInfo* field = f->fields[i];
    char* addr = (char*)c->made[f->slot].v_obj + field->offset;
    int32_t ti = copied->type_index;
    if (same_as(&f->items[i], copied)) return 0;
    /* A field stored as an object pointer (static type ffi.Object, or a user type) takes the
     * copy of what it held, of the same type: the assignment a setter would make, without a
     * converter's round trip (a py_class setter converts through Python). Not the container
     * indices: C++ STL fields (std::vector, std::map) report those with other storage. */
    if ((field->field_static_type_index == kTVMFFIObject ||
         field->field_static_type_index >= kTVMFFIStaticObjectEnd) &&
        ti == f->items[i].type_index && fr_any_is_object(copied)) {
      void* old = *(void**)addr;
      fr_incref(copied->v_obj);
      *(void**)addr = copied->v_obj;
      if (old != NULL) fr_decref(old);
      return 0;
    }
    return fr_call_field_setter(field, addr, copied);
  }
  {
    void* target = c->made[f->slot].v_obj;
    if (f->type_index == kTVMFFIList) {
      fr_seq_items(target)[((FrSeq*)target)->cell.size++] = fr_any_copy(copied);
      return 0;
    }
    if (i % 2 == 0) {
      f->key = *copied;
      return 0;
    }
    return fr_map_set(&target, fr_any_copy(&f->key), fr_any_copy(copied));
  }
}

/* The end of a frame: an Array or Map made from its copied children; the copy into *out. */
static int frame_finish(Copier* c, CopyFrame* f, TVMFFIAny* out) {
  void* made;
  size_t i, n = f->n;
  if (f->kind != FRAME_IMMUTABLE) {
    *out = c->made[f->slot];
    return 0;
  }
  if (f->type_index == kTVMFFIArray) {
    made = fr_array_new(n > 4 ? (int64_t)n : 4);
    for (i = 0; made != NULL && i < n; ++i) {
      fr_array_push_unchecked(made, fr_any_copy(&f->copies[i]));
    }
  } else {
    made = fr_map_new(kTVMFFIMap);
    for (i = 0; made != NULL && i < n; i += 2) {
      if (fr_map_set(&made, fr_any_copy(&f->copies[i]), fr_any_copy(&f->copies[i + 1])) != 0) {
        fr_decref(made);
        made = NULL;
      }
    }
  }
  if (made == NULL || remember(c, f->obj, fr_any_object(made), f->unshared) != 0) return -1;
  *out = c->made[c->n_made - 1];
  return 0;
}

/* The references the copier holds to a frame's current child: the frame's own, and for an
 * object the shallow copy's field while it still holds the original (-1 on error). */
static int held_by_copier(Copier* c, CopyFrame* f, const TVMFFIAny* child) {
  TVMFFIAny in_copy;
  int same;
  if (f->kind != FRAME_OBJECT || !fr_any_is_object(child)) return 1;
  if (fr_read_field(c->made[f->slot].v_obj, f->fields[f->index - 1], &in_copy) != 0) return -1;
  same = same_as(&in_copy, child);
  fr_any_release(&in_copy);
  return same ? 2 : 1;
}

/* The copy of a value (borrowed: owned by the copier, or value itself). */
static int copy_value(Copier* c, const TVMFFIAny* value, TVMFFIAny* out) {
  CopyStack st = {NULL, 0, 0};
  TVMFFIAny copied;
  int status = start(c, &st, value, 0, out);
  while (status > 0 && st.n > 0) {
    CopyFrame* f = &st.frames[st.n - 1];
    if (f->index < f->n) {
      const TVMFFIAny* child = &f->items[f->index++];
      int held = held_by_copier(c, f, child);
      status = held < 0 ? -1 : start(c, &st, child, (uint32_t)held, &copied);
      if (status != 0) continue; /* a frame was pushed (1), or an error (-1) */
    } else {
      status = frame_finish(c, f, &copied);
      if (status != 0) break;
      drop_frame(f);
      if (--st.n == 0) {
        *out = copied;
        break;
      }
    }
    status = frame_take(c, &st.frames[st.n - 1], &copied);
    if (status == 0) status = 1;
  }
  /* an error leaves frames (and IN_PROGRESS marks: the copy is abandoned) */
  while (st.n > 0) {
    CopyFrame* f = &st.frames[--st.n];
    drop_frame(f);
  }
  free(st.frames);
  return status < 0 ? -1 : 0;
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
