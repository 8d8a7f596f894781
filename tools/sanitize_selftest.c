/*
 * sanitize_selftest.c -- faults planted on purpose for `tools/sanitize.sh --self-test`, which
 * proves that the job finds a report in any process it starts (a child, a forked grandchild,
 * tvm-ffi-check's worker) and fails on it. Built by the job with the instrumented compiler,
 * into its own directory, so the reports count as the project's. Never part of a normal build.
 *
 * Both are TVM FFI kernels (the checker can call them); they ignore their arguments.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <tvm/ffi/c_api.h>

#define KERNEL(name)                                                                   \
  TVM_FFI_DLL_EXPORT int __tvm_ffi_##name(void* self, const TVMFFIAny* args, int32_t n, \
                                          TVMFFIAny* result)

static void set_int(TVMFFIAny* result, int64_t value) {
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = value;
}

/* AddressSanitizer: heap-use-after-free (the process stops there). */
KERNEL(planted_use_after_free) {
  int* volatile cell = (int*)malloc(sizeof(int));
  int value;
  (void)self, (void)args, (void)n;
  if (cell == NULL) return -1;
  *cell = 1;
  free(cell);
  value = *cell;
  set_int(result, value);
  return 0;
}

/* UndefinedBehaviorSanitizer: signed integer overflow (the process goes on). */
KERNEL(planted_overflow) {
  volatile int big = INT_MAX;
  int sum;
  (void)self, (void)args;
  sum = big + (int)(n + 1);
  set_int(result, sum);
  return 0;
}
