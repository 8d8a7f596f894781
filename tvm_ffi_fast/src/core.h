/*
 * core.h -- what every file of the fast runtime shares.
 *
 * Object headers and reference counts, TVMFFIAny helpers, raising errors and
 * the small dynamic buffers the registries are built from. Everything here is
 * internal to the cffi extension; the ABI surface is the TVMFFIRuntimeTable the
 * runtime installs (slots.c).
 */
#ifndef TVM_FFI_FAST_CORE_H_
#define TVM_FFI_FAST_CORE_H_

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <tvm/ffi/c_api.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm_ffi_runtime.h>

#define FR_HIDDEN __attribute__((visibility("hidden")))
#define FR_UNUSED __attribute__((unused))
#define FR_LIKELY(x) __builtin_expect(!!(x), 1)
#define FR_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Offsets of the cells that follow the 24-byte object header. */
#define FR_HEADER_SIZE ((size_t)sizeof(TVMFFIObject))
#define FR_CELL(obj, type) ((type*)((char*)(obj) + FR_HEADER_SIZE))

/* ------------------------------------------------------------ ref counts */

/*
 * The combined count of the object header: strong references in the low 32
 * bits, weak ones in the high 32 bits; all strong references together hold one
 * weak reference. These follow the protocol C++ code compiled from the upstream
 * headers inlines, so either side may drop the last reference.
 */
#define FR_STRONG_ONE ((uint64_t)1)
#define FR_WEAK_ONE ((uint64_t)1 << 32)
#define FR_BOTH_ONE (FR_STRONG_ONE | FR_WEAK_ONE)

static inline void fr_incref(void* handle) {
  __atomic_fetch_add(&((TVMFFIObject*)handle)->combined_ref_count, FR_STRONG_ONE,
                     __ATOMIC_RELAXED);
}

static inline void fr_decref(void* handle) {
  TVMFFIObject* obj = (TVMFFIObject*)handle;
  uint64_t before = __atomic_fetch_sub(&obj->combined_ref_count, FR_STRONG_ONE, __ATOMIC_RELEASE);
  /* the deleter runs out of line, queued when another deleter runs (a deep chain) */
  if ((before & (FR_WEAK_ONE - 1)) == FR_STRONG_ONE) tvm_ffi_runtime_strong_count_ended(obj, before);
}

/* The strong count alone (used by copy-on-write decisions). */
static inline uint32_t fr_strong_count(const void* handle) {
  return (uint32_t)(__atomic_load_n(&((const TVMFFIObject*)handle)->combined_ref_count,
                                    __ATOMIC_ACQUIRE) &
                    (FR_WEAK_ONE - 1));
}

static inline int32_t fr_type_index(const void* handle) {
  return ((const TVMFFIObject*)handle)->type_index;
}

/*
 * Allocates a zeroed object body of `size` bytes with a fresh header (strong 1,
 * weak 1). Returns NULL with a MemoryError raised when out of memory.
 */
FR_HIDDEN void* fr_object_alloc(size_t size, int32_t type_index,
                                void (*deleter)(void* self, int flags));

/* ------------------------------------------------------------------ Any */

static inline TVMFFIAny fr_any_none(void) {
  TVMFFIAny out;
  out.type_index = kTVMFFINone;
  out.zero_padding = 0;
  out.v_int64 = 0;
  return out;
}

static inline TVMFFIAny fr_any_int(int64_t value) {
  TVMFFIAny out;
  out.type_index = kTVMFFIInt;
  out.zero_padding = 0;
  out.v_int64 = value;
  return out;
}

static inline TVMFFIAny fr_any_bool(int value) {
  TVMFFIAny out;
  out.type_index = kTVMFFIBool;
  out.zero_padding = 0;
  out.v_int64 = value != 0;
  return out;
}

/* An owned Any holding `obj`, whose reference the caller transfers. */
static inline TVMFFIAny fr_any_object(void* obj) {
  TVMFFIAny out;
  out.zero_padding = 0;
  out.v_int64 = 0;
  if (obj == NULL) {
    out.type_index = kTVMFFINone;
  } else {
    out.type_index = fr_type_index(obj);
    out.v_ptr = obj;
  }
  return out;
}

static inline int fr_any_is_object(const TVMFFIAny* value) {
  return value->type_index >= kTVMFFIStaticObjectBegin;
}

/* Copies an owned Any: one more reference to its object, if any. */
static inline TVMFFIAny fr_any_copy(const TVMFFIAny* value) {
  if (fr_any_is_object(value)) fr_incref(value->v_obj);
  return *value;
}

/* Releases an owned Any and leaves None behind. */
static inline void fr_any_release(TVMFFIAny* value) {
  if (fr_any_is_object(value)) fr_decref(value->v_obj);
  *value = fr_any_none();
}

/*
 * Converts a view to an owned Any with upstream's rules (TVMFFIAnyViewToOwnedAny):
 * objects gain a reference, raw C strings become String, byte-array pointers
 * Bytes, an rvalue reference moves its object out. Returns -1 with an error
 * raised on failure (out of memory, an rvalue reference already moved).
 */
FR_HIDDEN int fr_any_view_to_owned(const TVMFFIAny* view, TVMFFIAny* out);

/* ---------------------------------------------------------------- errors */

/* Raises kind: message (printf style) in the thread's raised-error slot; returns -1. */
FR_HIDDEN int fr_raise(const char* kind, const char* fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Raises kind: the message's bytes exactly (they may hold NUL); returns -1. */
FR_HIDDEN int fr_raise_bytes(const char* kind, const char* message, size_t size);

/*
 * Refuses a NULL for a pointer parameter the function must be given: upstream
 * dereferences it (a crash); both runtimes raise ValueError
 * "<function>: <parameter> must not be NULL" and fail.
 */
#define FR_REQUIRE(pointer, function, parameter)                                              \
  do {                                                                                         \
    if ((pointer) == NULL) {                                                                   \
      return fr_raise("ValueError", function ": " parameter " must not be NULL");              \
    }                                                                                          \
  } while (0)

/* Raises MemoryError and returns -1. */
FR_HIDDEN int fr_raise_oom(void);

/* ------------------------------------------------------------- buffers */

/* A growable byte buffer (message building, JSON). */
typedef struct {
  char* data;
  size_t size;
  size_t capacity;
  int failed; /* an allocation failed: contents are unreliable */
} FrBuf;

FR_HIDDEN void fr_buf_init(FrBuf* buf);
FR_HIDDEN void fr_buf_free(FrBuf* buf);
FR_HIDDEN void fr_buf_append(FrBuf* buf, const char* data, size_t size);
FR_HIDDEN void fr_buf_puts(FrBuf* buf, const char* text);
FR_HIDDEN void fr_buf_printf(FrBuf* buf, const char* fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A NUL-terminated view of the contents ("" when empty). */
FR_HIDDEN const char* fr_buf_cstr(FrBuf* buf);

/* A malloc'd NUL-terminated copy of data[0:size]; NULL when out of memory. */
FR_HIDDEN char* fr_strndup(const char* data, size_t size);

/* ----------------------------------------------------- strings and bytes */

/*
 * Builds a String (kTVMFFISmallStr for at most 7 bytes, else a String object
 * whose cell points at a NUL-terminated copy) into *out. -1 when out of memory.
 */
FR_HIDDEN int fr_string_from_bytes(const char* data, size_t size, TVMFFIAny* out);
/* The same for Bytes (kTVMFFISmallBytes / kTVMFFIBytes). */
FR_HIDDEN int fr_bytes_from_bytes(const char* data, size_t size, TVMFFIAny* out);
/* A String object (never the small form), for places that need a heap object. */
FR_HIDDEN void* fr_string_object_new(const char* data, size_t size);

/*
 * The bytes a str-like value holds: SmallStr, String, RawStr (and, with
 * allow_bytes, SmallBytes, Bytes, ByteArrayPtr). Returns 0 and fills *out, or
 * -1 without raising when the value is not one of those.
 */
FR_HIDDEN int fr_any_str_view(const TVMFFIAny* value, int allow_bytes, TVMFFIByteArray* out);
/*
 * Appends the str a call returned to buf and releases it (it is owned); anything else raises
 * TypeError ("Cannot convert from type `T` to `str`", upstream's words) and gives -1.
 */
FR_HIDDEN int fr_buf_append_str_result(FrBuf* buf, TVMFFIAny* result);

/* ------------------------------------------------------ small utilities */

/* The key of a type index for messages ("int", "ffi.Array", ...; "<unknown:N>"). */
FR_HIDDEN const char* fr_type_key_of(int32_t type_index);

/* libstdc++'s std::hash of a byte string (used for TVMFFITypeInfo.type_key_hash). */
FR_HIDDEN uint64_t fr_std_hash_bytes(const char* data, size_t size);

/*
 * A recursive mutex: a registry call may re-enter the runtime (a module
 * load registering globals, a hash function reading a type attribute).
 */
typedef pthread_mutex_t FrMutex;
#define FR_MUTEX_INIT PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP
static inline void fr_mutex_lock(FrMutex* m) { pthread_mutex_lock(m); }
static inline void fr_mutex_unlock(FrMutex* m) { pthread_mutex_unlock(m); }

/* ------------------------------------------------------ string hash maps */

/*
 * A string-keyed hash table (keys copied, values are pointers) for the
 * registries that need no upstream iteration order. Not thread-safe by itself.
 */
typedef struct {
  char** keys;
  size_t* key_sizes;
  void** values;
  size_t capacity; /* a power of two, or 0 */
  size_t count;
} FrStrMap;

/* The value stored for key, or NULL. */
FR_HIDDEN void* fr_strmap_get(const FrStrMap* map, const char* key, size_t size);
/* Stores value under key (replacing); -1 when out of memory. */
FR_HIDDEN int fr_strmap_put(FrStrMap* map, const char* key, size_t size, void* value);

#endif /* TVM_FFI_FAST_CORE_H_ */
