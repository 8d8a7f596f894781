/*
 * containers.c -- Array, List and Shape objects, and the container global
 * functions (ffi.Array*, ffi.List*, ffi.Map*, ffi.Dict*, ffi.Shape).
 *
 * Array: header, TVMFFISeqCell (data points just past the cell, data_deleter
 * NULL), the elements inline. List: the same cell over a separately allocated
 * buffer freed through data_deleter; C++ code that grows one of our lists
 * frees our buffer through that deleter and keeps it for its own buffer, so
 * it must be malloc/free compatible (libstdc++'s operator new is malloc).
 */
#include "core.h"

#include "containers.h"
#include "functions.h"

static void seq_deleter(void* self, int flags) {
  FrSeq* seq = (FrSeq*)self;
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    TVMFFIAny* items = (TVMFFIAny*)seq->cell.data;
    int64_t i;
    for (i = 0; i < seq->cell.size; ++i) fr_any_release(&items[i]);
    seq->cell.size = 0;
    if (seq->cell.data_deleter != NULL) seq->cell.data_deleter(seq->cell.data);
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) free(seq);
}

void* fr_array_new(int64_t capacity) {
  FrSeq* seq;
  if (capacity < 0) capacity = 0;
  seq = (FrSeq*)fr_object_alloc(sizeof(FrSeq) + (size_t)capacity * sizeof(TVMFFIAny),
                                kTVMFFIArray, seq_deleter);
  if (seq == NULL) return NULL;
  seq->cell.data = (char*)seq + sizeof(FrSeq);
  seq->cell.size = 0;
  seq->cell.capacity = capacity;
  seq->cell.data_deleter = NULL;
  return seq;
}

void* fr_array_from_items(TVMFFIAny* items, int64_t n, int take) {
  void* array = fr_array_new(n);
  int64_t i;
  if (array == NULL) return NULL;
  for (i = 0; i < n; ++i) {
    fr_array_push_unchecked(array, take ? items[i] : fr_any_copy(&items[i]));
  }
  return array;
}

/* The C++ runtime's allocation functions, by their Itanium ABI names. */
extern void* _ZnwmRKSt9nothrow_t(size_t size, const void* tag); /* operator new(size, nothrow) */
extern void _ZdlPv(void* ptr);                                   /* operator delete(ptr) */
extern const char _ZSt7nothrow;                                  /* std::nothrow */

static void* alloc_list_buffer(size_t bytes) { return _ZnwmRKSt9nothrow_t(bytes, &_ZSt7nothrow); }

static void free_list_buffer(void* data) { _ZdlPv(data); }

void* fr_list_new(int64_t capacity) {
  FrSeq* seq = (FrSeq*)fr_object_alloc(sizeof(FrSeq), kTVMFFIList, seq_deleter);
  if (seq == NULL) return NULL;
  if (capacity < 0) capacity = 0;
  seq->cell.data = NULL;
  if (capacity > 0) {
    seq->cell.data = alloc_list_buffer((size_t)capacity * sizeof(TVMFFIAny));
    if (seq->cell.data == NULL) {
      free(seq);
      fr_raise_oom();
      return NULL;
    }
  }
  seq->cell.size = 0;
  seq->cell.capacity = capacity;
  seq->cell.data_deleter = free_list_buffer;
  return seq;
}

int fr_list_reserve(void* list, int64_t n) {
  FrSeq* seq = (FrSeq*)list;
  TVMFFIAny* grown;
  if (n <= seq->cell.capacity) return 0;
  grown = (TVMFFIAny*)alloc_list_buffer((size_t)n * sizeof(TVMFFIAny));
  if (grown == NULL) return fr_raise_oom();
  if (seq->cell.size != 0) {
    memcpy(grown, seq->cell.data, (size_t)seq->cell.size * sizeof(TVMFFIAny));
  }
  if (seq->cell.data_deleter != NULL) {
    seq->cell.data_deleter(seq->cell.data);
  } else {
    seq->cell.data_deleter = free_list_buffer;
  }
  seq->cell.data = grown;
  seq->cell.capacity = n;
  return 0;
}

int fr_list_ensure_extra(void* list, int64_t extra) {
  FrSeq* seq = (FrSeq*)list;
  int64_t cap;
  if (seq->cell.capacity >= seq->cell.size + extra) return 0;
  cap = seq->cell.capacity * 2;
  if (cap < seq->cell.size + extra) cap = seq->cell.size + extra;
  return fr_list_reserve(list, cap);
}

/* ------------------------------------------------------------------ Shape */

typedef struct {
  TVMFFIObject header;
  TVMFFIShapeCell cell;
} FrShape;

static void plain_deleter(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) free(self);
}

void* fr_shape_new(const int64_t* dims, size_t ndim) {
  FrShape* shape =
      (FrShape*)fr_object_alloc(sizeof(FrShape) + ndim * sizeof(int64_t), kTVMFFIShape,
                                plain_deleter);
  int64_t* data;
  if (shape == NULL) return NULL;
  data = (int64_t*)((char*)shape + sizeof(FrShape));
  if (ndim != 0 && dims != NULL) memcpy(data, dims, ndim * sizeof(int64_t));
  shape->cell.data = data;
  shape->cell.size = ndim;
  return shape;
}

/* ------------------------------------------------------ seq operations */

static int raise_index(int64_t i, int64_t size) {
  return fr_raise("IndexError", "Index %lld out of bounds %lld", (long long)i, (long long)size);
}

static int seq_contains(void* seq, const TVMFFIAny* value, TVMFFIAny* rv) {
  int64_t i;
  for (i = 0; i < fr_seq_size(seq); ++i) {
    int eq;
    if (fr_any_equal(&fr_seq_items(seq)[i], value, &eq) != 0) return -1;
    if (eq) {
      *rv = fr_any_bool(1);
      return 0;
    }
  }
  *rv = fr_any_bool(0);
  return 0;
}

static int seq_get(void* seq, int64_t i, TVMFFIAny* rv) {
  if (i < 0 || i >= fr_seq_size(seq)) return raise_index(i, fr_seq_size(seq));
  *rv = fr_any_copy(&fr_seq_items(seq)[i]);
  return 0;
}

/* Removes items [first, last) (bounds checked by the caller). */
static void seq_erase_range(void* seq, int64_t first, int64_t last) {
  FrSeq* s = (FrSeq*)seq;
  TVMFFIAny* items = fr_seq_items(seq);
  int64_t i, count = last - first;
  for (i = first; i < last; ++i) fr_any_release(&items[i]);
  memmove(&items[first], &items[last], (size_t)(s->cell.size - last) * sizeof(TVMFFIAny));
  s->cell.size -= count;
}

/* Opens a gap of count items at idx (capacity ensured, idx checked). */
static void seq_open_gap(void* seq, int64_t idx, int64_t count) {
  FrSeq* s = (FrSeq*)seq;
  TVMFFIAny* items = fr_seq_items(seq);
  int64_t i;
  memmove(&items[idx + count], &items[idx], (size_t)(s->cell.size - idx) * sizeof(TVMFFIAny));
  for (i = idx; i < idx + count; ++i) items[i] = fr_any_none();
  s->cell.size += count;
}

/* ------------------------------------------------------- Array globals */

static int array_ctor(void* ctx, const TVMFFIAny* args, int32_t n, TVMFFIAny* rv) {
  void* array = fr_array_new(n);
  int32_t i;
  (void)ctx;
  if (array == NULL) return -1;
  for (i = 0; i < n; ++i) {
    TVMFFIAny owned;
    if (fr_any_view_to_owned(&args[i], &owned) != 0) {
      fr_decref(array);
      return -1;
    }
    fr_array_push_unchecked(array, owned);
  }
  *rv = fr_any_object(array);
  return 0;
}

static int seq_get_item(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  (void)ctx;
  return seq_get(a[0].value.v_obj, a[1].value.v_int64, rv);
}

static int seq_size(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  (void)ctx;
  *rv = fr_any_int(fr_seq_size(a[0].value.v_obj));
  return 0;
}

static int seq_contains_fn(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  (void)ctx;
  return seq_contains(a[0].value.v_obj, &a[1].value, rv);
}

/* -------------------------------------------------------- List globals */

static int list_ctor(void* ctx, const TVMFFIAny* args, int32_t n, TVMFFIAny* rv) {
  void* list = fr_list_new(FR_SEQ_INIT_CAPACITY);
  int32_t i;
  (void)ctx;
  if (list == NULL) return -1;
  if (fr_list_reserve(list, n) != 0) {
    fr_decref(list);
    return -1;
  }
  for (i = 0; i < n; ++i) {
    TVMFFIAny owned;
    if (fr_any_view_to_owned(&args[i], &owned) != 0) {
      fr_decref(list);
      return -1;
    }
    fr_seq_items(list)[i] = owned;
    ((FrSeq*)list)->cell.size = i + 1;
  }
  *rv = fr_any_object(list);
  return 0;
}

static int list_set_item(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  void* list = a[0].value.v_obj;
  int64_t i = a[1].value.v_int64;
  (void)ctx;
  if (i < 0 || i >= fr_seq_size(list)) return raise_index(i, fr_seq_size(list));
  fr_any_release(&fr_seq_items(list)[i]);
  fr_seq_items(list)[i] = fr_any_copy(&a[2].value);
  *rv = fr_any_none();
  return 0;
}

static int list_append(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  void* list = a[0].value.v_obj;
  (void)ctx;
  if (fr_list_ensure_extra(list, 1) != 0) return -1;
  fr_seq_items(list)[fr_seq_size(list)] = fr_any_copy(&a[1].value);
  ((FrSeq*)list)->cell.size += 1;
  *rv = fr_any_none();
  return 0;
}

static int list_insert(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  void* list = a[0].value.v_obj;
  int64_t idx = a[1].value.v_int64, size;
  (void)ctx;
  if (fr_list_ensure_extra(list, 1) != 0) return -1;
  size = fr_seq_size(list);
  if (idx < 0 || idx > size) {
    return fr_raise("IndexError", "Index %lld out of bounds [0, %lld]", (long long)idx,
                    (long long)size);
  }
  seq_open_gap(list, idx, 1);
  fr_seq_items(list)[idx] = fr_any_copy(&a[2].value);
  *rv = fr_any_none();
  return 0;
}

static int list_pop(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  void* list = a[0].value.v_obj;
  int64_t i = a[1].value.v_int64;
  (void)ctx;
  if (seq_get(list, i, rv) != 0) return -1;
  seq_erase_range(list, i, i + 1);
  return 0;
}

static int list_erase(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  void* list = a[0].value.v_obj;
  int64_t i = a[1].value.v_int64;
  (void)ctx;
  if (i < 0 || i >= fr_seq_size(list)) return raise_index(i, fr_seq_size(list));
  seq_erase_range(list, i, i + 1);
  *rv = fr_any_none();
  return 0;
}

static int check_erase_range(void* list, int64_t first, int64_t last) {
  if (first < 0 || last > fr_seq_size(list) || first >= last) {
    return fr_raise("IndexError", "Erase range [%lld, %lld) out of bounds %lld",
                    (long long)first, (long long)last, (long long)fr_seq_size(list));
  }
  return 0;
}

static int list_erase_range(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  void* list = a[0].value.v_obj;
  int64_t first = a[1].value.v_int64, last = a[2].value.v_int64;
  (void)ctx;
  *rv = fr_any_none();
  if (first == last) return 0;
  if (check_erase_range(list, first, last) != 0) return -1;
  seq_erase_range(list, first, last);
  return 0;
}

static int list_replace_slice(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  void* list = a[0].value.v_obj;
  void* replacement = a[3].value.v_obj;
  int64_t start = a[1].value.v_int64, stop = a[2].value.v_int64, count, size, i;
  TVMFFIAny* snapshot = NULL;
  (void)ctx;
  *rv = fr_any_none();
  count = fr_seq_size(replacement);
  if (count != 0) {
    snapshot = (TVMFFIAny*)malloc((size_t)count * sizeof(TVMFFIAny));
    if (snapshot == NULL) return fr_raise_oom();
    for (i = 0; i < count; ++i) snapshot[i] = fr_any_copy(&fr_seq_items(replacement)[i]);
  }
  if (start != stop) {
    if (check_erase_range(list, start, stop) != 0) goto fail;
    seq_erase_range(list, start, stop);
  }
  if (count == 0) return 0;
  if (fr_list_ensure_extra(list, count) != 0) goto fail;
  size = fr_seq_size(list);
  if (start < 0 || start > size) {
    fr_raise("IndexError", "Index %lld out of bounds [0, %lld]", (long long)start,
             (long long)size);
    goto fail;
  }
  seq_open_gap(list, start, count);
  memcpy(&fr_seq_items(list)[start], snapshot, (size_t)count * sizeof(TVMFFIAny));
  free(snapshot);
  return 0;
fail:
  for (i = 0; i < count; ++i) fr_any_release(&snapshot[i]);
  free(snapshot);
  return -1;
}

static int list_reverse(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  void* list = a[0].value.v_obj;
  TVMFFIAny* items = fr_seq_items(list);
  int64_t i, j;
  (void)ctx;
  for (i = 0, j = fr_seq_size(list) - 1; i < j; ++i, --j) {
    TVMFFIAny t = items[i];
    items[i] = items[j];
    items[j] = t;
  }
  *rv = fr_any_none();
  return 0;
}

static int list_clear(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  void* list = a[0].value.v_obj;
  FrSeq* seq = (FrSeq*)list;
  (void)ctx;
  while (seq->cell.size > 0) {
    seq->cell.size -= 1;
    fr_any_release(&fr_seq_items(list)[seq->cell.size]);
  }
  *rv = fr_any_none();
  return 0;
}

static int list_reserve(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  (void)ctx;
  *rv = fr_any_none();
  return fr_list_reserve(a[0].value.v_obj, a[1].value.v_int64);
}

/* --------------------------------------------------- Map / Dict globals */

static int map_ctor_common(int32_t type_index, const TVMFFIAny* args, int32_t n,
                           TVMFFIAny* rv) {
  void* map;
  int32_t i;
  if (n % 2 != 0) {
    return fr_raise("InternalError", "Check failed: args.size() %% 2 == 0 (%d vs. 0) : ", n % 2);
  }
  map = fr_map_new(type_index);
  if (map == NULL) return -1;
  for (i = 0; i < n; i += 2) {
    TVMFFIAny key, value;
    if (fr_any_view_to_owned(&args[i], &key) != 0) goto fail;
    if (fr_any_view_to_owned(&args[i + 1], &value) != 0) {
      fr_any_release(&key);
      goto fail;
    }
    if (fr_map_set(&map, key, value) != 0) goto fail;
  }
  *rv = fr_any_object(map);
  return 0;
fail:
  fr_decref(map);
  return -1;
}

static int map_ctor(void* ctx, const TVMFFIAny* args, int32_t n, TVMFFIAny* rv) {
  (void)ctx;
  return map_ctor_common(kTVMFFIMap, args, n, rv);
}

static int dict_ctor(void* ctx, const TVMFFIAny* args, int32_t n, TVMFFIAny* rv) {
  (void)ctx;
  return map_ctor_common(kTVMFFIDict, args, n, rv);
}

static int map_size(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  (void)ctx;
  *rv = fr_any_int((int64_t)fr_map_size(a[0].value.v_obj));
  return 0;
}

static int map_get_item(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  TVMFFIAny* slot;
  int found = fr_map_find(a[0].value.v_obj, &a[1].value, &slot);
  (void)ctx;
  if (found < 0) return -1;
  if (found == 0) return fr_raise("KeyError", "key is not in Map");
  *rv = fr_any_copy(slot);
  return 0;
}

static int map_count(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  TVMFFIAny* slot;
  int found = fr_map_find(a[0].value.v_obj, &a[1].value, &slot);
  (void)ctx;
  if (found < 0) return -1;
  *rv = fr_any_int(found);
  return 0;
}

static int map_get_item_or_missing(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  TVMFFIAny* slot;
  int found = fr_map_find(a[0].value.v_obj, &a[1].value, &slot);
  (void)ctx;
  if (found < 0) return -1;
  if (found == 0) return fr_missing_object(rv);
  *rv = fr_any_copy(slot);
  return 0;
}

/*
 * The iterator functor: 0 -> current key, 1 -> current value, else advance
 * (false at end). Like upstream's it borrows the map: the caller keeps the map
 * alive while iterating (so the map's reference count, which a kernel may
 * read, is upstream's). Unlike upstream's it survives the map changing under
 * it, which another thread may do to a Dict: each call holds the Dict, and
 * once the map's size or storage differs from when the functor was made (or
 * its position no longer names an entry) every call raises Python's
 * RuntimeError instead of reading freed or moved entries.
 */
typedef struct {
  void* map;
  uint64_t position;
  uint64_t size; /* what the map was when the functor was made */
  const void* data;
  uint64_t slots;
} FrMapIter;

static void map_iter_free(void* p) { free(p); }

static int map_iter_step(FrMapIter* it, int64_t command, TVMFFIAny* rv) {
  const FrMapBase* m = (const FrMapBase*)it->map;
  FrKV* kv;
  if (m->size != it->size || m->data != it->data || m->slots != it->slots) {
    return fr_raise("RuntimeError", "dictionary changed size during iteration");
  }
  if (!fr_map_position_valid(it->map, it->position)) {
    return fr_raise("RuntimeError", "dictionary keys changed during iteration");
  }
  if (command != 0 && command != 1) {
    it->position = fr_map_next(it->map, it->position);
    *rv = fr_any_bool(it->position != fr_map_end(it->map));
    return 0;
  }
  if (it->position == fr_map_end(it->map)) {
    return fr_raise("IndexError", "map iterator is past the end of the map");
  }
  kv = fr_map_entry(it->map, it->position);
  *rv = fr_any_copy(command == 0 ? &kv->key : &kv->value);
  return 0;
}

static int map_iter_call(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  FrMapIter* it = (FrMapIter*)ctx;
  int locks = tvm_ffi_runtime_locks_type(((TVMFFIObject*)it->map)->type_index);
  int status;
  if (locks && tvm_ffi_runtime_object_lock(it->map) != 0) return fr_raise_oom();
  status = map_iter_step(it, a[0].value.v_int64, rv);
  if (locks) tvm_ffi_runtime_object_unlock(it->map);
  return status;
}

static const FrBuiltin kMapIterSpec = {"", map_iter_call, NULL, 1, {FR_T_INT}, FR_T_ANY};

static int map_iter_functor(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  FrMapIter* it = (FrMapIter*)malloc(sizeof(FrMapIter));
  const FrMapBase* m = (const FrMapBase*)a[0].value.v_obj;
  void* f;
  (void)ctx;
  if (it == NULL) return fr_raise_oom();
  it->map = a[0].value.v_obj;
  it->position = fr_map_begin(it->map);
  it->size = m->size;
  it->data = m->data;
  it->slots = m->slots;
  f = fr_typed_function_new(&kMapIterSpec, it, map_iter_free);
  if (f == NULL) {
    map_iter_free(it);
    return -1;
  }
  *rv = fr_any_object(f);
  return 0;
}

static int dict_set_item(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  void* dict = a[0].value.v_obj;
  (void)ctx;
  *rv = fr_any_none();
  return fr_map_set(&dict, fr_any_copy(&a[1].value), fr_any_copy(&a[2].value));
}

static int dict_erase(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  (void)ctx;
  *rv = fr_any_none();
  return fr_map_erase(a[0].value.v_obj, &a[1].value);
}

static int dict_clear(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  (void)ctx;
  fr_map_clear(a[0].value.v_obj);
  *rv = fr_any_none();
  return 0;
}

/* ---------------------------------------------------------- other globals */

static int shape_ctor(void* ctx, const TVMFFIAny* args, int32_t n, TVMFFIAny* rv) {
  void* shape = fr_shape_new(NULL, (size_t)n);
  int64_t* dims;
  int32_t i;
  (void)ctx;
  if (shape == NULL) return -1;
  dims = (int64_t*)FR_CELL(shape, TVMFFIShapeCell)->data;
  for (i = 0; i < n; ++i) {
    if (args[i].type_index != kTVMFFIInt && args[i].type_index != kTVMFFIBool) {
      fr_decref(shape);
      return fr_raise("ValueError", "Expect shape to take list of int arguments");
    }
    dims[i] = args[i].v_int64;
  }
  *rv = fr_any_object(shape);
  return 0;
}

/* The device of the first non-CPU tensor inside value (depth first), if any. */
static int first_non_cpu(const TVMFFIAny* value, DLDevice* out) {
  switch (value->type_index) {
    case kTVMFFITensor: {
      const DLTensor* t = FR_CELL(value->v_obj, DLTensor);
      if (t->device.device_type != kDLCPU) {
        *out = t->device;
        return 1;
      }
      return 0;
    }
    case kTVMFFIArray:
    case kTVMFFIList: {
      int64_t i;
      for (i = 0; i < fr_seq_size(value->v_obj); ++i) {
        if (first_non_cpu(&fr_seq_items(value->v_obj)[i], out)) return 1;
      }
      return 0;
    }
    case kTVMFFIMap:
    case kTVMFFIDict: {
      uint64_t it, end = fr_map_end(value->v_obj);
      for (it = fr_map_begin(value->v_obj); it != end; it = fr_map_next(value->v_obj, it)) {
        if (first_non_cpu(&fr_map_entry(value->v_obj, it)->value, out)) return 1;
      }
      return 0;
    }
    default:
      return 0;
  }
}

static int find_first_non_cpu(void* ctx, const FrArg* a, TVMFFIAny* rv) {
  DLDevice device;
  (void)ctx;
  device.device_type = kDLCPU;
  device.device_id = 0;
  first_non_cpu(&a[0].value, &device);
  *rv = fr_any_none();
  rv->type_index = kTVMFFIDevice;
  rv->v_device = device;
  return 0;
}

#define T(x) FR_T_##x
static const FrBuiltin kBuiltins[] = {
    {"ffi.Shape", NULL, shape_ctor, 0, {0}, T(VOID)},
    {"ffi.Array", NULL, array_ctor, 0, {0}, T(VOID)},
    {"ffi.ArrayGetItem", seq_get_item, NULL, 2, {T(ARRAY), T(INT)}, T(ANY)},
    {"ffi.ArraySize", seq_size, NULL, 1, {T(ARRAY)}, T(INT)},
    {"ffi.ArrayContains", seq_contains_fn, NULL, 2, {T(ARRAY), T(ANY)}, T(BOOL)},
    {"ffi.List", NULL, list_ctor, 0, {0}, T(VOID)},
    {"ffi.ListGetItem", seq_get_item, NULL, 2, {T(LIST), T(INT)}, T(ANY)},
    {"ffi.ListSetItem", list_set_item, NULL, 3, {T(LIST_REF), T(INT), T(ANY)}, T(VOID)},
    {"ffi.ListSize", seq_size, NULL, 1, {T(LIST)}, T(INT)},
    {"ffi.ListContains", seq_contains_fn, NULL, 2, {T(LIST), T(ANY)}, T(BOOL)},
    {"ffi.ListAppend", list_append, NULL, 2, {T(LIST_REF), T(ANY)}, T(VOID)},
    {"ffi.ListInsert", list_insert, NULL, 3, {T(LIST_REF), T(INT), T(ANY)}, T(VOID)},
    {"ffi.ListPop", list_pop, NULL, 2, {T(LIST_REF), T(INT)}, T(ANY)},
    {"ffi.ListErase", list_erase, NULL, 2, {T(LIST_REF), T(INT)}, T(VOID)},
    {"ffi.ListEraseRange", list_erase_range, NULL, 3, {T(LIST_REF), T(INT), T(INT)}, T(VOID)},
    {"ffi.ListReplaceSlice", list_replace_slice, NULL, 4,
     {T(LIST_REF), T(INT), T(INT), T(LIST_REF)}, T(VOID)},
    {"ffi.ListReverse", list_reverse, NULL, 1, {T(LIST_REF)}, T(VOID)},
    {"ffi.ListClear", list_clear, NULL, 1, {T(LIST_REF)}, T(VOID)},
    {"ffi.ListReserve", list_reserve, NULL, 2, {T(LIST_REF), T(INT)}, T(VOID)},
    {"ffi.Map", NULL, map_ctor, 0, {0}, T(VOID)},
    {"ffi.MapSize", map_size, NULL, 1, {T(MAP)}, T(INT)},
    {"ffi.MapGetItem", map_get_item, NULL, 2, {T(MAP), T(ANY)}, T(ANY)},
    {"ffi.MapCount", map_count, NULL, 2, {T(MAP), T(ANY)}, T(INT)},
    {"ffi.MapForwardIterFunctor", map_iter_functor, NULL, 1, {T(MAP)}, T(FUNCTION)},
    {"ffi.MapGetItemOrMissing", map_get_item_or_missing, NULL, 2, {T(MAP), T(ANY)}, T(ANY)},
    {"ffi.Dict", NULL, dict_ctor, 0, {0}, T(VOID)},
    {"ffi.DictSize", map_size, NULL, 1, {T(DICT)}, T(INT)},
    {"ffi.DictGetItem", map_get_item, NULL, 2, {T(DICT), T(ANY)}, T(ANY)},
    {"ffi.DictSetItem", dict_set_item, NULL, 3, {T(DICT_REF), T(ANY), T(ANY)}, T(VOID)},
    {"ffi.DictCount", map_count, NULL, 2, {T(DICT), T(ANY)}, T(INT)},
    {"ffi.DictErase", dict_erase, NULL, 2, {T(DICT_REF), T(ANY)}, T(VOID)},
    {"ffi.DictClear", dict_clear, NULL, 1, {T(DICT_REF)}, T(VOID)},
    {"ffi.DictForwardIterFunctor", map_iter_functor, NULL, 1, {T(DICT)}, T(FUNCTION)},
    {"ffi.DictGetItemOrMissing", map_get_item_or_missing, NULL, 2, {T(DICT), T(ANY)}, T(ANY)},
    {"ffi.ContainerFindFirstNonCPUDevice", find_first_non_cpu, NULL, 1, {T(ANY)}, T(DEVICE)},
};
#undef T

int fr_containers_register_globals(void) {
  return fr_register_builtins(kBuiltins, sizeof(kBuiltins) / sizeof(kBuiltins[0]));
}
