/*
 * tensor.c -- Tensor objects (header, then a DLTensor) and DLPack exchange.
 *
 * Its twin in the reference runtime: tvm_ffi_ref/runtime/tensor.py.
 *
 * A tensor imported from DLPack keeps the managed tensor and calls its
 * deleter when the last reference goes; one without strides gets compact
 * row-major strides in its own tail. Exported managed tensors hold a
 * reference to the tensor until their deleter runs. Views made by
 * TVMFFITensorCreateUnsafeView keep their source alive and copy shape and
 * strides into their tail.
 *
 * The layout is upstream's (TensorObjFromDLPack, TensorObjFromNDAlloc): the
 * DLTensor, one pointer, then the tail at offset 80, which C++ code may read
 * in place. What that pointer is -- a managed tensor of either DLPack
 * version, or the view's source -- is told by the object's deleter.
 */
#include "core.h"

#include "registry.h"
#include "runtime.h"

typedef struct {
  TVMFFIObject header;
  DLTensor tensor;
  void* managed; /* DLManagedTensor* or DLManagedTensorVersioned*, or the view's source */
} FrTensor;

static int64_t* tail_of(FrTensor* t) { return (int64_t*)((char*)t + sizeof(FrTensor)); }

static void dlpack_tensor_deleter(void* self, int flags) {
  FrTensor* t = (FrTensor*)self;
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    DLManagedTensor* m = (DLManagedTensor*)t->managed;
    if (m != NULL && m->deleter != NULL) m->deleter(m);
    t->managed = NULL;
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) free(t);
}

static void versioned_tensor_deleter(void* self, int flags) {
  FrTensor* t = (FrTensor*)self;
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    DLManagedTensorVersioned* m = (DLManagedTensorVersioned*)t->managed;
    if (m != NULL && m->deleter != NULL) m->deleter(m);
    t->managed = NULL;
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) free(t);
}

static void view_tensor_deleter(void* self, int flags) {
  FrTensor* t = (FrTensor*)self;
  if (flags & kTVMFFIObjectDeleterFlagBitMaskStrong) {
    if (t->managed != NULL) fr_decref(t->managed);
    t->managed = NULL;
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) free(t);
}

static int is_direct_address(DLDevice device) {
  return device.device_type <= kDLCUDAHost || device.device_type == kDLCUDAManaged ||
         device.device_type == kDLROCM || device.device_type == kDLROCMHost;
}

static int is_aligned(const DLTensor* t, size_t alignment) {
  if (is_direct_address(t->device)) {
    return ((uintptr_t)((char*)t->data + t->byte_offset)) % alignment == 0;
  }
  return t->byte_offset % alignment == 0;
}

int fr_tensor_is_contiguous(const DLTensor* t) {
  int32_t i;
  int64_t expected = 1;
  if (t->strides == NULL) return 1;
  for (i = 0; i < t->ndim; ++i) {
    if (t->shape[i] == 0) return 1;
  }
  for (i = t->ndim; i != 0; --i) {
    int32_t k = i - 1;
    if (t->shape[k] == 1) continue;
    if (t->strides[k] != expected) return 0;
    expected *= t->shape[k];
  }
  return 1;
}

static void fill_compact_strides(const int64_t* shape, int32_t ndim, int64_t* strides) {
  int64_t stride = 1;
  int32_t i;
  for (i = ndim - 1; i >= 0; --i) {
    strides[i] = stride;
    stride *= shape[i];
  }
}

/* Wraps a managed tensor (ownership moves into the object on success). */
static FrTensor* wrap_managed(const DLTensor* dl, void* managed,
                              void (*deleter)(void* self, int flags)) {
  int extra = dl->strides == NULL && dl->ndim != 0;
  FrTensor* t = (FrTensor*)fr_object_alloc(
      sizeof(FrTensor) + (extra ? (size_t)dl->ndim * sizeof(int64_t) : 0), kTVMFFITensor,
      deleter);
  if (t == NULL) return NULL;
  t->tensor = *dl;
  t->managed = managed;
  if (extra) {
    t->tensor.strides = tail_of(t);
    fill_compact_strides(dl->shape, dl->ndim, t->tensor.strides);
  }
  return t;
}

static int check_import(const DLTensor* dl, int32_t require_alignment, int32_t require_contiguous) {
  /* upstream takes the alignment as a size_t: -1 asks for SIZE_MAX */
  size_t alignment = (size_t)require_alignment;
  if (alignment != 0 && !is_aligned(dl, alignment)) {
    return fr_raise("RuntimeError", "FromDLPack: Data is not aligned to %zu bytes.", alignment);
  }
  if (require_contiguous && !fr_tensor_is_contiguous(dl)) {
    return fr_raise("RuntimeError", "FromDLPack: Tensor is not contiguous.");
  }
  return 0;
}

int fr_tensor_from_dlpack(DLManagedTensor* from, int32_t require_alignment,
                          int32_t require_contiguous, TVMFFIObjectHandle* out) {
  FrTensor* t;
  FR_REQUIRE(from, "TVMFFITensorFromDLPack", "from");
  FR_REQUIRE(out, "TVMFFITensorFromDLPack", "out");
  if (check_import(&from->dl_tensor, require_alignment, require_contiguous) != 0) return -1;
  t = wrap_managed(&from->dl_tensor, from, dlpack_tensor_deleter);
  if (t == NULL) return -1;
  *out = t;
  return 0;
}

int fr_tensor_from_dlpack_versioned(DLManagedTensorVersioned* from, int32_t require_alignment,
                                    int32_t require_contiguous, TVMFFIObjectHandle* out) {
  FrTensor* t;
  FR_REQUIRE(from, "TVMFFITensorFromDLPackVersioned", "from");
  FR_REQUIRE(out, "TVMFFITensorFromDLPackVersioned", "out");
  if (check_import(&from->dl_tensor, require_alignment, require_contiguous) != 0) return -1;
  if (from->flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED) {
    return fr_raise("RuntimeError", "Subbyte type padded is not yet supported");
  }
  t = wrap_managed(&from->dl_tensor, from, versioned_tensor_deleter);
  if (t == NULL) return -1;
  *out = t;
  return 0;
}

/* Upstream reads any handle as a tensor; ours must be a Tensor or derive from one. */
static int check_tensor(TVMFFIObjectHandle obj, const char* fn) {
  int32_t index = fr_type_index(obj);
  const TVMFFITypeInfo* info;
  if (index == kTVMFFITensor) return 0;
  info = fr_type_info_or_null(index);
  if (info == NULL) {
    return fr_raise("TypeError", "%s: expected a ffi.Tensor, got type index %d", fn, (int)index);
  }
  if (info->type_depth > 1 && info->type_ancestors[1]->type_index == kTVMFFITensor) return 0;
  return fr_raise("TypeError", "%s: expected a ffi.Tensor, got %.*s", fn,
                  (int)info->type_key.size, info->type_key.data);
}

static void exported_deleter(DLManagedTensor* self) {
  fr_decref(self->manager_ctx);
  free(self);
}

static void exported_versioned_deleter(DLManagedTensorVersioned* self) {
  fr_decref(self->manager_ctx);
  free(self);
}

int fr_tensor_to_dlpack(TVMFFIObjectHandle from, DLManagedTensor** out) {
  DLManagedTensor* m;
  FR_REQUIRE(from, "TVMFFITensorToDLPack", "from");
  FR_REQUIRE(out, "TVMFFITensorToDLPack", "out");
  if (check_tensor(from, "TVMFFITensorToDLPack") != 0) return -1;
  m = (DLManagedTensor*)malloc(sizeof(DLManagedTensor)); /* every field is set below */
  if (m == NULL) return fr_raise_oom();
  m->dl_tensor = *FR_CELL(from, DLTensor);
  m->manager_ctx = from;
  m->deleter = exported_deleter;
  fr_incref(from);
  *out = m;
  return 0;
}

int fr_tensor_to_dlpack_versioned(TVMFFIObjectHandle from, DLManagedTensorVersioned** out) {
  DLManagedTensorVersioned* m;
  FR_REQUIRE(from, "TVMFFITensorToDLPackVersioned", "from");
  FR_REQUIRE(out, "TVMFFITensorToDLPackVersioned", "out");
  if (check_tensor(from, "TVMFFITensorToDLPackVersioned") != 0) return -1;
  m = (DLManagedTensorVersioned*)malloc(sizeof(DLManagedTensorVersioned)); /* all set below */
  if (m == NULL) return fr_raise_oom();
  m->version.major = DLPACK_MAJOR_VERSION;
  m->version.minor = DLPACK_MINOR_VERSION;
  m->dl_tensor = *FR_CELL(from, DLTensor);
  m->manager_ctx = from;
  m->deleter = exported_versioned_deleter;
  m->flags = 0;
  fr_incref(from);
  *out = m;
  return 0;
}

int fr_tensor_create_unsafe_view(TVMFFIObjectHandle source, const DLTensor* prototype,
                                 TVMFFIObjectHandle* out) {
  FrTensor* t;
  int32_t ndim;
  FR_REQUIRE(source, "TVMFFITensorCreateUnsafeView", "source");
  FR_REQUIRE(prototype, "TVMFFITensorCreateUnsafeView", "prototype");
  FR_REQUIRE(out, "TVMFFITensorCreateUnsafeView", "out");
  if (check_tensor(source, "TVMFFITensorCreateUnsafeView") != 0) return -1;
  if (prototype->strides == NULL) {
    return fr_raise("InternalError", "Check not null: prototype.strides ");
  }
  ndim = prototype->ndim < 0 ? 0 : prototype->ndim;
  t = (FrTensor*)fr_object_alloc(sizeof(FrTensor) + (size_t)ndim * 2 * sizeof(int64_t),
                                 kTVMFFITensor, view_tensor_deleter);
  if (t == NULL) return -1;
  t->tensor = *prototype;
  t->tensor.shape = tail_of(t);
  t->tensor.strides = tail_of(t) + ndim;
  if (ndim != 0) {
    memcpy(t->tensor.shape, prototype->shape, (size_t)ndim * sizeof(int64_t));
    memcpy(t->tensor.strides, prototype->strides, (size_t)ndim * sizeof(int64_t));
  }
  t->managed = source;
  fr_incref(source);
  *out = t;
  return 0;
}

static void alloc_set_error(void* error_ctx, const char* kind, const char* message) {
  (void)error_ctx;
  TVMFFIErrorSetRaisedFromCStr(kind, message);
}

int fr_env_tensor_alloc(DLTensor* prototype, TVMFFIObjectHandle* out) {
  DLPackManagedTensorAllocator alloc = fr_env_get_dlpack_allocator();
  DLManagedTensorVersioned* managed = NULL;
  FrTensor* t;
  int status;
  FR_REQUIRE(prototype, "TVMFFIEnvTensorAlloc", "prototype");
  FR_REQUIRE(out, "TVMFFIEnvTensorAlloc", "out");
  if (alloc == NULL) {
    return fr_raise("RuntimeError",
                    "TVMFFIEnvTensorAlloc: allocator is nullptr, likely because "
                    "TVMFFIEnvSetDLPackManagedTensorAllocator has not been called.");
  }
  status = alloc(prototype, &managed, NULL, alloc_set_error);
  if (status != 0) return status;
  if (managed == NULL) {
    return fr_raise("RuntimeError",
                    "Check failed: (dlpack_tensor != nullptr) is false: TVMFFIEnvTensorAlloc: "
                    "failed to allocate a tensor from the allocator");
  }
  t = wrap_managed(&managed->dl_tensor, managed, versioned_tensor_deleter);
  if (t == NULL) {
    if (managed->deleter != NULL) managed->deleter(managed);
    return -1;
  }
  *out = t;
  return 0;
}
