/*
 * visit_error_context.c -- ffi.VisitErrorContext.FindAccessPaths: the access
 * paths from a root that pass, in order, the objects an error's
 * VisitErrorContext recorded. tvm_ffi_ref/runtime/visit_error_context.py states
 * the search (which values it goes through, where it matches, prefix matches).
 */
#include "structural.h"

#include "containers.h"
#include "functions.h"
#include "registry.h"
#include "walk.h"

typedef struct {
  int32_t kind;
  TVMFFIAny key; /* owned */
} Step;

typedef struct {
  void** records; /* the recorded objects, repeats in a row and Nones dropped */
  size_t n_records;
  int allow_prefix;
  size_t matched;
  Step* steps;
  size_t n_steps;
  size_t cap_steps;
  void* results; /* a List of AccessPaths */
} Finder;

static int materialize(Finder* f) {
  void* path = fr_access_path_new(NULL, NULL);
  size_t i;
  for (i = 0; path != NULL && i < f->n_steps; ++i) {
    void* step = fr_access_step_new(f->steps[i].kind, &f->steps[i].key);
    void* deeper = step == NULL ? NULL : fr_access_path_new(path, step);
    if (step != NULL) fr_decref(step);
    fr_decref(path);
    path = deeper;
  }
  if (path == NULL || fr_list_ensure_extra(f->results, 1) != 0) {
    if (path != NULL) fr_decref(path);
    return -1;
  }
  fr_seq_items(f->results)[((FrSeq*)f->results)->cell.size++] = fr_any_object(path);
  return 0;
}

/*
 * The search runs over an explicit stack of frames (a container or object whose children it
 * hands out one at a time, each one step below the current path), so depth costs heap, not
 * C stack.
 */
enum { FIND_SEQUENCE, FIND_MAP, FIND_OBJECT };

typedef struct {
  void* obj;
  int kind;
  int64_t next;                   /* sequences: the next index; objects: the next field */
  uint64_t it;                    /* maps: the next entry */
  const TVMFFIFieldInfo** fields; /* objects (owned) */
  size_t n_fields;
  TVMFFIAny child;                /* objects: the current field's value (owned) */
  int64_t before;                 /* objects: the results found before this one */
  int matched;                    /* objects: this one matched the next record */
} FindFrame;

typedef struct {
  FindFrame* frames;
  size_t n;
  size_t capacity;
} FindStack;

/* One step (kind, key: consumed) more on the current path. */
static int push_step(Finder* f, int32_t kind, TVMFFIAny key) {
  if (f->n_steps == f->cap_steps) {
    size_t capacity = f->cap_steps == 0 ? 16 : f->cap_steps * 2;
    Step* grown = (Step*)realloc(f->steps, capacity * sizeof(Step));
    if (grown == NULL) {
      fr_any_release(&key);
      return fr_raise_oom();
    }
    f->steps = grown;
    f->cap_steps = capacity;
  }
  f->steps[f->n_steps].kind = kind;
  f->steps[f->n_steps++].key = key;
  return 0;
}

static FindFrame* push_frame(FindStack* st, void* obj, int kind) {
  FindFrame* top = (FindFrame*)fr_s_stack_room(st->frames, st->n, &st->capacity, sizeof(FindFrame));
  if (top == NULL) return NULL;
  st->frames = top;
  top = &st->frames[st->n++];
  memset(top, 0, sizeof(*top));
  top->obj = obj;
  top->kind = kind;
  top->child = fr_any_none();
  if (kind == FIND_MAP) top->it = fr_map_begin(obj);
  return top;
}

/* Enters an object (as visit_object did): a frame for its fields, or nothing when it has no
 * metadata or completes the records (a result). */
static int enter_object(Finder* f, FindStack* st, void* obj) {
  const TVMFFITypeInfo* info = fr_type_info_or_null(fr_type_index(obj));
  FindFrame* top;
  int matched;
  if (info == NULL || info->metadata == NULL) return 0;
  matched = f->matched < f->n_records && obj == f->records[f->n_records - 1 - f->matched];
  if (matched && f->matched + 1 == f->n_records) return materialize(f);
  top = push_frame(st, obj, FIND_OBJECT);
  if (top == NULL) return -1;
  if (fr_collect_fields(info->type_index, 0, &top->fields, &top->n_fields) != 0) {
    st->n--;
    return -1;
  }
  top->before = fr_seq_size(f->results);
  top->matched = matched;
  if (matched) ++f->matched;
  return 0;
}

static int enter(Finder* f, FindStack* st, const TVMFFIAny* value) {
  int32_t ti = value->type_index;
  if (ti < kTVMFFIStaticObjectBegin) return 0;
  if (ti == kTVMFFIArray || ti == kTVMFFIList) {
    return push_frame(st, value->v_obj, FIND_SEQUENCE) == NULL ? -1 : 0;
  }
  if (ti == kTVMFFIMap || ti == kTVMFFIDict) {
    return push_frame(st, value->v_obj, FIND_MAP) == NULL ? -1 : 0;
  }
  return enter_object(f, st, value->v_obj);
}

/* The top frame's next child (its step pushed) into *child: 1, 0 when none is left, -1. */
static int next_child(Finder* f, FindFrame* top, const TVMFFIAny** child) {
  if (top->kind == FIND_SEQUENCE) {
    while (top->next < fr_seq_size(top->obj)) {
      const TVMFFIAny* item = &fr_seq_items(top->obj)[top->next++];
      if (item->type_index == kTVMFFINone) continue;
      if (push_step(f, 1, fr_any_int(top->next - 1)) != 0) return -1;
      *child = item;
      return 1;
    }
    return 0;
  }
  if (top->kind == FIND_MAP) {
    while (top->it != fr_map_end(top->obj)) {
      FrKV* kv = fr_map_entry(top->obj, top->it);
      top->it = fr_map_next(top->obj, top->it);
      if (kv->key.type_index == kTVMFFINone || kv->value.type_index == kTVMFFINone) continue;
      if (push_step(f, 2, fr_any_copy(&kv->key)) != 0) return -1;
      *child = &kv->value;
      return 1;
    }
    return 0;
  }
  if ((size_t)top->next < top->n_fields) {
    const TVMFFIFieldInfo* field = top->fields[top->next++];
    TVMFFIAny name;
    if (fr_read_field(top->obj, field, &top->child) != 0) {
      top->child = fr_any_none();
      return -1;
    }
    if (fr_string_from_bytes(field->name.data, field->name.size, &name) != 0 ||
        push_step(f, 0, name) != 0) {
      return -1;
    }
    *child = &top->child;
    return 1;
  }
  return 0;
}

/* A child of the top frame is done: its step off the path, a field value released. */
static void child_done(Finder* f, FindFrame* top) {
  fr_any_release(&f->steps[--f->n_steps].key);
  fr_any_release(&top->child);
  top->child = fr_any_none();
}

/* Pops the top frame; an object's prefix match (when its fields found nothing) first. */
static int leave(Finder* f, FindStack* st, int status) {
  FindFrame* top = &st->frames[--st->n];
  if (top->kind == FIND_OBJECT) {
    if (status == 0 && f->allow_prefix && f->matched > 0 && f->matched < f->n_records &&
        f->n_steps > 0 && fr_seq_size(f->results) == top->before) {
      status = materialize(f);
    }
    if (top->matched) --f->matched;
    fr_any_release(&top->child);
    free((void*)top->fields);
  }
  return status;
}

/* The search from root (an object); 0, or -1 with an error raised. */
static int search(Finder* f, void* root) {
  FindStack st = {NULL, 0, 0};
  int status = enter_object(f, &st, root);
  while (status == 0 && st.n > 0) {
    const TVMFFIAny* child;
    int got = next_child(f, &st.frames[st.n - 1], &child);
    if (got < 0) {
      status = -1;
    } else if (got == 0) {
      status = leave(f, &st, 0);
      if (status == 0 && st.n > 0) child_done(f, &st.frames[st.n - 1]);
    } else {
      size_t depth = st.n;
      status = enter(f, &st, child);
      if (status == 0 && st.n == depth) child_done(f, &st.frames[st.n - 1]); /* a leaf */
    }
  }
  while (st.n > 0) leave(f, &st, -1);
  while (f->n_steps > 0) fr_any_release(&f->steps[--f->n_steps].key);
  free(st.frames);
  return status;
}

static int find_access_paths(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  void* pattern = *(void**)((char*)args[1].value.v_obj + 24);
  Finder f;
  int64_t i, n = pattern == NULL ? 0 : fr_seq_size(pattern);
  int status;
  (void)ctx;
  memset(&f, 0, sizeof(f));
  f.allow_prefix = (int)args[2].value.v_int64;
  f.records = (void**)malloc(((size_t)n + 1) * sizeof(void*));
  f.results = fr_list_new(0);
  if (f.records == NULL || f.results == NULL) {
    free(f.records);
    if (f.results != NULL) fr_decref(f.results);
    return fr_raise_oom();
  }
  for (i = 0; i < n; ++i) {
    const TVMFFIAny* entry = &fr_seq_items(pattern)[i];
    if (entry->type_index < kTVMFFIStaticObjectBegin) continue;
    if (f.n_records > 0 && f.records[f.n_records - 1] == entry->v_obj) continue;
    f.records[f.n_records++] = entry->v_obj;
  }
  status = search(&f, args[0].value.v_obj);
  if (status == 0) {
    void* array = fr_array_from_items(fr_seq_items(f.results), fr_seq_size(f.results), 0);
    if (array == NULL) status = -1;
    else *rv = fr_any_object(array);
  }
  fr_decref(f.results);
  free(f.records);
  free(f.steps);
  return status;
}

int fr_visit_error_context_globals(void) {
  static const FrBuiltin kBuiltins[] = {
      {"ffi.VisitErrorContext.FindAccessPaths", find_access_paths, NULL, 3,
       {FR_T_OBJECT, FR_T_VISIT_ERROR_CONTEXT, FR_T_BOOL}, FR_T_ARRAY_PATH},
  };
  return fr_register_builtins(kBuiltins, 1);
}
