/*
 * structural_mutate.h -- what the mutation files share: structural_mutate.c (the
 * mutator object, load and the ffi.* globals), structural_mutate_engine.c (the engine
 * over an explicit stack, the variable remap), structural_mutate_default.c (one value's
 * default mutation, for a callback that asks for it) and structural_mutate_hooks.c (the
 * native __s_mutate__ hooks): the mutator's vtable as C++ sees it, the mutator's own
 * state, what load resolves, and the result helpers every mutation step uses.
 */
#ifndef TVM_FFI_FAST_STRUCTURAL_MUTATE_H_
#define TVM_FFI_FAST_STRUCTURAL_MUTATE_H_

#include "core.h"

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

/* The mutator objects ffi.StructuralMap and ffi.StructuralMutate make (an upstream
 * StructuralMutatorObj to C++: base first), with the engine's own state after it. */
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

/* What fr_structural_mutate_init resolves at load: the hook columns (their addresses never
 * change) and the built-in container hooks the engine runs as frames of its own. */
typedef struct {
  const TVMFFITypeAttrColumn* mutate;
  const TVMFFITypeAttrColumn* inplace;
  const TVMFFITypeAttrColumn* shallow_copy;
  void* hook_seq;
  void* hook_seq_inplace;
  void* hook_map;
  void* hook_map_inplace;
} FrMutateLoaded;
FR_HIDDEN extern FrMutateLoaded fr_sm;

/* structural_mutate_engine.c: calls a __s_mutate__ / __s_maybe_inplace_mutate__ entry (a
 * direct hook pointer or a Function) on value. Defined beside the engine, its hot caller. */
FR_HIDDEN TVMFFIAny fr_s_call_mutate_hook(void* mutator, TVMFFIAny hook, TVMFFIAny value);

/* structural_mutate_engine.c: the vtables of ffi.StructuralMap's and ffi.StructuralMutate's
 * mutators (mutate and maybe_inplace_mutate run the engine; the variable remap). */
FR_HIDDEN extern const FrMutatorVTable fr_s_map_vtable;
FR_HIDDEN extern const FrMutatorVTable fr_s_callback_vtable;

/* structural_mutate_default.c: value's default mutation, its children mutated through the
 * mutator's vtable (ffi.StructuralMutatorDefaultMutate). */
FR_HIDDEN TVMFFIAny fr_s_default_mutate(void* mutator, TVMFFIAny value);

/* structural_mutate_hooks.c: registers the native __s_mutate__ and
 * __s_maybe_inplace_mutate__ of strings, bytes, BigInt and the containers. */
FR_HIDDEN int fr_structural_mutate_native_hooks(void);

#endif /* TVM_FFI_FAST_STRUCTURAL_MUTATE_H_ */
