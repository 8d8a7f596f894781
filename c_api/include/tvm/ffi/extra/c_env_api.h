/*
 * tvm/ffi/extra/c_env_api.h -- what a kernel asks of its host environment.
 *
 * Written independently for this project; names and signatures match
 * apache-tvm-ffi 0.1.x. These calls connect a kernel to the frontend that
 * loaded it: the stream it should launch on, how to allocate output tensors
 * the frontend can own, whether Ctrl-C is pending, and how a library module
 * finds functions of the modules it imports.
 */
#ifndef TVM_FFI_EXTRA_C_ENV_API_H_
#define TVM_FFI_EXTRA_C_ENV_API_H_

#include <tvm/ffi/c_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A device stream (cudaStream_t and the like), never owned by the runtime. */
typedef void* TVMFFIStreamHandle;

/*
 * Makes stream the current stream of the device (for this thread). When
 * opt_out_original_stream is not NULL it receives the previous stream.
 */
TVM_FFI_DLL int TVMFFIEnvSetStream(int32_t device_type, int32_t device_id,
                                   TVMFFIStreamHandle stream,
                                   TVMFFIStreamHandle* opt_out_original_stream);

/* The current stream of the device, NULL when none was set. */
TVM_FFI_DLL TVMFFIStreamHandle TVMFFIEnvGetStream(int32_t device_type, int32_t device_id);

/*
 * Installs the DLPack allocator kernels use for output tensors, for this
 * thread, and also process-wide when write_to_global_context is nonzero.
 * When opt_out_original_allocator is not NULL it receives this thread's
 * previous allocator.
 */
TVM_FFI_DLL int TVMFFIEnvSetDLPackManagedTensorAllocator(
    DLPackManagedTensorAllocator allocator, int write_to_global_context,
    DLPackManagedTensorAllocator* opt_out_original_allocator);

/* The allocator in effect: this thread's, else the process-wide one, else NULL. */
TVM_FFI_DLL DLPackManagedTensorAllocator TVMFFIEnvGetDLPackManagedTensorAllocator(void);

/*
 * Allocates a Tensor object through the allocator in effect, using only the
 * dtype, ndim, shape and device of prototype. Fails with a raised error when
 * no allocator is installed.
 */
TVM_FFI_DLL int TVMFFIEnvTensorAlloc(DLTensor* prototype, TVMFFIObjectHandle* out);

/*
 * Lets the frontend handle pending signals; a long-running kernel calls it
 * now and then. Nonzero (with an error raised) means: stop and return it.
 */
TVM_FFI_DLL int TVMFFIEnvCheckSignals(void);

/* Lets the host publish a C entry point (e.g. "PyErr_CheckSignals") by name. */
TVM_FFI_DLL int TVMFFIEnvRegisterCAPI(const char* name, void* symbol);

/*
 * Finds func_name among the modules imported by the library module whose
 * context handle is library_ctx (the value stored in the library's
 * __tvm_ffi__library_ctx). *out is borrowed: the module keeps it alive.
 */
TVM_FFI_DLL int TVMFFIEnvModLookupFromImports(TVMFFIObjectHandle library_ctx, const char* func_name,
                                              TVMFFIObjectHandle* out);

/*
 * Registers a value to be written into the symbol `name` of every library
 * loaded afterwards that defines it, so libraries reach context functions
 * without linking to them.
 */
TVM_FFI_DLL int TVMFFIEnvModRegisterContextSymbol(const char* name, void* symbol);

/* Registers a symbol of the process-wide "system library" module. */
TVM_FFI_DLL int TVMFFIEnvModRegisterSystemLibSymbol(const char* name, void* symbol);

#ifdef __cplusplus
} /* extern "C" */
#endif
#endif /* TVM_FFI_EXTRA_C_ENV_API_H_ */
