/*
 * structural_equal_trail.c -- the mismatch trail of ffi.GetFirstStructuralMismatch: the
 * access steps a comparison records as it unwinds from the first mismatch (innermost
 * first, one per side), and the pair of AccessPaths they spell.
 *
 * Kept apart from the walk (structural_equal_walk.c) because only a mismatch reaches it:
 * a comparison that meets none never calls in here. tvm_ffi_ref/runtime/structural_equal.py
 * states the rules (which step each kind of child records, the *_MISSING steps of a
 * shorter sequence or an absent map key).
 */
#include "structural_equal.h"

#include "containers.h"
#include "structural.h"

int fr_se_record(Equality* eq, int lhs_kind, const TVMFFIAny* lhs_key, int rhs_kind,
                      const TVMFFIAny* rhs_key) {
  void* step;
  if (!eq->trace) return 0;
  step = fr_access_step_new(lhs_kind, lhs_key);
  if (step == NULL || refs_push(&eq->lhs_steps, step) != 0) return -1;
  step = fr_access_step_new(rhs_kind, rhs_key);
  if (step == NULL || refs_push(&eq->rhs_steps, step) != 0) return -1;
  return 0;
}

int fr_se_record_attr(Equality* eq, const char* name, size_t size) {
  TVMFFIAny key;
  int status;
  if (!eq->trace) return 0;
  if (fr_string_from_bytes(name, size, &key) != 0) return -1;
  status = fr_se_record(eq, ATTR, &key, ATTR, &key);
  fr_any_release(&key);
  return status;
}

int fr_se_record_index(Equality* eq, int lhs_kind, int rhs_kind, int64_t index) {
  TVMFFIAny key = fr_any_int(index);
  return fr_se_record(eq, lhs_kind, &key, rhs_kind, &key);
}

void* fr_se_trail_paths(Equality* eq) {
  Refs* trails[2] = {&eq->lhs_steps, &eq->rhs_steps};
  void* pair = fr_array_new(2);
  int side;
  if (pair == NULL) return NULL;
  for (side = 0; side < 2; ++side) {
    void* path = fr_access_path_new(NULL, NULL);
    size_t i;
    for (i = trails[side]->size; path != NULL && i > 0; --i) {
      void* deeper = fr_access_path_new(path, trails[side]->items[i - 1]);
      fr_decref(path);
      path = deeper;
    }
    if (path == NULL) {
      fr_decref(pair);
      return NULL;
    }
    fr_array_push_unchecked(pair, fr_any_object(path));
  }
  return pair;
}
