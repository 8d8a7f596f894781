/*
 * json_graph_save.c -- ffi.ToJSONGraph's walk: one node per distinct value
 * (sharing kept through an index keyed by AnyEqual), in upstream's node
 * order, each node a Map of its type key and data (inline fields, enums,
 * __data_to_json__ hooks). Separate from loading: the two walks share only the
 * format's helpers (json_graph.c).
 *
 * Its twin in the reference runtime: tvm_ffi_ref/runtime/json_graph.py.
 */
#include "json_graph.h"

#include "containers.h"
#include "functions.h"
#include "registry.h"
#include "runtime.h"
#include "structural.h"
#include "walk.h"

/* Sets key (a C string) -> value (owned, consumed) in *map. */
static int set_member(void** map, const char* key, TVMFFIAny value) {
  TVMFFIAny k;
  if (fr_string_from_bytes(key, strlen(key), &k) != 0) {
    fr_any_release(&value);
    return -1;
  }
  return fr_map_set(map, k, value);
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
  return fr_type_attr_entry(fr_jg.ffi_new, info->type_index).type_index == kTVMFFIFunction;
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
  if (fr_type_is_instance(ti, fr_jg.int_enum_index)) {
    *out = fr_any_int(*(int64_t*)((char*)value->v_obj + 24));
    return 0;
  }
  if (fr_type_is_instance(ti, fr_jg.enum_index)) {
    *out = fr_any_copy((TVMFFIAny*)((char*)value->v_obj + 32));
    return 0;
  }
  found = fr_jg_hook_of(fr_jg.to_json, ti, &hook);
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
    if (w->depth >= FR_S_MAX_DEPTH || tvm_ffi_runtime_stack_low()) {
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

int fr_json_graph_save(const TVMFFIAny* value, const TVMFFIAny* metadata, void** out) {
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
