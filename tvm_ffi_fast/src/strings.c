/*
 * strings.c -- String, Bytes and BigInt values, and the AnyView -> Any rules.
 *
 * Its twin in the reference runtime: tvm_ffi_ref/runtime/strings.py.
 *
 * Strings and bytes of at most 7 bytes live inline in the TVMFFIAny
 * (kTVMFFISmallStr / kTVMFFISmallBytes, zero padded, length in small_str_len);
 * longer ones are objects: header, TVMFFIByteArray, then a NUL-terminated copy
 * the array points at. A BigInt is an int64 (kTVMFFIInt) when its minimal
 * two's-complement form is one word, else an object: header, the word count,
 * then the words (least significant first).
 */
#include "core.h"

#include <inttypes.h>

#include "runtime.h"

#define SMALL_MAX 7

/* header, TVMFFIByteArray, characters */
typedef struct {
  TVMFFIObject header;
  TVMFFIByteArray cell;
} FrBytesObj;

/* header, word count, words (BigIntObj) */
typedef struct {
  TVMFFIObject header;
  uint64_t size;
} FrBigIntObj;

static void plain_deleter(void* self, int flags) {
  if (flags & kTVMFFIObjectDeleterFlagBitMaskWeak) free(self);
}

static void* bytes_object_new(int32_t type_index, const char* data, size_t size) {
  FrBytesObj* obj =
      (FrBytesObj*)fr_object_alloc(sizeof(FrBytesObj) + size + 1, type_index, plain_deleter);
  char* text;
  if (obj == NULL) return NULL;
  text = (char*)(obj + 1);
  if (size != 0) memcpy(text, data, size);
  text[size] = '\0';
  obj->cell.data = text;
  obj->cell.size = size;
  return obj;
}

static int make_str_like(int32_t small_index, int32_t object_index, const char* data,
                         size_t size, TVMFFIAny* out) {
  if (size <= SMALL_MAX) {
    TVMFFIAny value;
    value.type_index = small_index;
    value.small_str_len = (uint32_t)size;
    value.v_int64 = 0;
    if (size != 0) memcpy(value.v_bytes, data, size);
    *out = value;
    return 0;
  } else {
    void* obj = bytes_object_new(object_index, data, size);
    if (obj == NULL) return -1;
    *out = fr_any_object(obj);
    return 0;
  }
}

int fr_string_from_bytes(const char* data, size_t size, TVMFFIAny* out) {
  return make_str_like(kTVMFFISmallStr, kTVMFFIStr, data, size, out);
}

int fr_bytes_from_bytes(const char* data, size_t size, TVMFFIAny* out) {
  return make_str_like(kTVMFFISmallBytes, kTVMFFIBytes, data, size, out);
}

void* fr_string_object_new(const char* data, size_t size) {
  return bytes_object_new(kTVMFFIStr, data, size);
}

int fr_any_str_view(const TVMFFIAny* value, int allow_bytes, TVMFFIByteArray* out) {
  switch (value->type_index) {
    case kTVMFFISmallStr:
      out->data = value->v_bytes;
      out->size = value->small_str_len;
      return 0;
    case kTVMFFIStr:
      *out = *FR_CELL(value->v_obj, TVMFFIByteArray);
      return 0;
    case kTVMFFIRawStr:
      if (value->v_c_str == NULL) return -1;
      out->data = value->v_c_str;
      out->size = strlen(value->v_c_str);
      return 0;
    case kTVMFFISmallBytes:
      if (!allow_bytes) return -1;
      out->data = value->v_bytes;
      out->size = value->small_str_len;
      return 0;
    case kTVMFFIBytes:
      if (!allow_bytes) return -1;
      *out = *FR_CELL(value->v_obj, TVMFFIByteArray);
      return 0;
    case kTVMFFIByteArrayPtr:
      if (!allow_bytes || value->v_ptr == NULL) return -1;
      *out = *(const TVMFFIByteArray*)value->v_ptr;
      return 0;
    default:
      return -1;
  }
}

int fr_buf_append_str_result(FrBuf* buf, TVMFFIAny* result) {
  TVMFFIByteArray text;
  if (fr_any_str_view(result, 0, &text) != 0) {
    fr_raise("TypeError", "Cannot convert from type `%s` to `str`",
             fr_type_key_of(result->type_index));
    fr_any_release(result);
    return -1;
  }
  fr_buf_append(buf, text.data, text.size);
  fr_any_release(result);
  return 0;
}

int fr_string_from_byte_array(const TVMFFIByteArray* input, TVMFFIAny* out) {
  FR_REQUIRE(input, "TVMFFIStringFromByteArray", "input");
  FR_REQUIRE(out, "TVMFFIStringFromByteArray", "out");
  out->type_index = kTVMFFINone;
  return fr_string_from_bytes(input->data, input->size, out);
}

int fr_bytes_from_byte_array(const TVMFFIByteArray* input, TVMFFIAny* out) {
  FR_REQUIRE(input, "TVMFFIBytesFromByteArray", "input");
  FR_REQUIRE(out, "TVMFFIBytesFromByteArray", "out");
  out->type_index = kTVMFFINone;
  return fr_bytes_from_bytes(input->data, input->size, out);
}

/* -------------------------------------------------------------- AnyView */

int fr_any_view_to_owned(const TVMFFIAny* view, TVMFFIAny* out) {
  int32_t ti = view->type_index;
  if (ti >= kTVMFFIStaticObjectBegin) {
    fr_incref(view->v_obj);
    *out = *view;
    return 0;
  }
  switch (ti) {
    case kTVMFFIRawStr: {
      const char* text = view->v_c_str;
      if (text == NULL) return fr_raise("ValueError", "a const char* value is NULL");
      return fr_string_from_bytes(text, strlen(text), out);
    }
    case kTVMFFIByteArrayPtr: {
      const TVMFFIByteArray* bytes = (const TVMFFIByteArray*)view->v_ptr;
      if (bytes == NULL) return fr_raise("ValueError", "a TVMFFIByteArray* value is NULL");
      return fr_bytes_from_bytes(bytes->data, bytes->size, out);
    }
    case kTVMFFIObjectRValueRef: {
      TVMFFIObject** slot = (TVMFFIObject**)view->v_ptr;
      if (slot == NULL || *slot == NULL) {
        return fr_raise("InternalError", "Check failed: (obj_addr[0] != nullptr) is false: "
                                         "RValueRef already moved");
      }
      *out = fr_any_object(*slot);
      *slot = NULL;
      return 0;
    }
    default:
      *out = *view;
      return 0;
  }
}

int fr_any_view_to_owned_any(const TVMFFIAny* any_view, TVMFFIAny* out) {
  FR_REQUIRE(any_view, "TVMFFIAnyViewToOwnedAny", "any_view");
  FR_REQUIRE(out, "TVMFFIAnyViewToOwnedAny", "out");
  return fr_any_view_to_owned(any_view, out);
}

/* ---------------------------------------------------------------- BigInt */

static const int64_t* bigint_words(const void* obj) {
  return (const int64_t*)((const char*)obj + sizeof(FrBigIntObj));
}

/* Builds the normalized value of words[0:n] (dropping redundant sign words). */
int fr_bigint_from_words(const int64_t* words, size_t n, TVMFFIAny* out) {
  FrBigIntObj* obj;
  while (n > 1 && words[n - 1] == (words[n - 2] < 0 ? -1 : 0)) --n;
  if (n <= 1) {
    *out = fr_any_int(n == 1 ? words[0] : 0);
    return 0;
  }
  obj = (FrBigIntObj*)fr_object_alloc(sizeof(FrBigIntObj) + n * sizeof(int64_t), kTVMFFIBigInt,
                                      plain_deleter);
  if (obj == NULL) return -1;
  obj->size = n;
  memcpy((char*)obj + sizeof(FrBigIntObj), words, n * sizeof(int64_t));
  *out = fr_any_object(obj);
  return 0;
}

int fr_bigint_from_byte_array(const TVMFFIByteArray* input, TVMFFIAny* out) {
  int64_t* words;
  size_t n;
  int status;
  FR_REQUIRE(input, "TVMFFIBigIntFromByteArray", "input");
  FR_REQUIRE(out, "TVMFFIBigIntFromByteArray", "out");
  *out = fr_any_none();
  if (input->size % sizeof(int64_t) != 0) {
    return fr_raise("ValueError", "BigInt content must contain whole 64-bit words");
  }
  n = input->size / sizeof(int64_t);
  if (n == 0) {
    *out = fr_any_int(0);
    return 0;
  }
  words = (int64_t*)malloc(input->size);
  if (words == NULL) return fr_raise_oom();
  memcpy(words, input->data, input->size);
  status = fr_bigint_from_words(words, n, out);
  free(words);
  return status;
}

void fr_bigint_get_content(const TVMFFIAny* value, TVMFFIByteArray* out) {
  if (value == NULL) {
    fr_raise("ValueError", "TVMFFIBigIntGetContentByteArray: value must not be NULL");
    out->data = NULL;
    out->size = 0;
  } else if (value->type_index == kTVMFFIBigInt) {
    out->data = (const char*)bigint_words(value->v_obj);
    out->size = ((const FrBigIntObj*)value->v_obj)->size * sizeof(int64_t);
  } else {
    /* an int64 (or anything else): its 8 payload bytes, as upstream reads them */
    out->data = (const char*)&value->v_int64;
    out->size = sizeof(int64_t);
  }
}

/* The words of an int or BigInt value. */
const int64_t* fr_bigint_words(const TVMFFIAny* value, size_t* n) {
  if (value->type_index == kTVMFFIBigInt) {
    *n = ((const FrBigIntObj*)value->v_obj)->size;
    return bigint_words(value->v_obj);
  }
  *n = 1;
  return &value->v_int64;
}

/* __any_hash__ of ffi.BigInt (native convention: returns an int Any). */
TVMFFIAny fr_bigint_any_hash(const TVMFFIAny* value) {
  size_t n;
  const int64_t* words = fr_bigint_words(value, &n);
  if (value->type_index == kTVMFFIInt) return fr_any_int(value->v_int64);
  return fr_any_int((int64_t)fr_stable_hash_bytes(words, n * sizeof(int64_t)));
}

/* __any_equal__ of ffi.BigInt (native convention: returns a bool Any). */
TVMFFIAny fr_bigint_any_equal(const TVMFFIAny* lhs, const TVMFFIAny* rhs) {
  size_t na, nb;
  const int64_t* a = fr_bigint_words(lhs, &na);
  const int64_t* b = fr_bigint_words(rhs, &nb);
  return fr_any_bool(na == nb && memcmp(a, b, na * sizeof(int64_t)) == 0);
}

/* ------------------------------------------------------ BigInt decimal text */

/* Signed decimal text of two's-complement words (upstream's ToStringFallback). */
int fr_bigint_append_decimal(FrBuf* out, const int64_t* words, size_t n) {
  static const uint64_t kChunk = 10000000000000000000ULL; /* 10^19 */
  uint64_t* mag;
  uint64_t* chunks;
  size_t size = n, num_chunks = 0, i;
  int negative = n > 0 && words[n - 1] < 0;
  uint64_t carry = 1;
  if (n == 0) {
    fr_buf_puts(out, "0");
    return 0;
  }
  mag = (uint64_t*)malloc(n * sizeof(uint64_t));
  chunks = (uint64_t*)malloc((n * 2 + 1) * sizeof(uint64_t)); /* 10^19 > 2^63: two per word */
  if (mag == NULL || chunks == NULL) {
    free(mag);
    free(chunks);
    return fr_raise_oom();
  }
  for (i = 0; i < n; ++i) {
    uint64_t w = (uint64_t)words[i];
    if (negative) {
      w = ~w + carry;
      carry = carry && w == 0;
    }
    mag[i] = w;
  }
  while (size > 0 && mag[size - 1] == 0) --size;
  while (size > 0) {
    unsigned __int128 rem = 0;
    for (i = size; i-- > 0;) {
      unsigned __int128 cur = (rem << 64) | mag[i];
      mag[i] = (uint64_t)(cur / kChunk);
      rem = cur % kChunk;
    }
    chunks[num_chunks++] = (uint64_t)rem;
    while (size > 0 && mag[size - 1] == 0) --size;
  }
  if (negative) fr_buf_puts(out, "-");
  if (num_chunks == 0) {
    fr_buf_puts(out, "0");
  } else {
    fr_buf_printf(out, "%" PRIu64, chunks[num_chunks - 1]);
    for (i = num_chunks - 1; i-- > 0;) fr_buf_printf(out, "%019" PRIu64, chunks[i]);
  }
  free(mag);
  free(chunks);
  return 0;
}

int fr_bigint_from_decimal(const char* text, size_t size, TVMFFIAny* out) {
  /* magnitude in 64-bit limbs, least significant first: one more limb per 19 digits */
  size_t i = 0, capacity = size / 19 + 2, n = 1, k;
  uint64_t* mag = (uint64_t*)calloc(capacity + 1, sizeof(uint64_t));
  int negative = 0, status;
  if (mag == NULL) return fr_raise_oom();
  if (i < size && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
  for (; i < size; ++i) {
    unsigned __int128 carry = (unsigned)(text[i] - '0');
    for (k = 0; k < n; ++k) {
      unsigned __int128 cur = (unsigned __int128)mag[k] * 10 + carry;
      mag[k] = (uint64_t)cur;
      carry = cur >> 64;
    }
    if (carry != 0) mag[n++] = (uint64_t)carry;
  }
  mag[n++] = 0; /* room for the sign */
  if (negative) {
    uint64_t borrow = 1;
    for (k = 0; k < n; ++k) {
      mag[k] = ~mag[k] + borrow;
      borrow = borrow && mag[k] == 0;
    }
  }
  status = fr_bigint_from_words((const int64_t*)mag, n, out);
  free(mag);
  return status;
}
