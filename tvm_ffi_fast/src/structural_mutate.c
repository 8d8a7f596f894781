/*
 * structural_mutate.c -- ffi.StructuralMap, ffi.StructuralMutate and the
 * mutator's methods (ffi.StructuralMutator*): the mutator object made and freed,
 * what mutation resolves at load, and the globals.
 *
 * A mutator here is an upstream StructuralMutatorObj to C++ (a real vtable at
 * offset 24: mutate, maybe_inplace_mutate, var_remap_get, var_remap_set), so a
 * C++ hook handed one of ours mutates children through it. Results are raw
 * TVMFFIAny: a replacement, the kTVMFFIUnchanged marker, or an Error.
 * tvm_ffi_ref/runtime/structural_mutate.py states the rules (copy-on-write,
 * in place along uniquely owned paths, the variable remap, map callbacks
 * before or after default mutation, callback-owned mutation).
 *
 * The engine (and the variable remap) is structural_mutate_engine.c, a value's
 * default mutation structural_mutate_default.c, the native hooks of the built-in
 * types structural_mutate_hooks.c; structural_mutate.h is what they share.
 */
#include "structural_mutate.h"

#include "functions.h"
#include "registry.h"
#include "structural.h"
#include "walk.h"

FrMutateLoaded fr_sm;
static int32_t g_mutator_index = -1;

/* ------------------------------------------------------------ the mutator object */

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
  fr_sm.mutate = fr_s_column("__s_mutate__");
  fr_sm.inplace = fr_s_column("__s_maybe_inplace_mutate__");
  fr_sm.shallow_copy = fr_s_column("__ffi_shallow_copy__");
  /* the built-in hooks the engine runs as frames */
  fr_sm.hook_seq = fr_type_attr_entry(fr_sm.mutate, kTVMFFIArray).v_ptr;
  fr_sm.hook_seq_inplace = fr_type_attr_entry(fr_sm.inplace, kTVMFFIArray).v_ptr;
  fr_sm.hook_map = fr_type_attr_entry(fr_sm.mutate, kTVMFFIMap).v_ptr;
  fr_sm.hook_map_inplace = fr_type_attr_entry(fr_sm.inplace, kTVMFFIMap).v_ptr;
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
  return finish_view_mutation(fr_s_default_mutate(args[0].value.v_obj, args[1].value),
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
  Mutator* m = mutator_new(&fr_s_map_vtable, args[1].value.v_obj, 2, args[2].value.v_obj);
  (void)ctx;
  if (m != NULL) m->pre_order = args[3].value.v_int64 == 0;
  return run(m, &args[0].value, rv);
}

static int structural_mutate(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  Mutator* m = mutator_new(&fr_s_callback_vtable, args[1].value.v_obj, 3, NULL);
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
