/*
 * slots.h -- the C runtime of tvm_ffi_fast, installed behind libtvm_ffi.so.
 */
#ifndef TVM_FFI_FAST_SLOTS_INSTALL_H_
#define TVM_FFI_FAST_SLOTS_INSTALL_H_

#include <tvm_ffi_runtime.h>

/*
 * Installs the fast runtime's table. Returns a TVMFFIRuntimeInstallStatus:
 * kTVMFFIRuntimeAlreadyInstalled means another runtime (tvm_ffi_ref) already
 * serves this process and the fast front end shares it.
 */
int tvm_ffi_fast_install(void);

#endif /* TVM_FFI_FAST_SLOTS_INSTALL_H_ */
