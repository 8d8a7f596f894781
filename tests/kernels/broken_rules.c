/*
 * broken_rules.c -- one function per calling-convention rule, each breaking it.
 *
 * Used to prove that a front end reports the broken rule instead of crashing
 * (and, later, that the checker names it). ok_* functions behave.
 */
#include <tvm/ffi/c_api.h>

#define KERNEL(name) \
  TVM_FFI_DLL_EXPORT int __tvm_ffi_##name(void* self, const TVMFFIAny* args, int32_t n, \
                                          TVMFFIAny* result)

KERNEL(ok_int) {
  (void)self, (void)args, (void)n;
  result->type_index = kTVMFFIInt;
  result->v_int64 = 7;
  return 0;
}

/* -1 with nothing raised. */
KERNEL(fail_without_error) {
  (void)self, (void)args, (void)n, (void)result;
  return -1;
}

/* A status the ABI does not define. */
KERNEL(unknown_status) {
  (void)self, (void)args, (void)n, (void)result;
  return 7;
}

/* A borrowed C string in an owned result. */
KERNEL(raw_str_result) {
  (void)self, (void)args, (void)n;
  result->type_index = kTVMFFIRawStr;
  result->v_c_str = "not owned";
  return 0;
}

/* An inline small string claiming more than 7 bytes. */
KERNEL(long_small_str) {
  (void)self, (void)args, (void)n;
  result->type_index = kTVMFFISmallStr;
  result->small_str_len = 12;
  result->v_int64 = 0x6867666564636261LL;
  return 0;
}

/* A type index no type has. */
KERNEL(unknown_pod_type) {
  (void)self, (void)args, (void)n;
  result->type_index = 40;
  result->v_int64 = 0;
  return 0;
}

/* An object type index nobody registered (the object itself is well formed). */
static TVMFFIObject fake_object = {(1ULL << 32) | 1000, 5000, 0, {0}};
KERNEL(unregistered_object) {
  (void)self, (void)args, (void)n;
  fake_object.combined_ref_count = (1ULL << 32) | 1000; /* never reaches zero */
  result->type_index = 5000;
  result->v_obj = &fake_object;
  return 0;
}

/* An object whose Any type index contradicts its header. */
static TVMFFIObject mislabeled = {(1ULL << 32) | 1000, kTVMFFIArray, 0, {0}};
KERNEL(mislabeled_object) {
  (void)self, (void)args, (void)n;
  result->type_index = kTVMFFIStr;
  result->v_obj = &mislabeled;
  return 0;
}
