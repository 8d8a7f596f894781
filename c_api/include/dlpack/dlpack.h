/*
 * dlpack/dlpack.h -- the DLPack tensor-exchange structs, as TVM FFI uses them.
 *
 * Written for this project from the DLPack specification (version 1.3): every
 * name, enum value and struct layout matches the upstream header, so a library
 * compiled against either one exchanges tensors with the other unchanged.
 *
 * Compiles as C99 and as C++11 or later.
 */
#ifndef DLPACK_DLPACK_H_
#define DLPACK_DLPACK_H_

#ifdef __cplusplus
#define DLPACK_EXTERN_C extern "C"
#else
#define DLPACK_EXTERN_C
#endif

/* The DLPack version these structs describe. */
#define DLPACK_MAJOR_VERSION 1
#define DLPACK_MINOR_VERSION 3

#ifdef _WIN32
#ifdef DLPACK_EXPORTS
#define DLPACK_DLL __declspec(dllexport)
#else
#define DLPACK_DLL __declspec(dllimport)
#endif
#else
#define DLPACK_DLL
#endif

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A DLPack ABI version: a consumer refuses a producer whose major differs. */
typedef struct {
  uint32_t major;
  uint32_t minor;
} DLPackVersion;

/* Where tensor memory lives. The values are fixed by DLPack; gaps are retired kinds. */
#ifdef __cplusplus
typedef enum : int32_t {
#else
typedef enum {
#endif
  kDLCPU = 1,
  kDLCUDA = 2,
  kDLCUDAHost = 3, /* pinned host memory reachable from CUDA */
  kDLOpenCL = 4,
  kDLVulkan = 7,
  kDLMetal = 8,
  kDLVPI = 9,
  kDLROCM = 10,
  kDLROCMHost = 11, /* pinned host memory reachable from ROCm */
  kDLExtDev = 12,   /* reserved for out-of-tree device kinds */
  kDLCUDAManaged = 13,
  kDLOneAPI = 14,
  kDLWebGPU = 15,
  kDLHexagon = 16,
  kDLMAIA = 17,
  kDLTrn = 18
} DLDeviceType;

/* A device: its kind plus an ordinal among devices of that kind (8 bytes). */
typedef struct {
  DLDeviceType device_type;
  int32_t device_id;
} DLDevice;

/* The type code of DLDataType::code. */
typedef enum {
  kDLInt = 0U,
  kDLUInt = 1U,
  kDLFloat = 2U,
  kDLOpaqueHandle = 3U, /* an opaque pointer-sized handle */
  kDLBfloat = 4U,
  kDLComplex = 5U,
  kDLBool = 6U,
  kDLFloat8_e3m4 = 7U,
  kDLFloat8_e4m3 = 8U,
  kDLFloat8_e4m3b11fnuz = 9U,
  kDLFloat8_e4m3fn = 10U,
  kDLFloat8_e4m3fnuz = 11U,
  kDLFloat8_e5m2 = 12U,
  kDLFloat8_e5m2fnuz = 13U,
  kDLFloat8_e8m0fnu = 14U,
  kDLFloat6_e2m3fn = 15U,
  kDLFloat6_e3m2fn = 16U,
  kDLFloat4_e2m1fn = 17U
} DLDataTypeCode;

/*
 * An element type in 4 bytes: code (a DLDataTypeCode), bits per lane and the
 * number of lanes (1 for scalars, >1 for vector types). float32 is {2, 32, 1}.
 */
typedef struct {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} DLDataType;

/*
 * A borrowed view of an n-d tensor. Nothing here is owned: the producer keeps
 * data, shape and strides alive. strides == NULL means compact row-major.
 * Element (i0, i1, ...) lives at (char*)data + byte_offset +
 * sizeof(element) * sum(ik * strides[k]).
 */
typedef struct {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
} DLTensor;

/*
 * The unversioned (DLPack 0.x) owning wrapper. The consumer calls deleter(self)
 * exactly once when done; manager_ctx is the producer's bookkeeping.
 */
typedef struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensor* self);
} DLManagedTensor;

/* Bits of DLManagedTensorVersioned::flags. */
#define DLPACK_FLAG_BITMASK_READ_ONLY (1UL << 0UL)
#define DLPACK_FLAG_BITMASK_IS_COPIED (1UL << 1UL)
#define DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED (1UL << 2UL)

/*
 * The versioned (DLPack 1.x) owning wrapper: version first so a consumer can
 * check it before reading anything else, then the same deleter contract.
 */
typedef struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
} DLManagedTensorVersioned;

/*
 * Allocates a tensor shaped like prototype (dtype, ndim, shape, device) and
 * stores an owning wrapper in *out. On failure returns nonzero after calling
 * SetError(error_ctx, kind, message).
 */
typedef int (*DLPackManagedTensorAllocator)(
    DLTensor* prototype, DLManagedTensorVersioned** out, void* error_ctx,
    void (*SetError)(void* error_ctx, const char* kind, const char* message));

/* Converts a framework tensor object (a PyObject*) to an owning wrapper without syncing. */
typedef int (*DLPackManagedTensorFromPyObjectNoSync)(void* py_object,
                                                     DLManagedTensorVersioned** out);

/* Fills a borrowed DLTensor view of a framework tensor object without syncing. */
typedef int (*DLPackDLTensorFromPyObjectNoSync)(void* py_object, DLTensor* out);

/* Reports the framework's current work stream for a device. */
typedef int (*DLPackCurrentWorkStream)(DLDeviceType device_type, int32_t device_id,
                                       void** out_current_stream);

/* Wraps an owning tensor as a framework tensor object without syncing. */
typedef int (*DLPackManagedTensorToPyObjectNoSync)(DLManagedTensorVersioned* tensor,
                                                   void** out_py_object);

/* Common prefix of exchange-API tables; prev_api chains older versions. */
typedef struct DLPackExchangeAPIHeader {
  DLPackVersion version;
  struct DLPackExchangeAPIHeader* prev_api;
} DLPackExchangeAPIHeader;

/* A framework's table of fast tensor-exchange entry points. */
typedef struct DLPackExchangeAPI {
  DLPackExchangeAPIHeader header;
  DLPackManagedTensorAllocator managed_tensor_allocator;
  DLPackManagedTensorFromPyObjectNoSync managed_tensor_from_py_object_no_sync;
  DLPackManagedTensorToPyObjectNoSync managed_tensor_to_py_object_no_sync;
  DLPackDLTensorFromPyObjectNoSync dltensor_from_py_object_no_sync;
  DLPackCurrentWorkStream current_work_stream;
} DLPackExchangeAPI;

#ifdef __cplusplus
} /* extern "C" */
#endif
#endif /* DLPACK_DLPACK_H_ */
