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
 *
 * The native hooks of the built-in types are structural_mutate_hooks.c.
 */
#include "structural_mutate.h"

#include "containers.h"
#include "functions.h"
#include "registry.h"
#include "runtime.h"
#include "structural.h"
#include "walk.h"

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
  int is_callback; /* ffi.StructuralMutate's (else ffi.StructuralMap's) */
} Mutator;

enum { DISALLOW = 0, ALLOW = 1 };

static const TVMFFITypeAttrColumn* g_mutate = NULL;
static const TVMFFITypeAttrColumn* g_inplace = NULL;
static const TVMFFITypeAttrColumn* g_shallow_copy = NULL;
static int32_t g_mutator_index = -1;

/* ------------------------------------------------------------ default mutation */

static TVMFFIAny call_hook(void* mutator, TVMFFIAny hook, TVMFFIAny value) {
  TVMFFIAny args[2];
  if (hook.type_index == kTVMFFIOpaquePtr) return ((FrMutateFn)hook.v_ptr)(mutator, value);
  if (hook.type_index != kTVMFFIFunction) {
    fr_raise("TypeError", "__s_mutate__ must be a direct hook pointer or ffi.Function");
    return fr_s_raised();
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
    *error = fr_s_raised();
    return -1;
  }
  for (i = 0; i < n; ++i) {
    const TVMFFIFieldInfo* f = fields[i];
    TVMFFIAny child, result;
    int32_t saved = t->region;
    if (fr_read_field(copy, f, &child) != 0) {
      *error = fr_s_raised();
      changed = -1;
      break;
    }
    if (saved != kTVMFFIDefRegionKindPattern && (f->flags & (FR_S_DEF_SIMPLE | FR_S_DEF_PATTERN))) {
      t->region = (f->flags & FR_S_DEF_SIMPLE) ? kTVMFFIDefRegionKindSimple
                                               : kTVMFFIDefRegionKindPattern;
    }
    result = fr_s_mutate_expected(mutator, child, FR_S_DISALLOW);
    t->region = saved;
    if (fr_s_is_error(&result)) {
      *error = result;
      changed = -1;
    } else if (!fr_s_is_unchanged(&result) && !fr_s_same_as(&child, &result)) {
      if (f->setter == NULL) {
        fr_raise("TypeError",
                 "Cannot structurally mutate field `%.*s` of type `%s` because it does not define "
                 "a setter",
                 (int)f->name.size, f->name.data, fr_type_key_of(ti));
        *error = fr_s_raised();
        changed = -1;
      } else if (fr_call_field_setter(f, (char*)copy + f->offset, &result) != 0) {
        *error = fr_s_raised();
        changed = -1;
      } else {
        changed = 1;
      }
    }
    if (!fr_s_is_error(&result)) fr_any_release(&result);
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
    return fr_s_raised();
  }
  copy = fr_s_call(shallow.v_obj, &value, 1);
  if (fr_s_is_error(&copy)) return copy;
  if (copy.type_index != value.type_index || copy.v_obj == value.v_obj) {
    fr_any_release(&copy);
    fr_raise("TypeError",
             "Shallow copy callback must return a distinct object with the same type as its "
             "input");
    return fr_s_raised();
  }
  if (free_var && saved == kTVMFFIDefRegionKindSimple) t->region = kTVMFFIDefRegionKindNone;
  changed = mutate_copy_fields(mutator, copy.v_obj, &error);
  t->region = saved;
  if (changed <= 0) {
    fr_any_release(&copy);
    return changed < 0 ? error : fr_s_unchanged();
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
    TVMFFIAny recorded = fr_s_mutator_vtable(mutator)->var_remap_get(mutator, value);
    if (recorded.type_index != kTVMFFINone) return recorded;
  }
  if (free_var && t->region == kTVMFFIDefRegionKindNone) return fr_s_unchanged();
  result = mutate_fields(mutator, value, free_var);
  if (fr_s_is_error(&result)) return result;
  if (dag ||
      (free_var && (t->region == kTVMFFIDefRegionKindPattern || !fr_s_is_unchanged(&result)))) {
    TVMFFIAny set = fr_s_mutator_vtable(mutator)->var_remap_set(mutator, value, result);
    if (fr_s_is_error(&set)) {
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

/* Stores an owned value into a map entry's value slot, releasing the old one. */
static void replace_value(TVMFFIAny* slot, TVMFFIAny owned) {
  TVMFFIAny old = *slot;
  *slot = owned;
  fr_any_release(&old);
}

/* ------------------------------------------------------------ the variable remap */

static TVMFFIAny remap_key_error(void) {
  fr_raise("TypeError", "Variable-remap key must be an object-backed value");
  return fr_s_raised();
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
  if (fr_any_view_to_owned(&mapped, &owned) != 0) return fr_s_raised();
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
      return fr_s_raised();
    }
    m->remap_keys = keys;
    m->cap_remap = capacity;
  }
  if (fr_ptrmap_put(&m->remap, var.v_obj, NULL, m->n_remap) != 0) {
    fr_any_release(&owned);
    return fr_s_raised();
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

/*
 * The engine: one call mutates a value and everything below it over an explicit stack of
 * frames (a frame per container or reflected object whose children are mutated one at a
 * time; the rules are the native hooks' and mutate_object's above, in steps), so depth costs
 * heap, not C stack. Hooks that are not the built-in ones (a C++ or Function __s_mutate__, a
 * StructuralMutate callback) call back into a nested engine, as they nest calls upstream; the
 * C-stack check guards those.
 */
enum { D_SEQ, D_SEQ_INPLACE, D_MAP, D_MAP_INPLACE, D_FIELDS };
enum { AFTER_NONE, AFTER_POST_MAP, AFTER_PRE_COMBINE };

typedef struct {
  void* obj;        /* the object descended into (first: fr_s_check_path reads it) */
  TVMFFIAny value;  /* the value dispatched (borrowed) */
  TVMFFIAny target; /* the value the default mutation runs on: value, or mapped */
  TVMFFIAny mapped; /* AFTER_PRE_COMBINE: the callback's owned result */
  int after;
  int descent;
  int free_var, dag;  /* D_FIELDS: mutate_object's kind */
  int32_t region;     /* the region before the descent */
  int64_t i, n;       /* sequences */
  uint64_t it, cur;   /* maps: the next entry, the current child's */
  void* copy;         /* the copy being built (owned), or NULL */
  const TVMFFIFieldInfo** fields; /* D_FIELDS (owned) */
  size_t n_fields;
  const TVMFFIFieldInfo* field;   /* D_FIELDS: the current child's */
  TVMFFIAny child;                /* D_FIELDS: its value (owned) */
  int32_t child_region;
  int changed;
  TVMFFIAny error; /* an error result ending the descent, or none */
} MutFrame;

typedef struct {
  MutFrame* frames;
  size_t n;
  size_t capacity;
} MutStack;

static void* g_hook_seq = NULL;
static void* g_hook_seq_inplace = NULL;
static void* g_hook_map = NULL;
static void* g_hook_map_inplace = NULL;

/* The descent a built-in hook stands for, or -1. */
static int native_descent(const TVMFFIAny* hook) {
  if (hook->type_index != kTVMFFIOpaquePtr || hook->v_ptr == NULL) return -1;
  if (hook->v_ptr == g_hook_seq) return D_SEQ;
  if (hook->v_ptr == g_hook_seq_inplace) return D_SEQ_INPLACE;
  if (hook->v_ptr == g_hook_map) return D_MAP;
  if (hook->v_ptr == g_hook_map_inplace) return D_MAP_INPLACE;
  return -1;
}

/* The result of the whole dispatch of f->value once its default mutation gave out. */
static TVMFFIAny after_default(Mutator* m, MutFrame* f, TVMFFIAny out) {
  TVMFFIAny mapped;
  int matched;
  if (f->after == AFTER_POST_MAP) {
    if (fr_s_is_error(&out)) return out;
    mapped = map_callback(m, fr_s_is_unchanged(&out) ? f->value : out, &matched);
    if (!matched || fr_s_is_unchanged(&mapped)) return out;
    fr_any_release(&out);
    return mapped;
  }
  if (f->after == AFTER_PRE_COMBINE) {
    if (fr_s_is_error(&out) || !fr_s_is_unchanged(&out)) {
      fr_any_release(&f->mapped);
      return out;
    }
    return f->mapped;
  }
  return out;
}

/* Begins f's default mutation of f->target (default_mutate_mode's rules): 1 when a frame
 * (f, copied onto the stack) now mutates its children, 0 with *out its dispatch's result. */
static int begin_default(Mutator* m, MutStack* st, MutFrame* f, int inplace, TVMFFIAny* out) {
  FrTraversal* t = &m->base;
  TVMFFIAny target = f->target, hook, result;
  int descent = -1;
  if (inplace == FR_S_ALLOW) {
    hook = fr_type_attr_entry(g_inplace, target.type_index);
    if (hook.type_index == kTVMFFIOpaquePtr || hook.type_index == kTVMFFIFunction) {
      descent = native_descent(&hook);
      if (descent < 0) {
        result = call_hook(m, hook, target);
        fr_s_record_visit(&result, &target);
        *out = after_default(m, f, result);
        return 0;
      }
    }
  }
  if (descent < 0) {
    hook = fr_type_attr_entry(g_mutate, target.type_index);
    if (hook.type_index != kTVMFFINone) {
      descent = native_descent(&hook);
      if (descent < 0) {
        result = call_hook(m, hook, target);
        fr_s_record_visit(&result, &target);
        *out = after_default(m, f, result);
        return 0;
      }
    } else if (target.type_index < kTVMFFIStaticObjectBegin) {
      *out = after_default(m, f, target);
      return 0;
    }
  }
  f->region = t->region;
  f->error = fr_any_none();
  f->child = fr_any_none();
  f->obj = target.v_obj;
  if (descent < 0) { /* mutate_object's rules */
    int32_t kind = fr_s_kind_or_unsupported(target.type_index);
    TVMFFIAny shallow = fr_type_attr_entry(g_shallow_copy, target.type_index), copy;
    f->free_var = kind == kTVMFFISEqHashKindFreeVar;
    f->dag = kind == kTVMFFISEqHashKindDAGNode;
    result = fr_any_none();
    if (f->free_var || f->dag) {
      TVMFFIAny recorded = remap_get(m, target);
      if (recorded.type_index != kTVMFFINone) result = recorded;
    }
    if (result.type_index == kTVMFFINone && f->free_var && t->region == kTVMFFIDefRegionKindNone) {
      result = fr_s_unchanged();
    }
    if (result.type_index == kTVMFFINone) {
      if (shallow.type_index != kTVMFFIFunction) {
        fr_raise("TypeError", "__ffi_shallow_copy__ must be an ffi.Function");
        result = fr_s_raised();
      } else {
        copy = fr_s_call(shallow.v_obj, &target, 1);
        if (fr_s_is_error(&copy)) {
          result = copy;
        } else if (copy.type_index != target.type_index || copy.v_obj == target.v_obj) {
          fr_any_release(&copy);
          fr_raise("TypeError",
                   "Shallow copy callback must return a distinct object with the same type as "
                   "its input");
          result = fr_s_raised();
        } else {
          f->copy = copy.v_obj;
          if (fr_collect_fields(fr_type_index(f->copy), FR_S_IGNORE, &f->fields, &f->n_fields) !=
              0) {
            fr_decref(f->copy);
            f->copy = NULL;
            result = fr_s_raised();
          }
        }
      }
    }
    if (result.type_index != kTVMFFINone) {
      fr_s_record_visit(&result, &target);
      *out = after_default(m, f, result);
      return 0;
    }
    descent = D_FIELDS;
    if (f->free_var && t->region == kTVMFFIDefRegionKindSimple) {
      t->region = kTVMFFIDefRegionKindNone;
    }
  }
  f->descent = descent;
  if (descent == D_SEQ || descent == D_SEQ_INPLACE) f->n = fr_seq_size(target.v_obj);
  if (descent == D_MAP || descent == D_MAP_INPLACE) f->it = fr_map_begin(target.v_obj);
  {
    MutFrame* grown =
        (MutFrame*)fr_s_stack_room(st->frames, st->n, &st->capacity, sizeof(MutFrame));
    if (grown == NULL ||
        (st->frames = grown,
         st->frames[st->n++] = *f,
         fr_s_check_path("StructuralMutate", st->frames, st->n, sizeof(MutFrame),
                         offsetof(MutFrame, obj)) != 0)) {
      if (grown != NULL) st->n--;
      t->region = f->region;
      if (f->copy != NULL) fr_decref(f->copy);
      free((void*)f->fields);
      result = fr_s_raised();
      fr_s_record_visit(&result, &target);
      *out = after_default(m, f, result);
      return 0;
    }
  }
  return 1;
}

/* Dispatches value (map_dispatch / callback_dispatch's rules): 1 when a frame was pushed, 0
 * with *out the result. */
static int start(Mutator* m, MutStack* st, TVMFFIAny value, int inplace, TVMFFIAny* out) {
  MutFrame f;
  memset(&f, 0, sizeof(f));
  f.value = f.target = value;
  f.after = AFTER_NONE;
  if (m->is_callback) {
    const FrCallbackEntry* entry = fr_s_find_entry(m->callbacks, m->n_callbacks, value.type_index);
    if (entry != NULL) {
      TVMFFIAny args[3];
      args[0] = value;
      args[1] = fr_object_view(m);
      args[2] = fr_any_int(inplace);
      *out = fr_s_call(entry->fn, args, entry->flag ? 3 : 2);
      fr_s_record_visit(out, &value);
      return 0;
    }
  } else if (!m->pre_order) {
    f.after = AFTER_POST_MAP;
  } else {
    int matched;
    TVMFFIAny mapped = map_callback(m, value, &matched);
    if (matched) {
      if (fr_s_is_error(&mapped)) {
        *out = mapped;
        return 0;
      }
      f.after = AFTER_PRE_COMBINE;
      f.mapped = mapped;
      f.target = fr_s_is_unchanged(&mapped) ? value : mapped;
      if (inplace == FR_S_ALLOW && !fr_s_same_as(&f.target, &value)) {
        inplace = f.target.type_index >= kTVMFFIStaticObjectBegin &&
                          fr_strong_count(f.target.v_obj) == 1
                      ? FR_S_ALLOW
                      : FR_S_DISALLOW;
      }
    }
  }
  return begin_default(m, st, &f, inplace, out);
}

/* The top frame's next child and its mode: 1, or 0 when the descent is over (or failed). */
static int next_child(Mutator* m, MutFrame* f, TVMFFIAny* child, int* mode) {
  FrTraversal* t = &m->base;
  if (f->error.type_index != kTVMFFINone) return 0;
  switch (f->descent) {
    case D_SEQ:
    case D_SEQ_INPLACE:
      if (f->i >= (f->descent == D_SEQ ? f->n : fr_seq_size(f->obj))) return 0;
      *child = fr_seq_items(f->obj)[f->i];
      *mode = f->descent == D_SEQ ? FR_S_DISALLOW : FR_S_ALLOW;
      return 1;
    case D_MAP:
    case D_MAP_INPLACE:
      if (f->it == fr_map_end(f->obj)) return 0;
      f->cur = f->it;
      f->it = fr_map_next(f->obj, f->it);
      *child = fr_map_entry(f->obj, f->cur)->value;
      *mode = f->descent == D_MAP ? FR_S_DISALLOW : FR_S_ALLOW;
      return 1;
    default:
      if ((size_t)f->i >= f->n_fields) return 0;
      f->field = f->fields[f->i++];
      if (fr_read_field(f->copy, f->field, &f->child) != 0) {
        f->child = fr_any_none();
        f->error = fr_s_raised();
        return 0;
      }
      f->child_region = t->region;
      if (t->region != kTVMFFIDefRegionKindPattern &&
          (f->field->flags & (FR_S_DEF_SIMPLE | FR_S_DEF_PATTERN))) {
        t->region = (f->field->flags & FR_S_DEF_SIMPLE) ? kTVMFFIDefRegionKindSimple
                                                        : kTVMFFIDefRegionKindPattern;
      }
      *child = f->child;
      *mode = FR_S_DISALLOW;
      return 1;
  }
}

/* Takes the result of the top frame's current child (consumed). */
static void child_result(Mutator* m, MutFrame* f, TVMFFIAny result) {
  FrTraversal* t = &m->base;
  if (f->descent == D_FIELDS) {
    t->region = f->child_region;
    if (fr_s_is_error(&result)) {
      f->error = result;
    } else if (!fr_s_is_unchanged(&result) && !fr_s_same_as(&f->child, &result)) {
      const TVMFFIFieldInfo* field = f->field;
      if (field->setter == NULL) {
        fr_raise("TypeError",
                 "Cannot structurally mutate field `%.*s` of type `%s` because it does not "
                 "define a setter",
                 (int)field->name.size, field->name.data, fr_type_key_of(fr_type_index(f->copy)));
        f->error = fr_s_raised();
      } else if (fr_call_field_setter(field, (char*)f->copy + field->offset, &result) != 0) {
        f->error = fr_s_raised();
      } else {
        f->changed = 1;
      }
      fr_any_release(&result);
    } else {
      fr_any_release(&result);
    }
    fr_any_release(&f->child);
    f->child = fr_any_none();
    return;
  }
  if (fr_s_is_error(&result)) {
    f->error = result;
    return;
  }
  if (f->descent == D_SEQ) {
    const TVMFFIAny* item = &fr_seq_items(f->obj)[f->i];
    int64_t j;
    if (f->copy == NULL) {
      if (fr_s_is_unchanged(&result) || fr_s_same_as(&result, item)) {
        fr_any_release(&result);
      } else {
        f->copy = f->target.type_index == kTVMFFIArray ? fr_array_new(f->n) : fr_list_new(f->n);
        if (f->copy == NULL) {
          fr_any_release(&result);
          f->error = fr_s_raised();
          return;
        }
        for (j = 0; j < f->i; ++j) fr_seq_items(f->copy)[j] = fr_any_copy(&fr_seq_items(f->obj)[j]);
        fr_seq_items(f->copy)[f->i] = result;
        ((FrSeq*)f->copy)->cell.size = f->i + 1;
      }
    } else {
      fr_seq_items(f->copy)[f->i] = fr_s_value_or(result, item);
      ((FrSeq*)f->copy)->cell.size = f->i + 1;
    }
    f->i++;
  } else if (f->descent == D_SEQ_INPLACE) {
    TVMFFIAny* item = &fr_seq_items(f->obj)[f->i];
    if (!fr_s_is_unchanged(&result) && !fr_s_same_as(&result, item)) {
      TVMFFIAny old = *item;
      *item = result;
      fr_any_release(&old);
    } else {
      fr_any_release(&result);
    }
    f->i++;
  } else {
    void* in = f->descent == D_MAP && f->copy != NULL ? f->copy : f->obj;
    TVMFFIAny* item = &fr_map_entry(f->obj, f->cur)->value;
    if (fr_s_is_unchanged(&result) || fr_s_same_as(&result, item)) {
      fr_any_release(&result);
      return;
    }
    if (f->descent == D_MAP && f->copy == NULL) {
      /* the copy has the same layout: the same positions walk it in the same order */
      f->copy = fr_map_copy(f->obj, f->target.type_index);
      if (f->copy == NULL) {
        fr_any_release(&result);
        f->error = fr_s_raised();
        return;
      }
      in = f->copy;
    }
    replace_value(&fr_map_entry(in, f->cur)->value, result);
  }
}

/* Pops the top frame, its descent over: the dispatch's result. */
static TVMFFIAny finish_frame(Mutator* m, MutStack* st) {
  MutFrame f = st->frames[--st->n];
  TVMFFIAny out;
  m->base.region = f.region;
  free((void*)f.fields);
  fr_any_release(&f.child);
  if (f.error.type_index != kTVMFFINone) {
    if (f.copy != NULL) fr_decref(f.copy);
    out = f.error;
  } else if (f.descent == D_FIELDS) {
    if (f.changed) {
      out = fr_any_object(f.copy);
    } else {
      fr_decref(f.copy);
      out = fr_s_unchanged();
    }
    if (f.dag || (f.free_var && (m->base.region == kTVMFFIDefRegionKindPattern ||
                                 !fr_s_is_unchanged(&out)))) {
      TVMFFIAny set = remap_set(m, f.target, out);
      if (fr_s_is_error(&set)) {
        fr_any_release(&out);
        out = set;
      }
    }
  } else {
    out = f.copy != NULL ? fr_any_object(f.copy) : fr_s_unchanged();
  }
  fr_s_record_visit(&out, &f.target);
  return after_default(m, &f, out);
}

static TVMFFIAny run_engine(Mutator* m, TVMFFIAny root, int inplace) {
  MutStack st = {NULL, 0, 0};
  TVMFFIAny value = root, result = fr_any_none();
  int mode = inplace;
  if (tvm_ffi_runtime_stack_low()) {
    fr_s_too_deep("StructuralMutate");
    return fr_s_raised();
  }
  for (;;) {
    if (mode == FR_S_ALLOW && !(value.type_index >= kTVMFFIStaticObjectBegin &&
                                fr_strong_count(value.v_obj) == 1)) {
      mode = FR_S_DISALLOW; /* MutateExpected: in place only for a value held once */
    }
    if (!start(m, &st, value, mode, &result)) {
      if (st.n == 0) break;
      child_result(m, &st.frames[st.n - 1], result);
    }
    while (st.n > 0 && !next_child(m, &st.frames[st.n - 1], &value, &mode)) {
      result = finish_frame(m, &st);
      if (st.n > 0) child_result(m, &st.frames[st.n - 1], result);
    }
    if (st.n == 0) break;
  }
  free(st.frames);
  return result;
}

static TVMFFIAny map_mutate(void* self, TVMFFIAny value) {
  return run_engine((Mutator*)self, value, FR_S_DISALLOW);
}

static TVMFFIAny map_inplace(void* self, TVMFFIAny value) {
  return run_engine((Mutator*)self, value, FR_S_ALLOW);
}

static TVMFFIAny callback_mutate(void* self, TVMFFIAny value) {
  return run_engine((Mutator*)self, value, FR_S_DISALLOW);
}

static TVMFFIAny callback_inplace(void* self, TVMFFIAny value) {
  return run_engine((Mutator*)self, value, FR_S_ALLOW);
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

int fr_structural_mutate_init(void) {
  static const TVMFFIByteArray kMutator = {"ffi.StructuralMutator", 21};
  if (fr_type_key_to_index(&kMutator, &g_mutator_index) != 0 ||
      fr_register_attr_cstr(kTVMFFINone, "__s_mutate__", NULL) != 0 ||
      fr_register_attr_cstr(kTVMFFINone, "__s_maybe_inplace_mutate__", NULL) != 0) {
    return -1;
  }
  if (fr_structural_mutate_native_hooks() != 0) return -1;
  g_mutate = fr_s_column("__s_mutate__");
  g_inplace = fr_s_column("__s_maybe_inplace_mutate__");
  g_shallow_copy = fr_s_column("__ffi_shallow_copy__");
  /* the built-in hooks the engine runs as frames */
  g_hook_seq = fr_type_attr_entry(g_mutate, kTVMFFIArray).v_ptr;
  g_hook_seq_inplace = fr_type_attr_entry(g_inplace, kTVMFFIArray).v_ptr;
  g_hook_map = fr_type_attr_entry(g_mutate, kTVMFFIMap).v_ptr;
  g_hook_map_inplace = fr_type_attr_entry(g_inplace, kTVMFFIMap).v_ptr;
  return 0;
}

/* ------------------------------------------------------------ globals */

/* The result of a mutation of a view: an unchanged value is returned owned (a raw C string
 * becomes a String, as a view converted to Any does). */
static int finish_view_mutation(TVMFFIAny result, const TVMFFIAny* view, TVMFFIAny* rv) {
  if (fr_s_is_error(&result)) return fr_s_finish(result, rv);
  if (fr_s_is_unchanged(&result)) return fr_any_view_to_owned(view, rv);
  *rv = result;
  return 0;
}

static int mutator_mutate(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  (void)ctx;
  return finish_view_mutation(
      fr_s_mutate_expected(args[0].value.v_obj, args[1].value, FR_S_DISALLOW), &args[1].value, rv);
}

static int mutator_default_mutate(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  (void)ctx;
  return finish_view_mutation(default_mutate(args[0].value.v_obj, args[1].value),
                              &args[1].value, rv);
}

static int mutator_remap_get(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  void* mutator = args[0].value.v_obj;
  (void)ctx;
  return fr_s_finish(fr_s_mutator_vtable(mutator)->var_remap_get(mutator, args[1].value), rv);
}

static int mutator_remap_set(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  void* mutator = args[0].value.v_obj;
  (void)ctx;
  return fr_s_finish(
      fr_s_mutator_vtable(mutator)->var_remap_set(mutator, args[1].value, args[2].value), rv);
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
  result = fr_s_mutate_expected(m, *root, FR_S_ALLOW);
  fr_decref(m);
  if (fr_s_is_error(&result)) return fr_s_finish(result, rv);
  *rv = fr_s_value_or(result, root);
  return 0;
}

static int structural_map(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  Mutator* m = mutator_new(&kMapVTable, args[1].value.v_obj, 2, args[2].value.v_obj);
  (void)ctx;
  if (m != NULL) m->pre_order = args[3].value.v_int64 == 0;
  return run(m, &args[0].value, rv);
}

static int structural_mutate(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  Mutator* m = mutator_new(&kCallbackVTable, args[1].value.v_obj, 3, NULL);
  (void)ctx;
  if (m != NULL) m->is_callback = 1;
  return run(m, &args[0].value, rv);
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
