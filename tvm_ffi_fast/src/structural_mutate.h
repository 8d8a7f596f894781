/*
 * structural_mutate.h -- what structural_mutate.c (the mutator and its
 * globals) and structural_mutate_hooks.c (the native __s_mutate__ hooks)
 * share: the mutator's vtable as C++ sees it and the result helpers every
 * mutation step uses.
 */
#ifndef TVM_FFI_FAST_STRUCTURAL_MUTATE_H_
#define TVM_FFI_FAST_STRUCTURAL_MUTATE_H_

#include "core.h"

#include "structural_traversal.h"

typedef TVMFFIAny (*FrMutateFn)(void* mutator, TVMFFIAny value);
typedef TVMFFIAny (*FrRemapSetFn)(void* mutator, TVMFFIAny var, TVMFFIAny mapped);

typedef struct {
  FrMutateFn mutate;
  FrMutateFn maybe_inplace_mutate;
  FrMutateFn var_remap_get;
  FrRemapSetFn var_remap_set;
} FrMutatorVTable;

/* Whether a step may mutate a uniquely held value in place. */
enum { FR_S_DISALLOW = 0, FR_S_ALLOW = 1 };

static inline TVMFFIAny fr_s_unchanged(void) {
  TVMFFIAny marker = fr_any_none();
  marker.type_index = kTVMFFIUnchanged;
  return marker;
}

static inline int fr_s_is_unchanged(const TVMFFIAny* v) {
  return v->type_index == kTVMFFIUnchanged;
}
static inline int fr_s_is_error(const TVMFFIAny* v) { return v->type_index == kTVMFFIError; }

static inline int fr_s_same_as(const TVMFFIAny* a, const TVMFFIAny* b) {
  return a->type_index == b->type_index && a->v_int64 == b->v_int64;
}

static inline const FrMutatorVTable* fr_s_mutator_vtable(void* mutator) {
  return (const FrMutatorVTable*)((FrTraversal*)mutator)->vtable;
}

/* MutateExpected: in place only when allowed and value is an object held once. */
static inline TVMFFIAny fr_s_mutate_expected(void* mutator, TVMFFIAny value, int inplace) {
  if (inplace == FR_S_ALLOW && value.type_index >= kTVMFFIStaticObjectBegin &&
      fr_strong_count(value.v_obj) == 1) {
    return fr_s_mutator_vtable(mutator)->maybe_inplace_mutate(mutator, value);
  }
  return fr_s_mutator_vtable(mutator)->mutate(mutator, value);
}

/* A changed result, or a copy of original when it is unchanged. */
static inline TVMFFIAny fr_s_value_or(TVMFFIAny result, const TVMFFIAny* original) {
  return fr_s_is_unchanged(&result) ? fr_any_copy(original) : result;
}

/* structural_mutate_hooks.c: registers the native __s_mutate__ and
 * __s_maybe_inplace_mutate__ of strings, bytes, BigInt and the containers. */
FR_HIDDEN int fr_structural_mutate_native_hooks(void);

#endif /* TVM_FFI_FAST_STRUCTURAL_MUTATE_H_ */
