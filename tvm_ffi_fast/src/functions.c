/*
 * functions.c -- Function objects and typed built-in functions.
 *
 * Its twin in the reference runtime: tvm_ffi_ref/runtime/functions.py.
 *
 * A Function is header, TVMFFIFunctionCell, then what the callback needs.
 * TVMFFIFunctionCall jumps straight to the cell's safe_call with the object
 * as its handle; for a function made from a C callback with a context that
 * safe_call is a trampoline passing the context instead, as upstream's
 * ExternC functions do (with neither context nor deleter, the callback itself
 * is installed and receives the function object).
 */
#include "core.h"

#include "containers.h"
#include "functions.h"
#include "registry.h"

typedef struct {
  TVMFFIObject header;
  TVMFFIFunctionCell cell;
  void* self;
  TVMFFISafeCallType inner;
  void (*deleter)(void* self);
} FrFunction;

static void function_deleter(void* obj, int flags) {
  FrFunction* f = (FrFunction*)obj;
  if ((flags & kTVMFFIObjectDeleterFlagBitMaskStrong) && f->deleter != NULL) f->deleter(f->self);
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) free(f);
}

/* Upstream accepts a NULL safe_call at creation and crashes when it is called. */
static int raise_no_safe_call(void) {
  return fr_raise("ValueError",
                  "TVMFFIFunctionCall: the function was created with a NULL safe_call");
}

static int extern_c_trampoline(void* handle, const TVMFFIAny* args, int32_t num_args,
                               TVMFFIAny* result) {
  FrFunction* f = (FrFunction*)handle;
  if (FR_UNLIKELY(f->inner == NULL)) return raise_no_safe_call();
  return f->inner(f->self, args, num_args, result);
}

static FrFunction* function_alloc(void* self, TVMFFISafeCallType safe_call,
                                  void (*deleter)(void* self)) {
  FrFunction* f =
      (FrFunction*)fr_object_alloc(sizeof(FrFunction), kTVMFFIFunction, function_deleter);
  if (f == NULL) return NULL;
  f->cell.cpp_call = NULL;
  if (self == NULL && deleter == NULL) {
    f->cell.safe_call = safe_call;
  } else {
    f->cell.safe_call = extern_c_trampoline;
  }
  f->self = self;
  f->inner = safe_call;
  f->deleter = deleter;
  return f;
}

int fr_function_create(void* self, TVMFFISafeCallType safe_call, void (*deleter)(void* self),
                       TVMFFIObjectHandle* out) {
  FrFunction* f;
  FR_REQUIRE(out, "TVMFFIFunctionCreate", "out");
  f = function_alloc(self, safe_call, deleter);
  if (f == NULL) return -1;
  *out = f;
  return 0;
}

int fr_function_call(TVMFFIObjectHandle func, TVMFFIAny* args, int32_t num_args,
                     TVMFFIAny* result) {
  if (FR_UNLIKELY(func == NULL)) {
    return fr_raise("ValueError", "TVMFFIFunctionCall: func must not be NULL");
  }
  if (FR_UNLIKELY(fr_type_index(func) != kTVMFFIFunction)) {
    const TVMFFITypeInfo* info = fr_type_info_or_null(fr_type_index(func));
    if (info == NULL) {
      return fr_raise("TypeError", "TVMFFIFunctionCall: expected a ffi.Function, got type index %d",
                      (int)fr_type_index(func));
    }
    return fr_raise("TypeError", "TVMFFIFunctionCall: expected a ffi.Function, got %.*s",
                    (int)info->type_key.size, info->type_key.data);
  }
  if (FR_UNLIKELY(FR_CELL(func, TVMFFIFunctionCell)->safe_call == NULL)) {
    return raise_no_safe_call();
  }
  return FR_CELL(func, TVMFFIFunctionCell)->safe_call(func, args, num_args, result);
}

void* fr_function_new(FrPackedFn fn, void* ctx, void (*ctx_deleter)(void* ctx)) {
  /* always through the trampoline: our callbacks want ctx, even when it is NULL */
  FrFunction* f = function_alloc(ctx, (TVMFFISafeCallType)fn, ctx_deleter);
  if (f == NULL) return NULL;
  f->cell.safe_call = extern_c_trampoline;
  return f;
}

void* fr_function_context(void* func, FrPackedFn fn) {
  FrFunction* f = (FrFunction*)func;
  if (f == NULL || fr_type_index(f) != kTVMFFIFunction) return NULL;
  if (f->cell.safe_call != extern_c_trampoline || f->inner != (TVMFFISafeCallType)fn) return NULL;
  return f->self;
}

int fr_call(void* func, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  *result = fr_any_none();
  return fr_function_call(func, (TVMFFIAny*)args, num_args, result);
}

/* --------------------------------------------------- typed signatures */

static const char* type_str(FrTypeCode code) {
  switch (code) {
    case FR_T_ANY: return "Any";
    case FR_T_ANYVIEW: return "AnyView";
    case FR_T_INT: return "int";
    case FR_T_BOOL: return "bool";
    case FR_T_STR: return "str";
    case FR_T_BYTES: return "bytes";
    case FR_T_VOIDP: return "void*";
    case FR_T_OBJECT: return "ffi.Object";
    case FR_T_FUNCTION: return "ffi.Function";
    case FR_T_ARRAY: return "ffi.Array";
    case FR_T_LIST: return "ffi.List";
    case FR_T_MAP: return "ffi.Map";
    case FR_T_DICT: return "ffi.Dict";
    case FR_T_LIST_REF: return "List<Any>";
    case FR_T_DICT_REF: return "Dict<Any, Any>";
    case FR_T_MODULE: return "ffi.Module";
    case FR_T_VOID: return "void";
    case FR_T_ARRAY_STR: return "Array<str>";
    case FR_T_OPT_STR: return "Optional<str>";
    case FR_T_OPT_FUNC: return "Optional<ffi.Function>";
    case FR_T_DEVICE: return "Device";
    case FR_T_OPT_INT: return "Optional<int>";
    case FR_T_VISITOR: return "ffi.StructuralVisitor";
    case FR_T_MUTATOR: return "ffi.StructuralMutator";
    case FR_T_VISIT_ERROR_CONTEXT: return "ffi.VisitErrorContext";
    case FR_T_ARRAY_PATH: return "Array<ffi.reflection.AccessPath>";
    case FR_T_CALLBACKS: return "Array<Tuple<int, ffi.Function>>";
    case FR_T_MUTATE_CALLBACKS: return "Array<Tuple<int, ffi.Function, bool>>";
    case FR_T_OPT_PATH_PAIR:
      return "Optional<Tuple<ffi.reflection.AccessPath, ffi.reflection.AccessPath>>";
    case FR_T_OPT_INTERRUPT: return "Optional<ffi.VisitInterrupt>";
    case FR_T_INTERRUPT: return "ffi.VisitInterrupt";
    case FR_T_STRUCTURAL_KEY: return "ffi.StructuralKey";
  }
  return "?";
}

static const char* type_schema(FrTypeCode code) {
  switch (code) {
    case FR_T_ANY: return "{\"type\":\"Any\"}";
    case FR_T_ANYVIEW: return "{\"type\":\"Any\"}";
    case FR_T_INT: return "{\"type\":\"int\"}";
    case FR_T_BOOL: return "{\"type\":\"bool\"}";
    case FR_T_STR: return "{\"type\":\"ffi.String\"}";
    case FR_T_BYTES: return "{\"type\":\"ffi.Bytes\"}";
    case FR_T_VOIDP: return "{\"type\":\"void*\"}";
    case FR_T_OBJECT: return "{\"type\":\"ffi.Object\"}";
    case FR_T_FUNCTION: return "{\"type\":\"ffi.Function\"}";
    case FR_T_ARRAY: return "{\"type\":\"ffi.Array\"}";
    case FR_T_LIST: return "{\"type\":\"ffi.List\"}";
    case FR_T_MAP: return "{\"type\":\"ffi.Map\"}";
    case FR_T_DICT: return "{\"type\":\"ffi.Dict\"}";
    case FR_T_LIST_REF: return "{\"type\":\"ffi.List\",\"args\":[{\"type\":\"Any\"}]}";
    case FR_T_DICT_REF:
      return "{\"type\":\"ffi.Dict\",\"args\":[{\"type\":\"Any\"},{\"type\":\"Any\"}]}";
    case FR_T_MODULE: return "{\"type\":\"ffi.Module\"}";
    case FR_T_VOID: return "{\"type\":\"None\"}";
    case FR_T_ARRAY_STR: return "{\"type\":\"ffi.Array\",\"args\":[{\"type\":\"ffi.String\"}]}";
    case FR_T_OPT_STR: return "{\"type\":\"Optional\",\"args\":[{\"type\":\"ffi.String\"}]}";
    case FR_T_OPT_FUNC: return "{\"type\":\"Optional\",\"args\":[{\"type\":\"ffi.Function\"}]}";
    case FR_T_DEVICE: return "{\"type\":\"Device\"}";
    case FR_T_OPT_INT: return "{\"type\":\"Optional\",\"args\":[{\"type\":\"int\"}]}";
    case FR_T_VISITOR: return "{\"type\":\"ffi.StructuralVisitor\"}";
    case FR_T_MUTATOR: return "{\"type\":\"ffi.StructuralMutator\"}";
    case FR_T_VISIT_ERROR_CONTEXT: return "{\"type\":\"ffi.VisitErrorContext\"}";
    case FR_T_ARRAY_PATH:
      return "{\"type\":\"ffi.Array\",\"args\":[{\"type\":\"ffi.reflection.AccessPath\"}]}";
    case FR_T_CALLBACKS:
      return "{\"type\":\"ffi.Array\",\"args\":[{\"type\":\"Tuple\",\"args\":[{\"type\":\"int\"},"
             "{\"type\":\"ffi.Function\"}]}]}";
    case FR_T_MUTATE_CALLBACKS:
      return "{\"type\":\"ffi.Array\",\"args\":[{\"type\":\"Tuple\",\"args\":[{\"type\":\"int\"},"
             "{\"type\":\"ffi.Function\"},{\"type\":\"bool\"}]}]}";
    case FR_T_OPT_PATH_PAIR:
      return "{\"type\":\"Optional\",\"args\":[{\"type\":\"Tuple\",\"args\":[{\"type\":"
             "\"ffi.reflection.AccessPath\"},{\"type\":\"ffi.reflection.AccessPath\"}]}]}";
    case FR_T_OPT_INTERRUPT:
      return "{\"type\":\"Optional\",\"args\":[{\"type\":\"ffi.VisitInterrupt\"}]}";
    case FR_T_INTERRUPT: return "{\"type\":\"ffi.VisitInterrupt\"}";
    case FR_T_STRUCTURAL_KEY: return "{\"type\":\"ffi.StructuralKey\"}";
  }
  return "{}";
}

/* "NAME(0: T0, 1: T1) -> R" as upstream prints a typed function. */
static void signature(FrBuf* buf, const FrBuiltin* spec) {
  int i;
  fr_buf_puts(buf, spec->name);
  fr_buf_puts(buf, "(");
  for (i = 0; i < spec->num_params; ++i) {
    fr_buf_printf(buf, "%s%d: %s", i == 0 ? "" : ", ", i, type_str(spec->params[i]));
  }
  fr_buf_printf(buf, ") -> %s", type_str(spec->ret));
}

/* The metadata JSON upstream stores for a global: its type schema, as a JSON string. */
static void metadata_json(FrBuf* buf, const FrBuiltin* spec) {
  FrBuf schema;
  size_t i;
  int p;
  fr_buf_init(&schema);
  if (spec->packed != NULL) {
    fr_buf_puts(&schema, "{\"type\":\"ffi.Function\"}");
  } else {
    fr_buf_puts(&schema, "{\"type\":\"ffi.Function\",\"named_args\":{\"return\":[");
    fr_buf_puts(&schema, type_schema(spec->ret));
    fr_buf_puts(&schema, "],\"params\":[");
    for (p = 0; p < spec->num_params; ++p) {
      if (p != 0) fr_buf_puts(&schema, ",");
      fr_buf_puts(&schema, type_schema(spec->params[p]));
    }
    fr_buf_puts(&schema, "]}}");
  }
  fr_buf_puts(buf, "{\"type_schema\":\"");
  for (i = 0; i < schema.size; ++i) {
    if (schema.data[i] == '"' || schema.data[i] == '\\') fr_buf_puts(buf, "\\");
    fr_buf_append(buf, &schema.data[i], 1);
  }
  fr_buf_puts(buf, "\"}");
  fr_buf_free(&schema);
}

/* ------------------------------------------------ argument conversion */

static void* copy_seq_into_list(const TVMFFIAny* array) {
  int64_t n = fr_seq_size(array->v_obj), i;
  void* list = fr_list_new(n);
  if (list == NULL) return NULL;
  for (i = 0; i < n; ++i) {
    fr_seq_items(list)[i] = fr_any_copy(&fr_seq_items(array->v_obj)[i]);
  }
  ((FrSeq*)list)->cell.size = n;
  return list;
}

static void* copy_map_into_dict(const TVMFFIAny* map) {
  void* dict = fr_map_new(kTVMFFIDict);
  uint64_t it, end = fr_map_end(map->v_obj);
  if (dict == NULL) return NULL;
  for (it = fr_map_begin(map->v_obj); it != end; it = fr_map_next(map->v_obj, it)) {
    FrKV* kv = fr_map_entry(map->v_obj, it);
    if (fr_map_set(&dict, fr_any_copy(&kv->key), fr_any_copy(&kv->value)) != 0) {
      fr_decref(dict);
      return NULL;
    }
  }
  return dict;
}

/* The index of a type registered at load (-1 if absent), looked up by its key. */
static int32_t exact_index(const char* key) {
  TVMFFIByteArray name;
  int32_t index = -1;
  name.data = key;
  name.size = strlen(key);
  if (fr_type_key_to_index(&name, &index) != 0) {
    TVMFFIObjectHandle err = NULL;
    TVMFFIErrorMoveFromRaised(&err); /* absent: no match, not an error */
    if (err != NULL) fr_decref(err);
    return -1;
  }
  return index;
}

/* 1 converted, 0 type mismatch (nothing raised), -1 error raised. */
static int convert_arg(FrTypeCode code, const TVMFFIAny* in, FrArg* out) {
  int32_t ti = in->type_index;
  out->owned = 0;
  out->value = *in;
  switch (code) {
    case FR_T_ANY:
      if (fr_any_view_to_owned(in, &out->value) != 0) return -1;
      out->owned = 1;
      return 1;
    case FR_T_ANYVIEW:
      return 1;
    case FR_T_INT:
      if (ti != kTVMFFIInt && ti != kTVMFFIBool) return 0;
      out->value = fr_any_int(in->v_int64);
      return 1;
    case FR_T_BOOL:
      if (ti != kTVMFFIInt && ti != kTVMFFIBool) return 0;
      out->value = fr_any_bool(in->v_int64 != 0);
      return 1;
    case FR_T_STR:
      if (ti == kTVMFFISmallStr || ti == kTVMFFIStr) return 1;
      if (ti == kTVMFFIRawStr && in->v_c_str != NULL) {
        if (fr_string_from_bytes(in->v_c_str, strlen(in->v_c_str), &out->value) != 0) return -1;
        out->owned = 1;
        return 1;
      }
      return 0;
    case FR_T_BYTES:
      if (ti == kTVMFFISmallBytes || ti == kTVMFFIBytes) return 1;
      if (ti == kTVMFFIByteArrayPtr && in->v_ptr != NULL) {
        const TVMFFIByteArray* b = (const TVMFFIByteArray*)in->v_ptr;
        if (fr_bytes_from_bytes(b->data, b->size, &out->value) != 0) return -1;
        out->owned = 1;
        return 1;
      }
      return 0;
    case FR_T_VOIDP:
      if (ti == kTVMFFIOpaquePtr) return 1;
      if (ti == kTVMFFINone) {
        out->value.type_index = kTVMFFIOpaquePtr;
        out->value.v_ptr = NULL;
        return 1;
      }
      return 0;
    case FR_T_OBJECT:
      return ti >= kTVMFFIStaticObjectBegin;
    case FR_T_FUNCTION:
      return ti == kTVMFFIFunction;
    case FR_T_ARRAY:
      return ti == kTVMFFIArray;
    case FR_T_LIST:
      return ti == kTVMFFIList;
    case FR_T_MAP:
      return ti == kTVMFFIMap;
    case FR_T_DICT:
      return ti == kTVMFFIDict;
    case FR_T_MODULE:
      return ti == kTVMFFIModule;
    case FR_T_OPT_INT:
      if (ti == kTVMFFINone) return 1;
      if (ti != kTVMFFIInt && ti != kTVMFFIBool) return 0;
      out->value = fr_any_int(in->v_int64);
      return 1;
    /* these object types may be subclassed in C++ (TIRx's mutator): a derived type is accepted */
    case FR_T_VISITOR:
      return fr_type_is_instance(ti, exact_index("ffi.StructuralVisitor"));
    case FR_T_MUTATOR:
      return fr_type_is_instance(ti, exact_index("ffi.StructuralMutator"));
    case FR_T_VISIT_ERROR_CONTEXT:
      return fr_type_is_instance(ti, exact_index("ffi.VisitErrorContext"));
    case FR_T_CALLBACKS:
    case FR_T_MUTATE_CALLBACKS:
      return ti == kTVMFFIArray;
    case FR_T_LIST_REF:
      if (ti == kTVMFFIList) return 1;
      if (ti == kTVMFFIArray) {
        void* list = copy_seq_into_list(in);
        if (list == NULL) return -1;
        out->value = fr_any_object(list);
        out->owned = 1;
        return 1;
      }
      return 0;
    case FR_T_DICT_REF:
      if (ti == kTVMFFIDict) return 1;
      if (ti == kTVMFFIMap) {
        void* dict = copy_map_into_dict(in);
        if (dict == NULL) return -1;
        out->value = fr_any_object(dict);
        out->owned = 1;
        return 1;
      }
      return 0;
    default:
      return 0;
  }
}

static int raise_arg_count(const FrBuiltin* spec, int32_t num_args) {
  FrBuf sig;
  fr_buf_init(&sig);
  signature(&sig, spec);
  fr_raise("TypeError",
           "Mismatched number of arguments when calling: `%s`. Expected %d but got %d arguments",
           fr_buf_cstr(&sig), spec->num_params, (int)num_args);
  fr_buf_free(&sig);
  return -1;
}

static int raise_arg_type(const FrBuiltin* spec, int index, const TVMFFIAny* value) {
  FrBuf sig;
  fr_buf_init(&sig);
  signature(&sig, spec);
  fr_raise("TypeError",
           "Mismatched type on argument #%d when calling: `%s`. Expected `%s` but got `%s`",
           index, fr_buf_cstr(&sig), type_str(spec->params[index]),
           fr_type_key_of(value->type_index));
  fr_buf_free(&sig);
  return -1;
}

typedef struct {
  const FrBuiltin* spec;
  void* ctx;
  void (*ctx_deleter)(void* ctx);
} FrTypedClosure;

static void typed_closure_deleter(void* p) {
  FrTypedClosure* c = (FrTypedClosure*)p;
  if (c->ctx_deleter != NULL) c->ctx_deleter(c->ctx);
  free(c);
}

/*
 * The List and Dict a typed built-in works on (its List/Dict parameters) are
 * held while it runs, so that each container function is atomic among threads
 * (tvm_ffi_runtime.h, container locks); several are taken in address order.
 */
static int is_held_param(FrTypeCode code) {
  return code == FR_T_LIST || code == FR_T_DICT || code == FR_T_LIST_REF ||
         code == FR_T_DICT_REF;
}

static void* held_param(const FrBuiltin* spec, const FrArg* args, int i) {
  if (!is_held_param(spec->params[i])) return NULL;
  if (args[i].value.type_index < kTVMFFIStaticObjectBegin) return NULL;
  return args[i].value.v_obj;
}

static int hold_containers(const FrBuiltin* spec, const FrArg* args) {
  void* order[FR_MAX_PARAMS];
  int n = 0, i, j;
  for (i = 0; i < spec->num_params; ++i) {
    void* obj = held_param(spec, args, i);
    if (obj == NULL) continue;
    for (j = n; j > 0 && order[j - 1] > obj; --j) order[j] = order[j - 1];
    order[j] = obj;
    ++n;
  }
  for (i = 0; i < n; ++i) {
    if (tvm_ffi_runtime_object_lock(order[i]) != 0) {
      while (--i >= 0) tvm_ffi_runtime_object_unlock(order[i]);
      return fr_raise_oom();
    }
  }
  return 0;
}

static void release_containers(const FrBuiltin* spec, const FrArg* args) {
  int i;
  for (i = 0; i < spec->num_params; ++i) {
    void* obj = held_param(spec, args, i);
    if (obj != NULL) tvm_ffi_runtime_object_unlock(obj);
  }
}

/*
 * The safe_call of typed built-ins: the closure sits in the function object
 * itself. Arguments convert last first: upstream's conversions are the
 * arguments of a C++ call, which its compiler evaluates right to left, so
 * with two bad arguments upstream reports the later one.
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized" /* only converted[0, num_params) is read */
static int typed_call(void* handle, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* rv) {
  FrTypedClosure* c = (FrTypedClosure*)((FrFunction*)handle)->self;
  const FrBuiltin* spec = c->spec;
  FrArg converted[FR_MAX_PARAMS];
  int i, status;
  if (num_args != spec->num_params) return raise_arg_count(spec, num_args);
  for (i = spec->num_params - 1; i >= 0; --i) {
    int ok = convert_arg(spec->params[i], &args[i], &converted[i]);
    if (ok <= 0) {
      int j;
      for (j = i + 1; j < spec->num_params; ++j) {
        if (converted[j].owned) fr_any_release(&converted[j].value);
      }
      return ok < 0 ? -1 : raise_arg_type(spec, i, &args[i]);
    }
  }
  status = hold_containers(spec, converted);
  if (status == 0) {
    status = spec->fn(c->ctx, converted, rv);
    release_containers(spec, converted);
  }
  for (i = 0; i < spec->num_params; ++i) {
    if (converted[i].owned) fr_any_release(&converted[i].value);
  }
  return status;
}
#pragma GCC diagnostic pop

void* fr_typed_function_new(const FrBuiltin* spec, void* ctx, void (*ctx_deleter)(void* ctx)) {
  FrTypedClosure* c;
  void* f;
  if (spec->packed != NULL) return fr_function_new(spec->packed, ctx, ctx_deleter);
  c = (FrTypedClosure*)malloc(sizeof(FrTypedClosure));
  if (c == NULL) {
    fr_raise_oom();
    return NULL;
  }
  c->spec = spec;
  c->ctx = ctx;
  c->ctx_deleter = ctx_deleter;
  f = fr_function_new(NULL, c, typed_closure_deleter);
  if (f == NULL) {
    free(c);
    return NULL;
  }
  FR_CELL(f, TVMFFIFunctionCell)->safe_call = typed_call;
  return f;
}

int fr_register_builtins(const FrBuiltin* builtins, size_t count) {
  size_t i;
  for (i = 0; i < count; ++i) {
    const FrBuiltin* spec = &builtins[i];
    TVMFFIMethodInfo info;
    FrBuf metadata;
    void* f = fr_typed_function_new(spec, NULL, NULL);
    int status;
    if (f == NULL) return -1;
    fr_buf_init(&metadata);
    metadata_json(&metadata, spec);
    memset(&info, 0, sizeof(info));
    info.name.data = spec->name;
    info.name.size = strlen(spec->name);
    info.doc.data = "";
    info.doc.size = 0;
    info.metadata.data = fr_buf_cstr(&metadata);
    info.metadata.size = metadata.size;
    info.flags = kTVMFFIFieldFlagBitMaskIsStaticMethod;
    info.method = fr_any_object(f);
    status = fr_function_set_global_from_method_info(&info, 0);
    fr_decref(f);
    fr_buf_free(&metadata);
    if (status != 0) return -1;
  }
  return 0;
}
