/* Callgrind's client requests as plain C functions, for the benchmarks' instruction counts
   (benchmarks/instruction_counts.py calls them through ctypes). Python cannot issue a client
   request itself: each is a magic instruction sequence that valgrind recognises, and that a
   real CPU runs as a no-op. Outside valgrind every function here does nothing but return. */
#include <valgrind/callgrind.h>

/* Nonzero when the process runs under valgrind (so that a count of zero means something). */
int tvm_ffi_bench_on_valgrind(void) { return RUNNING_ON_VALGRIND; }

/* Starts instrumenting code: called once after the imports, which then run at valgrind's
   uninstrumented speed (run with --instr-atstart=no). */
void tvm_ffi_bench_instrument(void) { CALLGRIND_START_INSTRUMENTATION; }

/* Opens a counted region: the counts so far are dropped and collection is switched on. */
void tvm_ffi_bench_begin(void) {
    CALLGRIND_ZERO_STATS;
    CALLGRIND_TOGGLE_COLLECT;
}

/* Closes the region: collection off, and the region's counts written as the next dump file
   (the file's "totals:" line), labelled ``label``. */
void tvm_ffi_bench_end(const char *label) {
    CALLGRIND_TOGGLE_COLLECT;
    CALLGRIND_DUMP_STATS_AT(label);
}
