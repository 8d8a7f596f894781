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
  int depth;
} Finder;

static int visit_any(Finder* f, const TVMFFIAny* value);

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

/* Visits child one step (kind, key: consumed) below the current path. */
static int descend(Finder* f, int32_t kind, TVMFFIAny key, const TVMFFIAny* child) {
  int status;
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
  status = visit_any(f, child);
  fr_any_release(&f->steps[--f->n_steps].key);
  return status;
}

static int visit_object(Finder* f, void* obj) {
  const TVMFFITypeInfo* info = fr_type_info_or_null(fr_type_index(obj));
  const TVMFFIFieldInfo** fields;
  size_t n, i;
  int64_t before;
  int matched, status = 0;
  if (info == NULL || info->metadata == NULL) return 0;
  matched = f->matched < f->n_records && obj == f->records[f->n_records - 1 - f->matched];
  if (matched && ++f->matched == f->n_records) {
    status = materialize(f);
    --f->matched;
    return status;
  }
  before = fr_seq_size(f->results);
  if (fr_collect_fields(info->type_index, 0, &fields, &n) != 0) return -1;
  for (i = 0; status == 0 && i < n; ++i) {
    TVMFFIAny child, name;
    if (fr_read_field(obj, fields[i], &child) != 0) {
      status = -1;
      break;
    }
    status = fr_string_from_bytes(fields[i]->name.data, fields[i]->name.size, &name);
    if (status == 0) status = descend(f, 0, name, &child);
    fr_any_release(&child);
  }
  free(fields);
  if (status == 0 && f->allow_prefix && f->matched > 0 && f->matched < f->n_records &&
      f->n_steps > 0 && fr_seq_size(f->results) == before) {
    status = materialize(f);
  }
  if (matched) --f->matched;
  return status;
}

static int visit_any(Finder* f, const TVMFFIAny* value) {
  int32_t ti = value->type_index;
  int status = 0;
  if (ti < kTVMFFIStaticObjectBegin) return 0;
  if (f->depth >= FR_S_MAX_DEPTH || tvm_ffi_runtime_stack_low()) return fr_s_too_deep("FindAccessPaths");
  f->depth++;
  if (ti == kTVMFFIArray || ti == kTVMFFIList) {
    int64_t i;
    for (i = 0; status == 0 && i < fr_seq_size(value->v_obj); ++i) {
      const TVMFFIAny* item = &fr_seq_items(value->v_obj)[i];
      if (item->type_index != kTVMFFINone) status = descend(f, 1, fr_any_int(i), item);
    }
  } else if (ti == kTVMFFIMap || ti == kTVMFFIDict) {
    uint64_t it, end = fr_map_end(value->v_obj);
    for (it = fr_map_begin(value->v_obj); status == 0 && it != end;
         it = fr_map_next(value->v_obj, it)) {
      FrKV* kv = fr_map_entry(value->v_obj, it);
      if (kv->key.type_index != kTVMFFINone && kv->value.type_index != kTVMFFINone) {
        status = descend(f, 2, fr_any_copy(&kv->key), &kv->value);
      }
    }
  } else {
    status = visit_object(f, value->v_obj);
  }
  f->depth--;
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
  status = visit_object(&f, args[0].value.v_obj);
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
