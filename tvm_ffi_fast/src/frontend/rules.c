/*
 * rules.c -- the calling-convention rules every result is checked against.
 *
 * tvm_ffi_api/rules.py states them and owns the ABIViolation class; this is
 * the same check in C, run on every call, with the same rule names and
 * messages (tests/test_call_rules.py compares them with the
 * reference's). A function returns 0 with an owned value: never a
 * borrowed-only kind, at most 7 inline string bytes, a defined POD index or
 * an object whose index is registered and matches its header.
 */
#include "frontend.h"

PyObject* fx_raise_violation(const char* rule, const char* format, ...) {
  PyObject *cls = fx_hook(FX_HOOK_ABI_VIOLATION), *message, *violation;
  va_list va;
  if (cls == NULL) return NULL;
  va_start(va, format);
  message = PyUnicode_FromFormatV(format, va);
  va_end(va);
  if (message == NULL) return NULL;
  violation = PyObject_CallFunction(cls, "sO", rule, message);
  Py_DECREF(message);
  if (violation == NULL) return NULL;
  PyErr_SetObject(cls, violation);
  Py_DECREF(violation);
  return NULL;
}

/* Which object type indices the runtime knows (types are never unregistered). */
static uint8_t* known;
static int32_t n_known;

static int registered(int32_t type_index) {
  TVMFFIObjectHandle error = NULL;
  if (type_index < n_known && known[type_index]) return 1;
  if (TVMFFIGetTypeInfo(type_index) == NULL) {
    /* the failed lookup raised an error of its own: discard it */
    TVMFFIErrorMoveFromRaised(&error);
    if (error != NULL) fx_decref(error);
    return 0;
  }
  if (type_index >= n_known) {
    int32_t size = n_known ? n_known : 256;
    uint8_t* grown;
    while (size <= type_index) size *= 2;
    grown = (uint8_t*)PyMem_Realloc(known, (size_t)size);
    if (grown == NULL) return 1; /* registered all the same; just not remembered */
    memset(grown + n_known, 0, (size_t)(size - n_known));
    known = grown;
    n_known = size;
  }
  known[type_index] = 1;
  return 1;
}

static const char* borrowed_only(int32_t type_index) {
  switch (type_index) {
    case kTVMFFIRawStr:
      return "a raw C string (kTVMFFIRawStr)";
    case kTVMFFIByteArrayPtr:
      return "a byte-array pointer (kTVMFFIByteArrayPtr)";
    case kTVMFFIObjectRValueRef:
      return "an rvalue reference (kTVMFFIObjectRValueRef)";
    default:
      return NULL;
  }
}

int fx_check_result(const TVMFFIAny* result) {
  int32_t index = result->type_index;
  const char* kind;
  int32_t header_index;
  if (FX_LIKELY(index >= kTVMFFIStaticObjectBegin)) {
    if (result->v_ptr == NULL) {
      fx_raise_violation("object-header",
                         "the result claims an object (type index %d) but its pointer is NULL",
                         (int)index);
      return -1;
    }
    if (!registered(index)) {
      fx_raise_violation("result-type",
                         "the result has type index %d, which no registered type uses",
                         (int)index);
      return -1;
    }
    header_index = fx_header_index(result->v_ptr);
    if (header_index != index) {
      fx_raise_violation("object-header",
                         "the result's type index %d differs from its object header's %d",
                         (int)index, (int)header_index);
      return -1;
    }
    return 0;
  }
  if (FX_LIKELY(index >= 0 && index <= kTVMFFIUnchanged)) {
    kind = borrowed_only(index);
    if (kind != NULL) {
      fx_raise_violation("result-owned",
                         "the result holds %s, which only a borrowed argument may hold; return "
                         "an owned String/Bytes instead",
                         kind);
      return -1;
    }
    if ((index == kTVMFFISmallStr || index == kTVMFFISmallBytes) && result->small_str_len > 7) {
      fx_raise_violation("small-str-length",
                         "an inline small string/bytes result claims %u bytes; at most 7 fit",
                         (unsigned)result->small_str_len);
      return -1;
    }
    return 0;
  }
  fx_raise_violation("result-type", "the result has type index %d, which is no type the ABI defines",
                     (int)index);
  return -1;
}
