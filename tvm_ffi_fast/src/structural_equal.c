/*
 * structural_equal.c -- ffi.StructuralEqual and ffi.GetFirstStructuralMismatch (and
 * fr_structural_equal, for StructuralKey and the other C callers): a comparison's state
 * set up from the options, the comparison run, its result (a bool, or the pair of
 * mismatch paths) handed back and the state torn down.
 *
 * The comparison itself is structural_equal_walk.c, the mismatch trail
 * structural_equal_trail.c; structural_equal.h is what the three share.
 * tvm_ffi_ref/runtime/structural_equal.py states every rule (inline values, strings,
 * containers, tensors, objects by kind, bindings of free variables and DAG nodes, the
 * __s_equal__ hook and the mismatch trail of access steps).
 */
#include "structural_equal.h"

#include "functions.h"
#include "structural.h"

/* ------------------------------------------------------------ a comparison's state */

static void plain_types_init(Equality* eq) {
  size_t i;
  for (i = 0; i < sizeof(eq->plain_types) / sizeof(eq->plain_types[0]); ++i) {
    eq->plain_types[i].type_index = -1;
  }
}

static void equality_free(Equality* eq) {
  refs_free(&eq->lhs_steps);
  refs_free(&eq->rhs_steps);
  refs_free(&eq->held);
  fr_ptrmap_free(&eq->lhs_to_rhs);
  fr_ptrmap_free(&eq->rhs_to_lhs);
  fr_field_cache_free(&eq->fields);
  if (eq->callback != NULL) fr_walk_callback_done(eq->callback, eq->callback_state);
}

/* ------------------------------------------------------------ entry points */

int fr_structural_equal(const TVMFFIAny* lhs, const TVMFFIAny* rhs, int map_free_vars,
                        int skip_tensor_content, int* out) {
  Equality eq;
  int status;
  memset(&eq, 0, sizeof(eq));
  plain_types_init(&eq);
  eq.region = map_free_vars ? kTVMFFIDefRegionKindPattern : kTVMFFIDefRegionKindNone;
  eq.skip_tensor_content = skip_tensor_content;
  status = fr_se_equal_any(&eq, lhs, rhs, out);
  equality_free(&eq);
  return status;
}

static int structural_equal(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  int equal;
  (void)ctx;
  if (fr_structural_equal(&args[0].value, &args[1].value, (int)args[2].value.v_int64,
                          (int)args[3].value.v_int64, &equal) != 0) {
    return -1;
  }
  *rv = fr_any_bool(equal);
  return 0;
}

static int first_mismatch(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  Equality eq;
  int equal, status;
  (void)ctx;
  memset(&eq, 0, sizeof(eq));
  plain_types_init(&eq);
  eq.region = args[2].value.v_int64 ? kTVMFFIDefRegionKindPattern : kTVMFFIDefRegionKindNone;
  eq.skip_tensor_content = (int)args[3].value.v_int64;
  eq.trace = 1;
  status = fr_se_equal_any(&eq, &args[0].value, &args[1].value, &equal);
  if (status == 0 && !equal) {
    void* pair = fr_se_trail_paths(&eq);
    if (pair == NULL) status = -1;
    else *rv = fr_any_object(pair);
  }
  equality_free(&eq);
  return status;
}

int fr_structural_equal_globals(void) {
  static const FrBuiltin kBuiltins[] = {
      {"ffi.StructuralEqual", structural_equal, NULL, 4,
       {FR_T_ANY, FR_T_ANY, FR_T_BOOL, FR_T_BOOL}, FR_T_BOOL},
      {"ffi.GetFirstStructuralMismatch", first_mismatch, NULL, 4,
       {FR_T_ANY, FR_T_ANY, FR_T_BOOL, FR_T_BOOL}, FR_T_OPT_PATH_PAIR},
  };
  fr_se_walk_init();
  return fr_register_builtins(kBuiltins, 2);
}
