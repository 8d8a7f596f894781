/*
 * corpus_c.c -- a C99 kernel for the front-end corpus, written against this
 * project's own headers (c_api/include) with no C++ at all. It touches the
 * ABI directly: reads arguments by type index and cell layout, builds results
 * through the C API, calls back into Python, makes a closure, raises errors
 * and registers a global function.
 *
 * Every export borrows its arguments and writes an owned value to *result.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tvm/ffi/c_api.h>
#include <tvm_ffi_abi/object_cells.h> /* C versions of the header's C++-only layout helpers */

static int fail(const char* kind, const char* message) {
  TVMFFIErrorSetRaisedFromCStr(kind, message);
  return -1;
}

static int want_args(const char* func, int32_t got, int32_t want) {
  char message[128];
  if (got == want) return 0;
  snprintf(message, sizeof(message), "%s expects %d arguments, got %d", func, (int)want, (int)got);
  return fail("TypeError", message);
}

static void put_int(TVMFFIAny* out, int64_t v) {
  out->type_index = kTVMFFIInt;
  out->zero_padding = 0;
  out->v_int64 = v;
}

/* Borrows the bytes of a str argument in any of its encodings. */
static int get_str(const TVMFFIAny* arg, TVMFFIByteArray* out) {
  if (arg->type_index == kTVMFFISmallStr) {
    *out = tvm_ffi_abi_small_bytes(arg);
  } else if (arg->type_index == kTVMFFIStr) {
    *out = *tvm_ffi_abi_bytes_cell(arg->v_obj);
  } else if (arg->type_index == kTVMFFIRawStr) {
    out->data = arg->v_c_str;
    out->size = strlen(arg->v_c_str);
  } else {
    return fail("TypeError", "expected a str argument");
  }
  return 0;
}

/* c_type_index(x) -> int: the type index the caller encoded x with. */
TVM_FFI_DLL_EXPORT int __tvm_ffi_c_type_index(void* self, const TVMFFIAny* args, int32_t num_args,
                                              TVMFFIAny* result) {
  (void)self;
  if (want_args("c_type_index", num_args, 1)) return -1;
  put_int(result, args[0].type_index);
  return 0;
}

/* c_mul(a: int, b: int) -> int */
TVM_FFI_DLL_EXPORT int __tvm_ffi_c_mul(void* self, const TVMFFIAny* args, int32_t num_args,
                                       TVMFFIAny* result) {
  (void)self;
  if (want_args("c_mul", num_args, 2)) return -1;
  if (args[0].type_index != kTVMFFIInt || args[1].type_index != kTVMFFIInt) {
    return fail("TypeError", "c_mul wants two ints");
  }
  put_int(result, (int64_t)((uint64_t)args[0].v_int64 * (uint64_t)args[1].v_int64));
  return 0;
}

/* c_upper(s: str) -> str: ASCII upper-case copy, made by TVMFFIStringFromByteArray. */
TVM_FFI_DLL_EXPORT int __tvm_ffi_c_upper(void* self, const TVMFFIAny* args, int32_t num_args,
                                         TVMFFIAny* result) {
  TVMFFIByteArray in, out;
  char* buffer;
  size_t i;
  int rc;
  (void)self;
  if (want_args("c_upper", num_args, 1) || get_str(&args[0], &in)) return -1;
  buffer = (char*)malloc(in.size + 1);
  if (buffer == NULL) return fail("MemoryError", "c_upper: out of memory");
  for (i = 0; i < in.size; ++i) {
    char c = in.data[i];
    buffer[i] = (c >= 'a' && c <= 'z') ? (char)(c - 'a' + 'A') : c;
  }
  out.data = buffer;
  out.size = in.size;
  rc = TVMFFIStringFromByteArray(&out, result);
  free(buffer);
  return rc;
}

/* c_bytes(n: int) -> bytes: n bytes 0xff, 0x00, 0xff, ... */
TVM_FFI_DLL_EXPORT int __tvm_ffi_c_bytes(void* self, const TVMFFIAny* args, int32_t num_args,
                                         TVMFFIAny* result) {
  TVMFFIByteArray out;
  char buffer[64];
  int64_t i;
  (void)self;
  if (want_args("c_bytes", num_args, 1)) return -1;
  if (args[0].type_index != kTVMFFIInt || args[0].v_int64 < 0 || args[0].v_int64 > 64) {
    return fail("ValueError", "c_bytes wants an int in [0, 64]");
  }
  for (i = 0; i < args[0].v_int64; ++i) buffer[i] = (char)((i % 2) ? 0x00 : 0xff);
  out.data = buffer;
  out.size = (size_t)args[0].v_int64;
  return TVMFFIBytesFromByteArray(&out, result);
}

/* c_array_sum(a: Array[int]) -> int, reading the Array's cell in place. */
TVM_FFI_DLL_EXPORT int __tvm_ffi_c_array_sum(void* self, const TVMFFIAny* args, int32_t num_args,
                                             TVMFFIAny* result) {
  const TVMFFISeqCell* cell;
  const TVMFFIAny* items;
  int64_t i, total = 0;
  (void)self;
  if (want_args("c_array_sum", num_args, 1)) return -1;
  if (args[0].type_index != kTVMFFIArray && args[0].type_index != kTVMFFIList) {
    return fail("TypeError", "c_array_sum wants an Array or List");
  }
  cell = (const TVMFFISeqCell*)((const char*)args[0].v_obj + sizeof(TVMFFIObject));
  items = (const TVMFFIAny*)cell->data;
  for (i = 0; i < cell->size; ++i) {
    if (items[i].type_index != kTVMFFIInt) return fail("TypeError", "c_array_sum: non-int element");
    total += items[i].v_int64;
  }
  put_int(result, total);
  return 0;
}

/* c_shape_dims(s: Shape) -> int: product of the dims, read from the Shape cell. */
TVM_FFI_DLL_EXPORT int __tvm_ffi_c_shape_product(void* self, const TVMFFIAny* args,
                                                 int32_t num_args, TVMFFIAny* result) {
  const TVMFFIShapeCell* cell;
  size_t i;
  int64_t product = 1;
  (void)self;
  if (want_args("c_shape_product", num_args, 1)) return -1;
  if (args[0].type_index != kTVMFFIShape) return fail("TypeError", "c_shape_product wants a Shape");
  cell = tvm_ffi_abi_shape_cell(args[0].v_obj);
  for (i = 0; i < cell->size; ++i) product *= cell->data[i];
  put_int(result, product);
  return 0;
}

/* c_call_twice(f, x) -> f(f(x)); an error raised by f propagates unchanged. */
TVM_FFI_DLL_EXPORT int __tvm_ffi_c_call_twice(void* self, const TVMFFIAny* args, int32_t num_args,
                                              TVMFFIAny* result) {
  TVMFFIAny first, arg;
  (void)self;
  if (want_args("c_call_twice", num_args, 2)) return -1;
  if (args[0].type_index != kTVMFFIFunction) return fail("TypeError", "c_call_twice wants a function");
  arg = args[1];
  if (TVMFFIFunctionCall(args[0].v_obj, &arg, 1, &first) != 0) return -1;
  if (TVMFFIFunctionCall(args[0].v_obj, &first, 1, result) != 0) {
    if (first.type_index >= kTVMFFIStaticObjectBegin) TVMFFIObjectDecRef(first.v_obj);
    return -1;
  }
  if (first.type_index >= kTVMFFIStaticObjectBegin) TVMFFIObjectDecRef(first.v_obj);
  return 0;
}

/* c_raise(kind: str, message: str): raises an error of that kind. */
TVM_FFI_DLL_EXPORT int __tvm_ffi_c_raise(void* self, const TVMFFIAny* args, int32_t num_args,
                                         TVMFFIAny* result) {
  TVMFFIByteArray kind, message;
  char kind_buf[64], message_buf[256];
  (void)self;
  (void)result;
  if (want_args("c_raise", num_args, 2) || get_str(&args[0], &kind) || get_str(&args[1], &message)) {
    return -1;
  }
  if (kind.size >= sizeof(kind_buf) || message.size >= sizeof(message_buf)) {
    return fail("ValueError", "c_raise: text too long");
  }
  memcpy(kind_buf, kind.data, kind.size);
  kind_buf[kind.size] = '\0';
  memcpy(message_buf, message.data, message.size);
  message_buf[message.size] = '\0';
  return fail(kind_buf, message_buf);
}

/* A closure made in C: adds the captured amount to an int argument. */
static int adder_call(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  if (want_args("c adder", num_args, 1)) return -1;
  if (args[0].type_index != kTVMFFIInt) return fail("TypeError", "c adder wants an int");
  put_int(result, args[0].v_int64 + *(const int64_t*)self);
  return 0;
}

static void adder_free(void* self) { free(self); }

/* c_make_adder(k: int) -> Function */
TVM_FFI_DLL_EXPORT int __tvm_ffi_c_make_adder(void* self, const TVMFFIAny* args, int32_t num_args,
                                              TVMFFIAny* result) {
  int64_t* state;
  TVMFFIObjectHandle func;
  (void)self;
  if (want_args("c_make_adder", num_args, 1)) return -1;
  if (args[0].type_index != kTVMFFIInt) return fail("TypeError", "c_make_adder wants an int");
  state = (int64_t*)malloc(sizeof(int64_t));
  if (state == NULL) return fail("MemoryError", "c_make_adder: out of memory");
  *state = args[0].v_int64;
  if (TVMFFIFunctionCreate(state, adder_call, adder_free, &func) != 0) {
    free(state);
    return -1;
  }
  result->type_index = kTVMFFIFunction;
  result->zero_padding = 0;
  result->v_obj = (TVMFFIObject*)func;
  return 0;
}

/* c_register_adder(name: str, k: int): SetGlobal of a C closure (override allowed). */
TVM_FFI_DLL_EXPORT int __tvm_ffi_c_register_adder(void* self, const TVMFFIAny* args,
                                                  int32_t num_args, TVMFFIAny* result) {
  TVMFFIByteArray name;
  TVMFFIAny made;
  int rc;
  (void)self;
  if (want_args("c_register_adder", num_args, 2) || get_str(&args[0], &name)) return -1;
  if (__tvm_ffi_c_make_adder(NULL, &args[1], 1, &made) != 0) return -1;
  rc = TVMFFIFunctionSetGlobal(&name, made.v_obj, 1);
  TVMFFIObjectDecRef(made.v_obj);
  if (rc != 0) return -1;
  result->type_index = kTVMFFINone;
  result->zero_padding = 0;
  result->v_int64 = 0;
  return 0;
}

/* c_call_global(name: str, x) -> the global function `name` applied to x. */
TVM_FFI_DLL_EXPORT int __tvm_ffi_c_call_global(void* self, const TVMFFIAny* args, int32_t num_args,
                                               TVMFFIAny* result) {
  TVMFFIByteArray name;
  TVMFFIObjectHandle func = NULL;
  TVMFFIAny arg;
  int rc;
  (void)self;
  if (want_args("c_call_global", num_args, 2) || get_str(&args[0], &name)) return -1;
  if (TVMFFIFunctionGetGlobal(&name, &func) != 0) return -1;
  if (func == NULL) return fail("KeyError", "c_call_global: no such global function");
  arg = args[1];
  rc = TVMFFIFunctionCall(func, &arg, 1, result);
  TVMFFIObjectDecRef(func);
  return rc;
}

/* c_echo(x) -> x, as an owned copy. */
TVM_FFI_DLL_EXPORT int __tvm_ffi_c_echo(void* self, const TVMFFIAny* args, int32_t num_args,
                                        TVMFFIAny* result) {
  (void)self;
  if (want_args("c_echo", num_args, 1)) return -1;
  return TVMFFIAnyViewToOwnedAny(&args[0], result);
}
