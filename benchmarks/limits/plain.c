/* The plain C functions the cffi and ctypes limit rows call: the same shapes as the
   TVM FFI kernels of bench_kernels.cc with no calling convention of their own. */
#include <stdint.h>

void nop(void) {}
int64_t add_int(int64_t a, int64_t b) { return a + b; }
double mul_float(double a, double b) { return a * b; }
const char *echo_str(const char *s) { return s; }
