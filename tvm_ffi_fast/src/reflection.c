/*
 * reflection.c -- the reflected types upstream's library registers when it
 * loads, registered here in the same order so that the same later
 * registrations get the same type indices under both, with their fields,
 * methods, metadata and type attributes.
 *
 * Its twin in the reference runtime: tvm_ffi_ref/runtime/reflection.py.
 *
 * Objects of these types made here are plain: header, then the fields at the
 * registered offsets. Fields of 16 bytes hold an Any (or a String); fields of
 * 8 bytes typed as objects (static index -1 or >= 64) hold an object pointer
 * or NULL; the rest are plain integers. Releasing an object releases its
 * fields by those rules.
 *
 * AccessStep and AccessPath (their methods) are reflection_access_path.c;
 * ffi.MakeObjectFromPackedArgs and the field setters, reflection_make_object.c.
 */
#include "reflection.h"

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

static int32_t g_visit_interrupt_index = -1;
static int32_t g_enum_state_index = -1;
static int32_t g_enum_index = -1;
static int32_t g_int_enum_index = -1;
static int32_t g_str_enum_index = -1;
static int32_t g_visit_error_context_index = -1;
static int32_t g_structural_key_index = -1;
FR_DEFINE_CREATOR(create_visit_interrupt, g_visit_interrupt_index)
FR_DEFINE_CREATOR(create_enum_state, g_enum_state_index)
FR_DEFINE_CREATOR(create_enum, g_enum_index)
FR_DEFINE_CREATOR(create_int_enum, g_int_enum_index)
FR_DEFINE_CREATOR(create_str_enum, g_str_enum_index)
FR_DEFINE_CREATOR(create_visit_error_context, g_visit_error_context_index)
FR_DEFINE_CREATOR(create_structural_key, g_structural_key_index)

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

int fr_refl_register_field(int32_t type_index, const FrFieldSpec* spec) {
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
    case FR_FIELD_ANY:
      info.size = 16, info.alignment = 8, info.getter = get_any, info.setter = (void*)set_any;
      break;
    case FR_FIELD_OBJ:
      info.size = 8, info.alignment = 8, info.getter = get_object;
      info.setter = (void*)set_object;
      break;
    case FR_FIELD_I64:
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

int fr_refl_register_metadata(int32_t type_index, int32_t total_size, int kind,
                             TVMFFIObjectCreator creator) {
  TVMFFITypeMetadata md;
  memset(&md, 0, sizeof(md));
  md.total_size = total_size;
  md.structural_eq_hash_kind = (TVMFFISEqHashKind)kind;
  md.creator = creator;
  return fr_type_register_metadata(type_index, &md);
}

int fr_refl_register_method(int32_t type_index, const char* name, const char* doc,
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

int32_t fr_refl_register_dynamic(const char* key, int32_t parent, int32_t depth) {
  return fr_register_type(key, -1, depth, 0, 1, parent);
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

/* ------------------------------------------------------ StructuralKey init */

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

/* ---------------------------------------------------------------- init */

int fr_reflection_init(void) {
  static const FrFieldSpec kModuleImports = {
      "imports_", NULL, "{\"type\":\"ffi.Array\",\"args\":[{\"type\":\"Any\"}]}", FR_FIELD_OBJ,
      0, 24, kTVMFFIArray};
  static const FrFieldSpec kVisitInterruptValue = {
      "value", NULL, "{\"type\":\"Any\"}", FR_FIELD_ANY, kTVMFFIFieldFlagBitMaskHasDefault, 24, -1};
  static const FrFieldSpec kEnumStateFields[] = {
      {"entries", "Enum singletons in registration order.",
       "{\"type\":\"ffi.List\",\"args\":[{\"type\":\"ffi.Object\"}]}", FR_FIELD_OBJ,
       kTVMFFIFieldFlagBitMaskInitOff, 24, kTVMFFIList},
      {"indexes", "Canonical integer and string indices to enum singletons.",
       "{\"type\":\"ffi.Dict\",\"args\":[{\"type\":\"Any\"},{\"type\":\"ffi.Object\"}]}",
       FR_FIELD_OBJ, kTVMFFIFieldFlagBitMaskInitOff, 32, kTVMFFIObject},
      {"attrs", "Extensible-attribute columns keyed by enum singleton.",
       "{\"type\":\"ffi.Dict\",\"args\":[{\"type\":\"ffi.String\"},{\"type\":\"ffi.Dict\",\"args\":"
       "[{\"type\":\"ffi.Object\"},{\"type\":\"Any\"}]}]}",
       FR_FIELD_OBJ, kTVMFFIFieldFlagBitMaskInitOff, 40, kTVMFFIObject},
  };
  static const FrFieldSpec kEnumFields[] = {
      {"_int_index", "Canonical integer index.", "{\"type\":\"int\"}", FR_FIELD_I64,
       kTVMFFIFieldFlagBitMaskSEqHashIgnore, 24, kTVMFFIInt},
      {"_str_index", "Canonical string index.", "{\"type\":\"ffi.String\"}", FR_FIELD_ANY, 0, 32,
       -1},
  };
  static const FrFieldSpec kIntEnumValue = {
      "value", "Canonical integer index.", "{\"type\":\"int\"}", FR_FIELD_I64,
      kTVMFFIFieldFlagBitMaskInitOff | kTVMFFIFieldFlagBitMaskSEqHashIgnore, 24, kTVMFFIInt};
  static const FrFieldSpec kStrEnumValue = {
      "value", "Canonical string index.", "{\"type\":\"ffi.String\"}", FR_FIELD_ANY,
      kTVMFFIFieldFlagBitMaskInitOff | kTVMFFIFieldFlagBitMaskSEqHashIgnore, 32, -1};
  static const FrFieldSpec kVisitErrorContextFields[] = {
      {"reverse_visit_pattern", NULL,
       "{\"type\":\"ffi.List\",\"args\":[{\"type\":\"ffi.Object\"}]}", FR_FIELD_OBJ, 0, 24,
       kTVMFFIList},
      {"prev_error_context", NULL, "{\"type\":\"Optional\",\"args\":[{\"type\":\"ffi.Object\"}]}",
       FR_FIELD_OBJ, 0, 32, -1},
  };
  static const FrFieldSpec kStructuralKeyFields[] = {
      {"key", NULL, "{\"type\":\"Any\"}", FR_FIELD_ANY, 0, 24, -1},
      {"hash_i64", NULL, "{\"type\":\"int\"}", FR_FIELD_I64, 0, 40, kTVMFFIInt},
  };
  size_t i;
  int32_t enum_index;
  TVMFFIAny native;

  /* static types with reflection: ffi.Module, ffi.VisitInterrupt, ffi.BigInt */
  if (fr_refl_register_metadata(kTVMFFIModule, 48, kTVMFFISEqHashKindUnsupported, NULL) != 0 ||
      fr_refl_register_field(kTVMFFIModule, &kModuleImports) != 0) {
    return -1;
  }
  g_visit_interrupt_index = fr_register_type("ffi.VisitInterrupt", kTVMFFIVisitInterrupt, 1, 0, 0,
                                             kTVMFFIObject);
  if (g_visit_interrupt_index < 0 ||
      fr_refl_register_metadata(kTVMFFIVisitInterrupt, 40, kTVMFFISEqHashKindUnsupported,
                                create_visit_interrupt) != 0 ||
      fr_refl_register_field(kTVMFFIVisitInterrupt, &kVisitInterruptValue) != 0 ||
      fr_refl_register_metadata(kTVMFFIBigInt, 32, kTVMFFISEqHashKindUnsupported, NULL) != 0) {
    return -1;
  }

  /* the dynamic types, in upstream's order: 128 ... 137 */
  g_enum_state_index = fr_refl_register_dynamic("ffi.EnumState", kTVMFFIObject, 1);
  if (g_enum_state_index < 0) return -1;
  for (i = 0; i < 3; ++i) {
    if (fr_refl_register_field(g_enum_state_index, &kEnumStateFields[i]) != 0) return -1;
  }
  if (fr_refl_register_method(g_enum_state_index, "__ffi_init__", NULL,
                              FR_SCHEMA_FN("{\"type\":\"ffi.Object\"}", ""),
                              kTVMFFIFieldFlagBitMaskIsStaticMethod,
                              fr_typed_function_new(&kEnumStateInit, NULL, NULL)) != 0 ||
      fr_refl_register_metadata(g_enum_state_index, 48, kTVMFFISEqHashKindUnsupported,
                                create_enum_state) != 0) {
    return -1;
  }
  enum_index = g_enum_index = fr_refl_register_dynamic("ffi.Enum", kTVMFFIObject, 1);
  if (enum_index < 0 || fr_refl_register_field(enum_index, &kEnumFields[0]) != 0 ||
      fr_refl_register_field(enum_index, &kEnumFields[1]) != 0 ||
      fr_refl_register_metadata(enum_index, 48, kTVMFFISEqHashKindUniqueInstance,
                                create_enum) != 0) {
    return -1;
  }
  g_int_enum_index = fr_refl_register_dynamic("ffi.IntEnum", enum_index, 2);
  if (g_int_enum_index < 0 || fr_refl_register_field(g_int_enum_index, &kIntEnumValue) != 0 ||
      fr_refl_register_metadata(g_int_enum_index, 48, kTVMFFISEqHashKindUniqueInstance,
                                create_int_enum) != 0) {
    return -1;
  }
  g_str_enum_index = fr_refl_register_dynamic("ffi.StrEnum", enum_index, 2);
  if (g_str_enum_index < 0 || fr_refl_register_field(g_str_enum_index, &kStrEnumValue) != 0 ||
      fr_refl_register_metadata(g_str_enum_index, 48, kTVMFFISEqHashKindUniqueInstance,
                                create_str_enum) != 0) {
    return -1;
  }
  if (fr_access_path_types_init() != 0) return -1;
  {
    int32_t visitor = fr_refl_register_dynamic("ffi.StructuralVisitor", kTVMFFIObject, 1);
    if (visitor < 0 ||
        fr_refl_register_metadata(visitor, 40, kTVMFFISEqHashKindUnsupported, NULL) != 0) {
      return -1;
    }
  }
  g_visit_error_context_index = fr_refl_register_dynamic("ffi.VisitErrorContext", kTVMFFIObject, 1);
  if (g_visit_error_context_index < 0 ||
      fr_refl_register_field(g_visit_error_context_index, &kVisitErrorContextFields[0]) != 0 ||
      fr_refl_register_field(g_visit_error_context_index, &kVisitErrorContextFields[1]) != 0 ||
      fr_refl_register_metadata(g_visit_error_context_index, 40, kTVMFFISEqHashKindUnsupported,
                                create_visit_error_context) != 0) {
    return -1;
  }
  {
    int32_t mutator = fr_refl_register_dynamic("ffi.StructuralMutator", kTVMFFIObject, 1);
    if (mutator < 0 ||
        fr_refl_register_metadata(mutator, 40, kTVMFFISEqHashKindUnsupported, NULL) != 0) {
      return -1;
    }
  }
  g_structural_key_index = fr_refl_register_dynamic("ffi.StructuralKey", kTVMFFIObject, 1);
  if (g_structural_key_index < 0 ||
      fr_refl_register_field(g_structural_key_index, &kStructuralKeyFields[0]) != 0 ||
      fr_refl_register_field(g_structural_key_index, &kStructuralKeyFields[1]) != 0 ||
      fr_refl_register_method(g_structural_key_index, "__ffi_init__",
                              "Constructor that takes any key and computes its structural hash",
                              FR_SCHEMA_FN("{\"type\":\"ffi.Object\"}", "{\"type\":\"Any\"}"),
                              kTVMFFIFieldFlagBitMaskIsStaticMethod,
                              fr_typed_function_new(&kStructuralKeyInit, NULL, NULL)) != 0 ||
      fr_refl_register_metadata(g_structural_key_index, 48, kTVMFFISEqHashKindUnsupported,
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
                                g_str_enum_index,       fr_access_step_index,
                                fr_access_path_index,   g_visit_error_context_index,
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
