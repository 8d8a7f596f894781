/*
 * reflection_access_path.c -- ffi.reflection.AccessStep and AccessPath: the
 * records (a step is a kind and a key; a path, its parent, last step and
 * depth), their methods (_root, _attr, ..., _is_prefix_of, _to_steps,
 * _path_equal) and their registration at load. Separate from reflection.c:
 * the access paths are a small API of their own (the structural mismatch
 * trail and the visit error contexts build them).
 *
 * Its twin in the reference runtime: tvm_ffi_ref/runtime/reflection.py.
 */
#include "reflection.h"

#include "containers.h"
#include "functions.h"
#include "registry.h"
#include "runtime.h"
#include "structural.h"

int32_t fr_access_step_index = -1;
int32_t fr_access_path_index = -1;
FR_DEFINE_CREATOR(create_access_step, fr_access_step_index)
FR_DEFINE_CREATOR(create_access_path, fr_access_path_index)

/* ---------------------------------------------------------- AccessPath */

/* AccessStep: kind (int32 at 24), key (Any at 32). AccessPath: parent, step, depth. */
#define STEP_KIND(o) (*(int32_t*)((char*)(o) + 24))
#define STEP_KEY(o) ((TVMFFIAny*)((char*)(o) + 32))
#define PATH_PARENT(o) (*(void**)((char*)(o) + 24))
#define PATH_STEP(o) (*(void**)((char*)(o) + 32))
#define PATH_DEPTH(o) (*(int32_t*)((char*)(o) + 40))

void* fr_access_path_new(void* parent, void* step) {
  void* path = fr_reflected_new(fr_access_path_index);
  if (path == NULL) return NULL;
  if (parent != NULL) fr_incref(parent);
  if (step != NULL) fr_incref(step);
  PATH_PARENT(path) = parent;
  PATH_STEP(path) = step;
  PATH_DEPTH(path) = parent == NULL ? 0 : PATH_DEPTH(parent) + 1;
  return path;
}

/*
 * The AccessPath methods check their arguments as upstream's typed methods do
 * (the count, then each argument, the last one first) with texts that spell
 * the typed signature; FrTypeCode has no AccessPath, so they do it by hand.
 */
#define PATH_SIG(method, params, ret) \
  "ffi.reflection.AccessPath." method "(" params ") -> " ret
#define S_PATH_T "ffi.reflection.AccessPath"

static int raise_count(const char* sig, int expected, int32_t n) {
  return fr_raise("TypeError",
                  "Mismatched number of arguments when calling: `%s`. Expected %d but got %d "
                  "arguments",
                  sig, expected, (int)n);
}

static int path_root(void* ctx, const TVMFFIAny* args, int32_t n, TVMFFIAny* rv) {
  void* path;
  (void)ctx;
  (void)args;
  if (n != 0) return raise_count(PATH_SIG("_root", "", S_PATH_T), 0, n);
  path = fr_access_path_new(NULL, NULL);
  if (path == NULL) return -1;
  *rv = fr_any_object(path);
  return 0;
}

static int check_type(const TVMFFIAny* value, int32_t type_index, int arg, const char* sig) {
  if (value->type_index == type_index) return 0;
  return fr_raise("TypeError",
                  "Mismatched type on argument #%d when calling: `%s`. Expected `%s` but got `%s`",
                  arg, sig, fr_type_key_of(type_index), fr_type_key_of(value->type_index));
}

void* fr_access_step_new(int32_t kind, const TVMFFIAny* key) {
  void* step = fr_reflected_new(fr_access_step_index);
  if (step == NULL) return NULL;
  STEP_KIND(step) = kind;
  if (fr_any_view_to_owned(key, STEP_KEY(step)) != 0) {
    fr_decref(step);
    return NULL;
  }
  return step;
}

static int path_extend_with(const TVMFFIAny* self, int32_t kind, const TVMFFIAny* key,
                            TVMFFIAny* rv) {
  void* step = fr_access_step_new(kind, key);
  void* path;
  if (step == NULL) return -1;
  path = fr_access_path_new(self->v_obj, step);
  fr_decref(step);
  if (path == NULL) return -1;
  *rv = fr_any_object(path);
  return 0;
}

/* The seven step constructors: kind from ctx, key converted as the upstream signature does. */
typedef struct {
  int32_t kind;
  const char* sig;
  int key_type; /* 0 Any, 1 str, 2 int */
} FrStepMethod;

static const FrStepMethod kStepMethods[] = {
    {0, PATH_SIG("_attr", "0: " S_PATH_T ", 1: str", S_PATH_T), 1},
    {1, PATH_SIG("_array_item", "0: " S_PATH_T ", 1: int", S_PATH_T), 2},
    {2, PATH_SIG("_map_item", "0: " S_PATH_T ", 1: Any", S_PATH_T), 0},
    {3, PATH_SIG("_attr_missing", "0: " S_PATH_T ", 1: str", S_PATH_T), 1},
    {4, PATH_SIG("_array_item_missing", "0: " S_PATH_T ", 1: int", S_PATH_T), 2},
    {5, PATH_SIG("_map_item_missing", "0: " S_PATH_T ", 1: Any", S_PATH_T), 0},
};

static int path_step_method(void* ctx, const TVMFFIAny* args, int32_t n, TVMFFIAny* rv) {
  const FrStepMethod* m = (const FrStepMethod*)ctx;
  TVMFFIAny key;
  TVMFFIByteArray text;
  if (n != 2) return raise_count(m->sig, 2, n);
  key = args[1];
  if (m->key_type == 1 && fr_any_str_view(&args[1], 0, &text) != 0) {
    return fr_raise("TypeError",
                    "Mismatched type on argument #1 when calling: `%s`. Expected `str` but got "
                    "`%s`",
                    m->sig, fr_type_key_of(args[1].type_index));
  }
  if (m->key_type == 2) {
    if (args[1].type_index != kTVMFFIInt && args[1].type_index != kTVMFFIBool) {
      return fr_raise("TypeError",
                      "Mismatched type on argument #1 when calling: `%s`. Expected `int` but got "
                      "`%s`",
                      m->sig, fr_type_key_of(args[1].type_index));
    }
    key = fr_any_int(args[1].v_int64);
  }
  if (check_type(&args[0], fr_access_path_index, 0, m->sig) != 0) return -1;
  return path_extend_with(&args[0], m->kind, &key, rv);
}

static const char kExtendSig[] =
    PATH_SIG("_extend", "0: " S_PATH_T ", 1: ffi.reflection.AccessStep", S_PATH_T);

static int path_extend(void* ctx, const TVMFFIAny* args, int32_t n, TVMFFIAny* rv) {
  void* path;
  (void)ctx;
  if (n != 2) return raise_count(kExtendSig, 2, n);
  if (check_type(&args[1], fr_access_step_index, 1, kExtendSig) != 0 ||
      check_type(&args[0], fr_access_path_index, 0, kExtendSig) != 0) {
    return -1;
  }
  path = fr_access_path_new(args[0].v_obj, args[1].v_obj);
  if (path == NULL) return -1;
  *rv = fr_any_object(path);
  return 0;
}

static int step_equal(void* a, void* b, int* out) {
  if (a == b) {
    *out = 1;
    return 0;
  }
  if (a == NULL || b == NULL || STEP_KIND(a) != STEP_KIND(b)) {
    *out = 0;
    return 0;
  }
  return fr_any_equal(STEP_KEY(a), STEP_KEY(b), out);
}

static int path_equal_raw(void* a, void* b, int* out) {
  while (a != NULL && b != NULL) {
    if (PATH_DEPTH(a) != PATH_DEPTH(b)) {
      *out = 0;
      return 0;
    }
    if (step_equal(PATH_STEP(a), PATH_STEP(b), out) != 0) return -1;
    if (!*out) return 0;
    a = PATH_PARENT(a);
    b = PATH_PARENT(b);
  }
  *out = a == b;
  return 0;
}

static const char kIsPrefixOfSig[] =
    PATH_SIG("_is_prefix_of", "0: " S_PATH_T ", 1: " S_PATH_T, "bool");
static const char kPathEqualSig[] = PATH_SIG("_path_equal", "0: " S_PATH_T ", 1: " S_PATH_T, "bool");

static int two_paths(const TVMFFIAny* args, int32_t n, const char* sig) {
  if (n != 2) return raise_count(sig, 2, n);
  if (check_type(&args[1], fr_access_path_index, 1, sig) != 0 ||
      check_type(&args[0], fr_access_path_index, 0, sig) != 0) {
    return -1;
  }
  return 0;
}

static int path_is_prefix_of(void* ctx, const TVMFFIAny* args, int32_t n, TVMFFIAny* rv) {
  void* self;
  void* other;
  int eq;
  (void)ctx;
  if (two_paths(args, n, kIsPrefixOfSig) != 0) return -1;
  self = args[0].v_obj;
  other = args[1].v_obj;
  if (PATH_DEPTH(self) > PATH_DEPTH(other)) {
    *rv = fr_any_bool(0);
    return 0;
  }
  while (PATH_DEPTH(other) > PATH_DEPTH(self)) other = PATH_PARENT(other);
  if (path_equal_raw(self, other, &eq) != 0) return -1;
  *rv = fr_any_bool(eq);
  return 0;
}

static int path_equal(void* ctx, const TVMFFIAny* args, int32_t n, TVMFFIAny* rv) {
  int eq;
  (void)ctx;
  if (two_paths(args, n, kPathEqualSig) != 0) return -1;
  if (path_equal_raw(args[0].v_obj, args[1].v_obj, &eq) != 0) return -1;
  *rv = fr_any_bool(eq);
  return 0;
}

static int path_to_steps(void* ctx, const TVMFFIAny* args, int32_t n, TVMFFIAny* rv) {
  static const char sig[] =
      PATH_SIG("_to_steps", "0: " S_PATH_T, "Array<ffi.reflection.AccessStep>");
  void* path;
  void* array;
  int32_t depth, i;
  (void)ctx;
  if (n != 1) return raise_count(sig, 1, n);
  if (check_type(&args[0], fr_access_path_index, 0, sig) != 0) return -1;
  path = args[0].v_obj;
  depth = PATH_DEPTH(path);
  array = fr_array_new(depth);
  if (array == NULL) return -1;
  ((FrSeq*)array)->cell.size = depth;
  for (i = depth - 1; i >= 0; --i, path = PATH_PARENT(path)) {
    void* step = PATH_STEP(path);
    if (step != NULL) fr_incref(step);
    fr_seq_items(array)[i] = fr_any_object(step);
  }
  *rv = fr_any_object(array);
  return 0;
}

#define S_PATH "{\"type\":\"ffi.reflection.AccessPath\"}"

int fr_access_path_types_init(void) {
  static const FrFieldSpec kAccessStepFields[] = {
      {"kind", NULL, "{\"type\":\"int\"}", FR_FIELD_I32, 0, 24, kTVMFFIInt},
      {"key", NULL, "{\"type\":\"Any\"}", FR_FIELD_ANY, 0, 32, -1},
  };
  static const FrFieldSpec kAccessPathFields[] = {
      {"parent", NULL, "{\"type\":\"Optional\",\"args\":[{\"type\":\"ffi.Object\"}]}",
       FR_FIELD_OBJ, 0, 24, -1},
      {"step", NULL,
       "{\"type\":\"Optional\",\"args\":[{\"type\":\"ffi.reflection.AccessStep\"}]}",
       FR_FIELD_OBJ, 0, 32, -1},
      {"depth", NULL, "{\"type\":\"int\"}", FR_FIELD_I32, 0, 40, kTVMFFIInt},
  };
  static const struct {
    const char* name;
    int index; /* into kStepMethods, or -1 */
    TVMFFISafeCallType fn;
    const char* schema;
  } kPathMethods[] = {
      {"_extend", -1, (TVMFFISafeCallType)path_extend,
       FR_SCHEMA_FN(S_PATH, S_PATH ",{\"type\":\"ffi.reflection.AccessStep\"}")},
      {"_attr", 0, NULL, FR_SCHEMA_FN(S_PATH, S_PATH ",{\"type\":\"ffi.String\"}")},
      {"_array_item", 1, NULL, FR_SCHEMA_FN(S_PATH, S_PATH ",{\"type\":\"int\"}")},
      {"_map_item", 2, NULL, FR_SCHEMA_FN(S_PATH, S_PATH ",{\"type\":\"Any\"}")},
      {"_attr_missing", 3, NULL, FR_SCHEMA_FN(S_PATH, S_PATH ",{\"type\":\"ffi.String\"}")},
      {"_array_item_missing", 4, NULL, FR_SCHEMA_FN(S_PATH, S_PATH ",{\"type\":\"int\"}")},
      {"_map_item_missing", 5, NULL, FR_SCHEMA_FN(S_PATH, S_PATH ",{\"type\":\"Any\"}")},
      {"_is_prefix_of", -1, (TVMFFISafeCallType)path_is_prefix_of,
       FR_SCHEMA_FN("{\"type\":\"bool\"}", S_PATH "," S_PATH)},
      {"_to_steps", -1, (TVMFFISafeCallType)path_to_steps,
       FR_SCHEMA_FN("{\"type\":\"ffi.Array\",\"args\":[{\"type\":\"ffi.reflection.AccessStep\"}]}",
                    S_PATH)},
      {"_path_equal", -1, (TVMFFISafeCallType)path_equal,
       FR_SCHEMA_FN("{\"type\":\"bool\"}", S_PATH "," S_PATH)},
  };
  size_t i;

  fr_access_step_index = fr_refl_register_dynamic("ffi.reflection.AccessStep", kTVMFFIObject, 1);
  if (fr_access_step_index < 0 ||
      fr_refl_register_field(fr_access_step_index, &kAccessStepFields[0]) != 0 ||
      fr_refl_register_field(fr_access_step_index, &kAccessStepFields[1]) != 0 ||
      fr_refl_register_metadata(fr_access_step_index, 48, kTVMFFISEqHashKindConstTreeNode,
                                create_access_step) != 0) {
    return -1;
  }
  fr_access_path_index = fr_refl_register_dynamic("ffi.reflection.AccessPath", kTVMFFIObject, 1);
  if (fr_access_path_index < 0) return -1;
  for (i = 0; i < 3; ++i) {
    if (fr_refl_register_field(fr_access_path_index, &kAccessPathFields[i]) != 0) return -1;
  }
  if (fr_refl_register_method(fr_access_path_index, "_root", NULL, FR_SCHEMA_FN(S_PATH, ""),
                              kTVMFFIFieldFlagBitMaskIsStaticMethod,
                              fr_function_new(path_root, NULL, NULL)) != 0) {
    return -1;
  }
  for (i = 0; i < sizeof(kPathMethods) / sizeof(kPathMethods[0]); ++i) {
    void* f = kPathMethods[i].index >= 0
                  ? fr_function_new(path_step_method, (void*)&kStepMethods[kPathMethods[i].index],
                                    NULL)
                  : fr_function_new((FrPackedFn)kPathMethods[i].fn, NULL, NULL);
    if (fr_refl_register_method(fr_access_path_index, kPathMethods[i].name, NULL,
                                kPathMethods[i].schema, 0, f) != 0) {
      return -1;
    }
  }
  if (fr_refl_register_metadata(fr_access_path_index, 48, kTVMFFISEqHashKindConstTreeNode,
                                create_access_path) != 0) {
    return -1;
  }
  return 0;
}
