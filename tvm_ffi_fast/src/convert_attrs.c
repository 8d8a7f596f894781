/*
 * convert_attrs.c -- __ffi_convert__: how a value becomes an object of a
 * built-in type (C++'s TypeTraits<T>::TryCastFromAnyView), registered as a
 * type attribute of ffi.Object, ffi.String, ... as upstream does.
 *
 * The rules and messages are tvm_ffi_ref/runtime/convert_attrs.py's, which
 * lists them: objects of the type (or a derived one) pass unchanged, some
 * types take None, a Shape takes an Array/List of ints (a new Shape), an
 * Array/List/Map/Dict takes its sibling (copied), anything else is
 * TypeError "Cannot cast from `<key>` to `<type>`".
 */
#include "core.h"

#include "containers.h"
#include "functions.h"
#include "registry.h"
#include "runtime.h"

typedef enum {
  CAST_INSTANCE, /* an object of target (or derived) */
  CAST_NULLABLE, /* the same, or None */
  CAST_STRING,
  CAST_BYTES,
  CAST_SHAPE,
  CAST_SEQ, /* target Array/List, the other one copied */
  CAST_MAP  /* target Map/Dict, the other one copied */
} CastKind;

typedef struct {
  const char* type_key;
  const char* returns; /* the result type as C++ spells it */
  CastKind kind;
  int32_t target;
} ConvertSpec;

static int is_instance(int32_t index, int32_t ancestor) {
  const TVMFFITypeInfo* info;
  int32_t d;
  if (index == ancestor) return 1;
  if (index < kTVMFFIStaticObjectBegin) return 0;
  info = fr_type_info_or_null(index);
  if (info == NULL) return 0;
  for (d = 0; d < info->type_depth; ++d) {
    if (info->type_ancestors[d]->type_index == ancestor) return 1;
  }
  return 0;
}

static int copy_seq(const TVMFFIAny* in, int32_t target, TVMFFIAny* rv) {
  TVMFFIAny* items = fr_seq_items(in->v_obj);
  int64_t n = fr_seq_size(in->v_obj), i;
  void* out;
  if (target == kTVMFFIArray) {
    out = fr_array_from_items(items, n, 0);
  } else {
    out = fr_list_new(n > FR_SEQ_INIT_CAPACITY ? n : FR_SEQ_INIT_CAPACITY);
    if (out != NULL) {
      for (i = 0; i < n; ++i) fr_seq_items(out)[i] = fr_any_copy(&items[i]);
      ((FrSeq*)out)->cell.size = n;
    }
  }
  if (out == NULL) return -1;
  *rv = fr_any_object(out);
  return 0;
}

static int copy_map(const TVMFFIAny* in, int32_t target, TVMFFIAny* rv) {
  void* out = fr_map_new(target);
  uint64_t it, end = fr_map_end(in->v_obj);
  if (out == NULL) return -1;
  for (it = fr_map_begin(in->v_obj); it != end; it = fr_map_next(in->v_obj, it)) {
    FrKV* kv = fr_map_entry(in->v_obj, it);
    if (fr_map_set(&out, fr_any_copy(&kv->key), fr_any_copy(&kv->value)) != 0) {
      fr_decref(out);
      return -1;
    }
  }
  *rv = fr_any_object(out);
  return 0;
}

static int to_shape(const TVMFFIAny* in, TVMFFIAny* rv) {
  TVMFFIAny* items = fr_seq_items(in->v_obj);
  int64_t n = fr_seq_size(in->v_obj), i;
  int64_t* dims = (int64_t*)malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
  void* shape;
  if (dims == NULL) return fr_raise_oom();
  for (i = 0; i < n; ++i) dims[i] = items[i].v_int64;
  shape = fr_shape_new(dims, (size_t)n);
  free(dims);
  if (shape == NULL) return -1;
  *rv = fr_any_object(shape);
  return 0;
}

static int all_ints(const TVMFFIAny* in) {
  TVMFFIAny* items = fr_seq_items(in->v_obj);
  int64_t n = fr_seq_size(in->v_obj), i;
  for (i = 0; i < n; ++i) {
    if (items[i].type_index != kTVMFFIInt && items[i].type_index != kTVMFFIBool) return 0;
  }
  return 1;
}

/* 1 cast into *rv, 0 not castable (nothing raised), -1 error raised. */
static int cast(const ConvertSpec* spec, const TVMFFIAny* in, TVMFFIAny* rv) {
  int32_t ti = in->type_index;
  int32_t other = 0;
  switch (spec->kind) {
    case CAST_NULLABLE:
      if (ti == kTVMFFINone) {
        *rv = fr_any_none();
        return 1;
      }
      /* fall through */
    case CAST_INSTANCE:
      if (!is_instance(ti, spec->target)) return 0;
      break;
    case CAST_STRING:
      if (ti != kTVMFFISmallStr && ti != kTVMFFIStr) return 0;
      break;
    case CAST_BYTES:
      if (ti != kTVMFFISmallBytes && ti != kTVMFFIBytes) return 0;
      break;
    case CAST_SHAPE:
      if (ti == kTVMFFIShape) break;
      if ((ti != kTVMFFIArray && ti != kTVMFFIList) || !all_ints(in)) return 0;
      return to_shape(in, rv) == 0 ? 1 : -1;
    case CAST_SEQ:
      other = spec->target == kTVMFFIArray ? kTVMFFIList : kTVMFFIArray;
      if (ti == other) return copy_seq(in, spec->target, rv) == 0 ? 1 : -1;
      if (ti != spec->target) return 0;
      break;
    case CAST_MAP:
      other = spec->target == kTVMFFIMap ? kTVMFFIDict : kTVMFFIMap;
      if (ti == other) return copy_map(in, spec->target, rv) == 0 ? 1 : -1;
      if (ti != spec->target) return 0;
      break;
  }
  *rv = fr_any_copy(in);
  return 1;
}

static int convert_fn(void* ctx, const TVMFFIAny* args, int32_t n, TVMFFIAny* rv) {
  const ConvertSpec* spec = (const ConvertSpec*)ctx;
  int status;
  if (n != 1) {
    return fr_raise("TypeError",
                    "Mismatched number of arguments when calling: `%s.__ffi_convert__(0: "
                    "AnyView) -> %s`. Expected 1 but got %d arguments",
                    spec->type_key, spec->returns, (int)n);
  }
  status = cast(spec, &args[0], rv);
  if (status == 0) {
    return fr_raise("TypeError", "Cannot cast from `%s` to `%s`",
                    fr_type_key_of(args[0].type_index), spec->returns);
  }
  return status < 0 ? -1 : 0;
}

int fr_convert_attrs_init(void) {
  static ConvertSpec kSpecs[] = {
      {"ffi.Object", "ffi.Object", CAST_NULLABLE, kTVMFFIObject},
      {"ffi.String", "str", CAST_STRING, kTVMFFIStr},
      {"ffi.Bytes", "bytes", CAST_BYTES, kTVMFFIBytes},
      {"ffi.Error", "ffi.Error", CAST_INSTANCE, kTVMFFIError},
      {"ffi.Function", "ffi.Function", CAST_NULLABLE, kTVMFFIFunction},
      {"ffi.Shape", "ffi.Shape", CAST_SHAPE, kTVMFFIShape},
      {"ffi.Tensor", "ffi.Tensor", CAST_NULLABLE, kTVMFFITensor},
      {"ffi.Array", "Array<Any>", CAST_SEQ, kTVMFFIArray},
      {"ffi.Map", "Map<Any, Any>", CAST_MAP, kTVMFFIMap},
      {"ffi.List", "List<Any>", CAST_SEQ, kTVMFFIList},
      {"ffi.Dict", "Dict<Any, Any>", CAST_MAP, kTVMFFIDict},
      {"ffi.IntEnum", "ffi.IntEnum", CAST_INSTANCE, -1},
      {"ffi.StrEnum", "ffi.StrEnum", CAST_INSTANCE, -1},
  };
  size_t i;
  for (i = 0; i < sizeof(kSpecs) / sizeof(kSpecs[0]); ++i) {
    ConvertSpec* spec = &kSpecs[i];
    TVMFFIByteArray key = {spec->type_key, strlen(spec->type_key)};
    int32_t index;
    TVMFFIAny value;
    void* fn;
    int status;
    if (fr_type_key_to_index(&key, &index) != 0) return -1;
    if (spec->target < 0) spec->target = index;
    fn = fr_function_new(convert_fn, spec, NULL);
    if (fn == NULL) return -1;
    value = fr_any_object(fn);
    status = fr_register_attr_cstr(index, "__ffi_convert__", &value);
    fr_decref(fn);
    if (status != 0) return -1;
  }
  return 0;
}
