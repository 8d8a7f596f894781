/*
 * field_accessors.c -- ffi.MakeFieldGetter and ffi.MakeFieldSetter: the C
 * field accessors of types defined from Python (upstream's py_class), by the
 * field's storage type. tvm_ffi_ref/runtime/field_accessors.py has the table.
 */
#include "structural.h"

#include "functions.h"

static int get_i64(void* field, TVMFFIAny* out) {
  *out = fr_any_int(*(int64_t*)field);
  return 0;
}

static int get_f64(void* field, TVMFFIAny* out) {
  *out = fr_any_none();
  out->type_index = kTVMFFIFloat;
  out->v_float64 = *(double*)field;
  return 0;
}

static int get_bool(void* field, TVMFFIAny* out) {
  *out = fr_any_bool(*(unsigned char*)field != 0);
  return 0;
}

static int get_ptr(void* field, TVMFFIAny* out) {
  *out = fr_any_none();
  if (*(void**)field != NULL) {
    out->type_index = kTVMFFIOpaquePtr;
    out->v_ptr = *(void**)field;
  }
  return 0;
}

static int get_dtype(void* field, TVMFFIAny* out) {
  *out = fr_any_none();
  out->type_index = kTVMFFIDataType;
  out->v_dtype = *(DLDataType*)field;
  return 0;
}

static int get_device(void* field, TVMFFIAny* out) {
  *out = fr_any_none();
  out->type_index = kTVMFFIDevice;
  out->v_device = *(DLDevice*)field;
  return 0;
}

static int get_any(void* field, TVMFFIAny* out) {
  *out = fr_any_copy((const TVMFFIAny*)field);
  return 0;
}

static int get_object(void* field, TVMFFIAny* out) {
  void* obj = *(void**)field;
  if (obj != NULL) fr_incref(obj);
  *out = fr_any_object(obj);
  return 0;
}

static TVMFFIFieldGetter getter_for(int64_t storage) {
  switch (storage) {
    case kTVMFFIInt: return get_i64;
    case kTVMFFIFloat: return get_f64;
    case kTVMFFIBool: return get_bool;
    case kTVMFFIOpaquePtr: return get_ptr;
    case kTVMFFIDataType: return get_dtype;
    case kTVMFFIDevice: return get_device;
    default:
      if (storage == kTVMFFIAny || storage == kTVMFFINone) return get_any;
      if (storage >= kTVMFFIStaticObjectBegin) return get_object;
      return NULL;
  }
}

static int cast_error(const TVMFFIAny* value, const char* target) {
  return fr_raise("TypeError", "Cannot convert from type `%s` to `%s`",
                  fr_type_key_of(value->type_index), target);
}

/* Stores an owned value (consumed) into a field stored as `storage`. */
static int write_field(void* field, int64_t storage, TVMFFIAny value) {
  int32_t ti = value.type_index;
  int status = 0;
  if (storage == kTVMFFIInt || storage == kTVMFFIBool) {
    if (ti != kTVMFFIInt && ti != kTVMFFIBool) {
      status = cast_error(&value, storage == kTVMFFIInt ? "int" : "bool");
    } else if (storage == kTVMFFIInt) {
      *(int64_t*)field = value.v_int64;
    } else {
      *(unsigned char*)field = value.v_int64 != 0;
    }
  } else if (storage == kTVMFFIFloat) {
    if (ti == kTVMFFIFloat) *(double*)field = value.v_float64;
    else if (ti == kTVMFFIInt || ti == kTVMFFIBool) *(double*)field = (double)value.v_int64;
    else status = cast_error(&value, "float");
  } else if (storage == kTVMFFIOpaquePtr) {
    if (ti == kTVMFFIOpaquePtr || ti == kTVMFFINone) *(void**)field = ti ? value.v_ptr : NULL;
    else status = cast_error(&value, "void*");
  } else if (storage == kTVMFFIDataType || storage == kTVMFFIDevice) {
    if (ti != storage) status = cast_error(&value, storage == kTVMFFIDataType ? "DataType" : "Device");
    else if (storage == kTVMFFIDataType) *(DLDataType*)field = value.v_dtype;
    else *(DLDevice*)field = value.v_device;
  } else if (storage == kTVMFFIAny || storage == kTVMFFINone) {
    TVMFFIAny old = *(TVMFFIAny*)field;
    *(TVMFFIAny*)field = value;
    fr_any_release(&old);
    return 0;
  } else if (storage >= kTVMFFIStaticObjectBegin) {
    void* old = *(void**)field;
    if (ti != kTVMFFINone && ti < kTVMFFIStaticObjectBegin) {
      status = cast_error(&value, "ffi.Object");
    } else {
      *(void**)field = ti == kTVMFFINone ? NULL : value.v_obj;
      if (old != NULL) fr_decref(old);
      return 0;
    }
  } else {
    status = fr_raise("ValueError", "Unsupported field type index for setter: %d", (int)storage);
  }
  fr_any_release(&value);
  return status;
}

typedef int (*FrConvert)(void* converter, const TVMFFIAny* value, TVMFFIAny* out);

typedef struct {
  int64_t storage;
  void* converter;
  FrConvert convert;
} Setter;

static int field_setter(void* ctx, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* rv) {
  const Setter* s = (const Setter*)ctx;
  TVMFFIAny converted = fr_any_none();
  (void)rv;
  if (num_args < 2) {
    return fr_raise("TypeError", "a field setter takes (field address, value), got %d arguments",
                    (int)num_args);
  }
  if (args[0].type_index != kTVMFFIOpaquePtr && args[0].type_index != kTVMFFINone) {
    return cast_error(&args[0], "void*");
  }
  if (s->convert(s->converter, &args[1], &converted) != 0) return -1;
  return write_field(args[0].type_index == kTVMFFINone ? NULL : args[0].v_ptr, s->storage,
                     converted);
}

static int make_field_getter(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  TVMFFIFieldGetter getter = getter_for(args[0].value.v_int64);
  (void)ctx;
  if (getter == NULL) {
    return fr_raise("ValueError", "Unsupported field type index for getter: %d",
                    (int)args[0].value.v_int64);
  }
  *rv = fr_any_int((int64_t)(intptr_t)getter);
  return 0;
}

static int make_field_setter(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  Setter* s = (Setter*)malloc(sizeof(Setter));
  void* f;
  (void)ctx;
  if (s == NULL) return fr_raise_oom();
  s->storage = args[0].value.v_int64;
  s->converter = (void*)(intptr_t)args[1].value.v_int64;
  s->convert = (FrConvert)(intptr_t)args[2].value.v_int64;
  f = fr_function_new(field_setter, s, free);
  if (f == NULL) {
    free(s);
    return -1;
  }
  *rv = fr_any_object(f);
  return 0;
}

int fr_field_accessors_globals(void) {
  static const FrBuiltin kBuiltins[] = {
      {"ffi.MakeFieldGetter", make_field_getter, NULL, 1, {FR_T_INT}, FR_T_INT},
      {"ffi.MakeFieldSetter", make_field_setter, NULL, 3, {FR_T_INT, FR_T_INT, FR_T_INT},
       FR_T_FUNCTION},
  };
  return fr_register_builtins(kBuiltins, 2);
}
