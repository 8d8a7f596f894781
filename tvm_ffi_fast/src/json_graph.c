/*
 * json_graph.c -- ffi.ToJSONGraph / ffi.FromJSONGraph and their ...String forms:
 * value graphs as JSON that keeps sharing, one node per distinct value.
 *
 * tvm_ffi_ref/runtime/json_graph.py states the format (the node of each kind
 * of value, inline fields, enums, __data_to_json__ / __data_from_json__ hooks)
 * and the errors; the node order and the JSON text are upstream's byte for
 * byte. BigInt's hooks (decimal text) are registered here at load.
 */
#include "structural.h"

#include <inttypes.h>
#include <stdio.h>

#include "containers.h"
#include "functions.h"
#include "registry.h"
#include "runtime.h"
#include "walk.h"

static int32_t g_enum = -1, g_int_enum = -1, g_enum_state = -1;
static const TVMFFITypeAttrColumn* g_to_json = NULL;
static const TVMFFITypeAttrColumn* g_from_json = NULL;
static const TVMFFITypeAttrColumn* g_new = NULL;
static const TVMFFITypeAttrColumn* g_enum_column = NULL;

static int is_instance(int32_t ti, int32_t base) {
  const TVMFFITypeInfo* info;
  int32_t d;
  if (ti == base) return 1;
  if (ti < kTVMFFIStaticObjectBegin || base < 0) return 0;
  info = fr_type_info_or_null(ti);
  if (info == NULL) return 0;
  for (d = 0; d < info->type_depth; ++d) {
    if (info->type_ancestors[d]->type_index == base) return 1;
  }
  return 0;
}

static int cast_error(const TVMFFIAny* value, const char* target) {
  return fr_raise("TypeError", "Cannot convert from type `%s` to `%s`",
                  fr_type_key_of(value->type_index), target);
}

/* Sets key (a C string) -> value (owned, consumed) in *map. */
static int set_member(void** map, const char* key, TVMFFIAny value) {
  TVMFFIAny k;
  if (fr_string_from_bytes(key, strlen(key), &k) != 0) {
    fr_any_release(&value);
    return -1;
  }
  return fr_map_set(map, k, value);
}

static int hook_of(const TVMFFITypeAttrColumn* column, int32_t ti, void** fn) {
  TVMFFIAny entry = fr_type_attr_entry(column, ti);
  if (entry.type_index == kTVMFFINone) return 0;
  if (entry.type_index != kTVMFFIFunction) return cast_error(&entry, "ffi.Function");
  *fn = entry.v_obj;
  return 1;
}

/* ------------------------------------------------------------ saving */

typedef struct {
  void* index;        /* Map: value -> node index (AnyEqual keys, held) */
  void* nodes;        /* Array of node Maps */
  void** active;      /* Lists and Dicts being saved */
  size_t n_active;
  size_t cap_active;
  FrFieldCache fields;
  int depth;
} Writer;

static int node_of(Writer* w, const TVMFFIAny* value, int64_t* out);

static int ints_array(const int64_t* values, size_t n, TVMFFIAny* out) {
  void* array = fr_array_new((int64_t)n);
  size_t i;
  if (array == NULL) return -1;
  for (i = 0; i < n; ++i) fr_array_push_unchecked(array, fr_any_int(values[i]));
  *out = fr_any_object(array);
  return 0;
}

/* The node indices of a container's children (key, value, ... for maps) as an Array. */
static int children_data(Writer* w, const TVMFFIAny* value, TVMFFIAny* out) {
  void* obj = value->v_obj;
  int is_map = value->type_index == kTVMFFIMap || value->type_index == kTVMFFIDict;
  int guarded = value->type_index == kTVMFFIList || value->type_index == kTVMFFIDict;
  int64_t* indices;
  size_t n = 0, k;
  int status = 0;
  if (guarded) {
    for (k = 0; k < w->n_active; ++k) {
      if (w->active[k] == obj) {
        return fr_raise("ValueError",
                        "Cycle detected during serialization: a %s contains itself",
                        value->type_index == kTVMFFIList ? "List" : "Dict");
      }
    }
    if (w->n_active == w->cap_active) {
      size_t capacity = w->cap_active == 0 ? 8 : w->cap_active * 2;
      void** grown = (void**)realloc(w->active, capacity * sizeof(void*));
      if (grown == NULL) return fr_raise_oom();
      w->active = grown;
      w->cap_active = capacity;
    }
    w->active[w->n_active++] = obj;
  }
  k = is_map ? (size_t)fr_map_size(obj) * 2 : (size_t)fr_seq_size(obj);
  indices = (int64_t*)malloc((k + 1) * sizeof(int64_t));
  if (indices == NULL) return fr_raise_oom();
  if (is_map) {
    uint64_t it, end = fr_map_end(obj);
    for (it = fr_map_begin(obj); status == 0 && it != end; it = fr_map_next(obj, it)) {
      FrKV* kv = fr_map_entry(obj, it);
      status = node_of(w, &kv->key, &indices[n]);
      if (status == 0) status = node_of(w, &kv->value, &indices[n + 1]);
      n += 2;
    }
  } else {
    for (n = 0; status == 0 && n < k; ++n) status = node_of(w, &fr_seq_items(obj)[n], &indices[n]);
  }
  if (status == 0) status = ints_array(indices, k, out);
  free(indices);
  if (guarded && status == 0) w->n_active--;
  return status;
}

static int has_creator(const TVMFFITypeInfo* info) {
  if (info->metadata != NULL && info->metadata->creator != NULL) return 1;
  return fr_type_attr_entry(g_new, info->type_index).type_index == kTVMFFIFunction;
}

static int dtype_text(DLDataType dtype, TVMFFIAny* out) { return fr_dtype_to_string(&dtype, out); }

/* {field: data} of a reflected object (inline fields by value, others by node index). */
static int object_fields(Writer* w, void* obj, int32_t ti, TVMFFIAny* out) {
  const TVMFFIFieldInfo** fields;
  size_t n, i;
  void* data = fr_map_new(kTVMFFIMap);
  int status = 0;
  if (data == NULL) return -1;
  if (fr_cached_fields(&w->fields, ti, 0, &fields, &n) != 0) {
    fr_decref(data);
    return -1;
  }
  for (i = 0; status == 0 && i < n; ++i) {
    const TVMFFIFieldInfo* f = fields[i];
    TVMFFIAny value, item, name;
    int64_t index;
    if (fr_read_field(obj, f, &value) != 0) {
      status = -1;
      break;
    }
    switch (f->field_static_type_index) {
      case kTVMFFINone: item = fr_any_none(); break;
      case kTVMFFIBool: item = fr_any_bool(value.v_int64 != 0); break;
      case kTVMFFIInt: item = fr_any_int(value.v_int64); break;
      case kTVMFFIFloat: item = value; break;
      case kTVMFFIDataType: status = dtype_text(value.v_dtype, &item); break;
      default:
        status = node_of(w, &value, &index);
        item = fr_any_int(index);
        break;
    }
    fr_any_release(&value);
    if (status != 0) break;
    if (fr_string_from_bytes(f->name.data, f->name.size, &name) != 0) status = -1;
    else status = fr_map_set(&data, name, item);
  }
  if (status != 0) {
    fr_decref(data);
    return -1;
  }
  *out = fr_any_object(data);
  return 0;
}

static int object_data(Writer* w, const TVMFFIAny* value, TVMFFIAny* out) {
  int32_t ti = value->type_index;
  void* hook = NULL;
  const TVMFFITypeInfo* info;
  int found;
  if (ti == kTVMFFIArray || ti == kTVMFFIList || ti == kTVMFFIMap || ti == kTVMFFIDict) {
    return children_data(w, value, out);
  }
  if (ti == kTVMFFIShape) {
    const TVMFFIShapeCell* cell = FR_CELL(value->v_obj, TVMFFIShapeCell);
    return ints_array(cell->data, cell->size, out);
  }
  if (is_instance(ti, g_int_enum)) {
    *out = fr_any_int(*(int64_t*)((char*)value->v_obj + 24));
    return 0;
  }
  if (is_instance(ti, g_enum)) {
    *out = fr_any_copy((TVMFFIAny*)((char*)value->v_obj + 32));
    return 0;
  }
  found = hook_of(g_to_json, ti, &hook);
  if (found < 0) return -1;
  if (found) return fr_call(hook, value, 1, out);
  info = fr_type_info_checked(ti);
  if (info == NULL) return -1;
  if (!has_creator(info)) {
    return fr_raise("TypeError",
                    "Type `%s` does not support ToJSONGraph (no native creator or __ffi_new__ "
                    "type attr)",
                    fr_type_key_of(ti));
  }
  return object_fields(w, value->v_obj, ti, out);
}

/* The node {"type": ..., "data": ...} of a value (a new Map into *out). */
static int describe(Writer* w, const TVMFFIAny* value, void** node) {
  int32_t ti = value->type_index;
  TVMFFIAny data = fr_any_none();
  const char* type_key = ti == kTVMFFISmallStr ? "ffi.String"
                         : ti == kTVMFFISmallBytes ? "ffi.Bytes" : fr_type_key_of(ti);
  int status = 0;
  *node = fr_map_new(kTVMFFIMap);
  if (*node == NULL) return -1;
  if (ti == kTVMFFIBool || ti == kTVMFFIInt || ti == kTVMFFIFloat) {
    data = *value;
  } else if (ti == kTVMFFIDataType) {
    status = dtype_text(value->v_dtype, &data);
  } else if (ti == kTVMFFIDevice) {
    int64_t device[2] = {value->v_device.device_type, value->v_device.device_id};
    status = ints_array(device, 2, &data);
  } else if (ti == kTVMFFISmallStr || ti == kTVMFFIStr) {
    data = fr_any_copy(value);
  } else if (ti == kTVMFFISmallBytes || ti == kTVMFFIBytes) {
    TVMFFIByteArray bytes = fr_text_of(value);
    FrBuf encoded;
    static const char kTable[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t i;
    fr_buf_init(&encoded);
    for (i = 0; i < bytes.size; i += 3) {
      unsigned char b0 = (unsigned char)bytes.data[i];
      unsigned char b1 = i + 1 < bytes.size ? (unsigned char)bytes.data[i + 1] : 0;
      unsigned char b2 = i + 2 < bytes.size ? (unsigned char)bytes.data[i + 2] : 0;
      char quad[4] = {kTable[b0 >> 2], kTable[((b0 << 4) | (b1 >> 4)) & 0x3F],
                      i + 1 < bytes.size ? kTable[((b1 << 2) | (b2 >> 6)) & 0x3F] : '=',
                      i + 2 < bytes.size ? kTable[b2 & 0x3F] : '='};
      fr_buf_append(&encoded, quad, 4);
    }
    status = fr_string_from_bytes(fr_buf_cstr(&encoded), encoded.size, &data);
    fr_buf_free(&encoded);
  } else if (ti != kTVMFFINone && ti < kTVMFFIStaticObjectBegin) {
    status = fr_raise("RuntimeError", "Cannot serialize type `%s`", type_key);
  } else if (ti >= kTVMFFIStaticObjectBegin) {
    if (w->depth >= FR_S_MAX_DEPTH) {
      status = fr_s_too_deep("ToJSONGraph");
    } else {
      w->depth++;
      status = object_data(w, value, &data);
      w->depth--;
    }
  }
  if (status == 0) {
    TVMFFIAny type;
    status = fr_string_from_bytes(type_key, strlen(type_key), &type);
    if (status == 0) {
      TVMFFIAny name;
      status = fr_string_from_bytes("type", 4, &name);
      if (status == 0) status = fr_map_set(node, name, type);
      else fr_any_release(&type);
    }
    if (status == 0 && ti != kTVMFFINone) status = set_member(node, "data", data);
    else if (ti != kTVMFFINone) fr_any_release(&data);
  }
  if (status != 0) {
    fr_decref(*node);
    return -1;
  }
  return 0;
}

static int node_of(Writer* w, const TVMFFIAny* value, int64_t* out) {
  TVMFFIAny* found;
  void* node;
  int has = fr_map_find(w->index, value, &found);
  if (has < 0) return -1;
  if (has) {
    *out = found->v_int64;
    return 0;
  }
  if (describe(w, value, &node) != 0) return -1;
  *out = fr_seq_size(w->nodes);
  if (fr_list_ensure_extra(w->nodes, 1) != 0) {
    fr_decref(node);
    return -1;
  }
  fr_seq_items(w->nodes)[((FrSeq*)w->nodes)->cell.size++] = fr_any_object(node);
  return fr_map_set(&w->index, fr_any_copy(value), fr_any_int(*out));
}

static int to_json_graph(const TVMFFIAny* value, const TVMFFIAny* metadata, void** out) {
  Writer w;
  int64_t root;
  int status;
  memset(&w, 0, sizeof(w));
  w.index = fr_map_new(kTVMFFIMap);
  w.nodes = fr_list_new(0);
  *out = fr_map_new(kTVMFFIMap);
  status = w.index == NULL || w.nodes == NULL || *out == NULL ? -1 : node_of(&w, value, &root);
  if (status == 0) status = set_member(out, "root_index", fr_any_int(root));
  if (status == 0) {
    void* nodes = fr_array_from_items(fr_seq_items(w.nodes), fr_seq_size(w.nodes), 0);
    status = nodes == NULL ? -1 : set_member(out, "nodes", fr_any_object(nodes));
  }
  if (status == 0 && metadata->type_index != kTVMFFINone) {
    status = set_member(out, "metadata", fr_any_copy(metadata));
  }
  if (w.index != NULL) fr_decref(w.index);
  if (w.nodes != NULL) fr_decref(w.nodes);
  free(w.active);
  fr_field_cache_free(&w.fields);
  if (status != 0 && *out != NULL) fr_decref(*out);
  return status;
}

/* ------------------------------------------------------------ loading */

typedef struct {
  const TVMFFIAny* nodes;
  int64_t n_nodes;
  TVMFFIAny* decoded; /* owned; None: not decoded (unless it is null_index) */
  int64_t null_index;
  FrFieldCache fields;
  int depth;
} Reader;

static int value_of(Reader* r, int64_t index, TVMFFIAny* out);

static int member(void* map, const char* name, TVMFFIAny** out) {
  TVMFFIAny key;
  int has;
  if (fr_string_from_bytes(name, strlen(name), &key) != 0) return -1;
  has = fr_map_find(map, &key, out);
  fr_any_release(&key);
  if (has < 0) return -1;
  if (!has) return fr_raise("KeyError", "key is not in Map");
  return 0;
}

static int as_int(const TVMFFIAny* value, const char* target, int64_t* out) {
  if (value->type_index != kTVMFFIInt && value->type_index != kTVMFFIBool) {
    return cast_error(value, target);
  }
  *out = value->v_int64;
  return 0;
}

static int as_str(const TVMFFIAny* value, TVMFFIByteArray* out) {
  if (value->type_index != kTVMFFISmallStr && value->type_index != kTVMFFIStr) {
    return cast_error(value, "str");
  }
  return fr_any_str_view(value, 0, out);
}

/* An Array<int>: every element an int (or bool). */
static int as_ints(const TVMFFIAny* value, int64_t** out, int64_t* n) {
  int64_t i;
  if (value->type_index != kTVMFFIArray) return cast_error(value, "Array<int>");
  *n = fr_seq_size(value->v_obj);
  *out = (int64_t*)malloc(((size_t)*n + 1) * sizeof(int64_t));
  if (*out == NULL) return fr_raise_oom();
  for (i = 0; i < *n; ++i) {
    const TVMFFIAny* item = &fr_seq_items(value->v_obj)[i];
    if (item->type_index != kTVMFFIInt && item->type_index != kTVMFFIBool) {
      free(*out);
      return fr_raise("TypeError", "Cannot convert from type `Array[index %" PRId64 ": %s]` to "
                      "`Array<int>`", i, fr_type_key_of(item->type_index));
    }
    (*out)[i] = item->v_int64;
  }
  return 0;
}

/* data cast to bool / int / float, as C++'s cast<T> converts. */
static int scalar(int32_t ti, const TVMFFIAny* data, TVMFFIAny* out) {
  int64_t number;
  if (ti == kTVMFFIFloat && data->type_index == kTVMFFIFloat) {
    *out = *data;
    return 0;
  }
  if (as_int(data, ti == kTVMFFIBool ? "bool" : ti == kTVMFFIInt ? "int" : "float", &number) != 0) {
    return -1;
  }
  if (ti == kTVMFFIBool) *out = fr_any_bool(number != 0);
  else if (ti == kTVMFFIInt) *out = fr_any_int(number);
  else {
    *out = fr_any_none();
    out->type_index = kTVMFFIFloat;
    out->v_float64 = (double)number;
  }
  return 0;
}

static int dtype_value(const TVMFFIAny* data, TVMFFIAny* out) {
  TVMFFIByteArray text;
  if (as_str(data, &text) != 0) return -1;
  *out = fr_any_none();
  out->type_index = kTVMFFIDataType;
  return fr_dtype_from_string(&text, &out->v_dtype);
}

static int base64_decode(TVMFFIByteArray text, TVMFFIAny* out) {
  FrBuf decoded;
  size_t i;
  int status;
  if (text.size % 4 != 0) {
    return fr_raise("InternalError",
                    "Check failed: (bytes.size %% 4 == 0) is false: invalid base64 encoding");
  }
  fr_buf_init(&decoded);
  for (i = 0; i < text.size; i += 4) {
    uint32_t bits = 0;
    int k;
    char bytes[3];
    for (k = 0; k < 4; ++k) {
      unsigned char c = (unsigned char)text.data[i + k];
      uint32_t digit = c >= 'A' && c <= 'Z' ? (uint32_t)(c - 'A')
                       : c >= 'a' && c <= 'z' ? (uint32_t)(c - 'a' + 26)
                       : c >= '0' && c <= '9' ? (uint32_t)(c - '0' + 52)
                       : c == '+' ? 62u : c == '/' ? 63u : 0u;
      bits = bits << 6 | digit;
    }
    bytes[0] = (char)(bits >> 16), bytes[1] = (char)(bits >> 8), bytes[2] = (char)bits;
    fr_buf_append(&decoded, bytes, 1 + (text.data[i + 2] != '=') + (text.data[i + 3] != '='));
  }
  status = fr_bytes_from_bytes(fr_buf_cstr(&decoded), decoded.size, out);
  fr_buf_free(&decoded);
  return status;
}

static int enum_singleton(int32_t ti, const TVMFFIAny* index, TVMFFIAny* out) {
  TVMFFIAny state = fr_type_attr_entry(g_enum_column, ti);
  if (state.type_index == g_enum_state) {
    void* indexes = *(void**)((char*)state.v_obj + 32);
    TVMFFIAny* found;
    int has = indexes == NULL ? 0 : fr_map_find(indexes, index, &found);
    if (has < 0) return -1;
    if (has) {
      *out = fr_any_copy(found);
      return 0;
    }
  }
  if (index->type_index == kTVMFFIInt) {
    return fr_raise("ValueError", "Enum `%s` has no instance with index %" PRId64,
                    fr_type_key_of(ti), index->v_int64);
  } else {
    TVMFFIByteArray text = fr_text_of(index);
    return fr_raise("ValueError", "Enum `%s` has no instance with index %.*s", fr_type_key_of(ti),
                    (int)text.size, text.data);
  }
}

static int field_value(Reader* r, int32_t static_index, const TVMFFIAny* data, TVMFFIAny* out) {
  int64_t index;
  switch (static_index) {
    case kTVMFFINone: *out = fr_any_none(); return 0;
    case kTVMFFIBool:
    case kTVMFFIInt:
    case kTVMFFIFloat: return scalar(static_index, data, out);
    case kTVMFFIDataType: return dtype_value(data, out);
    default:
      if (as_int(data, "int", &index) != 0 || value_of(r, index, out) != 0) return -1;
      *out = fr_any_copy(out);
      return 0;
  }
}

static int decode_object(Reader* r, int32_t ti, const TVMFFIAny* data, TVMFFIAny* out) {
  const TVMFFITypeInfo* info;
  const TVMFFIFieldInfo** fields;
  size_t n, i;
  void* hook = NULL;
  void* obj;
  int found, status = 0;
  if (is_instance(ti, g_int_enum)) {
    int64_t index;
    TVMFFIAny key;
    if (as_int(data, "int", &index) != 0) return -1;
    key = fr_any_int(index);
    return enum_singleton(ti, &key, out);
  }
  if (is_instance(ti, g_enum)) {
    TVMFFIByteArray text;
    if (as_str(data, &text) != 0) return -1;
    return enum_singleton(ti, data, out);
  }
  found = hook_of(g_from_json, ti, &hook);
  if (found < 0) return -1;
  if (found) return fr_call(hook, data, 1, out);
  info = fr_type_info_checked(ti);
  if (info == NULL || fr_create_empty_object(info, &obj) != 0) return -1;
  if (data->type_index != kTVMFFIMap) {
    fr_decref(obj);
    return cast_error(data, "Map<Any, Any>");
  }
  if (fr_cached_fields(&r->fields, ti, 0, &fields, &n) != 0) {
    fr_decref(obj);
    return -1;
  }
  for (i = 0; status == 0 && i < n; ++i) {
    const TVMFFIFieldInfo* f = fields[i];
    TVMFFIAny name, value;
    TVMFFIAny* given;
    int has;
    if (fr_string_from_bytes(f->name.data, f->name.size, &name) != 0) {
      status = -1;
      break;
    }
    has = fr_map_find(data->v_obj, &name, &given);
    fr_any_release(&name);
    if (has < 0) {
      status = -1;
    } else if (has) {
      status = field_value(r, f->field_static_type_index, given, &value);
      if (status == 0) {
        status = fr_call_field_setter(f, (char*)obj + f->offset, &value);
        fr_any_release(&value);
      }
    } else if (f->flags & kTVMFFIFieldFlagBitMaskHasDefault) {
      status = fr_call_field_setter_to_default(f, (char*)obj + f->offset);
    } else {
      status = fr_raise("TypeError", "Required field `%.*s` not set in type `%s`",
                        (int)f->name.size, f->name.data, fr_type_key_of(ti));
    }
  }
  if (status != 0) {
    fr_decref(obj);
    return -1;
  }
  *out = fr_any_object(obj);
  return 0;
}

static int decode_container(Reader* r, int32_t ti, const TVMFFIAny* data, TVMFFIAny* out) {
  int64_t n, i, index;
  void* made;
  if (data->type_index != kTVMFFIArray) return cast_error(data, "Array<Any>");
  n = fr_seq_size(data->v_obj);
  if (ti == kTVMFFIArray || ti == kTVMFFIList) {
    made = ti == kTVMFFIArray ? fr_array_new(n) : fr_list_new(n);
    if (made == NULL) return -1;
    for (i = 0; i < n; ++i) {
      TVMFFIAny item;
      if (as_int(&fr_seq_items(data->v_obj)[i], "int", &index) != 0 ||
          value_of(r, index, &item) != 0) {
        fr_decref(made);
        return -1;
      }
      fr_seq_items(made)[i] = fr_any_copy(&item);
      ((FrSeq*)made)->cell.size = i + 1;
    }
  } else {
    if (n % 2 != 0) {
      return fr_raise("ValueError",
                      "Invalid JSON Object Graph: Map/Dict data must contain an even number of "
                      "[key, value] entries, got %" PRId64, n);
    }
    made = fr_map_new(ti);
    if (made == NULL) return -1;
    for (i = 0; i < n; i += 2) {
      int64_t value_index;
      TVMFFIAny key, value;
      if (as_int(&fr_seq_items(data->v_obj)[i], "int", &index) != 0 ||
          as_int(&fr_seq_items(data->v_obj)[i + 1], "int", &value_index) != 0 ||
          value_of(r, index, &key) != 0 || value_of(r, value_index, &value) != 0 ||
          fr_map_set(&made, fr_any_copy(&key), fr_any_copy(&value)) != 0) {
        fr_decref(made);
        return -1;
      }
    }
  }
  *out = fr_any_object(made);
  return 0;
}

static int decode(Reader* r, void* node, TVMFFIAny* out) {
  TVMFFIAny* type;
  TVMFFIAny* data;
  TVMFFIByteArray key;
  int32_t ti;
  if (member(node, "type", &type) != 0 || as_str(type, &key) != 0 ||
      fr_type_key_to_index(&key, &ti) != 0) {
    return -1;
  }
  if (ti == kTVMFFINone) {
    *out = fr_any_none();
    return 0;
  }
  if (member(node, "data", &data) != 0) return -1;
  if (ti == kTVMFFIBool || ti == kTVMFFIInt || ti == kTVMFFIFloat) return scalar(ti, data, out);
  if (ti == kTVMFFIDataType) return dtype_value(data, out);
  if (ti == kTVMFFIDevice) {
    int64_t* device;
    int64_t n;
    if (as_ints(data, &device, &n) != 0) return -1;
    if (n != 2) {
      free(device);
      return fr_raise("ValueError",
                      "Invalid JSON Object Graph: Device data must be an array of [device_type, "
                      "device_id], got %" PRId64 " element(s)", n);
    }
    *out = fr_any_none();
    out->type_index = kTVMFFIDevice;
    out->v_device.device_type = (DLDeviceType)(int32_t)device[0];
    out->v_device.device_id = (int32_t)device[1];
    free(device);
    return 0;
  }
  if (ti == kTVMFFIStr || ti == kTVMFFIBytes) {
    TVMFFIByteArray text;
    if (as_str(data, &text) != 0) return -1;
    return ti == kTVMFFIStr ? fr_string_from_bytes(text.data, text.size, out)
                            : base64_decode(text, out);
  }
  if (ti == kTVMFFIArray || ti == kTVMFFIList || ti == kTVMFFIMap || ti == kTVMFFIDict) {
    return decode_container(r, ti, data, out);
  }
  if (ti == kTVMFFIShape) {
    int64_t* dims;
    int64_t n;
    void* shape;
    if (as_ints(data, &dims, &n) != 0) return -1;
    shape = fr_shape_new(dims, (size_t)n);
    free(dims);
    if (shape == NULL) return -1;
    *out = fr_any_object(shape);
    return 0;
  }
  return decode_object(r, ti, data, out);
}

/* The value of node index (borrowed from the reader). */
static int value_of(Reader* r, int64_t index, TVMFFIAny* out) {
  const TVMFFIAny* node;
  int status;
  if (index < 0 || index >= r->n_nodes) {
    return fr_raise("ValueError", "Invalid JSON Object Graph: invalid node index %" PRId64, index);
  }
  if (index == r->null_index || r->decoded[index].type_index != kTVMFFINone) {
    *out = r->decoded[index];
    return 0;
  }
  node = &r->nodes[index];
  if (node->type_index != kTVMFFIMap) return cast_error(node, "Map<Any, Any>");
  if (r->depth >= FR_S_MAX_DEPTH) return fr_s_too_deep("FromJSONGraph");
  r->depth++;
  status = decode(r, node->v_obj, &r->decoded[index]);
  r->depth--;
  if (status != 0) return -1;
  if (r->decoded[index].type_index == kTVMFFINone) r->null_index = index;
  *out = r->decoded[index];
  return 0;
}

static int from_json_graph(const TVMFFIAny* graph, TVMFFIAny* out) {
  Reader r;
  TVMFFIAny* root;
  TVMFFIAny* nodes;
  TVMFFIAny value;
  int64_t i;
  int status;
  if (graph->type_index != kTVMFFIMap) {
    return fr_raise("ValueError", "Invalid JSON Object Graph, expected an object");
  }
  if (member(graph->v_obj, "root_index", &root) != 0 || root->type_index != kTVMFFIInt) {
    TVMFFIObjectHandle err = NULL;
    TVMFFIErrorMoveFromRaised(&err);
    if (err != NULL) fr_decref(err);
    return fr_raise("ValueError",
                    "Invalid JSON Object Graph, expected `root_index` integer field");
  }
  if (member(graph->v_obj, "nodes", &nodes) != 0 || nodes->type_index != kTVMFFIArray) {
    TVMFFIObjectHandle err = NULL;
    TVMFFIErrorMoveFromRaised(&err);
    if (err != NULL) fr_decref(err);
    return fr_raise("ValueError", "Invalid JSON Object Graph, expected `nodes` array field");
  }
  memset(&r, 0, sizeof(r));
  r.nodes = fr_seq_items(nodes->v_obj);
  r.n_nodes = fr_seq_size(nodes->v_obj);
  r.null_index = -1;
  r.decoded = (TVMFFIAny*)calloc((size_t)r.n_nodes + 1, sizeof(TVMFFIAny));
  if (r.decoded == NULL) return fr_raise_oom();
  status = value_of(&r, root->v_int64, &value);
  if (status == 0) *out = fr_any_copy(&value);
  for (i = 0; i < r.n_nodes; ++i) fr_any_release(&r.decoded[i]);
  free(r.decoded);
  fr_field_cache_free(&r.fields);
  return status;
}

/* ------------------------------------------------------------ globals and hooks */

static int to_json_graph_global(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  void* graph;
  (void)ctx;
  if (to_json_graph(&args[0].value, &args[1].value, &graph) != 0) return -1;
  *rv = fr_any_object(graph);
  return 0;
}

static int to_json_graph_string(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  void* graph;
  TVMFFIAny value;
  FrBuf text;
  int status;
  (void)ctx;
  if (to_json_graph(&args[0].value, &args[1].value, &graph) != 0) return -1;
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
  return from_json_graph(&args[0].value, rv);
}

static int from_json_graph_string(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  TVMFFIByteArray text;
  TVMFFIAny graph;
  int status;
  (void)ctx;
  fr_any_str_view(&args[0].value, 0, &text);
  if (fr_json_parse(text.data, text.size, &graph) != 0) return -1;
  status = from_json_graph(&graph, rv);
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
    return cast_error(&args[0].value, "ffi.BigInt");
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
  if (fr_type_key_to_index(&kEnum, &g_enum) != 0 ||
      fr_type_key_to_index(&kIntEnum, &g_int_enum) != 0 ||
      fr_type_key_to_index(&kEnumState, &g_enum_state) != 0) {
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
  g_to_json = fr_s_column("__data_to_json__");
  g_from_json = fr_s_column("__data_from_json__");
  g_new = fr_s_column("__ffi_new__");
  g_enum_column = fr_s_column("__ffi_enum__");
  return 0;
}

/* [+-]digits, nothing else; the value through the BigInt decimal parse. */
static int bigint_from_json(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  TVMFFIByteArray text;
  size_t i = 0;
  (void)ctx;
  if (as_str(&args[0].value, &text) != 0) return -1;
  if (i < text.size && (text.data[i] == '+' || text.data[i] == '-')) ++i;
  if (i == text.size) return fr_raise("ValueError", "Invalid decimal string for ffi.BigInt");
  for (; i < text.size; ++i) {
    if (text.data[i] < '0' || text.data[i] > '9') {
      return fr_raise("ValueError", "Invalid decimal string for ffi.BigInt");
    }
  }
  return fr_bigint_from_decimal(text.data, text.size, rv);
}
