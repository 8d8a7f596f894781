/*
 * json_graph.h -- what the JSON graph files share: json_graph.c (the globals,
 * BigInt's hooks, load), json_graph_save.c and json_graph_load.c.
 */
#ifndef TVM_FFI_FAST_JSON_GRAPH_H_
#define TVM_FFI_FAST_JSON_GRAPH_H_

#include "core.h"

/* What fr_json_graph_init resolves at load: the enum types and the hook columns. */
typedef struct {
  int32_t enum_index;
  int32_t int_enum_index;
  int32_t enum_state_index;
  const TVMFFITypeAttrColumn* to_json;
  const TVMFFITypeAttrColumn* from_json;
  const TVMFFITypeAttrColumn* ffi_new;
  const TVMFFITypeAttrColumn* enum_column;
} FrJsonGraphLoaded;
FR_HIDDEN extern FrJsonGraphLoaded fr_jg;

/* Raises upstream's "Cannot convert from type `X` to `target`" TypeError; -1. */
FR_HIDDEN int fr_jg_cast_error(const TVMFFIAny* value, const char* target);
/* The Function a column holds for ti: 1 and *fn (borrowed), 0 when none, -1 when not a Function. */
FR_HIDDEN int fr_jg_hook_of(const TVMFFITypeAttrColumn* column, int32_t ti, void** fn);
/* The bytes of a str value; -1 with the cast TypeError otherwise. */
FR_HIDDEN int fr_jg_as_str(const TVMFFIAny* value, TVMFFIByteArray* out);

/* json_graph_save.c: the graph Map of value (with metadata unless None), owned in *out. */
FR_HIDDEN int fr_json_graph_save(const TVMFFIAny* value, const TVMFFIAny* metadata, void** out);
/* json_graph_load.c: the value a graph Map describes, owned in *out. */
FR_HIDDEN int fr_json_graph_load(const TVMFFIAny* graph, TVMFFIAny* out);

#endif /* TVM_FFI_FAST_JSON_GRAPH_H_ */
