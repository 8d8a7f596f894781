/*
 * containers.c -- Array, List and Shape objects, ffi.Shape and
 * ffi.ContainerFindFirstNonCPUDevice. The other container globals:
 * sequence_globals.c (ffi.Array*, ffi.List*) and map_globals.c (ffi.Map*,
 * ffi.Dict*).
 *
 * Its twins in the reference runtime: tvm_ffi_ref/runtime/sequences.py,
 * sequence_edits.py and shapes.py.
 *
 * Array: header, TVMFFISeqCell (data points just past the cell, data_deleter
 * NULL), the elements inline. List: the same cell over a separately allocated
 * buffer freed through data_deleter; C++ code that grows one of our lists
 * frees our buffer through that deleter and keeps it for its own buffer, so
 * both are operator new / operator delete (libtvm_ffi.so's list buffer pair).
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

/* The allocator C++ kernels grow Lists with (see tvm_ffi_runtime.h). */
#define alloc_list_buffer tvm_ffi_runtime_list_buffer_alloc
#define free_list_buffer tvm_ffi_runtime_list_buffer_free

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
static const FrBuiltin kShape[] = {
    {"ffi.Shape", NULL, shape_ctor, 0, {0}, T(VOID)},
};
static const FrBuiltin kFindDevice[] = {
    {"ffi.ContainerFindFirstNonCPUDevice", find_first_non_cpu, NULL, 1, {T(ANY)}, T(DEVICE)},
};
#undef T

int fr_containers_register_globals(void) {
  /* in upstream's order: ffi.Shape, the Array and List globals, the Map and Dict
     globals, then ffi.ContainerFindFirstNonCPUDevice */
  if (fr_register_builtins(kShape, 1) != 0 || fr_sequence_register_globals() != 0 ||
      fr_map_register_globals() != 0) {
    return -1;
  }
  return fr_register_builtins(kFindDevice, 1);
}
