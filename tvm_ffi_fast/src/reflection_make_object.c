/*
 * reflection_make_object.c -- objects made from reflection: the field setters
 * (a C setter or a setter Function; defaults and default factories), an empty
 * object of a type (its native creator or __ffi_new__) and
 * ffi.MakeObjectFromPackedArgs (fields by name, ancestors' first). Separate
 * from reflection.c: it serves any reflected type, not only those made at load.
 *
 * Its twin in the reference runtime: tvm_ffi_ref/runtime/reflection_make_object.py.
 */
#include "core.h"

#include "functions.h"
#include "registry.h"
#include "runtime.h"


int fr_call_field_setter(const TVMFFIFieldInfo* f, void* addr, const TVMFFIAny* value) {
  if (f->flags & kTVMFFIFieldFlagBitSetterIsFunctionObj) {
    TVMFFIAny args[2], result;
    args[0] = fr_any_none();
    args[0].type_index = kTVMFFIOpaquePtr;
    args[0].v_ptr = addr;
    args[1] = *value;
    if (fr_call(f->setter, args, 2, &result) != 0) return -1;
    fr_any_release(&result);
    return 0;
  }
  if (f->setter == NULL) {
    return fr_raise("TypeError", "Field `%.*s` has no setter", (int)f->name.size, f->name.data);
  }
  return ((TVMFFIFieldSetter)f->setter)(addr, value);
}

int fr_call_field_setter_to_default(const TVMFFIFieldInfo* f, void* addr) {
  if (f->flags & kTVMFFIFieldFlagBitMaskDefaultFromFactory) {
    TVMFFIAny value;
    int status;
    if (f->default_value_or_factory.type_index != kTVMFFIFunction) {
      return fr_raise("TypeError", "Cannot convert from type `%s` to `ffi.Function`",
                      fr_type_key_of(f->default_value_or_factory.type_index));
    }
    if (fr_call(f->default_value_or_factory.v_obj, NULL, 0, &value) != 0) return -1;
    status = fr_call_field_setter(f, addr, &value);
    fr_any_release(&value);
    return status;
  }
  return fr_call_field_setter(f, addr, &f->default_value_or_factory);
}

/* An empty object of a type: its native creator, else its __ffi_new__ attribute. */
int fr_create_empty_object(const TVMFFITypeInfo* info, void** out) {
  static const TVMFFIByteArray kNew = {"__ffi_new__", 11};
  const TVMFFITypeAttrColumn* column;
  if (info->metadata != NULL && info->metadata->creator != NULL) {
    return info->metadata->creator(out);
  }
  column = fr_get_type_attr_column(&kNew);
  if (column != NULL) {
    int32_t offset = info->type_index - column->begin_index;
    if (offset >= 0 && offset < column->size &&
        column->data[offset].type_index == kTVMFFIFunction) {
      TVMFFIAny result;
      if (fr_call(column->data[offset].v_obj, NULL, 0, &result) != 0) return -1;
      if (result.type_index < kTVMFFIStaticObjectBegin) {
        fr_any_release(&result);
        return fr_raise("TypeError", "__ffi_new__ of `%.*s` did not return an object",
                        (int)info->type_key.size, info->type_key.data);
      }
      *out = result.v_obj;
      return 0;
    }
  }
  return fr_raise("RuntimeError",
                  "Type `%.*s` does not support reflection creation (no native creator or "
                  "__ffi_new__ type attr)",
                  (int)info->type_key.size, info->type_key.data);
}

static int fill_fields(const TVMFFITypeInfo* owner, const TVMFFITypeInfo* info, char* obj,
                       const TVMFFIAny* args, int32_t n, unsigned char* found) {
  int32_t i, k;
  for (i = 0; i < info->num_fields; ++i) {
    const TVMFFIFieldInfo* f = &info->fields[i];
    int32_t match = -1;
    for (k = 1; k < n; k += 2) {
      TVMFFIByteArray key;
      if (found[k] || fr_any_str_view(&args[k], 0, &key) != 0) continue;
      if (key.size == f->name.size && memcmp(key.data, f->name.data, key.size) == 0) {
        match = k;
        break;
      }
    }
    if (match >= 0) {
      if (fr_call_field_setter(f, obj + f->offset, &args[match + 1]) != 0) return -1;
      found[match] = 1;
    } else if (f->flags & kTVMFFIFieldFlagBitMaskHasDefault) {
      if (fr_call_field_setter_to_default(f, obj + f->offset) != 0) return -1;
    } else {
      return fr_raise("TypeError", "Required field `%.*s` not set in type `%.*s`",
                      (int)f->name.size, f->name.data, (int)owner->type_key.size,
                      owner->type_key.data);
    }
  }
  return 0;
}

static int make_object_from_packed_args(void* ctx, const TVMFFIAny* args, int32_t n,
                                        TVMFFIAny* rv) {
  int32_t type_index, d, k;
  const TVMFFITypeInfo* info;
  void* obj = NULL;
  unsigned char* found;
  (void)ctx;
  if (n >= 1 && (args[0].type_index == kTVMFFIInt || args[0].type_index == kTVMFFIBool)) {
    type_index = (int32_t)args[0].v_int64;
  } else {
    TVMFFIByteArray key;
    if (n < 1 || fr_any_str_view(&args[0], 0, &key) != 0) {
      return fr_raise("TypeError", "Cannot convert from type `%s` to `str`",
                      n < 1 ? "None" : fr_type_key_of(args[0].type_index));
    }
    if (fr_type_key_to_index(&key, &type_index) != 0) return -1;
  }
  if (n % 2 != 1) return fr_raise("InternalError", "Check failed: (args.size() %% 2 == 1) is false: ");
  info = fr_get_type_info(type_index);
  if (info == NULL) return -1;
  for (k = 1; k < n; k += 2) {
    TVMFFIByteArray key;
    if (fr_any_str_view(&args[k], 0, &key) != 0) {
      return fr_raise("TypeError", "Cannot convert from type `%s` to `str`",
                      fr_type_key_of(args[k].type_index));
    }
  }
  if (fr_create_empty_object(info, &obj) != 0) return -1;
  found = (unsigned char*)calloc((size_t)n + 1, 1);
  if (found == NULL) {
    fr_decref(obj);
    return fr_raise_oom();
  }
  for (d = 1; d < info->type_depth; ++d) {
    if (fill_fields(info, info->type_ancestors[d], (char*)obj, args, n, found) != 0) goto fail;
  }
  if (fill_fields(info, info, (char*)obj, args, n, found) != 0) goto fail;
  for (k = 1; k < n; k += 2) {
    if (!found[k]) {
      TVMFFIByteArray key;
      fr_any_str_view(&args[k], 0, &key);
      fr_raise("TypeError", "Type `%.*s` does not have field `%.*s`", (int)info->type_key.size,
               info->type_key.data, (int)key.size, key.data);
      goto fail;
    }
  }
  free(found);
  *rv = fr_any_object(obj);
  return 0;
fail:
  free(found);
  fr_decref(obj);
  return -1;
}

int fr_reflection_register_globals(void) {
  static const FrBuiltin kBuiltins[] = {
      {"ffi.MakeObjectFromPackedArgs", NULL, make_object_from_packed_args, 0, {0}, FR_T_VOID},
  };
  return fr_register_builtins(kBuiltins, 1);
}
