/*
 * reflection.c -- the reflected types upstream's library registers when it
 * loads, registered here in the same order so that the same later
 * registrations get the same type indices under both, with their fields,
 * methods, metadata and type attributes.
 *
 * Objects of these types made here are plain: header, then the fields at the
 * registered offsets. Fields of 16 bytes hold an Any (or a String); fields of
 * 8 bytes typed as objects (static index -1 or >= 64) hold an object pointer
 * or NULL; the rest are plain integers. Releasing an object releases its
 * fields by those rules.
 */
#include "core.h"

#include "containers.h"
#include "functions.h"
#include "registry.h"
#include "runtime.h"
#include "structural.h"

/* ----------------------------------------------------- field accessors */

static int get_any(void* field, TVMFFIAny* result) {
  *result = fr_any_copy((const TVMFFIAny*)field);
  return 0;
}

static int set_any(void* field, const TVMFFIAny* value) {
  TVMFFIAny owned;
  if (fr_any_view_to_owned(value, &owned) != 0) return -1;
  fr_any_release((TVMFFIAny*)field);
  *(TVMFFIAny*)field = owned;
  return 0;
}

static int get_object(void* field, TVMFFIAny* result) {
  void* obj = *(void**)field;
  if (obj != NULL) fr_incref(obj);
  *result = fr_any_object(obj);
  return 0;
}

static int set_object(void* field, const TVMFFIAny* value) {
  void* old = *(void**)field;
  if (value->type_index == kTVMFFINone) {
    *(void**)field = NULL;
  } else if (value->type_index >= kTVMFFIStaticObjectBegin) {
    fr_incref(value->v_obj);
    *(void**)field = value->v_obj;
  } else {
    return fr_raise("TypeError", "Cannot convert from type `%s` to `ffi.Object`",
                    fr_type_key_of(value->type_index));
  }
  if (old != NULL) fr_decref(old);
  return 0;
}

static int get_i64(void* field, TVMFFIAny* result) {
  *result = fr_any_int(*(int64_t*)field);
  return 0;
}

static int set_i64(void* field, const TVMFFIAny* value) {
  if (value->type_index != kTVMFFIInt && value->type_index != kTVMFFIBool) {
    return fr_raise("TypeError", "Cannot convert from type `%s` to `int`",
                    fr_type_key_of(value->type_index));
  }
  *(int64_t*)field = value->v_int64;
  return 0;
}

static int get_i32(void* field, TVMFFIAny* result) {
  *result = fr_any_int(*(int32_t*)field);
  return 0;
}

static int set_i32(void* field, const TVMFFIAny* value) {
  if (value->type_index != kTVMFFIInt && value->type_index != kTVMFFIBool) {
    return fr_raise("TypeError", "Cannot convert from type `%s` to `int`",
                    fr_type_key_of(value->type_index));
  }
  *(int32_t*)field = (int32_t)value->v_int64;
  return 0;
}

/* ------------------------------------------------ plain reflected objects */

static int is_object_field(const TVMFFIFieldInfo* f) {
  return f->size == 8 &&
         (f->field_static_type_index == kTVMFFIAny ||
          f->field_static_type_index >= kTVMFFIStaticObjectBegin);
}

static void release_fields_of(const TVMFFITypeInfo* info, char* body) {
  int32_t i;
  for (i = 0; i < info->num_fields; ++i) {
    const TVMFFIFieldInfo* f = &info->fields[i];
    if (f->size == 16) {
      fr_any_release((TVMFFIAny*)(body + f->offset));
    } else if (is_object_field(f)) {
      void* obj = *(void**)(body + f->offset);
      if (obj != NULL) fr_decref(obj);
      *(void**)(body + f->offset) = NULL;
    }
  }
}

static void reflected_deleter(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    const TVMFFITypeInfo* info = fr_type_info_or_null(fr_type_index(self));
    if (info != NULL) {
      int32_t d;
      for (d = 0; d < info->type_depth; ++d) release_fields_of(info->type_ancestors[d], self);
      release_fields_of(info, self);
    }
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) free(self);
}

void* fr_reflected_new(int32_t type_index) {
  const TVMFFITypeInfo* info = fr_type_info_or_null(type_index);
  size_t size = info != NULL && info->metadata != NULL ? (size_t)info->metadata->total_size : 0;
  return fr_object_alloc(size, type_index, reflected_deleter);
}

#define DEFINE_CREATOR(name, index_var)                    \
  static int32_t index_var = -1;                           \
  static int name(TVMFFIObjectHandle* result) {            \
    void* obj = fr_reflected_new(index_var);                  \
    if (obj == NULL) return -1;                            \
    *result = obj;                                         \
    return 0;                                              \
  }

DEFINE_CREATOR(create_visit_interrupt, g_visit_interrupt_index)
DEFINE_CREATOR(create_enum_state, g_enum_state_index)
DEFINE_CREATOR(create_enum, g_enum_index)
DEFINE_CREATOR(create_int_enum, g_int_enum_index)
DEFINE_CREATOR(create_str_enum, g_str_enum_index)
DEFINE_CREATOR(create_access_step, g_access_step_index)
DEFINE_CREATOR(create_access_path, g_access_path_index)
DEFINE_CREATOR(create_visit_error_context, g_visit_error_context_index)
DEFINE_CREATOR(create_structural_key, g_structural_key_index)

/* A new object of obj's reflected type with the same field values (new references). */
static int shallow_copy(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  void* obj = args[0].value.v_obj;
  int32_t ti = fr_type_index(obj);
  const TVMFFITypeInfo* info = fr_type_info_or_null(ti);
  char* copy = (char*)fr_reflected_new(ti);
  int32_t d, i;
  (void)ctx;
  if (copy == NULL) return -1;
  memcpy(copy + FR_HEADER_SIZE, (char*)obj + FR_HEADER_SIZE,
         (size_t)info->metadata->total_size - FR_HEADER_SIZE);
  for (d = 0; d <= info->type_depth; ++d) {
    const TVMFFITypeInfo* owner = d < info->type_depth ? info->type_ancestors[d] : info;
    for (i = 0; i < owner->num_fields; ++i) {
      const TVMFFIFieldInfo* f = &owner->fields[i];
      if (f->size == 16) {
        fr_any_copy((TVMFFIAny*)(copy + f->offset));
      } else if (is_object_field(f) && *(void**)(copy + f->offset) != NULL) {
        fr_incref(*(void**)(copy + f->offset));
      }
    }
  }
  *rv = fr_any_object(copy);
  return 0;
}

static const FrBuiltin kShallowCopy = {"", shallow_copy, NULL, 1, {FR_T_OBJECT}, FR_T_OBJECT};

/* ------------------------------------------------------- registration */

enum { F_ANY, F_OBJ, F_I64, F_I32 };

typedef struct {
  const char* name;
  const char* doc;
  const char* schema; /* the type schema JSON (escaped into the metadata) */
  int kind;
  int64_t flags;
  int64_t offset;
  int32_t static_index;
} FrFieldSpec;

static TVMFFIByteArray bytes_of(const char* text) {
  TVMFFIByteArray b;
  b.data = text != NULL ? text : "";
  b.size = text != NULL ? strlen(text) : 0;
  return b;
}

/* {"type_schema":"<schema as a JSON string>"} */
static void schema_metadata(FrBuf* buf, const char* schema) {
  const char* p;
  fr_buf_puts(buf, "{\"type_schema\":\"");
  for (p = schema; *p; ++p) {
    if (*p == '"' || *p == '\\') fr_buf_puts(buf, "\\");
    fr_buf_append(buf, p, 1);
  }
  fr_buf_puts(buf, "\"}");
}

static int register_field(int32_t type_index, const FrFieldSpec* spec) {
  TVMFFIFieldInfo info;
  FrBuf metadata;
  int status;
  memset(&info, 0, sizeof(info));
  fr_buf_init(&metadata);
  schema_metadata(&metadata, spec->schema);
  info.name = bytes_of(spec->name);
  info.doc = bytes_of(spec->doc);
  info.metadata.data = fr_buf_cstr(&metadata);
  info.metadata.size = metadata.size;
  info.flags = spec->flags;
  info.offset = spec->offset;
  info.field_static_type_index = spec->static_index;
  info.default_value_or_factory = fr_any_none();
  switch (spec->kind) {
    case F_ANY:
      info.size = 16, info.alignment = 8, info.getter = get_any, info.setter = (void*)set_any;
      break;
    case F_OBJ:
      info.size = 8, info.alignment = 8, info.getter = get_object;
      info.setter = (void*)set_object;
      break;
    case F_I64:
      info.size = 8, info.alignment = 8, info.getter = get_i64, info.setter = (void*)set_i64;
      break;
    default:
      info.size = 4, info.alignment = 4, info.getter = get_i32, info.setter = (void*)set_i32;
      break;
  }
  status = fr_type_register_field(type_index, &info);
  fr_buf_free(&metadata);
  return status;
}

static int register_metadata(int32_t type_index, int32_t total_size, int kind,
                             TVMFFIObjectCreator creator) {
  TVMFFITypeMetadata md;
  memset(&md, 0, sizeof(md));
  md.total_size = total_size;
  md.structural_eq_hash_kind = (TVMFFISEqHashKind)kind;
  md.creator = creator;
  return fr_type_register_metadata(type_index, &md);
}

static int register_method(int32_t type_index, const char* name, const char* doc,
                           const char* schema, int64_t flags, void* func) {
  TVMFFIMethodInfo info;
  FrBuf metadata;
  int status;
  if (func == NULL) return -1;
  memset(&info, 0, sizeof(info));
  fr_buf_init(&metadata);
  schema_metadata(&metadata, schema);
  info.name = bytes_of(name);
  info.doc = bytes_of(doc);
  info.metadata.data = fr_buf_cstr(&metadata);
  info.metadata.size = metadata.size;
  info.flags = flags;
  info.method = fr_any_object(func);
  status = fr_type_register_method(type_index, &info);
  fr_buf_free(&metadata);
  fr_decref(func);
  return status;
}

static int set_true_attr(int32_t type_index, const char* name) {
  TVMFFIAny value = fr_any_bool(1);
  return fr_register_attr_cstr(type_index, name, &value);
}

static int ensure_column(const char* name) {
  return fr_register_attr_cstr(kTVMFFINone, name, NULL);
}

/* ------------------------------------------------------- EnumState init */

static int enum_state_init(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  char* obj = (char*)fr_reflected_new(g_enum_state_index);
  (void)ctx;
  (void)args;
  if (obj == NULL) return -1;
  *(void**)(obj + 24) = fr_list_new(0);
  *(void**)(obj + 32) = fr_map_new(kTVMFFIDict);
  *(void**)(obj + 40) = fr_map_new(kTVMFFIDict);
  if (*(void**)(obj + 24) == NULL || *(void**)(obj + 32) == NULL || *(void**)(obj + 40) == NULL) {
    fr_decref(obj);
    return -1;
  }
  *rv = fr_any_object(obj);
  return 0;
}

/* Methods are typed functions named "<type key>.<method>" (their error texts say so). */
static const FrBuiltin kEnumStateInit = {"ffi.EnumState.__ffi_init__", enum_state_init, NULL, 0,
                                         {0}, FR_T_OBJECT};

/* ---------------------------------------------------------- AccessPath */

/* AccessStep: kind (int32 at 24), key (Any at 32). AccessPath: parent, step, depth. */
#define STEP_KIND(o) (*(int32_t*)((char*)(o) + 24))
#define STEP_KEY(o) ((TVMFFIAny*)((char*)(o) + 32))
#define PATH_PARENT(o) (*(void**)((char*)(o) + 24))
#define PATH_STEP(o) (*(void**)((char*)(o) + 32))
#define PATH_DEPTH(o) (*(int32_t*)((char*)(o) + 40))

void* fr_access_path_new(void* parent, void* step) {
  void* path = fr_reflected_new(g_access_path_index);
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
  void* step = fr_reflected_new(g_access_step_index);
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
  if (check_type(&args[0], g_access_path_index, 0, m->sig) != 0) return -1;
  return path_extend_with(&args[0], m->kind, &key, rv);
}

static const char kExtendSig[] =
    PATH_SIG("_extend", "0: " S_PATH_T ", 1: ffi.reflection.AccessStep", S_PATH_T);

static int path_extend(void* ctx, const TVMFFIAny* args, int32_t n, TVMFFIAny* rv) {
  void* path;
  (void)ctx;
  if (n != 2) return raise_count(kExtendSig, 2, n);
  if (check_type(&args[1], g_access_step_index, 1, kExtendSig) != 0 ||
      check_type(&args[0], g_access_path_index, 0, kExtendSig) != 0) {
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
  if (check_type(&args[1], g_access_path_index, 1, sig) != 0 ||
      check_type(&args[0], g_access_path_index, 0, sig) != 0) {
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
  if (check_type(&args[0], g_access_path_index, 0, sig) != 0) return -1;
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

static int structural_key_init(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  void* key;
  (void)ctx;
  if (fr_structural_key_new(&args[0].value, &key) != 0) return -1;
  *rv = fr_any_object(key);
  return 0;
}

static const FrBuiltin kStructuralKeyInit = {"ffi.StructuralKey.__ffi_init__",
                                             structural_key_init, NULL, 1, {FR_T_ANY},
                                             FR_T_OBJECT};

/* ------------------------------------------ ffi.MakeObjectFromPackedArgs */

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

/* ---------------------------------------------------------------- init */

#define SCHEMA_FN(ret, params) \
  "{\"type\":\"ffi.Function\",\"named_args\":{\"return\":[" ret "],\"params\":[" params "]}}"
#define S_PATH "{\"type\":\"ffi.reflection.AccessPath\"}"

static int32_t register_dynamic(const char* key, int32_t parent, int32_t depth) {
  return fr_register_type(key, -1, depth, 0, 1, parent);
}

int fr_reflection_init(void) {
  static const FrFieldSpec kModuleImports = {
      "imports_", NULL, "{\"type\":\"ffi.Array\",\"args\":[{\"type\":\"Any\"}]}", F_OBJ, 0, 24,
      kTVMFFIArray};
  static const FrFieldSpec kVisitInterruptValue = {
      "value", NULL, "{\"type\":\"Any\"}", F_ANY, kTVMFFIFieldFlagBitMaskHasDefault, 24, -1};
  static const FrFieldSpec kEnumStateFields[] = {
      {"entries", "Enum singletons in registration order.",
       "{\"type\":\"ffi.List\",\"args\":[{\"type\":\"ffi.Object\"}]}", F_OBJ,
       kTVMFFIFieldFlagBitMaskInitOff, 24, kTVMFFIList},
      {"indexes", "Canonical integer and string indices to enum singletons.",
       "{\"type\":\"ffi.Dict\",\"args\":[{\"type\":\"Any\"},{\"type\":\"ffi.Object\"}]}", F_OBJ,
       kTVMFFIFieldFlagBitMaskInitOff, 32, kTVMFFIObject},
      {"attrs", "Extensible-attribute columns keyed by enum singleton.",
       "{\"type\":\"ffi.Dict\",\"args\":[{\"type\":\"ffi.String\"},{\"type\":\"ffi.Dict\",\"args\":"
       "[{\"type\":\"ffi.Object\"},{\"type\":\"Any\"}]}]}",
       F_OBJ, kTVMFFIFieldFlagBitMaskInitOff, 40, kTVMFFIObject},
  };
  static const FrFieldSpec kEnumFields[] = {
      {"_int_index", "Canonical integer index.", "{\"type\":\"int\"}", F_I64,
       kTVMFFIFieldFlagBitMaskSEqHashIgnore, 24, kTVMFFIInt},
      {"_str_index", "Canonical string index.", "{\"type\":\"ffi.String\"}", F_ANY, 0, 32, -1},
  };
  static const FrFieldSpec kIntEnumValue = {
      "value", "Canonical integer index.", "{\"type\":\"int\"}", F_I64,
      kTVMFFIFieldFlagBitMaskInitOff | kTVMFFIFieldFlagBitMaskSEqHashIgnore, 24, kTVMFFIInt};
  static const FrFieldSpec kStrEnumValue = {
      "value", "Canonical string index.", "{\"type\":\"ffi.String\"}", F_ANY,
      kTVMFFIFieldFlagBitMaskInitOff | kTVMFFIFieldFlagBitMaskSEqHashIgnore, 32, -1};
  static const FrFieldSpec kAccessStepFields[] = {
      {"kind", NULL, "{\"type\":\"int\"}", F_I32, 0, 24, kTVMFFIInt},
      {"key", NULL, "{\"type\":\"Any\"}", F_ANY, 0, 32, -1},
  };
  static const FrFieldSpec kAccessPathFields[] = {
      {"parent", NULL, "{\"type\":\"Optional\",\"args\":[{\"type\":\"ffi.Object\"}]}", F_OBJ, 0,
       24, -1},
      {"step", NULL,
       "{\"type\":\"Optional\",\"args\":[{\"type\":\"ffi.reflection.AccessStep\"}]}", F_OBJ, 0,
       32, -1},
      {"depth", NULL, "{\"type\":\"int\"}", F_I32, 0, 40, kTVMFFIInt},
  };
  static const FrFieldSpec kVisitErrorContextFields[] = {
      {"reverse_visit_pattern", NULL,
       "{\"type\":\"ffi.List\",\"args\":[{\"type\":\"ffi.Object\"}]}", F_OBJ, 0, 24, kTVMFFIList},
      {"prev_error_context", NULL, "{\"type\":\"Optional\",\"args\":[{\"type\":\"ffi.Object\"}]}",
       F_OBJ, 0, 32, -1},
  };
  static const FrFieldSpec kStructuralKeyFields[] = {
      {"key", NULL, "{\"type\":\"Any\"}", F_ANY, 0, 24, -1},
      {"hash_i64", NULL, "{\"type\":\"int\"}", F_I64, 0, 40, kTVMFFIInt},
  };
  static const struct {
    const char* name;
    int index; /* into kStepMethods, or -1 */
    TVMFFISafeCallType fn;
    const char* schema;
  } kPathMethods[] = {
      {"_extend", -1, (TVMFFISafeCallType)path_extend,
       SCHEMA_FN(S_PATH, S_PATH ",{\"type\":\"ffi.reflection.AccessStep\"}")},
      {"_attr", 0, NULL, SCHEMA_FN(S_PATH, S_PATH ",{\"type\":\"ffi.String\"}")},
      {"_array_item", 1, NULL, SCHEMA_FN(S_PATH, S_PATH ",{\"type\":\"int\"}")},
      {"_map_item", 2, NULL, SCHEMA_FN(S_PATH, S_PATH ",{\"type\":\"Any\"}")},
      {"_attr_missing", 3, NULL, SCHEMA_FN(S_PATH, S_PATH ",{\"type\":\"ffi.String\"}")},
      {"_array_item_missing", 4, NULL, SCHEMA_FN(S_PATH, S_PATH ",{\"type\":\"int\"}")},
      {"_map_item_missing", 5, NULL, SCHEMA_FN(S_PATH, S_PATH ",{\"type\":\"Any\"}")},
      {"_is_prefix_of", -1, (TVMFFISafeCallType)path_is_prefix_of,
       SCHEMA_FN("{\"type\":\"bool\"}", S_PATH "," S_PATH)},
      {"_to_steps", -1, (TVMFFISafeCallType)path_to_steps,
       SCHEMA_FN("{\"type\":\"ffi.Array\",\"args\":[{\"type\":\"ffi.reflection.AccessStep\"}]}",
                 S_PATH)},
      {"_path_equal", -1, (TVMFFISafeCallType)path_equal,
       SCHEMA_FN("{\"type\":\"bool\"}", S_PATH "," S_PATH)},
  };
  size_t i;
  int32_t enum_index;
  TVMFFIAny native;

  /* static types with reflection: ffi.Module, ffi.VisitInterrupt, ffi.BigInt */
  if (register_metadata(kTVMFFIModule, 48, kTVMFFISEqHashKindUnsupported, NULL) != 0 ||
      register_field(kTVMFFIModule, &kModuleImports) != 0) {
    return -1;
  }
  g_visit_interrupt_index = fr_register_type("ffi.VisitInterrupt", kTVMFFIVisitInterrupt, 1, 0, 0,
                                             kTVMFFIObject);
  if (g_visit_interrupt_index < 0 ||
      register_metadata(kTVMFFIVisitInterrupt, 40, kTVMFFISEqHashKindUnsupported,
                        create_visit_interrupt) != 0 ||
      register_field(kTVMFFIVisitInterrupt, &kVisitInterruptValue) != 0 ||
      register_metadata(kTVMFFIBigInt, 32, kTVMFFISEqHashKindUnsupported, NULL) != 0) {
    return -1;
  }

  /* the dynamic types, in upstream's order: 128 ... 137 */
  g_enum_state_index = register_dynamic("ffi.EnumState", kTVMFFIObject, 1);
  if (g_enum_state_index < 0) return -1;
  for (i = 0; i < 3; ++i) {
    if (register_field(g_enum_state_index, &kEnumStateFields[i]) != 0) return -1;
  }
  if (register_method(g_enum_state_index, "__ffi_init__", NULL,
                      SCHEMA_FN("{\"type\":\"ffi.Object\"}", ""),
                      kTVMFFIFieldFlagBitMaskIsStaticMethod,
                      fr_typed_function_new(&kEnumStateInit, NULL, NULL)) != 0 ||
      register_metadata(g_enum_state_index, 48, kTVMFFISEqHashKindUnsupported,
                        create_enum_state) != 0) {
    return -1;
  }
  enum_index = g_enum_index = register_dynamic("ffi.Enum", kTVMFFIObject, 1);
  if (enum_index < 0 || register_field(enum_index, &kEnumFields[0]) != 0 ||
      register_field(enum_index, &kEnumFields[1]) != 0 ||
      register_metadata(enum_index, 48, kTVMFFISEqHashKindUniqueInstance, create_enum) != 0) {
    return -1;
  }
  g_int_enum_index = register_dynamic("ffi.IntEnum", enum_index, 2);
  if (g_int_enum_index < 0 || register_field(g_int_enum_index, &kIntEnumValue) != 0 ||
      register_metadata(g_int_enum_index, 48, kTVMFFISEqHashKindUniqueInstance,
                        create_int_enum) != 0) {
    return -1;
  }
  g_str_enum_index = register_dynamic("ffi.StrEnum", enum_index, 2);
  if (g_str_enum_index < 0 || register_field(g_str_enum_index, &kStrEnumValue) != 0 ||
      register_metadata(g_str_enum_index, 48, kTVMFFISEqHashKindUniqueInstance,
                        create_str_enum) != 0) {
    return -1;
  }
  g_access_step_index = register_dynamic("ffi.reflection.AccessStep", kTVMFFIObject, 1);
  if (g_access_step_index < 0 || register_field(g_access_step_index, &kAccessStepFields[0]) != 0 ||
      register_field(g_access_step_index, &kAccessStepFields[1]) != 0 ||
      register_metadata(g_access_step_index, 48, kTVMFFISEqHashKindConstTreeNode,
                        create_access_step) != 0) {
    return -1;
  }
  g_access_path_index = register_dynamic("ffi.reflection.AccessPath", kTVMFFIObject, 1);
  if (g_access_path_index < 0) return -1;
  for (i = 0; i < 3; ++i) {
    if (register_field(g_access_path_index, &kAccessPathFields[i]) != 0) return -1;
  }
  if (register_method(g_access_path_index, "_root", NULL, SCHEMA_FN(S_PATH, ""),
                      kTVMFFIFieldFlagBitMaskIsStaticMethod,
                      fr_function_new(path_root, NULL, NULL)) != 0) {
    return -1;
  }
  for (i = 0; i < sizeof(kPathMethods) / sizeof(kPathMethods[0]); ++i) {
    void* f = kPathMethods[i].index >= 0
                  ? fr_function_new(path_step_method, (void*)&kStepMethods[kPathMethods[i].index],
                                    NULL)
                  : fr_function_new((FrPackedFn)kPathMethods[i].fn, NULL, NULL);
    if (register_method(g_access_path_index, kPathMethods[i].name, NULL, kPathMethods[i].schema, 0,
                        f) != 0) {
      return -1;
    }
  }
  if (register_metadata(g_access_path_index, 48, kTVMFFISEqHashKindConstTreeNode,
                        create_access_path) != 0) {
    return -1;
  }
  {
    int32_t visitor = register_dynamic("ffi.StructuralVisitor", kTVMFFIObject, 1);
    if (visitor < 0 ||
        register_metadata(visitor, 40, kTVMFFISEqHashKindUnsupported, NULL) != 0) {
      return -1;
    }
  }
  g_visit_error_context_index = register_dynamic("ffi.VisitErrorContext", kTVMFFIObject, 1);
  if (g_visit_error_context_index < 0 ||
      register_field(g_visit_error_context_index, &kVisitErrorContextFields[0]) != 0 ||
      register_field(g_visit_error_context_index, &kVisitErrorContextFields[1]) != 0 ||
      register_metadata(g_visit_error_context_index, 40, kTVMFFISEqHashKindUnsupported,
                        create_visit_error_context) != 0) {
    return -1;
  }
  {
    int32_t mutator = register_dynamic("ffi.StructuralMutator", kTVMFFIObject, 1);
    if (mutator < 0 ||
        register_metadata(mutator, 40, kTVMFFISEqHashKindUnsupported, NULL) != 0) {
      return -1;
    }
  }
  g_structural_key_index = register_dynamic("ffi.StructuralKey", kTVMFFIObject, 1);
  if (g_structural_key_index < 0 ||
      register_field(g_structural_key_index, &kStructuralKeyFields[0]) != 0 ||
      register_field(g_structural_key_index, &kStructuralKeyFields[1]) != 0 ||
      register_method(g_structural_key_index, "__ffi_init__",
                      "Constructor that takes any key and computes its structural hash",
                      SCHEMA_FN("{\"type\":\"ffi.Object\"}", "{\"type\":\"Any\"}"),
                      kTVMFFIFieldFlagBitMaskIsStaticMethod,
                      fr_typed_function_new(&kStructuralKeyInit, NULL, NULL)) != 0 ||
      register_metadata(g_structural_key_index, 48, kTVMFFISEqHashKindUnsupported,
                        create_structural_key) != 0) {
    return -1;
  }

  /* type attributes present at load */
  native.type_index = kTVMFFIOpaquePtr;
  native.zero_padding = 0;
  native.v_ptr = (void*)fr_bigint_any_hash;
  if (fr_register_attr_cstr(kTVMFFIBigInt, "__any_hash__", &native) != 0) return -1;
  native.v_ptr = (void*)fr_bigint_any_equal;
  if (fr_register_attr_cstr(kTVMFFIBigInt, "__any_equal__", &native) != 0) return -1;
  {
    static const int32_t kFinal[] = {kTVMFFIModule, kTVMFFIVisitInterrupt, kTVMFFIBigInt};
    int32_t t;
    for (i = 0; i < sizeof(kFinal) / sizeof(kFinal[0]); ++i) {
      if (set_true_attr(kFinal[i], "__ffi_type_final__") != 0) return -1;
    }
    for (t = g_enum_state_index; t <= g_structural_key_index; ++t) {
      if (set_true_attr(t, "__ffi_type_final__") != 0) return -1;
    }
  }
  if (ensure_column("__ffi_enum__") != 0) return -1;
  {
    /* the records made here are copyable (ffi.DeepCopy goes through this column), as upstream's */
    const int32_t copyable[] = {kTVMFFIVisitInterrupt,  g_enum_state_index,
                                g_enum_index,           g_int_enum_index,
                                g_str_enum_index,       g_access_step_index,
                                g_access_path_index,    g_visit_error_context_index,
                                g_structural_key_index};
    for (i = 0; i < sizeof(copyable) / sizeof(copyable[0]); ++i) {
      void* f = fr_typed_function_new(&kShallowCopy, NULL, NULL);
      TVMFFIAny entry;
      int status;
      if (f == NULL) return -1;
      entry = fr_any_object(f);
      status = fr_register_attr_cstr(copyable[i], "__ffi_shallow_copy__", &entry);
      fr_decref(f);
      if (status != 0) return -1;
    }
  }
  {
    /* the constructors are also the __ffi_init__ column's entries, as upstream's refl::init */
    const int32_t types[2] = {g_enum_state_index, g_structural_key_index};
    const FrBuiltin* inits[2] = {&kEnumStateInit, &kStructuralKeyInit};
    for (i = 0; i < 2; ++i) {
      TVMFFIAny init;
      int status;
      void* f = fr_typed_function_new(inits[i], NULL, NULL);
      if (f == NULL) return -1;
      init = fr_any_object(f);
      status = fr_register_attr_cstr(types[i], "__ffi_init__", &init);
      fr_decref(f);
      if (status != 0) return -1;
    }
  }
  return 0;
}
