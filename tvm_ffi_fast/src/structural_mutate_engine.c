/*
 * structural_mutate_engine.c -- the mutation engine of ffi.StructuralMap and
 * ffi.StructuralMutate: one call mutates a value and everything below it over an
 * explicit stack (see "the engine" below), dispatching each value to the map or mutate
 * callbacks, then to its default mutation (the built-in container hooks and reflected
 * objects as frames of the engine, other hooks called); and the mutator's variable remap.
 *
 * The hot part of a mutation: everything the engine runs per value is in this one
 * translation unit, the remap included, so the compiler may inline it into the loop.
 * tvm_ffi_ref/runtime/structural_mutate.py states the rules (copy-on-write, in place along
 * uniquely owned paths, the variable remap, map callbacks before or after default
 * mutation, callback-owned mutation).
 */
#include "structural_mutate.h"

#include "containers.h"
#include "functions.h"
#include "registry.h"
#include "runtime.h"
#include "structural.h"

/* ------------------------------------------------------------ hooks */

TVMFFIAny fr_s_call_mutate_hook(void* mutator, TVMFFIAny hook, TVMFFIAny value) {
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

/* Stores an owned value into a map entry's value slot, releasing the old one. */
static void replace_value(TVMFFIAny* slot, TVMFFIAny owned) {
  TVMFFIAny old = *slot;
  *slot = owned;
  fr_any_release(&old);
}

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
 * time; the rules are the native hooks' and structural_mutate_default.c's, in steps), so
 * depth costs heap, not C stack. Hooks that are not the built-in ones (a C++ or Function __s_mutate__, a
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

/* The descent a built-in hook stands for, or -1. */
static int native_descent(const TVMFFIAny* hook) {
  if (hook->type_index != kTVMFFIOpaquePtr || hook->v_ptr == NULL) return -1;
  if (hook->v_ptr == fr_sm.hook_seq) return D_SEQ;
  if (hook->v_ptr == fr_sm.hook_seq_inplace) return D_SEQ_INPLACE;
  if (hook->v_ptr == fr_sm.hook_map) return D_MAP;
  if (hook->v_ptr == fr_sm.hook_map_inplace) return D_MAP_INPLACE;
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
    hook = fr_type_attr_entry(fr_sm.inplace, target.type_index);
    if (hook.type_index == kTVMFFIOpaquePtr || hook.type_index == kTVMFFIFunction) {
      descent = native_descent(&hook);
      if (descent < 0) {
        result = fr_s_call_mutate_hook(m, hook, target);
        fr_s_record_visit(&result, &target);
        *out = after_default(m, f, result);
        return 0;
      }
    }
  }
  if (descent < 0) {
    hook = fr_type_attr_entry(fr_sm.mutate, target.type_index);
    if (hook.type_index != kTVMFFINone) {
      descent = native_descent(&hook);
      if (descent < 0) {
        result = fr_s_call_mutate_hook(m, hook, target);
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
    TVMFFIAny shallow = fr_type_attr_entry(fr_sm.shallow_copy, target.type_index), copy;
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

/* ------------------------------------------------------------ the vtables */

/* What C++ (and a callback's mutator.mutate) calls on our mutators: a nested engine. */
const FrMutatorVTable fr_s_map_vtable = {map_mutate, map_inplace, remap_get, remap_set};
const FrMutatorVTable fr_s_callback_vtable = {callback_mutate, callback_inplace, remap_get,
                                              remap_set};
