/*
 * dataclass_hooks.c -- the dataclass hooks upstream's library registers at
 * load: BigInt's __ffi_hash__, __ffi_eq__ and __ffi_compare__, and the
 * __ffi_repr__ of ffi.reflection.AccessStep and AccessPath. Separate from the
 * walks: these are entries in the hook columns, called like any user's hook.
 *
 * Its twin in the reference runtime: tvm_ffi_ref/runtime/dataclass_ops.py.
 */
#include "dataclass.h"

#include <inttypes.h>

#include "functions.h"
#include "registry.h"
#include "runtime.h"
#include "walk.h"

/* ======================================================= BigInt's hooks */

/* AnyView(obj).as_or_throw<BigInt>(): the words of a BigInt object, or upstream's TypeError. */
static const int64_t* bigint_arg(const TVMFFIAny* value, size_t* n) {
  if (value->type_index != kTVMFFIBigInt) {
    fr_raise("TypeError", "Cannot treat type `%s` as type `BigInt`",
             fr_type_key_of(value->type_index));
    return NULL;
  }
  return fr_bigint_words(value, n);
}

static int bigint_hash_hook(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  size_t n;
  const int64_t* words = bigint_arg(&args[0].value, &n);
  (void)ctx;
  if (words == NULL) return -1;
  *rv = fr_any_int((int64_t)fr_stable_hash_bytes(words, n * sizeof(int64_t)));
  return 0;
}

/* eq and compare read rhs first: the two are the arguments of one C++ call. */
static int bigint_eq_hook(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  size_t na, nb;
  const int64_t* b = bigint_arg(&args[1].value, &nb);
  const int64_t* a = b == NULL ? NULL : bigint_arg(&args[0].value, &na);
  (void)ctx;
  if (a == NULL) return -1;
  *rv = fr_any_bool(fr_dc_words_equal(a, na, b, nb));
  return 0;
}

static int bigint_compare_hook(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  size_t na, nb;
  const int64_t* b = bigint_arg(&args[1].value, &nb);
  const int64_t* a = b == NULL ? NULL : bigint_arg(&args[0].value, &na);
  (void)ctx;
  if (a == NULL) return -1;
  *rv = fr_any_int(fr_dc_compare_words(a, na, b, nb));
  return 0;
}

static const FrBuiltin kBigIntHooks[] = {
    {"ffi.BigInt.__ffi_eq__", bigint_eq_hook, NULL, 3, {FR_T_OBJECT, FR_T_OBJECT, FR_T_FUNCTION},
     FR_T_BOOL},
    {"ffi.BigInt.__ffi_compare__", bigint_compare_hook, NULL, 3,
     {FR_T_OBJECT, FR_T_OBJECT, FR_T_FUNCTION}, FR_T_INT},
    {"ffi.BigInt.__ffi_hash__", bigint_hash_hook, NULL, 2, {FR_T_OBJECT, FR_T_FUNCTION},
     FR_T_INT},
};
static const char* const kBigIntHookColumns[] = {"__ffi_eq__", "__ffi_compare__", "__ffi_hash__"};

/* ================================================ AccessStep / AccessPath */

/*
 * The __ffi_repr__ hooks upstream registers for its access paths (typed, so
 * a direct call with bad arguments names them): a step prints as ".name",
 * "[3]", "[<repr of key>]" or "[<missing:...>]"; a path as "<root>" followed by
 * its steps from the root down, each printed through fn_repr.
 */

/* AccessStepObj: header, int32 kind, then the Any key; AccessPathObj: parent, step, depth. */
#define STEP_KIND_OFFSET FR_HEADER_SIZE
#define STEP_KEY_OFFSET (FR_HEADER_SIZE + 8)
#define PATH_PARENT_OFFSET FR_HEADER_SIZE
#define PATH_STEP_OFFSET (FR_HEADER_SIZE + 8)
#define PATH_DEPTH_OFFSET (FR_HEADER_SIZE + 16)

static int expect_object_of(const TVMFFIAny* value, int32_t type_index, const char* type_key) {
  if (value->type_index == type_index) return 0;
  return fr_raise("TypeError", "Cannot treat type `%s` as type `%s`",
                  fr_type_key_of(value->type_index), type_key);
}

/* Appends fn_repr(value), which must give a str. */
static int append_fn_repr(FrBuf* out, void* fn_repr, const TVMFFIAny* value) {
  TVMFFIAny result;
  if (fr_call(fn_repr, value, 1, &result) != 0) return -1;
  return fr_buf_append_str_result(out, &result);
}

/* A hook's text as upstream returns a std::string it built: always a String object. */
static int buf_to_string_object(FrBuf* buf, TVMFFIAny* rv) {
  void* obj;
  if (buf->failed) return fr_raise_oom();
  obj = fr_string_object_new(fr_buf_cstr(buf), buf->size);
  if (obj == NULL) return -1;
  *rv = fr_any_object(obj);
  return 0;
}

static int access_step_repr(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  const char* step;
  const TVMFFIAny* key;
  void* fn_repr = args[1].value.v_obj;
  TVMFFIByteArray name;
  FrBuf out;
  int status = 0;
  (void)ctx;
  if (expect_object_of(&args[0].value, fr_dc.access_step_index, "ffi.reflection.AccessStep") != 0) {
    return -1;
  }
  step = (const char*)args[0].value.v_obj;
  key = (const TVMFFIAny*)(step + STEP_KEY_OFFSET);
  fr_buf_init(&out);
  switch (*(const int32_t*)(step + STEP_KIND_OFFSET)) {
    case 0: /* kAttr */
      if (fr_any_str_view(key, 0, &name) != 0) {
        status = fr_raise("TypeError", "Cannot convert from type `%s` to `str`",
                          fr_type_key_of(key->type_index));
        break;
      }
      fr_buf_puts(&out, ".");
      fr_buf_append(&out, name.data, name.size);
      break;
    case 1: /* kArrayItem */
    case 4: /* kArrayItemMissing */
      if (key->type_index != kTVMFFIInt && key->type_index != kTVMFFIBool) {
        status = fr_raise("TypeError", "Cannot convert from type `%s` to `int`",
                          fr_type_key_of(key->type_index));
        break;
      }
      fr_buf_printf(&out, *(const int32_t*)(step + STEP_KIND_OFFSET) == 1 ? "[%" PRId64 "]"
                                                                         : "[<missing:%" PRId64 ">]",
                    key->v_int64);
      break;
    case 2: /* kMapItem */
      fr_buf_puts(&out, "[");
      status = append_fn_repr(&out, fn_repr, key);
      fr_buf_puts(&out, "]");
      break;
    case 3: /* kAttrMissing */
    case 5: /* kMapItemMissing */
      fr_buf_puts(&out, "[<missing:");
      status = append_fn_repr(&out, fn_repr, key);
      fr_buf_puts(&out, ">]");
      break;
    default:
      status = fr_raise("InternalError", "unknown access step kind %d",
                        (int)*(const int32_t*)(step + STEP_KIND_OFFSET));
      break;
  }
  if (status == 0) status = buf_to_string_object(&out, rv);
  fr_buf_free(&out);
  return status;
}

static int access_path_repr(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  void* fn_repr = args[1].value.v_obj;
  const char* path;
  void** steps = NULL;
  size_t n = 0, capacity = 0, i;
  FrBuf out;
  int status = 0;
  (void)ctx;
  if (expect_object_of(&args[0].value, fr_dc.access_path_index, "ffi.reflection.AccessPath") != 0) {
    return -1;
  }
  /* the steps from the path up to (not including) the root, then printed root first */
  for (path = (const char*)args[0].value.v_obj;
       path != NULL && *(const int32_t*)(path + PATH_DEPTH_OFFSET) > 0;
       path = *(const char* const*)(path + PATH_PARENT_OFFSET)) {
    if (n == capacity) {
      size_t grown_capacity = capacity == 0 ? 8 : capacity * 2;
      void** grown = (void**)realloc(steps, grown_capacity * sizeof(void*));
      if (grown == NULL) {
        free(steps);
        return fr_raise_oom();
      }
      steps = grown;
      capacity = grown_capacity;
    }
    steps[n++] = *(void* const*)(path + PATH_STEP_OFFSET);
  }
  fr_buf_init(&out);
  fr_buf_puts(&out, "<root>");
  for (i = n; i-- > 0 && status == 0;) {
    TVMFFIAny step = steps[i] != NULL ? fr_object_view(steps[i]) : fr_any_none();
    status = append_fn_repr(&out, fn_repr, &step);
  }
  free(steps);
  if (status == 0) status = buf_to_string_object(&out, rv);
  fr_buf_free(&out);
  return status;
}

static const FrBuiltin kAccessStepRepr = {"ffi.reflection.AccessStep.__ffi_repr__",
                                          access_step_repr, NULL, 2,
                                          {FR_T_OBJECT, FR_T_FUNCTION}, FR_T_STR};
static const FrBuiltin kAccessPathRepr = {"ffi.reflection.AccessPath.__ffi_repr__",
                                          access_path_repr, NULL, 2,
                                          {FR_T_OBJECT, FR_T_FUNCTION}, FR_T_STR};

static int register_hook(int32_t type_index, const char* column, const FrBuiltin* spec) {
  void* fn = fr_typed_function_new(spec, NULL, NULL);
  TVMFFIAny value;
  int status;
  if (fn == NULL) return -1;
  value = fr_any_object(fn);
  status = fr_register_attr_cstr(type_index, column, &value);
  fr_decref(fn); /* the column keeps its own reference */
  return status;
}

int fr_dataclass_hooks_init(void) {
  size_t i;
  for (i = 0; i < sizeof(kBigIntHooks) / sizeof(kBigIntHooks[0]); ++i) {
    if (register_hook(kTVMFFIBigInt, kBigIntHookColumns[i], &kBigIntHooks[i]) != 0) return -1;
  }
  /* the column keeps BigInt's hash hook alive: the walk recognizes it by address */
  fr_dc.bigint_hash_hook = fr_type_attr_entry(fr_dc.col_hash, kTVMFFIBigInt).v_obj;
  if (register_hook(fr_dc.access_step_index, "__ffi_repr__", &kAccessStepRepr) != 0) return -1;
  return register_hook(fr_dc.access_path_index, "__ffi_repr__", &kAccessPathRepr);
}
