/*
 * structural_key.c -- ffi.StructuralKey: a value wrapped to be a map key by
 * structure, its structural hash cached (key: Any at 24, hash_i64 at 40), and
 * ffi.StructuralKeyEqual. Its __any_hash__ / __any_equal__ entries are native
 * functions, as upstream registers them, so C++ code hashing a StructuralKey
 * map key never leaves C.
 *
 * Its twin in the reference runtime: tvm_ffi_ref/runtime/structural_key.py.
 */
#include "structural.h"

#include "functions.h"
#include "registry.h"

#define KEY_AT(obj) ((TVMFFIAny*)((char*)(obj) + 24))
#define HASH_AT(obj) (*(int64_t*)((char*)(obj) + 40))

static int32_t g_key_index = -1;

int fr_structural_key_new(const TVMFFIAny* key, void** out) {
  uint64_t hash;
  void* obj;
  if (fr_structural_hash(key, 0, 0, &hash) != 0) return -1;
  obj = fr_reflected_new(g_key_index);
  if (obj == NULL) return -1;
  if (fr_any_view_to_owned(key, KEY_AT(obj)) != 0) {
    fr_decref(obj);
    return -1;
  }
  HASH_AT(obj) = (int64_t)hash;
  *out = obj;
  return 0;
}

static int key_fields(const TVMFFIAny* value, const char* name, void** obj) {
  if (value->type_index != g_key_index) {
    return fr_raise("InternalError", "Check not null: %s_obj ", name);
  }
  *obj = value->v_obj;
  return 0;
}

static int key_equal(const TVMFFIAny* lhs, const TVMFFIAny* rhs, int* out) {
  void *a, *b;
  if (fr_any_is_object(lhs) && lhs->type_index == rhs->type_index && lhs->v_obj == rhs->v_obj) {
    *out = 1;
    return 0;
  }
  if (key_fields(lhs, "lhs", &a) != 0 || key_fields(rhs, "rhs", &b) != 0) return -1;
  *out = 0;
  if (HASH_AT(a) != HASH_AT(b)) return 0;
  return fr_structural_equal(KEY_AT(a), KEY_AT(b), 0, 0, out);
}

/* An Error raised by the last call, moved into a result (the native convention's failure). */
static TVMFFIAny raised_as_result(void) {
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  return fr_any_object(err);
}

static TVMFFIAny native_key_hash(const TVMFFIAny* value) {
  void* obj;
  if (key_fields(value, "key", &obj) != 0) return raised_as_result();
  return fr_any_int(HASH_AT(obj));
}

static TVMFFIAny native_key_equal(const TVMFFIAny* lhs, const TVMFFIAny* rhs) {
  int equal;
  if (key_equal(lhs, rhs, &equal) != 0) return raised_as_result();
  return fr_any_bool(equal);
}

int fr_structural_key_init(void) {
  static const TVMFFIByteArray kKey = {"ffi.StructuralKey", 17};
  TVMFFIAny native;
  if (fr_type_key_to_index(&kKey, &g_key_index) != 0) return -1;
  native = fr_any_none();
  native.type_index = kTVMFFIOpaquePtr;
  native.v_ptr = (void*)native_key_hash;
  if (fr_register_attr_cstr(g_key_index, "__any_hash__", &native) != 0) return -1;
  native.v_ptr = (void*)native_key_equal;
  return fr_register_attr_cstr(g_key_index, "__any_equal__", &native);
}

static int make_key(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  void* key;
  (void)ctx;
  if (fr_structural_key_new(&args[0].value, &key) != 0) return -1;
  *rv = fr_any_object(key);
  return 0;
}

static int structural_key_equal(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  int equal;
  (void)ctx;
  if (key_equal(&args[0].value, &args[1].value, &equal) != 0) return -1;
  *rv = fr_any_bool(equal);
  return 0;
}

int fr_structural_key_globals(void) {
  static const FrBuiltin kBuiltins[] = {
      {"ffi.StructuralKey", make_key, NULL, 1, {FR_T_ANY}, FR_T_STRUCTURAL_KEY},
      {"ffi.StructuralKeyEqual", structural_key_equal, NULL, 2, {FR_T_ANY, FR_T_ANY}, FR_T_BOOL},
  };
  return fr_register_builtins(kBuiltins, 2);
}
