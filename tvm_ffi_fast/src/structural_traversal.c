/*
 * structural_traversal.c -- the helpers of structural_traversal.h: callback
 * entries and their matching, error results and their visit contexts.
 *
 * Its twin in the reference runtime: tvm_ffi_ref/runtime/structural_traversal.py.
 */
#include "structural_traversal.h"

#include "containers.h"
#include "functions.h"
#include "registry.h"
#include "structural.h"

int fr_s_entries(void* array, int width, FrCallbackEntry** out, size_t* n) {
  int64_t count = fr_seq_size(array), i;
  *out = (FrCallbackEntry*)calloc((size_t)count + 1, sizeof(FrCallbackEntry));
  *n = 0;
  if (*out == NULL) return fr_raise_oom();
  for (i = 0; i < count; ++i) {
    const TVMFFIAny* item = &fr_seq_items(array)[i];
    const TVMFFIAny* parts;
    int ok = item->type_index == kTVMFFIArray && fr_seq_size(item->v_obj) == width;
    if (ok) {
      parts = fr_seq_items(item->v_obj);
      ok = (parts[0].type_index == kTVMFFIInt || parts[0].type_index == kTVMFFIBool) &&
           parts[1].type_index == kTVMFFIFunction &&
           (width == 2 || parts[2].type_index == kTVMFFIInt || parts[2].type_index == kTVMFFIBool);
    }
    if (!ok) {
      free(*out);
      *out = NULL;
      return fr_raise("TypeError", "callback entry %d must be a tuple of %s", (int)i,
                      width == 2 ? "(type_index, callback)" : "(type_index, callback, bool)");
    }
    (*out)[i].type_index = (int32_t)parts[0].v_int64;
    (*out)[i].fn = parts[1].v_obj;
    (*out)[i].flag = width == 3 && parts[2].v_int64 != 0;
  }
  *n = (size_t)count;
  return 0;
}

static int type_matches(int32_t actual, int32_t target) {
  const TVMFFITypeInfo* info;
  int32_t d;
  if (actual == target || target == kTVMFFIAny) return 1;
  if (target == kTVMFFIStr) return actual == kTVMFFISmallStr;
  if (target == kTVMFFIBytes) return actual == kTVMFFISmallBytes;
  if (target == kTVMFFIObject) return actual >= kTVMFFIStaticObjectBegin;
  if (actual < kTVMFFIStaticObjectBegin || target < kTVMFFIStaticObjectBegin || actual < target) {
    return 0;
  }
  info = fr_type_info_or_null(actual);
  for (d = 0; info != NULL && d < info->type_depth; ++d) {
    if (info->type_ancestors[d]->type_index == target) return 1;
  }
  return 0;
}

const FrCallbackEntry* fr_s_find_entry(const FrCallbackEntry* entries, size_t n, int32_t ti) {
  size_t i;
  for (i = 0; i < n; ++i) {
    if (type_matches(ti, entries[i].type_index)) return &entries[i];
  }
  return NULL;
}

TVMFFIAny fr_s_raised(void) {
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  if (err == NULL) {
    fr_raise("RuntimeError", "a structural traversal step failed without an error");
    TVMFFIErrorMoveFromRaised(&err);
  }
  return fr_any_object(err);
}

TVMFFIAny fr_s_call(void* fn, const TVMFFIAny* args, int32_t n) {
  TVMFFIAny result;
  if (fr_call(fn, args, n, &result) != 0) return fr_s_raised();
  return result;
}

void fr_s_record_visit(TVMFFIAny* error, const TVMFFIAny* node) {
  static int32_t context_index = -1;
  TVMFFIErrorCell* cell;
  void* context;
  TVMFFIAny copy;
  if (error->type_index != kTVMFFIError || node->type_index < kTVMFFIStaticObjectBegin) return;
  if (context_index < 0) {
    static const TVMFFIByteArray kKey = {"ffi.VisitErrorContext", 21};
    if (fr_type_key_to_index(&kKey, &context_index) != 0) return;
  }
  cell = FR_CELL(error->v_obj, TVMFFIErrorCell);
  context = cell->extra_context;
  copy = fr_any_copy(node);
  if (context != NULL && fr_type_index(context) == context_index) {
    void* pattern = *(void**)((char*)context + 24);
    if (fr_list_ensure_extra(pattern, 1) == 0) {
      fr_seq_items(pattern)[((FrSeq*)pattern)->cell.size++] = copy;
      return;
    }
  } else {
    void* fresh = fr_reflected_new(context_index);
    void* pattern = fr_list_new(4);
    if (fresh != NULL && pattern != NULL) {
      fr_seq_items(pattern)[((FrSeq*)pattern)->cell.size++] = copy;
      *(void**)((char*)fresh + 24) = pattern;
      *(void**)((char*)fresh + 32) = context; /* the previous context moves in */
      cell->extra_context = fresh;
      return;
    }
    if (fresh != NULL) fr_decref(fresh);
    if (pattern != NULL) fr_decref(pattern);
  }
  fr_any_release(&copy);
}

int fr_s_finish(TVMFFIAny outcome, TVMFFIAny* rv) {
  if (outcome.type_index == kTVMFFIError) {
    TVMFFIErrorSetRaised(outcome.v_obj);
    fr_decref(outcome.v_obj);
    return -1;
  }
  *rv = outcome;
  return 0;
}

int fr_s_with_region(FrTraversal* t, int32_t kind, void* fn, TVMFFIAny* rv) {
  int32_t saved = t->region;
  int status;
  if (saved != kTVMFFIDefRegionKindPattern) t->region = kind;
  status = fr_call(fn, NULL, 0, rv);
  t->region = saved;
  return status;
}
