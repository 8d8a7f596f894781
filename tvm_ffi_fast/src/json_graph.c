/*
 * json_graph.c -- ffi.ToJSONGraph / ffi.FromJSONGraph and their ...String forms:
 * value graphs as JSON that keeps sharing, one node per distinct value.
 *
 * tvm_ffi_ref/runtime/json_graph.py states the format (the node of each kind
 * of value, inline fields, enums, __data_to_json__ / __data_from_json__ hooks)
 * and the errors; the node order and the JSON text are upstream's byte for
 * byte. BigInt's hooks (decimal text) are registered here at load.
 *
 * This file: what saving and loading share, the globals, BigInt's hooks and
 * load. Saving is json_graph_save.c; loading, json_graph_load.c.
 */
#include "json_graph.h"

#include "functions.h"
#include "registry.h"
#include "runtime.h"
#include "structural.h"

FrJsonGraphLoaded fr_jg = {-1, -1, -1, NULL, NULL, NULL, NULL};

int fr_jg_cast_error(const TVMFFIAny* value, const char* target) {
  return fr_raise("TypeError", "Cannot convert from type `%s` to `%s`",
                  fr_type_key_of(value->type_index), target);
}

int fr_jg_hook_of(const TVMFFITypeAttrColumn* column, int32_t ti, void** fn) {
  TVMFFIAny entry = fr_type_attr_entry(column, ti);
  if (entry.type_index == kTVMFFINone) return 0;
  if (entry.type_index != kTVMFFIFunction) return fr_jg_cast_error(&entry, "ffi.Function");
  *fn = entry.v_obj;
  return 1;
}

int fr_jg_as_str(const TVMFFIAny* value, TVMFFIByteArray* out) {
  if (value->type_index != kTVMFFISmallStr && value->type_index != kTVMFFIStr) {
    return fr_jg_cast_error(value, "str");
  }
  return fr_any_str_view(value, 0, out);
}

/* ------------------------------------------------------------ globals and hooks */

static int to_json_graph_global(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  void* graph;
  (void)ctx;
  if (fr_json_graph_save(&args[0].value, &args[1].value, &graph) != 0) return -1;
  *rv = fr_any_object(graph);
  return 0;
}

static int to_json_graph_string(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  void* graph;
  TVMFFIAny value;
  FrBuf text;
  int status;
  (void)ctx;
  if (fr_json_graph_save(&args[0].value, &args[1].value, &graph) != 0) return -1;
  value = fr_any_object(graph);
  fr_buf_init(&text);
  status = fr_json_stringify(&value, 0, &text);
  if (status == 0) status = fr_string_from_bytes(fr_buf_cstr(&text), text.size, rv);
  fr_buf_free(&text);
  fr_any_release(&value);
  return status;
}

static int from_json_graph_global(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  (void)ctx;
  return fr_json_graph_load(&args[0].value, rv);
}

static int from_json_graph_string(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  TVMFFIByteArray text;
  TVMFFIAny graph;
  int status;
  (void)ctx;
  fr_any_str_view(&args[0].value, 0, &text);
  if (fr_json_parse(text.data, text.size, &graph) != 0) return -1;
  status = fr_json_graph_load(&graph, rv);
  fr_any_release(&graph);
  return status;
}

int fr_json_graph_globals(void) {
  static const FrBuiltin kBuiltins[] = {
      {"ffi.ToJSONGraph", to_json_graph_global, NULL, 2, {FR_T_ANY, FR_T_ANY}, FR_T_ANY},
      {"ffi.ToJSONGraphString", to_json_graph_string, NULL, 2, {FR_T_ANY, FR_T_ANY}, FR_T_STR},
      {"ffi.FromJSONGraph", from_json_graph_global, NULL, 1, {FR_T_ANY}, FR_T_ANY},
      {"ffi.FromJSONGraphString", from_json_graph_string, NULL, 1, {FR_T_STR}, FR_T_ANY},
  };
  return fr_register_builtins(kBuiltins, 4);
}

/* BigInt's __data_to_json__ (decimal text) and __data_from_json__ (its parse). */
static int bigint_to_json(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  FrBuf text;
  size_t n;
  const int64_t* words;
  int status;
  (void)ctx;
  if (args[0].value.type_index != kTVMFFIBigInt && args[0].value.type_index != kTVMFFIInt) {
    return fr_jg_cast_error(&args[0].value, "ffi.BigInt");
  }
  words = fr_bigint_words(&args[0].value, &n);
  fr_buf_init(&text);
  status = fr_bigint_append_decimal(&text, words, n);
  if (status == 0) status = fr_string_from_bytes(fr_buf_cstr(&text), text.size, rv);
  fr_buf_free(&text);
  return status;
}

static int bigint_from_json(void* ctx, const FrArg* args, TVMFFIAny* rv);

static const FrBuiltin kBigIntToJson = {"", bigint_to_json, NULL, 1, {FR_T_ANYVIEW}, FR_T_ANY};
static const FrBuiltin kBigIntFromJson = {"", bigint_from_json, NULL, 1, {FR_T_ANYVIEW}, FR_T_ANY};

int fr_json_graph_init(void) {
  static const TVMFFIByteArray kEnum = {"ffi.Enum", 8}, kIntEnum = {"ffi.IntEnum", 11},
                               kEnumState = {"ffi.EnumState", 13};
  const FrBuiltin* hooks[2] = {&kBigIntToJson, &kBigIntFromJson};
  const char* names[2] = {"__data_to_json__", "__data_from_json__"};
  int i;
  if (fr_type_key_to_index(&kEnum, &fr_jg.enum_index) != 0 ||
      fr_type_key_to_index(&kIntEnum, &fr_jg.int_enum_index) != 0 ||
      fr_type_key_to_index(&kEnumState, &fr_jg.enum_state_index) != 0) {
    return -1;
  }
  for (i = 0; i < 2; ++i) {
    void* f = fr_typed_function_new(hooks[i], NULL, NULL);
    TVMFFIAny entry;
    int status;
    if (f == NULL || fr_register_attr_cstr(kTVMFFINone, names[i], NULL) != 0) return -1;
    entry = fr_any_object(f);
    status = fr_register_attr_cstr(kTVMFFIBigInt, names[i], &entry);
    fr_decref(f);
    if (status != 0) return -1;
  }
  fr_jg.to_json = fr_s_column("__data_to_json__");
  fr_jg.from_json = fr_s_column("__data_from_json__");
  fr_jg.ffi_new = fr_s_column("__ffi_new__");
  fr_jg.enum_column = fr_s_column("__ffi_enum__");
  return 0;
}

/* [+-]digits, nothing else; the value through the BigInt decimal parse. */
static int bigint_from_json(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  TVMFFIByteArray text;
  size_t i = 0;
  (void)ctx;
  if (fr_jg_as_str(&args[0].value, &text) != 0) return -1;
  if (i < text.size && (text.data[i] == '+' || text.data[i] == '-')) ++i;
  if (i == text.size) return fr_raise("ValueError", "Invalid decimal string for ffi.BigInt");
  for (; i < text.size; ++i) {
    if (text.data[i] < '0' || text.data[i] > '9') {
      return fr_raise("ValueError", "Invalid decimal string for ffi.BigInt");
    }
  }
  return fr_bigint_from_decimal(text.data, text.size, rv);
}
