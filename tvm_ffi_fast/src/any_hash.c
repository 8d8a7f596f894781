/*
 * any_hash.c -- how Map and Dict hash and compare keys: AnyHash and AnyEqual
 * (strings and bytes by content, the __any_hash__/__any_equal__ columns for
 * types that define them, anything else by identity or value) and upstream's
 * StableHashBytes. Separate from the map layouts: the structural and dataclass
 * operations and the access paths use them too.
 *
 * Its twin in the reference runtime: tvm_ffi_ref/runtime/any_hash.py.
 */
#include "core.h"

#include "containers.h"
#include "registry.h"
#include "runtime.h"

/* ------------------------------------------------------------- hashing */

#define HASH_MOD 2147483647ULL

static uint64_t hash_combine(uint64_t key, uint64_t value) {
  return key ^ (value + 0x9e3779b9ULL + (key << 6) + (key >> 2));
}

/* base_detail.h StableHashBytes: 8-byte little-endian words folded modulo 2^31-1. */
uint64_t fr_stable_hash_bytes(const void* data, size_t size) {
  const unsigned char* p = (const unsigned char*)data;
  const uint64_t mul = 1099511628211ULL;
  uint64_t result = 0;
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    uint64_t word;
    memcpy(&word, p + i, 8);
    result = (result * mul + word) % HASH_MOD;
  }
  if (i < size) {
    uint64_t word = 0;
    memcpy(&word, p + i, size - i);
    result = (result * mul + word) % HASH_MOD;
  }
  return result;
}

static const TVMFFIByteArray* bytes_cell(const TVMFFIAny* value) {
  return FR_CELL(value->v_obj, TVMFFIByteArray);
}

/* The custom entry of a type attribute column for type_index, or NULL. */
static const TVMFFIAny* column_entry(const TVMFFITypeAttrColumn* column, int32_t type_index) {
  int32_t offset;
  if (column == NULL || column->data == NULL) return NULL;
  offset = type_index - column->begin_index;
  if (offset < 0 || offset >= column->size) return NULL;
  if (column->data[offset].type_index == kTVMFFINone) return NULL;
  return &column->data[offset];
}

/* Raises the Error a native hash/equal function returned instead of its value. */
static int raise_native_result(TVMFFIAny* result, const char* what) {
  if (result->type_index == kTVMFFIError) {
    TVMFFIErrorSetRaised(result->v_obj);
    fr_any_release(result);
    return -1;
  }
  fr_any_release(result);
  return fr_raise("InternalError", "%s returned a value of the wrong type", what);
}

typedef TVMFFIAny (*FrNativeHash)(const TVMFFIAny* value);
typedef TVMFFIAny (*FrNativeEqual)(const TVMFFIAny* lhs, const TVMFFIAny* rhs);

static int call_custom_hash(const TVMFFIAny* fn, const TVMFFIAny* value, uint64_t* out) {
  TVMFFIAny result = fr_any_none();
  if (fn->type_index == kTVMFFIOpaquePtr) {
    if (fn->v_ptr == NULL) return fr_raise("InternalError", "__any_hash__ is a NULL pointer");
    result = ((FrNativeHash)fn->v_ptr)(value);
  } else if (fn->type_index == kTVMFFIFunction) {
    TVMFFIFunctionCell* cell = FR_CELL(fn->v_obj, TVMFFIFunctionCell);
    if (cell->safe_call(fn->v_obj, value, 1, &result) != 0) return -1;
  } else {
    return fr_raise("InternalError", "__any_hash__ must be a function");
  }
  if (result.type_index != kTVMFFIInt) return raise_native_result(&result, "__any_hash__");
  *out = (uint64_t)result.v_int64;
  return 0;
}

static int call_custom_equal(const TVMFFIAny* fn, const TVMFFIAny* lhs, const TVMFFIAny* rhs,
                             int* out) {
  TVMFFIAny result = fr_any_none();
  if (fn->type_index == kTVMFFIOpaquePtr) {
    if (fn->v_ptr == NULL) return fr_raise("InternalError", "__any_equal__ is a NULL pointer");
    result = ((FrNativeEqual)fn->v_ptr)(lhs, rhs);
  } else if (fn->type_index == kTVMFFIFunction) {
    TVMFFIAny args[2];
    TVMFFIFunctionCell* cell = FR_CELL(fn->v_obj, TVMFFIFunctionCell);
    args[0] = *lhs;
    args[1] = *rhs;
    if (cell->safe_call(fn->v_obj, args, 2, &result) != 0) return -1;
  } else {
    return fr_raise("InternalError", "__any_equal__ must be a function");
  }
  if (result.type_index != kTVMFFIBool) return raise_native_result(&result, "__any_equal__");
  *out = result.v_int64 != 0;
  return 0;
}

int fr_any_hash(const TVMFFIAny* value, uint64_t* out) {
  int32_t ti = value->type_index;
  if (ti == kTVMFFISmallStr) {
    *out = hash_combine(kTVMFFIStr, value->v_uint64 % HASH_MOD);
  } else if (ti == kTVMFFISmallBytes) {
    *out = hash_combine(kTVMFFIBytes, value->v_uint64 % HASH_MOD);
  } else if (ti == kTVMFFIStr || ti == kTVMFFIBytes) {
    const TVMFFIByteArray* cell = bytes_cell(value);
    *out = hash_combine((uint64_t)ti, fr_stable_hash_bytes(cell->data, cell->size));
  } else {
    if (ti >= kTVMFFIStaticObjectBegin) {
      const TVMFFIAny* custom = column_entry(fr_any_hash_column(), ti);
      if (custom != NULL) {
        uint64_t h = 0;
        if (call_custom_hash(custom, value, &h) != 0) return -1;
        *out = hash_combine((uint64_t)ti, h);
        return 0;
      }
    }
    *out = hash_combine((uint64_t)(uint32_t)ti, value->v_uint64);
  }
  return 0;
}

static int is_str_like(int32_t ti) {
  return ti == kTVMFFIStr || ti == kTVMFFISmallStr || ti == kTVMFFIBytes || ti == kTVMFFISmallBytes;
}

static int mem_equal(const char* a, size_t na, const char* b, size_t nb) {
  return na == nb && (na == 0 || memcmp(a, b, na) == 0);
}

int fr_any_equal(const TVMFFIAny* lhs, const TVMFFIAny* rhs, int* out) {
  int32_t lt = lhs->type_index, rt = rhs->type_index;
  if (memcmp(lhs, rhs, sizeof(TVMFFIAny)) == 0) {
    *out = 1;
    return 0;
  }
  *out = 0;
  if (lt == rt) {
    if (lt == kTVMFFIStr || lt == kTVMFFIBytes) {
      const TVMFFIByteArray* a = bytes_cell(lhs);
      const TVMFFIByteArray* b = bytes_cell(rhs);
      *out = mem_equal(a->data, a->size, b->data, b->size);
    } else if (lt >= kTVMFFIStaticObjectBegin) {
      const TVMFFIAny* custom = column_entry(fr_any_equal_column(), lt);
      if (custom != NULL) return call_custom_equal(custom, lhs, rhs, out);
    }
    return 0;
  }
  if (!is_str_like(lt)) return 0;
  if (lt == kTVMFFIStr && rt == kTVMFFISmallStr) {
    const TVMFFIByteArray* a = bytes_cell(lhs);
    *out = mem_equal(a->data, a->size, rhs->v_bytes, rhs->small_str_len);
  } else if (lt == kTVMFFISmallStr && rt == kTVMFFIStr) {
    const TVMFFIByteArray* b = bytes_cell(rhs);
    *out = mem_equal(lhs->v_bytes, lhs->small_str_len, b->data, b->size);
  } else if (lt == kTVMFFIBytes && rt == kTVMFFISmallBytes) {
    const TVMFFIByteArray* a = bytes_cell(lhs);
    *out = mem_equal(a->data, a->size, rhs->v_bytes, rhs->small_str_len);
  } else if (lt == kTVMFFISmallBytes && rt == kTVMFFIBytes) {
    const TVMFFIByteArray* b = bytes_cell(rhs);
    *out = mem_equal(lhs->v_bytes, lhs->small_str_len, b->data, b->size);
  }
  return 0;
}
