/*
 * json_graph_load.c -- ffi.FromJSONGraph's walk: nodes decoded on demand from
 * the root (each once, so sharing comes back), objects through their creator
 * or __ffi_new__ and their fields, enums through their singletons,
 * __data_from_json__ hooks, with upstream's error texts for malformed graphs.
 * Separate from saving: the two walks share only the format's helpers
 * (json_graph.c).
 *
 * Its twin in the reference runtime: tvm_ffi_ref/runtime/json_graph_load.py.
 */
#include "json_graph.h"

#include <inttypes.h>

#include "containers.h"
#include "functions.h"
#include "registry.h"
#include "runtime.h"
#include "structural.h"
#include "walk.h"

/* ------------------------------------------------------------ loading */

typedef struct {
  const TVMFFIAny* nodes;
  int64_t n_nodes;
  TVMFFIAny* decoded; /* owned; None: not decoded (unless it is null_index) */
  int64_t null_index;
  FrFieldCache fields;
  char* entered;      /* per node: being decoded (met again: the graph has a cycle) */
} Reader;

/* ------------------------------------------------------------ the work list
 *
 * A node is decoded once its children are, so a container or a reflected object with fields is
 * a frame on an explicit stack in heap memory, not a C call: a chain a million nodes deep costs
 * no C stack. A frame asks for one child node at a time; a child not decoded yet gets a frame
 * of its own, and the parent resumes with its value. */

enum { FRAME_SEQ, FRAME_MAP, FRAME_OBJECT };

typedef struct {
  int kind;
  int64_t node;         /* the node index decoded */
  int32_t type_index;
  const TVMFFIAny* data;
  void* made;           /* the container or object being filled (owned) */
  int64_t n, index;     /* FRAME_SEQ, FRAME_MAP: data items; FRAME_OBJECT: fields */
  TVMFFIAny key;        /* FRAME_MAP: the entry's key while its value is decoded (borrowed) */
  int64_t value_index;  /* FRAME_MAP: the entry's value node */
  const TVMFFIFieldInfo** fields;
} LoadFrame;

typedef struct {
  LoadFrame* frames;
  size_t n, capacity;
} LoadStack;

static int value_of(Reader* r, LoadStack* st, int64_t index, TVMFFIAny* out);

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
    return fr_jg_cast_error(value, target);
  }
  *out = value->v_int64;
  return 0;
}


/* An Array<int>: every element an int (or bool). */
static int as_ints(const TVMFFIAny* value, int64_t** out, int64_t* n) {
  int64_t i;
  if (value->type_index != kTVMFFIArray) return fr_jg_cast_error(value, "Array<int>");
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
  if (fr_jg_as_str(data, &text) != 0) return -1;
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
  TVMFFIAny state = fr_type_attr_entry(fr_jg.enum_column, ti);
  if (state.type_index == fr_jg.enum_state_index) {
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

static int field_value(int32_t static_index, const TVMFFIAny* data, TVMFFIAny* out) {
  int64_t index;
  switch (static_index) {
    case kTVMFFINone: *out = fr_any_none(); return 0;
    case kTVMFFIBool:
    case kTVMFFIInt:
    case kTVMFFIFloat: return scalar(static_index, data, out);
    case kTVMFFIDataType: return dtype_value(data, out);
    default:
      if (as_int(data, "int", &index) != 0) return -1;
      *out = fr_any_int(index);
      return 1; /* a node: the caller decodes it */
  }
}

static LoadFrame* push_frame(LoadStack* st, int kind, int64_t node, int32_t ti,
                             const TVMFFIAny* data) {
  LoadFrame* f;
  LoadFrame* frames =
      (LoadFrame*)fr_s_stack_room(st->frames, st->n, &st->capacity, sizeof(LoadFrame));
  if (frames == NULL) return NULL;
  st->frames = frames;
  f = &frames[st->n++];
  memset(f, 0, sizeof(*f));
  f->kind = kind;
  f->node = node;
  f->type_index = ti;
  f->data = data;
  return f;
}

/* An object: an enum singleton or through its __data_from_json__ hook (0), or made empty and a
 * frame pushed to set its fields (1), or -1. */
static int start_object(Reader* r, LoadStack* st, int64_t node, int32_t ti,
                        const TVMFFIAny* data, TVMFFIAny* out) {
  const TVMFFITypeInfo* info;
  void* hook = NULL;
  void* obj;
  size_t n;
  int found;
  LoadFrame* f;
  if (fr_type_is_instance(ti, fr_jg.int_enum_index)) {
    int64_t index;
    TVMFFIAny key;
    if (as_int(data, "int", &index) != 0) return -1;
    key = fr_any_int(index);
    return enum_singleton(ti, &key, out);
  }
  if (fr_type_is_instance(ti, fr_jg.enum_index)) {
    TVMFFIByteArray text;
    if (fr_jg_as_str(data, &text) != 0) return -1;
    return enum_singleton(ti, data, out);
  }
  found = fr_jg_hook_of(fr_jg.from_json, ti, &hook);
  if (found < 0) return -1;
  if (found) return fr_call(hook, data, 1, out);
  info = fr_type_info_checked(ti);
  if (info == NULL || fr_create_empty_object(info, &obj) != 0) return -1;
  if (data->type_index != kTVMFFIMap) {
    fr_decref(obj);
    return fr_jg_cast_error(data, "Map<Any, Any>");
  }
  f = push_frame(st, FRAME_OBJECT, node, ti, data);
  if (f == NULL) {
    fr_decref(obj);
    return -1;
  }
  f->made = obj;
  if (fr_cached_fields(&r->fields, ti, 0, &f->fields, &n) != 0) return -1;
  f->n = (int64_t)n;
  return 1;
}

/* An object frame's next field: set here when inline, defaulted or missing (an error); a node
 * index into *child (1); the frame's end (0); or -1. */
static int object_next(LoadFrame* f, int64_t* child) {
  while (f->index < f->n) {
    const TVMFFIFieldInfo* field = f->fields[f->index++];
    TVMFFIAny name, value;
    TVMFFIAny* given;
    int has, status;
    if (fr_string_from_bytes(field->name.data, field->name.size, &name) != 0) return -1;
    has = fr_map_find(f->data->v_obj, &name, &given);
    fr_any_release(&name);
    if (has < 0) return -1;
    if (has) {
      status = field_value(field->field_static_type_index, given, &value);
      if (status < 0) return -1;
      if (status == 1) {
        *child = value.v_int64;
        return 1;
      }
      status = fr_call_field_setter(field, (char*)f->made + field->offset, &value);
      fr_any_release(&value);
      if (status != 0) return -1;
    } else if (field->flags & kTVMFFIFieldFlagBitMaskHasDefault) {
      if (fr_call_field_setter_to_default(field, (char*)f->made + field->offset) != 0) return -1;
    } else {
      return fr_raise("TypeError", "Required field `%.*s` not set in type `%s`",
                      (int)field->name.size, field->name.data, fr_type_key_of(f->type_index));
    }
  }
  return 0;
}

/* A container: made empty and a frame pushed to fill it (1), or -1. */
static int start_container(LoadStack* st, int64_t node, int32_t ti, const TVMFFIAny* data) {
  int is_map = ti == kTVMFFIMap || ti == kTVMFFIDict;
  int64_t n;
  LoadFrame* f;
  if (data->type_index != kTVMFFIArray) return fr_jg_cast_error(data, "Array<Any>");
  n = fr_seq_size(data->v_obj);
  if (is_map && n % 2 != 0) {
    return fr_raise("ValueError",
                    "Invalid JSON Object Graph: Map/Dict data must contain an even number of "
                    "[key, value] entries, got %" PRId64, n);
  }
  f = push_frame(st, is_map ? FRAME_MAP : FRAME_SEQ, node, ti, data);
  if (f == NULL) return -1;
  f->n = n;
  f->made = ti == kTVMFFIArray ? fr_array_new(n) : ti == kTVMFFIList ? fr_list_new(n)
                                                                       : fr_map_new(ti);
  return f->made == NULL ? -1 : 1;
}

/* A container frame's next child node (1, *child), its end (0), or -1. */
static int container_next(LoadFrame* f, int64_t* child) {
  const TVMFFIAny* items = fr_seq_items(f->data->v_obj);
  if (f->index >= f->n) return 0;
  if (f->kind == FRAME_MAP && f->index % 2 == 1) {
    *child = f->value_index;
  } else if (as_int(&items[f->index], "int", child) != 0) {
    return -1;
  } else if (f->kind == FRAME_MAP &&
             as_int(&items[f->index + 1], "int", &f->value_index) != 0) {
    return -1;
  }
  f->index++;
  return 1;
}

/* A child's value (borrowed from the reader), into its frame. */
static int frame_take(LoadFrame* f, const TVMFFIAny* value) {
  if (f->kind == FRAME_SEQ) {
    fr_seq_items(f->made)[f->index - 1] = fr_any_copy(value);
    ((FrSeq*)f->made)->cell.size = f->index;
    return 0;
  }
  if (f->kind == FRAME_MAP) {
    if (f->index % 2 == 1) {
      f->key = *value;
      return 0;
    }
    return fr_map_set(&f->made, fr_any_copy(&f->key), fr_any_copy(value));
  }
  {
    TVMFFIAny copy = fr_any_copy(value);
    const TVMFFIFieldInfo* field = f->fields[f->index - 1];
    int status = fr_call_field_setter(field, (char*)f->made + field->offset, &copy);
    fr_any_release(&copy);
    return status;
  }
}

/* A node's value when it needs no frame (0), or a frame pushed (1), or -1. */
static int decode(Reader* r, LoadStack* st, int64_t index, void* node, TVMFFIAny* out) {
  TVMFFIAny* type;
  TVMFFIAny* data;
  TVMFFIByteArray key;
  int32_t ti;
  if (member(node, "type", &type) != 0 || fr_jg_as_str(type, &key) != 0 ||
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
    if (fr_jg_as_str(data, &text) != 0) return -1;
    return ti == kTVMFFIStr ? fr_string_from_bytes(text.data, text.size, out)
                            : base64_decode(text, out);
  }
  if (ti == kTVMFFIArray || ti == kTVMFFIList || ti == kTVMFFIMap || ti == kTVMFFIDict) {
    return start_container(st, index, ti, data);
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
  return start_object(r, st, index, ti, data, out);
}

/* A node decoded: its value (owned, consumed) kept by the reader. */
static void decoded(Reader* r, int64_t index, TVMFFIAny value) {
  r->decoded[index] = value;
  r->entered[index] = 0;
  if (value.type_index == kTVMFFINone) r->null_index = index;
}

/* The value of node index when decoded or needing no frame (0, borrowed from the reader), or a
 * frame pushed to decode it (1), or -1. */
static int value_of(Reader* r, LoadStack* st, int64_t index, TVMFFIAny* out) {
  const TVMFFIAny* node;
  TVMFFIAny value = fr_any_none();
  int status;
  if (index < 0 || index >= r->n_nodes) {
    return fr_raise("ValueError", "Invalid JSON Object Graph: invalid node index %" PRId64, index);
  }
  if (index == r->null_index || r->decoded[index].type_index != kTVMFFINone) {
    *out = r->decoded[index];
    return 0;
  }
  if (r->entered[index]) {
    return fr_raise("ValueError",
                    "Invalid JSON Object Graph: node %" PRId64 " contains itself (a cycle)", index);
  }
  node = &r->nodes[index];
  if (node->type_index != kTVMFFIMap) return fr_jg_cast_error(node, "Map<Any, Any>");
  r->entered[index] = 1;
  status = decode(r, st, index, node->v_obj, &value);
  if (status != 0) return status;
  decoded(r, index, value);
  *out = r->decoded[index];
  return 0;
}

/* The value of the root node, its descendants decoded first over the work list. */
static int load_root(Reader* r, int64_t root, TVMFFIAny* out) {
  LoadStack st = {NULL, 0, 0};
  TVMFFIAny value;
  int status = value_of(r, &st, root, &value);
  while (status > 0 && st.n > 0) {
    LoadFrame* f = &st.frames[st.n - 1];
    int64_t child;
    status = f->kind == FRAME_OBJECT ? object_next(f, &child) : container_next(f, &child);
    if (status < 0) break;
    if (status == 1) {
      status = value_of(r, &st, child, &value);
      if (status != 0) continue; /* a frame was pushed (1), or an error (-1) */
    } else {
      decoded(r, f->node, fr_any_object(f->made));
      value = r->decoded[f->node];
      if (--st.n == 0) break;
    }
    status = frame_take(&st.frames[st.n - 1], &value);
    if (status == 0) status = 1;
  }
  while (st.n > 0) {
    LoadFrame* f = &st.frames[--st.n];
    if (f->made != NULL) fr_decref(f->made);
  }
  free(st.frames);
  if (status < 0) return -1;
  *out = value;
  return 0;
}

int fr_json_graph_load(const TVMFFIAny* graph, TVMFFIAny* out) {
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
  r.entered = (char*)calloc((size_t)r.n_nodes + 1, 1);
  if (r.decoded == NULL || r.entered == NULL) {
    free(r.decoded);
    free(r.entered);
    return fr_raise_oom();
  }
  status = load_root(&r, root->v_int64, &value);
  if (status == 0) *out = fr_any_copy(&value);
  for (i = 0; i < r.n_nodes; ++i) fr_any_release(&r.decoded[i]);
  free(r.decoded);
  free(r.entered);
  fr_field_cache_free(&r.fields);
  return status;
}
