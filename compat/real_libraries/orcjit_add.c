/* tvm-ffi-orcjit's test object: add(a, b) on two ints, in plain C. */
#include <tvm/ffi/c_api.h>
TVM_FFI_DLL_EXPORT int __tvm_ffi_add(void* self, const TVMFFIAny* args, int32_t num_args,
                                     TVMFFIAny* result) {
  (void)self;
  if (num_args != 2 || args[0].type_index != kTVMFFIInt || args[1].type_index != kTVMFFIInt) {
    TVMFFIErrorSetRaisedFromCStr("TypeError", "add expects two ints");
    return -1;
  }
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = args[0].v_int64 + args[1].v_int64;
  return 0;
}
