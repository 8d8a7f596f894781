/*
 * fast_runtime.c -- the table tvm_ffi_fast installs behind libtvm_ffi.so.
 *
 * The runtime proper (type registry, containers, ...) grows slot by slot;
 * every slot still NULL is served by libtvm_ffi.so's built-in, which either
 * implements it (reference counts, errors) or fails with a RuntimeError that
 * names the function and this runtime.
 */
#include "fast_runtime.h"

#include <string.h>

int tvm_ffi_fast_install(void) {
  TVMFFIRuntimeTable table;
  memset(&table, 0, sizeof(table));
  table.struct_size = sizeof(table);
  table.name = "tvm_ffi_fast";
  return tvm_ffi_runtime_install(&table);
}
