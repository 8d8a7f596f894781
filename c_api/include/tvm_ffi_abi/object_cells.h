/*
 * tvm_ffi_abi/object_cells.h -- this project's header, not part of the TVM FFI
 * ABI: where each object's cell sits, for C.
 *
 * tvm/ffi/c_api.h (ours and upstream's alike) defines its layout helpers,
 * TVMFFITensorGetDLTensorPtr and friends, for C++ only. C code that wants them
 * includes this header instead: the same arithmetic, under names of
 * this project's own (tvm_ffi_abi_*), so that nothing here can clash with a
 * name the ABI's headers declare now or later. It needs only tvm/ffi/c_api.h,
 * whichever copy is on the include path (this project's or apache-tvm-ffi's),
 * and calls nothing: a library that uses it links to libtvm_ffi.so alone.
 */
#ifndef TVM_FFI_ABI_OBJECT_CELLS_H_
#define TVM_FFI_ABI_OBJECT_CELLS_H_

#include <tvm/ffi/c_api.h>

/* Every cell starts right after the object's 24-byte header. */
#define TVM_FFI_ABI_CELL(type, obj) ((type*)((char*)(obj) + sizeof(TVMFFIObject)))

/* The type index stored in an object's header. */
static inline int32_t tvm_ffi_abi_object_type_index(TVMFFIObjectHandle obj) {
  return ((const TVMFFIObject*)obj)->type_index;
}

/* The bytes of a kTVMFFISmallStr / kTVMFFISmallBytes value: a view into the value itself. */
static inline TVMFFIByteArray tvm_ffi_abi_small_bytes(const TVMFFIAny* value) {
  TVMFFIByteArray view;
  view.data = value->v_bytes;
  view.size = (size_t)value->small_str_len;
  return view;
}

/* The TVMFFIByteArray cell of a String or Bytes object. */
static inline TVMFFIByteArray* tvm_ffi_abi_bytes_cell(TVMFFIObjectHandle obj) {
  return TVM_FFI_ABI_CELL(TVMFFIByteArray, obj);
}

/* The TVMFFIErrorCell of an Error object. */
static inline TVMFFIErrorCell* tvm_ffi_abi_error_cell(TVMFFIObjectHandle obj) {
  return TVM_FFI_ABI_CELL(TVMFFIErrorCell, obj);
}

/* The TVMFFIFunctionCell of a Function object. */
static inline TVMFFIFunctionCell* tvm_ffi_abi_function_cell(TVMFFIObjectHandle obj) {
  return TVM_FFI_ABI_CELL(TVMFFIFunctionCell, obj);
}

/* The TVMFFIOpaqueObjectCell of an opaque object. */
static inline TVMFFIOpaqueObjectCell* tvm_ffi_abi_opaque_cell(TVMFFIObjectHandle obj) {
  return TVM_FFI_ABI_CELL(TVMFFIOpaqueObjectCell, obj);
}

/* The TVMFFIShapeCell of a Shape object. */
static inline TVMFFIShapeCell* tvm_ffi_abi_shape_cell(TVMFFIObjectHandle obj) {
  return TVM_FFI_ABI_CELL(TVMFFIShapeCell, obj);
}

/* The DLTensor embedded in a Tensor object. */
static inline DLTensor* tvm_ffi_abi_tensor_dltensor(TVMFFIObjectHandle obj) {
  return TVM_FFI_ABI_CELL(DLTensor, obj);
}

/* A DLDevice from its two integers. */
static inline DLDevice tvm_ffi_abi_device(int32_t device_type, int32_t device_id) {
  DLDevice device;
  device.device_type = (DLDeviceType)device_type;
  device.device_id = device_id;
  return device;
}

#endif /* TVM_FFI_ABI_OBJECT_CELLS_H_ */
