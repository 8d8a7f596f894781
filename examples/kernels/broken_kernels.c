/*
 * broken_kernels.c -- a kernel library that breaks every rule tvm-ffi-check
 * knows, one function per rule (named bad_<rule>), next to functions that
 * behave (good_*), which must get no finding.
 *
 * Besides exported functions it registers two global functions when it loads
 * (broken.bad_global_status, broken.good_global_add), as most real libraries
 * do, and bad_untyped checks its arguments the way upstream's typed functions
 * do but exports no type schema: the checker must read its signature from the
 * TypeError it raises to reach its body at all.
 *
 * Several break their rule only for some arguments, so the report's minimal
 * failing call shows hypothesis' shrinking at work: bad_crash crashes only
 * from 1000 up, bad_status misbehaves only above 100, bad_result_reference
 * only for strings long enough to travel as String objects. Most functions
 * export a type schema (__tvm_ffi__metadata_<name>, upstream's JSON);
 * good_echo and bad_result_type do not, so they get the sweep of value kinds.
 *
 * Plain C99 against c_api/include, like example_kernels.c. Do not copy any of
 * the bad_* functions.
 */
#define _POSIX_C_SOURCE 199309L /* nanosleep */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <tvm/ffi/c_api.h>
#include <tvm_ffi_abi/object_cells.h> /* C versions of the header's C++-only layout helpers */

#define KERNEL(name)                                                                   \
  TVM_FFI_DLL_EXPORT int __tvm_ffi_##name(void* self, const TVMFFIAny* args, int32_t n, \
                                          TVMFFIAny* result)

/* ------------------------------------------------------------ helpers */

static int raise_error(const char* kind, const char* message) {
  TVMFFIErrorSetRaisedFromCStr(kind, message);
  return -1;
}

static int want_args(const char* func, int32_t n, int32_t expected) {
  char message[128];
  if (n == expected) return 0;
  snprintf(message, sizeof(message), "%s() takes %d argument(s), got %d", func, (int)expected,
           (int)n);
  return raise_error("TypeError", message);
}

static int arg_int(const char* func, const TVMFFIAny* args, int32_t n, int64_t* out) {
  char message[128];
  if (want_args(func, n, 1)) return -1;
  if (args[0].type_index != kTVMFFIInt && args[0].type_index != kTVMFFIBool) {
    snprintf(message, sizeof(message), "%s(): argument 0 must be an int, got type index %d",
             func, (int)args[0].type_index);
    return raise_error("TypeError", message);
  }
  *out = args[0].v_int64;
  return 0;
}

static int arg_str(const char* func, const TVMFFIAny* arg, TVMFFIByteArray* out) {
  char message[128];
  switch (arg->type_index) {
    case kTVMFFISmallStr:
      *out = tvm_ffi_abi_small_bytes(arg);
      return 0;
    case kTVMFFIStr:
      *out = *tvm_ffi_abi_bytes_cell(arg->v_obj);
      return 0;
    case kTVMFFIRawStr:
      out->data = arg->v_c_str;
      out->size = strlen(arg->v_c_str);
      return 0;
    default:
      snprintf(message, sizeof(message), "%s(): expected a str, got type index %d", func,
               (int)arg->type_index);
      return raise_error("TypeError", message);
  }
}

static void set_int(TVMFFIAny* result, int64_t value) {
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = value;
}

/* A String (or inline small str) holding prefix + text, written to *out (owned). */
static int make_string(const char* prefix, TVMFFIByteArray text, TVMFFIAny* out) {
  size_t p = strlen(prefix);
  char* buffer = (char*)malloc(p + text.size + 1);
  TVMFFIByteArray joined;
  int status;
  if (buffer == NULL) return raise_error("MemoryError", "out of memory");
  memcpy(buffer, prefix, p);
  memcpy(buffer + p, text.data, text.size);
  joined.data = buffer;
  joined.size = p + text.size;
  status = TVMFFIStringFromByteArray(&joined, out);
  free(buffer);
  return status;
}

static void noop_deleter(void* self, int flags) { (void)self, (void)flags; }

/* ------------------------------------------------------------ type schemas */

#define T(key) "{\"type\":\"" key "\"}"
#define FUNCTION_SCHEMA(ret, params) \
  "{\"type\":\"ffi.Function\",\"named_args\":{\"return\":[" ret "],\"params\":[" params "]}}"
#define INT_TO_INT FUNCTION_SCHEMA(T("int"), T("int"))

static int return_metadata(const char* schema, TVMFFIAny* result) {
  static const char head[] = "{\"type_schema\":\"";
  char buffer[1024];
  size_t n = sizeof(head) - 1;
  const char* p;
  TVMFFIByteArray text;
  memcpy(buffer, head, n);
  for (p = schema; *p != '\0' && n + 4 < sizeof(buffer); ++p) {
    if (*p == '"' || *p == '\\') buffer[n++] = '\\';
    buffer[n++] = *p;
  }
  buffer[n++] = '"';
  buffer[n++] = '}';
  text.data = buffer;
  text.size = n;
  return TVMFFIStringFromByteArray(&text, result);
}

#define METADATA(name, schema)                                                          \
  TVM_FFI_DLL_EXPORT int __tvm_ffi__metadata_##name(void* self, const TVMFFIAny* args,  \
                                                    int32_t n, TVMFFIAny* result) {     \
    (void)self, (void)args, (void)n;                                                    \
    return return_metadata(schema, result);                                             \
  }

/* ================================================================ good */

METADATA(good_add, FUNCTION_SCHEMA(T("int"), T("int") "," T("int")))
KERNEL(good_add) {
  int64_t a, b;
  (void)self;
  if (want_args("good_add", n, 2)) return -1;
  if (args[0].type_index != kTVMFFIInt || args[1].type_index != kTVMFFIInt) {
    return raise_error("TypeError", "good_add(): arguments must be ints");
  }
  a = args[0].v_int64;
  b = args[1].v_int64;
  set_int(result, (int64_t)((uint64_t)a + (uint64_t)b));
  return 0;
}

METADATA(good_greet, FUNCTION_SCHEMA(T("ffi.String"), T("ffi.String")))
KERNEL(good_greet) {
  TVMFFIByteArray name;
  (void)self;
  if (want_args("good_greet", n, 1) || arg_str("good_greet", &args[0], &name)) return -1;
  return make_string("hello, ", name, result);
}

/* No schema: the checker sweeps every kind of value (and argument count). */
KERNEL(good_echo) {
  (void)self;
  if (want_args("good_echo", n, 1)) return -1;
  return TVMFFIAnyViewToOwnedAny(&args[0], result);
}

METADATA(good_raise, FUNCTION_SCHEMA(T("None"), T("ffi.String")))
KERNEL(good_raise) {
  (void)self, (void)args, (void)n, (void)result;
  return raise_error("ValueError", "good_raise() always raises");
}

/* A cached object, handed out with a reference for each caller: not a leak. Threads that
 * race on the first call each make one; a compare-and-swap keeps the first and the others
 * release theirs (the string is longer than a small string, so it is an object). */
METADATA(good_cached, FUNCTION_SCHEMA(T("ffi.String"), ""))
KERNEL(good_cached) {
  static TVMFFIObjectHandle cached; /* NULL until the first call */
  TVMFFIObjectHandle shared;
  (void)self, (void)args;
  if (want_args("good_cached", n, 0)) return -1;
  shared = __atomic_load_n(&cached, __ATOMIC_ACQUIRE);
  if (shared == NULL) {
    TVMFFIAny made;
    TVMFFIByteArray text;
    text.data = "a string made once and shared";
    text.size = strlen(text.data);
    if (TVMFFIStringFromByteArray(&text, &made) != 0) return -1;
    /* on failure the exchange writes the object another thread kept into shared */
    if (__atomic_compare_exchange_n(&cached, &shared, made.v_obj, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
      shared = made.v_obj;
    } else {
      TVMFFIObjectDecRef(made.v_obj);
    }
  }
  TVMFFIObjectIncRef(shared); /* the caller's own reference */
  result->type_index = kTVMFFIStr;
  result->zero_padding = 0;
  result->v_obj = shared;
  return 0;
}

/* A registry: keeps the object it is given (a reference of its own), replacing the one
 * it kept before. Allowed: the checker notes the kept reference, and --leaks sees no
 * growth with the number of calls. The swap is one atomic exchange (the GCC and Clang
 * builtin, as this file is C99): with a plain read then write, two threads could both
 * release the same old object, which the checker's thread phase reports as thread-safety. */
METADATA(good_registry, FUNCTION_SCHEMA(T("None"), "{\"type\":\"ffi.Array\",\"args\":[" T("int") "]}"))
KERNEL(good_registry) {
  static TVMFFIObjectHandle registered;
  TVMFFIObjectHandle previous;
  (void)self;
  if (want_args("good_registry", n, 1)) return -1;
  if (args[0].type_index < kTVMFFIStaticObjectBegin) {
    return raise_error("TypeError", "good_registry(): expected an Array");
  }
  TVMFFIObjectIncRef(args[0].v_obj);
  previous = __atomic_exchange_n(&registered, args[0].v_obj, __ATOMIC_ACQ_REL);
  if (previous != NULL) TVMFFIObjectDecRef(previous);
  result->type_index = kTVMFFINone;
  result->zero_padding = 0;
  result->v_int64 = 0;
  return 0;
}

/* ================================================================ bad */

/* status: a status other than 0, -1 and -2 (only above 100). */
METADATA(bad_status, INT_TO_INT)
KERNEL(bad_status) {
  int64_t x;
  (void)self;
  if (arg_int("bad_status", args, n, &x)) return -1;
  if (x > 100) return 7;
  set_int(result, x);
  return 0;
}

/* error-raised: -1 with nothing raised (for negative numbers). */
METADATA(bad_error_raised, INT_TO_INT)
KERNEL(bad_error_raised) {
  int64_t x;
  (void)self;
  if (arg_int("bad_error_raised", args, n, &x)) return -1;
  if (x < 0) return -1;
  set_int(result, x);
  return 0;
}

/* error-content: an error without a message. */
METADATA(bad_error_content, FUNCTION_SCHEMA(T("None"), T("ffi.String")))
KERNEL(bad_error_content) {
  (void)self, (void)args, (void)n, (void)result;
  return raise_error("ValueError", "");
}

/* result-type: a type index no type has (no schema: swept). */
KERNEL(bad_result_type) {
  (void)self, (void)args, (void)n;
  result->type_index = 40;
  result->zero_padding = 0;
  result->v_int64 = 0;
  return 0;
}

/* object-header: a result claiming a String whose header says Array. */
static TVMFFIObject mislabeled = {(1ULL << 32) | 1000, kTVMFFIArray, 0, {noop_deleter}};
METADATA(bad_object_header, FUNCTION_SCHEMA(T("ffi.String"), ""))
KERNEL(bad_object_header) {
  (void)self, (void)args, (void)n;
  result->type_index = kTVMFFIStr;
  result->zero_padding = 0;
  result->v_obj = &mislabeled;
  return 0;
}

/* result-padding: an int result with garbage in zero_padding. */
METADATA(bad_result_padding, INT_TO_INT)
KERNEL(bad_result_padding) {
  int64_t x;
  (void)self;
  if (arg_int("bad_result_padding", args, n, &x)) return -1;
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0xdeadu;
  result->v_int64 = x;
  return 0;
}

/* result-owned: a borrowed C string in an owned result. */
METADATA(bad_result_owned, FUNCTION_SCHEMA(T("ffi.String"), ""))
KERNEL(bad_result_owned) {
  (void)self, (void)args, (void)n;
  result->type_index = kTVMFFIRawStr;
  result->zero_padding = 0;
  result->v_c_str = "a string the caller does not own";
  return 0;
}

/* result-owned: a borrowed byte array in an owned result. */
static const char bytes_data[] = "borrowed bytes";
static TVMFFIByteArray borrowed_bytes = {bytes_data, sizeof(bytes_data) - 1};
METADATA(bad_result_owned_bytes, FUNCTION_SCHEMA(T("ffi.Bytes"), ""))
KERNEL(bad_result_owned_bytes) {
  (void)self, (void)args, (void)n;
  result->type_index = kTVMFFIByteArrayPtr;
  result->zero_padding = 0;
  result->v_ptr = &borrowed_bytes;
  return 0;
}

/* result-schema: its schema says it returns an int, but it returns a str. */
METADATA(bad_result_schema, FUNCTION_SCHEMA(T("int"), ""))
KERNEL(bad_result_schema) {
  (void)self, (void)args, (void)n;
  result->type_index = kTVMFFISmallStr;
  result->small_str_len = 2;
  result->v_int64 = 0;
  memcpy(&result->v_int64, "42", 2);
  return 0;
}

/* result-padding and result-schema: an int function that writes its value and never sets
 * the type index, so the caller reads the None it started with (with a payload of 42). */
METADATA(bad_result_unset, FUNCTION_SCHEMA(T("int"), ""))
KERNEL(bad_result_unset) {
  (void)self, (void)args, (void)n;
  result->v_int64 = 42;
  return 0;
}

/* small-str-length: an inline small string claiming 12 bytes. */
METADATA(bad_small_str_length, FUNCTION_SCHEMA(T("ffi.String"), ""))
KERNEL(bad_small_str_length) {
  (void)self, (void)args, (void)n;
  result->type_index = kTVMFFISmallStr;
  result->small_str_len = 12;
  memcpy(&result->v_int64, "abcdefgh", 8);
  return 0;
}

/* result-live: an object whose strong count is already 0. */
static TVMFFIObject dead_object = {(1ULL << 32) | 0, kTVMFFIObject, 0, {noop_deleter}};
METADATA(bad_result_live, FUNCTION_SCHEMA(T("ffi.Object"), ""))
KERNEL(bad_result_live) {
  (void)self, (void)args, (void)n;
  result->type_index = kTVMFFIObject;
  result->zero_padding = 0;
  result->v_obj = &dead_object;
  return 0;
}

/* result-reference: returns its borrowed argument without TVMFFIObjectIncRef.
 * Fine for a small str (a value), wrong for a String object (over 7 bytes). */
METADATA(bad_result_reference, FUNCTION_SCHEMA(T("ffi.String"), T("ffi.String")))
KERNEL(bad_result_reference) {
  (void)self;
  if (want_args("bad_result_reference", n, 1)) return -1;
  *result = args[0];
  return 0;
}

/* result-reference: hands out the same object on every call, never adding a reference. */
static TVMFFIObject shared_object = {(1ULL << 32) | 1000, kTVMFFIObject, 0, {noop_deleter}};
METADATA(bad_result_reference_shared, FUNCTION_SCHEMA(T("ffi.Object"), ""))
KERNEL(bad_result_reference_shared) {
  (void)self, (void)args, (void)n;
  result->type_index = kTVMFFIObject;
  result->zero_padding = 0;
  result->v_obj = &shared_object;
  return 0;
}

/* arg-refcount: releases a reference to its borrowed argument. */
METADATA(bad_arg_refcount, FUNCTION_SCHEMA(T("int"), "{\"type\":\"ffi.Array\",\"args\":[" T("int") "]}"))
KERNEL(bad_arg_refcount) {
  (void)self;
  if (want_args("bad_arg_refcount", n, 1)) return -1;
  if (args[0].type_index < kTVMFFIStaticObjectBegin) {
    return raise_error("TypeError", "bad_arg_refcount(): expected an Array");
  }
  TVMFFIObjectDecRef(args[0].v_obj);
  set_int(result, 0);
  return 0;
}

/* leak (under --leaks): keeps one more reference to its borrowed argument on every call
 * and never releases any. One kept reference is allowed (see good_registry); the count
 * growing with the number of calls is a leak. */
METADATA(bad_leak_kept_arg, FUNCTION_SCHEMA(T("int"), "{\"type\":\"ffi.Array\",\"args\":[" T("int") "]}"))
KERNEL(bad_leak_kept_arg) {
  (void)self;
  if (want_args("bad_leak_kept_arg", n, 1)) return -1;
  if (args[0].type_index < kTVMFFIStaticObjectBegin) {
    return raise_error("TypeError", "bad_leak_kept_arg(): expected an Array");
  }
  TVMFFIObjectIncRef(args[0].v_obj);
  set_int(result, 0);
  return 0;
}

/* args-written: overwrites its (const) argument array. */
METADATA(bad_args_written, INT_TO_INT)
KERNEL(bad_args_written) {
  int64_t x;
  TVMFFIAny* writable = (TVMFFIAny*)args;
  (void)self;
  if (arg_int("bad_args_written", args, n, &x)) return -1;
  writable[0].type_index = kTVMFFINone;
  writable[0].v_int64 = 0;
  set_int(result, x);
  return 0;
}

/* leak: makes a String for every call and never releases it. */
METADATA(bad_leak, FUNCTION_SCHEMA(T("int"), T("ffi.String")))
KERNEL(bad_leak) {
  TVMFFIByteArray text;
  TVMFFIAny scratch;
  (void)self;
  if (want_args("bad_leak", n, 1) || arg_str("bad_leak", &args[0], &text)) return -1;
  if (make_string("a copy nobody frees: ", text, &scratch) != 0) return -1;
  set_int(result, (int64_t)text.size);
  return 0; /* scratch still holds its String: leaked */
}

/* leak: returns a new String with one reference too many. */
METADATA(bad_leak_result, FUNCTION_SCHEMA(T("ffi.String"), T("ffi.String")))
KERNEL(bad_leak_result) {
  TVMFFIByteArray text;
  (void)self;
  if (want_args("bad_leak_result", n, 1) || arg_str("bad_leak_result", &args[0], &text)) {
    return -1;
  }
  if (make_string("leaked result: ", text, result) != 0) return -1;
  TVMFFIObjectIncRef(result->v_obj);
  return 0;
}

/* thread-safety: keeps its argument in a global while it works. */
METADATA(bad_thread_safety, INT_TO_INT)
KERNEL(bad_thread_safety) {
  static volatile int64_t scratch;
  struct timespec pause = {0, 1000000}; /* 1 ms: plenty of time for another thread */
  int64_t x;
  (void)self;
  if (arg_int("bad_thread_safety", args, n, &x)) return -1;
  scratch = x;
  nanosleep(&pause, NULL);
  set_int(result, scratch);
  return 0;
}

/* crash: dereferences NULL from 1000 up. */
METADATA(bad_crash, INT_TO_INT)
KERNEL(bad_crash) {
  int64_t x;
  volatile int* volatile nowhere = NULL;
  (void)self;
  if (arg_int("bad_crash", args, n, &x)) return -1;
  if (x >= 1000) *nowhere = (int)x;
  set_int(result, x);
  return 0;
}

/* crash: reads a String argument as an object without looking at its type index. A str of
 * up to 7 bytes arrives inline (kTVMFFISmallStr, its bytes in the Any itself), so v_obj is
 * no pointer at all; the empty string makes it NULL. */
METADATA(bad_crash_small_str, FUNCTION_SCHEMA(T("int"), T("ffi.String")))
KERNEL(bad_crash_small_str) {
  const TVMFFIByteArray* text;
  (void)self;
  if (want_args("bad_crash_small_str", n, 1)) return -1;
  text = tvm_ffi_abi_bytes_cell(args[0].v_obj);
  set_int(result, (int64_t)text->size);
  return 0;
}

/* timeout: never returns. */
METADATA(bad_timeout, INT_TO_INT)
KERNEL(bad_timeout) {
  volatile int spinning = 1;
  (void)self, (void)args, (void)n, (void)result;
  while (spinning) {
  }
  return 0;
}

/* ------------------------------------------------------------ tensors */

/* The DLTensor of a tensor argument (a borrowed DLTensor* or a Tensor object), or NULL. */
static DLTensor* arg_tensor(const TVMFFIAny* arg) {
  if (arg->type_index == kTVMFFIDLTensorPtr) return (DLTensor*)arg->v_ptr;
  if (arg->type_index == kTVMFFITensor) return tvm_ffi_abi_tensor_dltensor(arg->v_obj);
  return NULL;
}

/* The bytes a compact tensor's elements take. */
static size_t tensor_bytes(const DLTensor* t) {
  size_t count = 1;
  int32_t i;
  for (i = 0; i < t->ndim; ++i) count *= (size_t)t->shape[i];
  return count * (((size_t)t->dtype.bits * t->dtype.lanes + 7) / 8);
}

static int want_tensor(const char* func, const TVMFFIAny* args, int32_t n, unsigned char** data,
                       size_t* size) {
  DLTensor* t;
  if (want_args(func, n, 1)) return -1;
  t = arg_tensor(&args[0]);
  if (t == NULL) return raise_error("TypeError", "expected a tensor");
  *data = (unsigned char*)t->data + t->byte_offset;
  *size = tensor_bytes(t);
  return 0;
}

/* memory-safety: a checksum whose loop runs one byte too far (<= instead of <). */
METADATA(bad_memory_read, FUNCTION_SCHEMA(T("int"), T("DLTensor*")))
KERNEL(bad_memory_read) {
  unsigned char* data;
  size_t size, i;
  uint64_t sum = 0;
  (void)self;
  if (want_tensor("bad_memory_read", args, n, &data, &size)) return -1;
  for (i = 0; i <= size; ++i) sum += data[i];
  set_int(result, (int64_t)sum);
  return 0;
}

/* memory-safety: clears its tensor, and one byte after it. */
METADATA(bad_memory_write, FUNCTION_SCHEMA(T("None"), T("DLTensor*")))
KERNEL(bad_memory_write) {
  unsigned char* data;
  size_t size;
  (void)self;
  if (want_tensor("bad_memory_write", args, n, &data, &size)) return -1;
  memset(data, 0, size + 1);
  result->type_index = kTVMFFINone;
  result->zero_padding = 0;
  result->v_int64 = 0;
  return 0;
}

/* determinism: counts its calls (each call's result differs from the last). */
METADATA(bad_determinism, FUNCTION_SCHEMA(T("int"), ""))
KERNEL(bad_determinism) {
  static int64_t calls;
  (void)self, (void)args;
  if (want_args("bad_determinism", n, 0)) return -1;
  set_int(result, ++calls);
  return 0;
}

/* error-content, but only once its arguments are right: a typed function without
 * metadata. It checks its arguments as upstream's typed functions do, so the text of
 * its TypeError names its signature; only a call with four ints reaches the body. */
KERNEL(bad_untyped) {
  static const char signature[] = "bad_untyped(0: int, 1: int, 2: int, 3: int) -> int";
  char message[256];
  int32_t i;
  (void)self, (void)result;
  if (n != 4) {
    snprintf(message, sizeof(message), "Mismatched number of arguments when calling: `%s`. "
             "Expected 4 but got %d arguments", signature, (int)n);
    return raise_error("TypeError", message);
  }
  for (i = 0; i < n; ++i) {
    if (args[i].type_index != kTVMFFIInt) {
      snprintf(message, sizeof(message), "Mismatched type on argument #%d when calling: `%s`. "
               "Expected `int` but got type index %d", (int)i, signature,
               (int)args[i].type_index);
      return raise_error("TypeError", message);
    }
  }
  return raise_error("ValueError", ""); /* no message: the broken rule */
}

/* ------------------------------------------------------------ registered globals */

/* status (a registered global): status 2 for negative numbers. */
static int global_status(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  int64_t x;
  (void)self;
  if (arg_int("broken.bad_global_status", args, n, &x)) return -1;
  if (x < 0) return 2;
  set_int(result, x);
  return 0;
}

/* A well-behaved global without a schema (the checker learns its arity from its error). */
static int global_add(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* result) {
  (void)self;
  if (want_args("broken.good_global_add", n, 2)) return -1;
  if (args[0].type_index != kTVMFFIInt || args[1].type_index != kTVMFFIInt) {
    return raise_error("TypeError", "broken.good_global_add(): arguments must be ints");
  }
  set_int(result, (int64_t)((uint64_t)args[0].v_int64 + (uint64_t)args[1].v_int64));
  return 0;
}

static TVMFFIByteArray bytes_of(const char* text) {
  TVMFFIByteArray bytes;
  bytes.data = text;
  bytes.size = strlen(text);
  return bytes;
}

/* Registered while the library loads, as upstream's refl::GlobalDef() does. */
__attribute__((constructor)) static void register_globals(void) {
  TVMFFIObjectHandle status_function = NULL, add_function = NULL;
  TVMFFIMethodInfo info;
  TVMFFIByteArray name = bytes_of("broken.good_global_add");
  memset(&info, 0, sizeof(info));
  if (TVMFFIFunctionCreate(NULL, global_status, NULL, &status_function) == 0) {
    info.name = bytes_of("broken.bad_global_status");
    info.metadata = bytes_of("{\"type_schema\":" "\"{\\\"type\\\":\\\"ffi.Function\\\","
                             "\\\"named_args\\\":{\\\"return\\\":[{\\\"type\\\":\\\"int\\\"}],"
                             "\\\"params\\\":[{\\\"type\\\":\\\"int\\\"}]}}\"}");
    info.method.type_index = kTVMFFIFunction;
    info.method.v_obj = status_function;
    TVMFFIFunctionSetGlobalFromMethodInfo(&info, 1);
    TVMFFIObjectDecRef(status_function); /* the global table keeps its own reference */
  }
  if (TVMFFIFunctionCreate(NULL, global_add, NULL, &add_function) == 0) {
    TVMFFIFunctionSetGlobal(&name, add_function, 1);
    TVMFFIObjectDecRef(add_function);
  }
}
