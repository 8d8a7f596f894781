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
  FrPtrMap active;    /* Lists and Dicts being saved (a second visit is a cycle) */
  FrFieldCache fields;
} Writer;

/* ------------------------------------------------------------ the work list
 *
 * A value's node is made after its children's (the node records their indices), so a container
 * or an object with fields is a frame on an explicit stack in heap memory, not a C call: a
 * chain a million levels deep costs no C stack. A frame hands out its children one at a time,
 * takes in each child's node index and, when done, makes its own node. */

enum { FRAME_SEQ, FRAME_MAP, FRAME_OBJECT };

typedef struct {
  int kind;
  void* obj;        /* the value's object (fr_s_check_path reads it) */
  TVMFFIAny value;  /* the value the node is for (owned) */
  int64_t* indices; /* FRAME_SEQ, FRAME_MAP: the children's node indices */
  size_t n, index;
  uint64_t it, end; /* FRAME_MAP: the entry whose key (index even) or value is next */
  void* data;       /* FRAME_OBJECT: {field: data} */
  const TVMFFIFieldInfo** fields;
  int guarded;      /* a List or Dict: in the active set */
  int unshared;     /* the value is never met again: its node is not indexed */
} SaveFrame;

typedef struct {
  SaveFrame* frames;
  size_t n, capacity;
} SaveStack;

static int ints_array(const int64_t* values, size_t n, TVMFFIAny* out) {
  void* array = fr_array_new((int64_t)n);
  size_t i;
  if (array == NULL) return -1;
  for (i = 0; i < n; ++i) fr_array_push_unchecked(array, fr_any_int(values[i]));
  *out = fr_any_object(array);
  return 0;
}

static void drop_frame(Writer* w, SaveFrame* f) {
  if (f->guarded) fr_ptrmap_erase(&w->active, f->obj, NULL);
  fr_any_release(&f->value);
  free(f->indices);
  if (f->data != NULL) fr_decref(f->data);
}

static SaveFrame* push_frame(SaveStack* st, int kind, const TVMFFIAny* value) {
  SaveFrame* f;
  SaveFrame* frames =
      (SaveFrame*)fr_s_stack_room(st->frames, st->n, &st->capacity, sizeof(SaveFrame));
  if (frames == NULL) return NULL;
  st->frames = frames;
  f = &frames[st->n++];
  memset(f, 0, sizeof(*f));
  f->kind = kind;
  f->obj = value->v_obj;
  f->value = fr_any_copy(value);
  if (fr_s_check_path("ToJSONGraph", st->frames, st->n, sizeof(SaveFrame),
                      offsetof(SaveFrame, obj)) != 0) {
    fr_any_release(&f->value);
    st->n--;
    return NULL;
  }
  return f;
}

/* A container's frame, collecting its children's node indices (key, value, ... for maps). */
static int start_container(Writer* w, SaveStack* st, const TVMFFIAny* value) {
  int32_t ti = value->type_index;
  int is_map = ti == kTVMFFIMap || ti == kTVMFFIDict;
  void* obj = value->v_obj;
  SaveFrame* f;
  if (ti == kTVMFFIList || ti == kTVMFFIDict) {
    if (fr_ptrmap_find(&w->active, obj, NULL) != NULL) {
      return fr_raise("ValueError", "Cycle detected during serialization: a %s contains itself",
                      ti == kTVMFFIList ? "List" : "Dict");
    }
  }
  f = push_frame(st, is_map ? FRAME_MAP : FRAME_SEQ, value);
  if (f == NULL) return -1;
  if (ti == kTVMFFIList || ti == kTVMFFIDict) {
    if (fr_ptrmap_put(&w->active, obj, NULL, 1) != 0) return -1;
    f->guarded = 1;
  }
  f->n = is_map ? (size_t)fr_map_size(obj) * 2 : (size_t)fr_seq_size(obj);
  f->indices = (int64_t*)malloc((f->n + 1) * sizeof(int64_t));
  if (f->indices == NULL) return fr_raise_oom();
  if (is_map) {
    f->it = fr_map_begin(obj);
    f->end = fr_map_end(obj);
  }
  return 1;
}

static int has_creator(const TVMFFITypeInfo* info) {
  if (info->metadata != NULL && info->metadata->creator != NULL) return 1;
  return fr_type_attr_entry(fr_jg.ffi_new, info->type_index).type_index == kTVMFFIFunction;
}

static int dtype_text(DLDataType dtype, TVMFFIAny* out) { return fr_dtype_to_string(&dtype, out); }

/* The data of an object-backed value that needs no frame (0), or a frame for a container or
 * a reflected object's fields (1), or -1. */
static int object_data(Writer* w, SaveStack* st, const TVMFFIAny* value, TVMFFIAny* out) {
  int32_t ti = value->type_index;
  void* hook = NULL;
  const TVMFFITypeInfo* info;
  SaveFrame* f;
  int found;
  if (ti == kTVMFFIArray || ti == kTVMFFIList || ti == kTVMFFIMap || ti == kTVMFFIDict) {
    return start_container(w, st, value);
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
  f = push_frame(st, FRAME_OBJECT, value);
  if (f == NULL) return -1;
  f->data = fr_map_new(kTVMFFIMap);
  if (f->data == NULL) return -1;
  if (fr_cached_fields(&w->fields, ti, 0, &f->fields, &f->n) != 0) return -1;
  return 1;
}

/* The data of a value that needs no frame (0), or a frame (1), or -1. */
static int value_data(Writer* w, SaveStack* st, const TVMFFIAny* value, TVMFFIAny* data) {
  int32_t ti = value->type_index;
  *data = fr_any_none();
  if (ti == kTVMFFIBool || ti == kTVMFFIInt || ti == kTVMFFIFloat) {
    *data = *value;
  } else if (ti == kTVMFFIDataType) {
    return dtype_text(value->v_dtype, data);
  } else if (ti == kTVMFFIDevice) {
    int64_t device[2] = {value->v_device.device_type, value->v_device.device_id};
    return ints_array(device, 2, data);
  } else if (ti == kTVMFFISmallStr || ti == kTVMFFIStr) {
    *data = fr_any_copy(value);
  } else if (ti == kTVMFFISmallBytes || ti == kTVMFFIBytes) {
    TVMFFIByteArray bytes = fr_text_of(value);
    FrBuf encoded;
    static const char kTable[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t i;
    int status;
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
    status = fr_string_from_bytes(fr_buf_cstr(&encoded), encoded.size, data);
    fr_buf_free(&encoded);
    return status;
  } else if (ti != kTVMFFINone && ti < kTVMFFIStaticObjectBegin) {
    const char* type_key = ti == kTVMFFISmallBytes ? "ffi.Bytes" : fr_type_key_of(ti);
    return fr_raise("RuntimeError", "Cannot serialize type `%s`", type_key);
  } else if (ti >= kTVMFFIStaticObjectBegin) {
    return object_data(w, st, value, data);
  }
  return 0;
}

/* The node {"type": ..., "data": ...} of value, data owned (consumed): appended to the nodes
 * and indexed (unless unshared); its index into *out. */
static int add_node(Writer* w, const TVMFFIAny* value, TVMFFIAny data, int unshared,
                    int64_t* out) {
  int32_t ti = value->type_index;
  const char* type_key = ti == kTVMFFISmallStr ? "ffi.String"
                         : ti == kTVMFFISmallBytes ? "ffi.Bytes" : fr_type_key_of(ti);
  TVMFFIAny type, name;
  void* node = fr_map_new(kTVMFFIMap);
  int status = node == NULL ? -1 : 0;
  if (status == 0) status = fr_string_from_bytes(type_key, strlen(type_key), &type);
  if (status == 0) {
    status = fr_string_from_bytes("type", 4, &name);
    if (status == 0) status = fr_map_set(&node, name, type);
    else fr_any_release(&type);
  }
  if (status == 0 && ti != kTVMFFINone) status = set_member(&node, "data", data);
  else if (ti != kTVMFFINone) fr_any_release(&data);
  if (status == 0) {
    *out = fr_seq_size(w->nodes);
    status = fr_list_ensure_extra(w->nodes, 1);
  }
  if (status != 0) {
    if (node != NULL) fr_decref(node);
    return -1;
  }
  fr_seq_items(w->nodes)[((FrSeq*)w->nodes)->cell.size++] = fr_any_object(node);
  if (unshared) return 0;
  return fr_map_set(&w->index, fr_any_copy(value), fr_any_int(*out));
}

/* Whether value can be met again neither as itself nor as an equal key: an object the index
 * compares by address (no content equality: not a string, bytes, BigInt or a type with an
 * __any_equal__), whose only holders are the parent it was read from and the walk's own `held`
 * references (-1: unknown, the root). Such a node is neither looked up nor indexed: at a
 * million nodes each is a cache miss in a table that keeps doubling. */
static int is_unshared(const TVMFFIAny* value, int held) {
  int32_t ti = value->type_index;
  if (held < 0 || ti < kTVMFFIStaticObjectBegin || ti == kTVMFFIStr || ti == kTVMFFIBytes ||
      ti == kTVMFFIBigInt) {
    return 0;
  }
  if (fr_strong_count(value->v_obj) != (uint32_t)held + 1) return 0;
  return fr_type_attr_entry(fr_any_equal_column(), ti).type_index == kTVMFFINone;
}

/* The node index of a value already saved or needing no frame (0), or a frame pushed (1). */
static int start(Writer* w, SaveStack* st, const TVMFFIAny* value, int held, int64_t* out) {
  TVMFFIAny* found;
  TVMFFIAny data;
  int unshared = is_unshared(value, held), status;
  if (!unshared) {
    int has = fr_map_find(w->index, value, &found);
    if (has < 0) return -1;
    if (has) {
      *out = found->v_int64;
      return 0;
    }
  }
  status = value_data(w, st, value, &data);
  if (status == 1) st->frames[st->n - 1].unshared = unshared;
  if (status != 0) return status;
  return add_node(w, value, data, unshared, out);
}

/* The frame's next child needing a node (1), its end (0, its data into *data), or -1. Inline
 * fields are taken in here. */
static int frame_next(SaveFrame* f, const TVMFFIAny** child, TVMFFIAny* held, TVMFFIAny* data) {
  if (f->kind == FRAME_SEQ) {
    if (f->index < f->n) {
      *child = &fr_seq_items(f->obj)[f->index++];
      return 1;
    }
    return ints_array(f->indices, f->n, data) != 0 ? -1 : 0;
  }
  if (f->kind == FRAME_MAP) {
    if (f->index < f->n) {
      FrKV* kv = fr_map_entry(f->obj, f->it);
      if (f->index++ % 2 == 0) {
        *child = &kv->key;
      } else {
        *child = &kv->value;
        f->it = fr_map_next(f->obj, f->it);
      }
      return 1;
    }
    return ints_array(f->indices, f->n, data) != 0 ? -1 : 0;
  }
  while (f->index < f->n) {
    const TVMFFIFieldInfo* field = f->fields[f->index++];
    TVMFFIAny value, item, name;
    int status = 0;
    if (fr_read_field(f->obj, field, &value) != 0) return -1;
    switch (field->field_static_type_index) {
      case kTVMFFINone: item = fr_any_none(); break;
      case kTVMFFIBool: item = fr_any_bool(value.v_int64 != 0); break;
      case kTVMFFIInt: item = fr_any_int(value.v_int64); break;
      case kTVMFFIFloat: item = value; break;
      case kTVMFFIDataType: status = dtype_text(value.v_dtype, &item); break;
      default:
        *held = value; /* the caller releases it once its node is made */
        *child = held;
        return 1;
    }
    fr_any_release(&value);
    if (status != 0) return -1;
    if (fr_string_from_bytes(field->name.data, field->name.size, &name) != 0) {
      fr_any_release(&item);
      return -1;
    }
    if (fr_map_set(&f->data, name, item) != 0) return -1;
  }
  *data = fr_any_object(f->data);
  f->data = NULL;
  return 0;
}

/* A child's node index, into its frame. */
static int frame_take(SaveFrame* f, int64_t index) {
  TVMFFIAny name;
  const TVMFFIFieldInfo* field;
  if (f->kind != FRAME_OBJECT) {
    f->indices[f->index - 1] = index;
    return 0;
  }
  field = f->fields[f->index - 1];
  if (fr_string_from_bytes(field->name.data, field->name.size, &name) != 0) return -1;
  return fr_map_set(&f->data, name, fr_any_int(index));
}

static int node_of(Writer* w, const TVMFFIAny* value, int64_t* out) {
  SaveStack st = {NULL, 0, 0};
  int64_t index = 0;
  int status = start(w, &st, value, -1, &index);
  while (status > 0 && st.n > 0) {
    SaveFrame* f = &st.frames[st.n - 1];
    const TVMFFIAny* child;
    TVMFFIAny held = fr_any_none(), data;
    status = frame_next(f, &child, &held, &data);
    if (status < 0) break;
    if (status == 1) {
      /* a container's child is borrowed from it; a field's is held once (held) */
      status = start(w, &st, child, child == &held ? 1 : 0, &index);
      fr_any_release(&held);
      if (status != 0) continue; /* a frame was pushed (1), or an error (-1) */
    } else {
      status = add_node(w, &f->value, data, f->unshared, &index);
      if (status != 0) break;
      drop_frame(w, f);
      if (--st.n == 0) break;
    }
    status = frame_take(&st.frames[st.n - 1], index);
    if (status == 0) status = 1;
  }
  while (st.n > 0) drop_frame(w, &st.frames[--st.n]);
  free(st.frames);
  if (status < 0) return -1;
  *out = index;
  return 0;
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
  fr_ptrmap_free(&w.active);
  fr_field_cache_free(&w.fields);
  if (status != 0 && *out != NULL) fr_decref(*out);
  return status;
}
