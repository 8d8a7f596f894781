/*
 * structural_mutate_default.c -- one value's default mutation, as a callback asks for it
 * through ffi.StructuralMutatorDefaultMutate: its __s_mutate__ hook when its type has one;
 * else, for a reflected object, a shallow copy whose fields are mutated through the
 * mutator's vtable (kept only when one changed), free variables and DAG nodes through
 * the variable remap. Each child runs a nested engine (structural_mutate_engine.c, whose
 * frames follow the same rules in steps).
 *
 * tvm_ffi_ref/runtime/structural_mutate.py states the rules.
 */
#include "structural_mutate.h"

#include "registry.h"
#include "runtime.h"
#include "structural.h"

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
  TVMFFIAny shallow = fr_type_attr_entry(fr_sm.shallow_copy, value.type_index), copy, error;
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

TVMFFIAny fr_s_default_mutate(void* mutator, TVMFFIAny value) {
  TVMFFIAny hook = fr_type_attr_entry(fr_sm.mutate, value.type_index), result;
  if (hook.type_index != kTVMFFINone) result = fr_s_call_mutate_hook(mutator, hook, value);
  else if (value.type_index < kTVMFFIStaticObjectBegin) return value;
  else result = mutate_object(mutator, value);
  fr_s_record_visit(&result, &value);
  return result;
}
