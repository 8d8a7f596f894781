/*
 * context_symbols.h -- the context symbols registered through
 * TVMFFIEnvModRegisterContextSymbol, remembered by libtvm_ffi.so itself so
 * that tvm::ffi::Module::VisitContextSymbols can list them under any runtime.
 */
#ifndef TVM_FFI_SRC_CONTEXT_SYMBOLS_H_
#define TVM_FFI_SRC_CONTEXT_SYMBOLS_H_

#include <tvm_ffi_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Makes table's TVMFFIEnvModRegisterContextSymbol slot record what it registers. */
void tvm_ffi_context_symbols_wrap(TVMFFIRuntimeTable* table);

/* Calls visit(ctx, name, symbol) for each recorded symbol (the latest value per
 * name, in first-registration order); stops at the first nonzero return and
 * returns it. */
int tvm_ffi_context_symbols_visit(int (*visit)(void* ctx, const char* name, void* symbol),
                                  void* ctx);

#ifdef __cplusplus
}
#endif
#endif /* TVM_FFI_SRC_CONTEXT_SYMBOLS_H_ */
