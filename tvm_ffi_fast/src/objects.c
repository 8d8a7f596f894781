/*
 * objects.c -- object allocation, opaque objects, errors raised by the
 * runtime, byte buffers and the hash of type keys.
 *
 * Its twin in the reference runtime: tvm_ffi_ref/runtime/objects.py.
 */
#include "core.h"

#include <stdio.h>

#include "runtime.h"

/* ------------------------------------------------------------ allocation */

#define FR_SMALL_OBJECT 4096

void* fr_object_alloc(size_t size, int32_t type_index, void (*deleter)(void* self, int flags)) {
  TVMFFIObject* obj;
  if (size < FR_HEADER_SIZE) size = FR_HEADER_SIZE;
  /*
   * Zeroed either way. glibc's calloc never takes a chunk from the per-thread cache (it
   * goes to the arena every time, and the chunks free() caches then pile up), which cost a
   * tensor import about as much as the import itself; a small object is malloc'd and
   * cleared instead. A large one keeps calloc, whose fresh pages need no clearing.
   */
  if (size <= FR_SMALL_OBJECT) {
    obj = (TVMFFIObject*)malloc(size);
    /* (the empty asm keeps the compiler from folding malloc + memset back into calloc) */
    __asm__ volatile("" : "+r"(obj));
    if (obj != NULL) memset(obj, 0, size);
  } else {
    obj = (TVMFFIObject*)calloc(1, size);
  }
  if (obj == NULL) {
    fr_raise_oom();
    return NULL;
  }
  obj->combined_ref_count = FR_BOTH_ONE;
  obj->type_index = type_index;
  obj->__padding = 0;
  obj->deleter = deleter;
  return obj;
}

/* ------------------------------------------------------- opaque objects */

/* TVMFFIObject, TVMFFIOpaqueObjectCell, then the handle's deleter. */
typedef struct {
  TVMFFIObject header;
  TVMFFIOpaqueObjectCell cell;
  void (*handle_deleter)(void* handle);
} FrOpaque;

static void opaque_deleter(void* self, int flags) {
  FrOpaque* obj = (FrOpaque*)self;
  if ((flags & kTVMFFIObjectDeleterFlagBitMaskStrong) && obj->handle_deleter != NULL) {
    obj->handle_deleter(obj->cell.handle);
  }
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) free(obj);
}

int fr_object_create_opaque(void* handle, int32_t type_index, void (*deleter)(void* handle),
                            TVMFFIObjectHandle* out) {
  FrOpaque* obj;
  FR_REQUIRE(out, "TVMFFIObjectCreateOpaque", "out");
  if (type_index != kTVMFFIOpaquePyObject) {
    return fr_raise("RuntimeError", "Only kTVMFFIOpaquePyObject is supported for now");
  }
  obj = (FrOpaque*)fr_object_alloc(sizeof(FrOpaque), type_index, opaque_deleter);
  if (obj == NULL) return -1;
  obj->cell.handle = handle;
  obj->handle_deleter = deleter;
  *out = obj;
  return 0;
}

/* ---------------------------------------------------------------- errors */

int fr_raise(const char* kind, const char* fmt, ...) {
  char stack_text[512];
  char* text = stack_text;
  va_list args;
  int n;
  va_start(args, fmt);
  n = vsnprintf(stack_text, sizeof(stack_text), fmt, args);
  va_end(args);
  if (n < 0) {
    stack_text[0] = '\0';
  } else if ((size_t)n >= sizeof(stack_text)) {
    char* big = (char*)malloc((size_t)n + 1);
    if (big != NULL) {
      va_start(args, fmt);
      vsnprintf(big, (size_t)n + 1, fmt, args);
      va_end(args);
      text = big;
    }
  }
  TVMFFIErrorSetRaisedFromCStr(kind, text);
  if (text != stack_text) free(text);
  return -1;
}

int fr_raise_bytes(const char* kind, const char* message, size_t size) {
  TVMFFIByteArray kind_bytes, message_bytes;
  TVMFFIObjectHandle error = NULL;
  kind_bytes.data = kind;
  kind_bytes.size = strlen(kind);
  message_bytes.data = message;
  message_bytes.size = size;
  if (TVMFFIErrorCreate(&kind_bytes, &message_bytes, NULL, &error) != 0) return fr_raise_oom();
  TVMFFIErrorSetRaised(error);
  fr_decref(error);
  return -1;
}

int fr_raise_oom(void) {
  TVMFFIErrorSetRaisedFromCStr("MemoryError", "tvm_ffi_fast: out of memory");
  return -1;
}

/* --------------------------------------------------------------- buffers */

void fr_buf_init(FrBuf* buf) {
  buf->data = NULL;
  buf->size = 0;
  buf->capacity = 0;
  buf->failed = 0;
}

void fr_buf_free(FrBuf* buf) {
  free(buf->data);
  fr_buf_init(buf);
}

static int buf_reserve(FrBuf* buf, size_t extra) {
  size_t need = buf->size + extra + 1;
  if (buf->failed) return -1;
  if (need > buf->capacity) {
    size_t cap = buf->capacity < 64 ? 64 : buf->capacity;
    char* grown;
    while (cap < need) cap *= 2;
    grown = (char*)realloc(buf->data, cap);
    if (grown == NULL) {
      buf->failed = 1;
      return -1;
    }
    buf->data = grown;
    buf->capacity = cap;
  }
  return 0;
}

void fr_buf_append(FrBuf* buf, const char* data, size_t size) {
  if (buf_reserve(buf, size) != 0) return;
  if (size != 0) memcpy(buf->data + buf->size, data, size);
  buf->size += size;
  buf->data[buf->size] = '\0';
}

void fr_buf_puts(FrBuf* buf, const char* text) { fr_buf_append(buf, text, strlen(text)); }

void fr_buf_printf(FrBuf* buf, const char* fmt, ...) {
  va_list args;
  int n;
  char small[256];
  va_start(args, fmt);
  n = vsnprintf(small, sizeof(small), fmt, args);
  va_end(args);
  if (n < 0) return;
  if ((size_t)n < sizeof(small)) {
    fr_buf_append(buf, small, (size_t)n);
    return;
  }
  if (buf_reserve(buf, (size_t)n) != 0) return;
  va_start(args, fmt);
  vsnprintf(buf->data + buf->size, (size_t)n + 1, fmt, args);
  va_end(args);
  buf->size += (size_t)n;
}

const char* fr_buf_cstr(FrBuf* buf) { return buf->data != NULL ? buf->data : ""; }

char* fr_strndup(const char* data, size_t size) {
  char* out = (char*)malloc(size + 1);
  if (out == NULL) return NULL;
  if (size != 0) memcpy(out, data, size);
  out[size] = '\0';
  return out;
}

/* ---------------------------------------------------------- type key hash */

/*
 * libstdc++'s _Hash_bytes for 64-bit size_t (a MurmurHash2 variant with seed
 * 0xc70f6907): upstream stores std::hash<String> of the key, which is this.
 */
static uint64_t shift_mix(uint64_t v) { return v ^ (v >> 47); }

uint64_t fr_std_hash_bytes(const char* data, size_t size) {
  const uint64_t mul = ((uint64_t)0xc6a4a793u << 32) + (uint64_t)0x5bd1e995u;
  const unsigned char* p = (const unsigned char*)data;
  size_t whole = size & ~(size_t)7;
  uint64_t hash = (uint64_t)0xc70f6907u ^ ((uint64_t)size * mul);
  size_t i;
  for (i = 0; i < whole; i += 8) {
    uint64_t word;
    memcpy(&word, p + i, 8);
    hash ^= shift_mix(word * mul) * mul;
    hash *= mul;
  }
  if ((size & 7) != 0) {
    uint64_t tail = 0;
    size_t n = size & 7;
    while (n-- > 0) tail = (tail << 8) + p[whole + n];
    hash ^= tail;
    hash *= mul;
  }
  hash = shift_mix(hash) * mul;
  return shift_mix(hash);
}
