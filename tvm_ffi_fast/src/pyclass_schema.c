/*
 * pyclass_schema.c -- the values a py_class field's setter may store without
 * calling its converter.
 *
 * A py_class setter hands every value to the front end's Python converter
 * (tvm_ffi_api/type_converter.py), a round trip through Python that dominated a
 * deep copy or a structural map of a py_class chain (one field set per link).
 * For some schemas that converter returns an object value unchanged, judged on
 * its type alone, before anything else:
 *
 *   Any                  any object, and None (scalars._any)
 *   Object, a type key   an instance of that type (_object, _payload_enum:
 *                        an instance is passed on before any __ffi_convert__)
 *   Optional[S]          None, and what S passes on
 *   Union[S, ...]        what its first alternative S passes on (tried first)
 *
 * Every other origin (scalars, containers, tuple, Callable, Tensor) is matched
 * by name before a type key in build_converter, so it gets no rule here and
 * its values keep going through the converter. Only objects the Python layer
 * wraps as an Object and packs back as the same handle qualify: instances of
 * registered (dynamic) types and the four containers; strings, bytes, shapes
 * and tensors are rewrapped by Python and always converted.
 */
#include "core.h"

#include "containers.h"
#include "registry.h"
#include "runtime.h"
#include "structural.h"

/* Origins build_converter resolves before it looks a type key up. */
static const char* const kNotTypeKeys[] = {
    "int",   "float", "bool",  "None", "str",   "bytes", "Device", "dtype", "ctypes.c_void_p",
    "Tensor", "Callable", "Array", "List", "list", "Map", "Dict", "dict", "tuple", NULL};

/* A failed look-up here only means "no rule": its error is not the caller's. */
static void drop_raised(void) {
  TVMFFIObjectHandle err = NULL;
  TVMFFIErrorMoveFromRaised(&err);
  if (err != NULL) fr_decref(err);
}

static int text_is(const TVMFFIByteArray* text, const char* word) {
  size_t n = strlen(word);
  return text->size == n && memcmp(text->data, word, n) == 0;
}

/* schema[name] (borrowed) or NULL. */
static const TVMFFIAny* member(const TVMFFIAny* schema, const char* name) {
  TVMFFIAny key;
  TVMFFIAny* slot = NULL;
  int found;
  if (schema->type_index != kTVMFFIMap && schema->type_index != kTVMFFIDict) return NULL;
  if (fr_string_from_bytes(name, strlen(name), &key) != 0) return NULL;
  found = fr_map_find(schema->v_obj, &key, &slot);
  fr_any_release(&key);
  return found == 1 ? slot : NULL;
}

/* The rule of one schema node; nesting is bounded by the annotation's own depth. */
static void rule_of(const TVMFFIAny* schema, FrSchemaRule* rule) {
  const TVMFFIAny* origin = member(schema, "type");
  const TVMFFIAny* args = member(schema, "args");
  const TVMFFIAny* first = NULL;
  TVMFFIByteArray name;
  int32_t index;
  size_t i;
  rule->instance_of = -1;
  rule->none = 0;
  if (origin == NULL || fr_any_str_view(origin, 0, &name) != 0) return;
  if (args != NULL && args->type_index == kTVMFFIArray && fr_seq_size(args->v_obj) > 0) {
    first = &fr_seq_items(args->v_obj)[0];
  }
  if (text_is(&name, "Any")) {
    rule->instance_of = kTVMFFIObject;
    rule->none = 1;
    return;
  }
  if (text_is(&name, "Object")) {
    rule->instance_of = kTVMFFIObject;
    return;
  }
  if (text_is(&name, "Optional") || text_is(&name, "Union")) {
    if (first == NULL) return;
    rule_of(first, rule);
    if (text_is(&name, "Optional")) rule->none = 1;
    return;
  }
  for (i = 0; kNotTypeKeys[i] != NULL; ++i) {
    if (text_is(&name, kNotTypeKeys[i])) return;
  }
  if (fr_type_key_to_index(&name, &index) == 0 && index >= kTVMFFIStaticObjectBegin) {
    rule->instance_of = index;
  } else {
    drop_raised();
  }
}

void fr_pyclass_schema_rule(const TVMFFIByteArray* metadata, FrSchemaRule* rule) {
  TVMFFIAny parsed;
  const TVMFFIAny* schema;
  rule->instance_of = -1;
  rule->none = 0;
  if (metadata == NULL || metadata->data == NULL || metadata->size == 0) return;
  if (fr_json_parse(metadata->data, metadata->size, &parsed) != 0) {
    drop_raised();
    return;
  }
  schema = member(&parsed, "type_schema");
  if (schema != NULL) rule_of(schema, rule);
  fr_any_release(&parsed);
}

int fr_pyclass_schema_passes(const FrSchemaRule* rule, const TVMFFIAny* value) {
  int32_t ti = value->type_index;
  if (ti == kTVMFFINone) return rule->none;
  if (rule->instance_of < 0) return 0;
  if (ti < kTVMFFIStaticObjectEnd && ti != kTVMFFIArray && ti != kTVMFFIList &&
      ti != kTVMFFIMap && ti != kTVMFFIDict) {
    return 0;
  }
  return fr_type_is_instance(ti, rule->instance_of);
}
