/*
 * pyclass.c -- object types whose layout a front end defines (a Python
 * @py_class): field storage, accessors and the generated constructor.
 *
 * The same rules as tvm_ffi_ref/runtime/pyclass.py, which explains them:
 *
 *   ffi.MakeFieldGetter(static_index) -> the address of a TVMFFIFieldGetter
 *   ffi.MakeFieldSetter(static_index, converter, f_convert) -> a setter Function
 *       (field address, value) that converts through f_convert, then stores (a value
 *       already of a native field's exact type is stored as it is)
 *   ffi._PyClassRegisterTypeAttrColumns(type_index, total_size)
 *       -> __ffi_init__, __ffi_new__ and __ffi_shallow_copy__ of the type
 *   ffi._RegisterFFIInit(type_index) -> only the generated __ffi_init__
 *
 * Storage by static type index: POD kinds hold the C value; Any (-1) and None
 * hold an owned TVMFFIAny (16 bytes), or an object pointer when the field is
 * 8 bytes (a C++ parent's ObjectRef typed as Any); object types (>= 64) hold
 * an owned object pointer or NULL. Zeroed memory is a valid empty value.
 */
#include "core.h"

#include "functions.h"
#include "registry.h"
#include "runtime.h"

typedef enum { ST_POD, ST_ANY, ST_OBJECT } Storage;

static Storage storage_of(const TVMFFIFieldInfo* f) {
  if (f->field_static_type_index == kTVMFFIAny) {
    return f->size == (int64_t)sizeof(void*) ? ST_OBJECT : ST_ANY;
  }
  return f->field_static_type_index >= kTVMFFIStaticObjectBegin ? ST_OBJECT : ST_POD;
}

/* Calls visit(field, ctx) for every field, ancestors below ffi.Object first. */
static void for_each_field(const TVMFFITypeInfo* info,
                           void (*visit)(const TVMFFIFieldInfo* f, void* ctx), void* ctx) {
  int32_t d, i;
  for (d = 1; d < info->type_depth; ++d) {
    const TVMFFITypeInfo* owner = info->type_ancestors[d];
    for (i = 0; i < owner->num_fields; ++i) visit(&owner->fields[i], ctx);
  }
  for (i = 0; i < info->num_fields; ++i) visit(&info->fields[i], ctx);
}

static void release_field(const TVMFFIFieldInfo* f, void* body) {
  char* addr = (char*)body + f->offset;
  switch (storage_of(f)) {
    case ST_ANY:
      fr_any_release((TVMFFIAny*)addr);
      break;
    case ST_OBJECT:
      if (*(void**)addr != NULL) fr_decref(*(void**)addr);
      *(void**)addr = NULL;
      break;
    case ST_POD:
      break;
  }
}

static void pyclass_deleter(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    const TVMFFITypeInfo* info = fr_type_info_or_null(fr_type_index(self));
    if (info != NULL) for_each_field(info, release_field, self);
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) free(self);
}

/* ------------------------------------------------------------- getters */

#define DEFINE_POD_GETTER(name, ctype, index, member)   \
  static int name(void* field, TVMFFIAny* result) {     \
    *result = fr_any_none();                            \
    result->type_index = index;                         \
    result->member = *(ctype*)field;                    \
    return 0;                                           \
  }

DEFINE_POD_GETTER(get_int, int64_t, kTVMFFIInt, v_int64)
DEFINE_POD_GETTER(get_float, double, kTVMFFIFloat, v_float64)
DEFINE_POD_GETTER(get_pointer, void*, kTVMFFIOpaquePtr, v_ptr)
DEFINE_POD_GETTER(get_dtype, DLDataType, kTVMFFIDataType, v_dtype)
DEFINE_POD_GETTER(get_device, DLDevice, kTVMFFIDevice, v_device)

static int get_bool(void* field, TVMFFIAny* result) {
  *result = fr_any_bool(*(const unsigned char*)field != 0);
  return 0;
}

static int get_any(void* field, TVMFFIAny* result) {
  *result = fr_any_copy((const TVMFFIAny*)field);
  return 0;
}

static int get_object(void* field, TVMFFIAny* result) {
  void* obj = *(void**)field;
  if (obj != NULL) fr_incref(obj);
  *result = fr_any_object(obj);
  return 0;
}

static int make_field_getter(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  int64_t index = args[0].value.v_int64;
  TVMFFIFieldGetter getter = NULL;
  (void)ctx;
  switch (index) {
    case kTVMFFIInt: getter = get_int; break;
    case kTVMFFIFloat: getter = get_float; break;
    case kTVMFFIBool: getter = get_bool; break;
    case kTVMFFIOpaquePtr: getter = get_pointer; break;
    case kTVMFFIDataType: getter = get_dtype; break;
    case kTVMFFIDevice: getter = get_device; break;
    case kTVMFFIAny:
    case kTVMFFINone: getter = get_any; break;
    default:
      if (index < kTVMFFIStaticObjectBegin) {
        return fr_raise("ValueError", "Unsupported field type index for getter: %lld",
                        (long long)index);
      }
      getter = get_object;
  }
  *rv = fr_any_int((int64_t)(intptr_t)getter);
  return 0;
}

/* ------------------------------------------------------------- setters */

static int cannot_convert(const TVMFFIAny* value, const char* target) {
  return fr_raise("TypeError", "Cannot convert from type `%s` to `%s`",
                  fr_type_key_of(value->type_index), target);
}

static int is_int_like(const TVMFFIAny* v) {
  return v->type_index == kTVMFFIInt || v->type_index == kTVMFFIBool;
}

/* Stores an owned, converted value into a field of static type `index`. */
static int write_field(char* addr, int32_t index, const TVMFFIAny* v) {
  switch (index) {
    case kTVMFFIInt:
      if (!is_int_like(v)) return cannot_convert(v, "int");
      *(int64_t*)addr = v->v_int64;
      return 0;
    case kTVMFFIFloat:
      if (v->type_index == kTVMFFIFloat) {
        *(double*)addr = v->v_float64;
      } else if (is_int_like(v)) {
        *(double*)addr = (double)v->v_int64;
      } else {
        return cannot_convert(v, "float");
      }
      return 0;
    case kTVMFFIBool:
      if (!is_int_like(v)) return cannot_convert(v, "bool");
      *(unsigned char*)addr = v->v_int64 != 0;
      return 0;
    case kTVMFFIOpaquePtr:
      if (v->type_index != kTVMFFIOpaquePtr && v->type_index != kTVMFFINone) {
        return cannot_convert(v, "void*");
      }
      *(void**)addr = v->type_index == kTVMFFIOpaquePtr ? v->v_ptr : NULL;
      return 0;
    case kTVMFFIDataType: {
      TVMFFIByteArray text;
      if (v->type_index == kTVMFFIDataType) {
        *(DLDataType*)addr = v->v_dtype;
        return 0;
      }
      if (fr_any_str_view(v, 0, &text) != 0) return cannot_convert(v, "DataType");
      return fr_dtype_from_string(&text, (DLDataType*)addr);
    }
    case kTVMFFIDevice:
      if (v->type_index != kTVMFFIDevice) return cannot_convert(v, "Device");
      *(DLDevice*)addr = v->v_device;
      return 0;
    case kTVMFFIAny:
    case kTVMFFINone: {
      TVMFFIAny old = *(TVMFFIAny*)addr;
      *(TVMFFIAny*)addr = fr_any_copy(v);
      fr_any_release(&old);
      return 0;
    }
    default:
      break;
  }
  if (index >= kTVMFFIStaticObjectBegin) {
    void* old = *(void**)addr;
    if (v->type_index == kTVMFFINone) {
      *(void**)addr = NULL;
    } else if (fr_any_is_object(v)) {
      fr_incref(v->v_obj);
      *(void**)addr = v->v_obj;
    } else {
      return cannot_convert(v, "ffi.Object");
    }
    if (old != NULL) fr_decref(old);
    return 0;
  }
  return fr_raise("ValueError", "Unsupported field type index for setter: %d", (int)index);
}

typedef int (*FrConvertFn)(void* converter, const TVMFFIAny* value, TVMFFIAny* result);

typedef struct {
  int32_t index;
  void* converter;
  FrConvertFn convert;
  FrSchemaRule passes; /* what the converter passes on unchanged (set once the type is laid out) */
} SetterCtx;

static int field_setter(void* ctx, const TVMFFIAny* args, int32_t n, TVMFFIAny* rv) {
  const SetterCtx* setter = (const SetterCtx*)ctx;
  TVMFFIAny converted = fr_any_none();
  char* addr;
  int status;
  if (n < 2) return fr_raise("IndexError", "Index 1 out of bounds %d", (int)n);
  if (args[0].type_index != kTVMFFIOpaquePtr && args[0].type_index != kTVMFFINone) {
    return cannot_convert(&args[0], "void*");
  }
  addr = args[0].type_index == kTVMFFIOpaquePtr ? (char*)args[0].v_ptr : NULL;
  *rv = fr_any_none();
  /* A value already of a native field's exact type is what the converter would return. */
  if (setter->index < kTVMFFIStaticObjectBegin && setter->index > kTVMFFINone &&
      args[1].type_index == setter->index) {
    return write_field(addr, setter->index, &args[1]);
  }
  if (fr_pyclass_schema_passes(&setter->passes, &args[1])) {
    return write_field(addr, setter->index, &args[1]);
  }
  if (setter->convert(setter->converter, &args[1], &converted) != 0) return -1;
  status = write_field(addr, setter->index, &converted);
  fr_any_release(&converted);
  return status;
}

static int make_field_setter(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  SetterCtx* setter;
  void* fn;
  (void)ctx;
  setter = (SetterCtx*)malloc(sizeof(SetterCtx));
  if (setter == NULL) return fr_raise_oom();
  setter->index = (int32_t)args[0].value.v_int64;
  setter->converter = (void*)(intptr_t)args[1].value.v_int64;
  setter->convert = (FrConvertFn)(intptr_t)args[2].value.v_int64;
  setter->passes.instance_of = -1;
  setter->passes.none = 0;
  fn = fr_function_new(field_setter, setter, free);
  if (fn == NULL) return -1;
  *rv = fr_any_object(fn);
  return 0;
}

/* ----------------------------------------------------- the generated init */

typedef struct {
  const TVMFFIFieldInfo* info;
  unsigned char init, kw_only, has_default;
} InitField;

typedef struct {
  const TVMFFITypeInfo* type;
  InitField* fields;
  int32_t num_fields;
  int32_t* positional; /* indices into fields: required ones first */
  int32_t num_positional;
} InitPlan;

static void init_plan_free(void* ctx) {
  InitPlan* plan = (InitPlan*)ctx;
  free(plan->fields);
  free(plan->positional);
  free(plan);
}

static void count_field(const TVMFFIFieldInfo* f, void* ctx) {
  (void)f;
  ++*(int32_t*)ctx;
}

static void add_field(const TVMFFIFieldInfo* f, void* ctx) {
  InitPlan* plan = (InitPlan*)ctx;
  InitField* entry = &plan->fields[plan->num_fields++];
  entry->info = f;
  entry->init = (f->flags & kTVMFFIFieldFlagBitMaskInitOff) == 0;
  entry->kw_only = (f->flags & kTVMFFIFieldFlagBitMaskKwOnly) != 0;
  entry->has_default = (f->flags & kTVMFFIFieldFlagBitMaskHasDefault) != 0;
}

static InitPlan* init_plan_new(const TVMFFITypeInfo* type) {
  int32_t count = 0, i, pass;
  InitPlan* plan = (InitPlan*)calloc(1, sizeof(InitPlan));
  if (plan == NULL) return NULL;
  plan->type = type;
  for_each_field(type, count_field, &count);
  plan->fields = (InitField*)calloc((size_t)count + 1, sizeof(InitField));
  plan->positional = (int32_t*)calloc((size_t)count + 1, sizeof(int32_t));
  if (plan->fields == NULL || plan->positional == NULL) {
    init_plan_free(plan);
    return NULL;
  }
  for_each_field(type, add_field, plan);
  /* Required positional fields first, then those with defaults (a stable partition). */
  for (pass = 0; pass < 2; ++pass) {
    for (i = 0; i < plan->num_fields; ++i) {
      const InitField* f = &plan->fields[i];
      if (f->init && !f->kw_only && f->has_default == pass) {
        plan->positional[plan->num_positional++] = i;
      }
    }
  }
  return plan;
}

#define TYPE_KEY(plan) (int)(plan)->type->type_key.size, (plan)->type->type_key.data
#define FIELD_NAME(f) (int)(f)->info->name.size, (f)->info->name.data

/* Re-raises the setter's error as "<key>.__ffi_init__() <what> '<name>':\n  <message>". */
static int rethrow_field_error(const InitPlan* plan, const InitField* f, const char* what) {
  TVMFFIObjectHandle error = NULL;
  FrBuf message;
  const TVMFFIErrorCell* cell;
  char* kind;
  size_t i;
  TVMFFIErrorMoveFromRaised(&error);
  if (error == NULL) return fr_raise("RuntimeError", "a field setter failed without an error");
  cell = FR_CELL(error, TVMFFIErrorCell);
  fr_buf_init(&message);
  fr_buf_printf(&message, "%.*s.__ffi_init__() %s '%.*s':\n  ", TYPE_KEY(plan), what,
                FIELD_NAME(f));
  for (i = 0; i < cell->message.size; ++i) {
    fr_buf_append(&message, &cell->message.data[i], 1);
    if (cell->message.data[i] == '\n') fr_buf_puts(&message, "  ");
  }
  kind = fr_strndup(cell->kind.data, cell->kind.size);
  if (kind == NULL || message.failed) {
    free(kind);
    fr_buf_free(&message);
    fr_decref(error);
    return fr_raise_oom();
  }
  fr_raise_bytes(kind, message.data, message.size);
  free(kind);
  fr_buf_free(&message);
  fr_decref(error);
  return -1;
}

static int set_from_arg(const InitPlan* plan, int32_t i, char* obj, const TVMFFIAny* value) {
  const InitField* f = &plan->fields[i];
  if (fr_call_field_setter(f->info, obj + f->info->offset, value) != 0) {
    return rethrow_field_error(plan, f, "field");
  }
  return 0;
}

static int bind_keywords(const InitPlan* plan, char* obj, const TVMFFIAny* args, int32_t n,
                         int32_t kwargs_at, unsigned char* done) {
  int32_t k, i;
  for (k = 0; k < kwargs_at && k < plan->num_positional; ++k) {
    if (set_from_arg(plan, plan->positional[k], obj, &args[k]) != 0) return -1;
    done[plan->positional[k]] = 1;
  }
  if (kwargs_at > plan->num_positional) {
    return fr_raise("TypeError",
                    "%.*s.__ffi_init__() takes at most %d positional argument(s), but %d were "
                    "given",
                    TYPE_KEY(plan), (int)plan->num_positional, (int)kwargs_at);
  }
  if ((n - kwargs_at - 1) % 2 != 0) {
    return fr_raise("TypeError",
                    "%.*s.__ffi_init__() KWARGS requires an even number of key-value arguments",
                    TYPE_KEY(plan));
  }
  for (k = kwargs_at + 1; k < n; k += 2) {
    TVMFFIByteArray key;
    int32_t match = -1;
    if (fr_any_str_view(&args[k], 0, &key) != 0) return cannot_convert(&args[k], "ffi.String");
    for (i = 0; i < plan->num_fields; ++i) {
      const TVMFFIByteArray* name = &plan->fields[i].info->name;
      if (plan->fields[i].init && name->size == key.size &&
          memcmp(name->data, key.data, key.size) == 0) {
        match = i;
        break;
      }
    }
    if (match < 0) {
      return fr_raise("TypeError", "%.*s.__ffi_init__() got an unexpected keyword argument '%.*s'",
                      TYPE_KEY(plan), (int)key.size, key.data);
    }
    if (done[match]) {
      return fr_raise("TypeError",
                      "%.*s.__ffi_init__() got multiple values for argument '%.*s'",
                      TYPE_KEY(plan), (int)key.size, key.data);
    }
    if (set_from_arg(plan, match, obj, &args[k + 1]) != 0) return -1;
    done[match] = 1;
  }
  return 0;
}

static int bind_args(const InitPlan* plan, char* obj, const TVMFFIAny* args, int32_t n,
                     unsigned char* done) {
  void* marker = fr_kwargs_object_peek();
  int32_t k, kwargs_at = -1, i;
  for (k = 0; marker != NULL && k < n; ++k) {
    if (fr_any_is_object(&args[k]) && args[k].v_obj == marker) {
      kwargs_at = k;
      break;
    }
  }
  if (kwargs_at >= 0) {
    if (bind_keywords(plan, obj, args, n, kwargs_at, done) != 0) return -1;
  } else {
    if (n > plan->num_positional) {
      return fr_raise("TypeError",
                      "%.*s.__ffi_init__() takes at most %d positional argument(s), but %d were "
                      "given",
                      TYPE_KEY(plan), (int)plan->num_positional, (int)n);
    }
    for (k = 0; k < n; ++k) {
      if (set_from_arg(plan, plan->positional[k], obj, &args[k]) != 0) return -1;
      done[plan->positional[k]] = 1;
    }
  }
  for (i = 0; i < plan->num_fields; ++i) {
    const InitField* f = &plan->fields[i];
    if (done[i]) continue;
    if (f->has_default) {
      if (fr_call_field_setter_to_default(f->info, obj + f->info->offset) != 0) {
        return rethrow_field_error(plan, f, "default for field");
      }
    } else if (f->init) {
      return fr_raise("TypeError", "%.*s.__ffi_init__() missing required %sargument: '%.*s'",
                      TYPE_KEY(plan), f->kw_only ? "keyword-only " : "", FIELD_NAME(f));
    }
  }
  return 0;
}

static int generated_init(void* ctx, const TVMFFIAny* args, int32_t n, TVMFFIAny* rv) {
  const InitPlan* plan = (const InitPlan*)ctx;
  void* obj = NULL;
  unsigned char* done;
  if (fr_create_empty_object(plan->type, &obj) != 0) return -1;
  done = (unsigned char*)calloc((size_t)plan->num_fields + 1, 1);
  if (done == NULL) {
    fr_decref(obj);
    return fr_raise_oom();
  }
  if (bind_args(plan, (char*)obj, args, n, done) != 0) {
    free(done);
    fr_decref(obj);
    return -1;
  }
  free(done);
  *rv = fr_any_object(obj);
  return 0;
}

/* Registers a Function attribute, whose reference the column takes over. */
static int register_function_attr(int32_t type_index, const char* name, void* fn) {
  TVMFFIAny value;
  int status;
  if (fn == NULL) return -1;
  value = fr_any_object(fn);
  status = fr_register_attr_cstr(type_index, name, &value);
  fr_decref(fn);
  return status;
}

static int register_ffi_init(int32_t type_index) {
  const TVMFFITypeInfo* type = fr_get_type_info(type_index);
  InitPlan* plan;
  if (type == NULL) return -1;
  plan = init_plan_new(type);
  if (plan == NULL) return fr_raise_oom();
  return register_function_attr(type_index, "__ffi_init__",
                                fr_function_new(generated_init, plan, init_plan_free));
}

static int register_ffi_init_global(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  (void)ctx;
  *rv = fr_any_none();
  return register_ffi_init((int32_t)args[0].value.v_int64);
}

/* ------------------------------------------------ new and shallow copy */

typedef struct {
  int32_t type_index;
  int64_t total_size;
} NewCtx;

static int new_empty(const NewCtx* spec, void** out) {
  *out = fr_object_alloc((size_t)spec->total_size, spec->type_index, pyclass_deleter);
  return *out == NULL ? -1 : 0;
}

static int new_object(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  void* obj;
  (void)args;
  if (new_empty((const NewCtx*)ctx, &obj) != 0) return -1;
  *rv = fr_any_object(obj);
  return 0;
}

typedef struct {
  const char* source;
  char* target;
} CopyCtx;

static void copy_field(const TVMFFIFieldInfo* f, void* ctx) {
  const CopyCtx* copy = (const CopyCtx*)ctx;
  const char* src = copy->source + f->offset;
  char* dst = copy->target + f->offset;
  switch (storage_of(f)) {
    case ST_ANY:
      *(TVMFFIAny*)dst = fr_any_copy((const TVMFFIAny*)src);
      break;
    case ST_OBJECT:
      if (*(void* const*)src != NULL) fr_incref(*(void* const*)src);
      *(void**)dst = *(void* const*)src;
      break;
    case ST_POD:
      memcpy(dst, src, (size_t)f->size);
      break;
  }
}

static int shallow_copy(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  const NewCtx* spec = (const NewCtx*)ctx;
  const TVMFFITypeInfo* type = fr_type_info_or_null(spec->type_index);
  CopyCtx copy;
  void* obj;
  if (new_empty(spec, &obj) != 0) return -1;
  copy.source = (const char*)args[0].value.v_obj;
  copy.target = (char*)obj;
  if (type != NULL) for_each_field(type, copy_field, &copy);
  *rv = fr_any_object(obj);
  return 0;
}

static const FrBuiltin kNewSpec = {"", new_object, NULL, 0, {0}, FR_T_OBJECT};
static const FrBuiltin kShallowCopySpec = {"", shallow_copy, NULL, 1, {FR_T_OBJECT},
                                           FR_T_OBJECT};

static NewCtx* new_ctx(int32_t type_index, int64_t total_size) {
  NewCtx* spec = (NewCtx*)malloc(sizeof(NewCtx));
  if (spec != NULL) {
    spec->type_index = type_index;
    spec->total_size = total_size;
  }
  return spec;
}

/* Each of the type's own fields whose setter ffi.MakeFieldSetter made learns, from its schema,
 * which values its converter would pass on unchanged (pyclass_schema.c). */
static void learn_schemas(const TVMFFITypeInfo* type) {
  int32_t i;
  for (i = 0; i < type->num_fields; ++i) {
    const TVMFFIFieldInfo* f = &type->fields[i];
    SetterCtx* setter;
    if (!(f->flags & kTVMFFIFieldFlagBitSetterIsFunctionObj)) continue;
    setter = (SetterCtx*)fr_function_context(f->setter, field_setter);
    if (setter != NULL) fr_pyclass_schema_rule(&f->metadata, &setter->passes);
  }
}

static int register_columns(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  int32_t type_index = (int32_t)args[0].value.v_int64;
  int64_t total_size = args[1].value.v_int64;
  NewCtx* spec;
  (void)ctx;
  *rv = fr_any_none();
  if (register_ffi_init(type_index) != 0) return -1;
  learn_schemas(fr_type_info_or_null(type_index));
  if ((spec = new_ctx(type_index, total_size)) == NULL) return fr_raise_oom();
  if (register_function_attr(type_index, "__ffi_new__",
                             fr_typed_function_new(&kNewSpec, spec, free)) != 0) {
    return -1;
  }
  if ((spec = new_ctx(type_index, total_size)) == NULL) return fr_raise_oom();
  return register_function_attr(type_index, "__ffi_shallow_copy__",
                                fr_typed_function_new(&kShallowCopySpec, spec, free));
}

int fr_pyclass_register_globals(void) {
  static const FrBuiltin kBuiltins[] = {
      {"ffi._RegisterFFIInit", register_ffi_init_global, NULL, 1, {FR_T_INT}, FR_T_VOID},
      {"ffi.MakeFieldSetter", make_field_setter, NULL, 3, {FR_T_INT, FR_T_INT, FR_T_INT},
       FR_T_FUNCTION},
      {"ffi._PyClassRegisterTypeAttrColumns", register_columns, NULL, 2, {FR_T_INT, FR_T_INT},
       FR_T_VOID},
      {"ffi.MakeFieldGetter", make_field_getter, NULL, 1, {FR_T_INT}, FR_T_INT},
  };
  return fr_register_builtins(kBuiltins, sizeof(kBuiltins) / sizeof(kBuiltins[0]));
}
