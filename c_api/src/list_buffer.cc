/*
 * list_buffer.cc -- the allocator of List buffers, shared with C++ kernels.
 *
 * C++ compiled from upstream's headers grows a List in place: it allocates the
 * new buffer with ::operator new, releases the old one through the cell's
 * data_deleter, and leaves data_deleter as it was. A List's buffer may so come
 * from either side while its deleter stays the one its maker installed; the
 * only deleter right for both is ::operator delete, and the only allocator that
 * matches it is ::operator new. Both runtimes allocate List buffers here.
 */
#include <new>

#include "tvm_ffi_runtime.h"

extern "C" {

TVM_FFI_DLL void* tvm_ffi_runtime_list_buffer_alloc(size_t bytes) {
  return ::operator new(bytes, std::nothrow);
}

TVM_FFI_DLL void tvm_ffi_runtime_list_buffer_free(void* data) { ::operator delete(data); }

}  // extern "C"
