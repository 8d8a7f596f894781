/*
 * dtype.c -- DLDataType to and from strings, with upstream's grammar:
 *
 * Its twin in the reference runtime: tvm_ffi_ref/runtime/dtype.py.
 *
 *   ""/"void"                      handle, 0 bits, 0 lanes
 *   int|uint|float|bfloat|handle|bool [bits] [x lanes | xvscale x lanes]
 *   short aliases i8, u16, f32, bf16, fp8_*, f8_*, fp6_*, f6_*, fp4_*, f4_*
 *   float8_{e3m4,e4m3,e4m3b11fnuz,e4m3fn,e4m3fnuz,e5m2,e5m2fnuz,e8m0fnu}
 *   float6_{e2m3fn,e3m2fn}, float4_e2m1fn (also with "_x" lanes)
 *   custom[name] through the global dtype.get_custom_type_code / _name
 *
 * Errors carry upstream's kinds (ValueError) and texts; a text quoting the
 * dtype string quotes its bytes exactly, NUL bytes included. The printed name
 * is always a String object, as upstream builds it from a std::string.
 */
#include "core.h"

#include <stdio.h>

#include "functions.h"
#include "runtime.h"

#define CUSTOM_BEGIN 129

static const char* code_name(int code) {
  switch (code) {
    case kDLInt: return "int";
    case kDLUInt: return "uint";
    case kDLFloat: return "float";
    case kDLOpaqueHandle: return "handle";
    case kDLBfloat: return "bfloat";
    case kDLBool: return "bool";
    case kDLFloat8_e3m4: return "float8_e3m4";
    case kDLFloat8_e4m3: return "float8_e4m3";
    case kDLFloat8_e4m3b11fnuz: return "float8_e4m3b11fnuz";
    case kDLFloat8_e4m3fn: return "float8_e4m3fn";
    case kDLFloat8_e4m3fnuz: return "float8_e4m3fnuz";
    case kDLFloat8_e5m2: return "float8_e5m2";
    case kDLFloat8_e5m2fnuz: return "float8_e5m2fnuz";
    case kDLFloat8_e8m0fnu: return "float8_e8m0fnu";
    case kDLFloat6_e2m3fn: return "float6_e2m3fn";
    case kDLFloat6_e3m2fn: return "float6_e3m2fn";
    case kDLFloat4_e2m1fn: return "float4_e2m1fn";
    default: return NULL;
  }
}

/* Calls a registered dtype.* global with one argument; 0 or -1. */
static int call_custom_global(const char* name, TVMFFIAny arg, TVMFFIAny* result) {
  void* f = fr_global_lookup(name, strlen(name));
  int status;
  if (f == NULL) return fr_raise("ValueError", "Function %s not found", name);
  status = fr_call(f, &arg, 1, result);
  fr_decref(f);
  return status;
}

static int custom_type_name(int code, FrBuf* out) {
  TVMFFIAny result;
  if (call_custom_global("dtype.get_custom_type_name", fr_any_int(code), &result) != 0) return -1;
  return fr_buf_append_str_result(out, &result);
}

/* A String object, never the small form. */
static int string_object(const char* data, size_t size, TVMFFIAny* out) {
  void* obj = fr_string_object_new(data, size);
  if (obj == NULL) return -1;
  *out = fr_any_object(obj);
  return 0;
}

int fr_dtype_to_string(const DLDataType* dtype, TVMFFIAny* out) {
  FrBuf buf;
  int16_t lanes;
  int status;
  FR_REQUIRE(dtype, "TVMFFIDataTypeToString", "dtype");
  FR_REQUIRE(out, "TVMFFIDataTypeToString", "out");
  if (dtype->bits == 8 && dtype->lanes == 1 && dtype->code == kDLBool) {
    return string_object("bool", 4, out);
  }
  if (dtype->code == kDLOpaqueHandle && dtype->lanes == 0 && dtype->bits == 0) {
    return string_object("", 0, out);
  }
  fr_buf_init(&buf);
  if (dtype->code >= CUSTOM_BEGIN) {
    fr_buf_puts(&buf, "custom[");
    if (custom_type_name(dtype->code, &buf) != 0) {
      fr_buf_free(&buf);
      return -1;
    }
    fr_buf_puts(&buf, "]");
  } else {
    const char* name = code_name(dtype->code);
    if (name == NULL) {
      fr_buf_free(&buf);
      return fr_raise("ValueError", "DLDataType contains unknown type_code=%d", (int)dtype->code);
    }
    fr_buf_puts(&buf, name);
  }
  if (dtype->code != kDLOpaqueHandle) {
    lanes = (int16_t)dtype->lanes;
    if (dtype->code < kDLFloat8_e3m4 && (dtype->code != kDLBool || dtype->bits != 8)) {
      fr_buf_printf(&buf, "%d", (int)dtype->bits);
    }
    if (lanes > 1) {
      fr_buf_printf(&buf, "x%d", (int)lanes);
    } else if (lanes < -1) {
      fr_buf_printf(&buf, "xvscalex%d", -(int)lanes);
    }
  }
  if (buf.failed) {
    fr_buf_free(&buf);
    return fr_raise_oom();
  }
  status = string_object(fr_buf_cstr(&buf), buf.size, out);
  fr_buf_free(&buf);
  return status;
}

/* ------------------------------------------------------------- parsing */

typedef struct {
  const char* s; /* the (normalized) text */
  size_t n;
  DLDataType dtype;
} Parse;

static int is_digit(char c) { return c >= '0' && c <= '9'; }

static int starts(const Parse* p, size_t offset, const char* prefix) {
  size_t k = strlen(prefix);
  return p->n >= offset + k && memcmp(p->s + offset, prefix, k) == 0;
}

/* ValueError: before, the dtype text (every byte), after. */
static int raise_quoting(const char* before, const Parse* p, const char* after) {
  FrBuf buf;
  int status;
  fr_buf_init(&buf);
  fr_buf_puts(&buf, before);
  fr_buf_append(&buf, p->s, p->n);
  fr_buf_puts(&buf, after);
  status = buf.failed ? fr_raise_oom() : fr_raise_bytes("ValueError", buf.data, buf.size);
  fr_buf_free(&buf);
  return status;
}

static int raise_unknown(const Parse* p, const char* what) {
  FrBuf before;
  int status;
  fr_buf_init(&before);
  fr_buf_printf(&before, "unknown %s `", what);
  status = raise_quoting(fr_buf_cstr(&before), p, "`");
  fr_buf_free(&before);
  return status;
}

/*
 * Reads decimal digits at *pos into *out. As upstream's, the value accumulates
 * in a uint64 that wraps silently; only the final value is range-checked.
 */
static int parse_digits(const Parse* p, size_t* pos, uint32_t* out) {
  uint64_t value = 0;
  size_t start = *pos;
  while (*pos < p->n && is_digit(p->s[*pos])) {
    value = value * 10 + (uint64_t)(p->s[*pos] - '0');
    (*pos)++;
  }
  if (value > UINT32_MAX) {
    return fr_raise("ValueError", "Integer value in dtype string '%.*s' is out of range for uint32_t",
                    (int)(*pos - start), p->s + start);
  }
  *out = (uint32_t)value;
  return 0;
}

static int parse_lanes(const Parse* p, size_t* pos, int allow_scalable, uint16_t* lanes) {
  int multiplier = 1;
  size_t digits_start;
  uint32_t value = 0;
  if (allow_scalable && p->n - *pos >= 7 && memcmp(p->s + *pos, "xvscale", 7) == 0) {
    multiplier = -1;
    *pos += 7;
  }
  if (*pos >= p->n || p->s[*pos] != 'x') {
    *lanes = 1;
    return 0;
  }
  (*pos)++;
  digits_start = *pos;
  if (parse_digits(p, pos, &value) != 0) return -1;
  if (*pos == digits_start || value == 0) {
    return raise_quoting("Invalid lanes specification in dtype '", p,
                         "'. Lanes must be a positive integer.");
  }
  if (value > UINT16_MAX) {
    char before[80];
    snprintf(before, sizeof(before), "Lanes value %u is out of range for uint16_t in dtype '",
             value);
    return raise_quoting(before, p, "'");
  }
  *lanes = (uint16_t)(multiplier * (int32_t)value);
  return 0;
}

static int parse_float_variant(Parse* p, size_t end, int code, int bits, int allow_underscore) {
  size_t pos = end;
  p->dtype.code = (uint8_t)code;
  p->dtype.bits = (uint8_t)bits;
  if (allow_underscore && pos < p->n && p->s[pos] == '_') ++pos;
  if (parse_lanes(p, &pos, 0, &p->dtype.lanes) != 0) return -1;
  if (pos != p->n) return raise_unknown(p, "dtype");
  return 0;
}

/* The end of pattern at offset when it ends the text or is followed by lanes; else 0. */
static size_t match_variant(const Parse* p, size_t offset, const char* pattern,
                            int allow_underscore) {
  size_t k = strlen(pattern), end = offset + k;
  if (p->n < end || memcmp(p->s + offset, pattern, k) != 0) return 0;
  if (end == p->n || p->s[end] == 'x' || (allow_underscore && p->s[end] == '_')) return end;
  return 0;
}

static int parse_float8(Parse* p, size_t offset) {
  static const struct {
    const char* name;
    int code;
  } kVariants[] = {
      {"e4m3b11fnuz", kDLFloat8_e4m3b11fnuz}, {"e4m3fnuz", kDLFloat8_e4m3fnuz},
      {"e4m3fn", kDLFloat8_e4m3fn},           {"e5m2fnuz", kDLFloat8_e5m2fnuz},
      {"e8m0fnu", kDLFloat8_e8m0fnu},         {"e3m4", kDLFloat8_e3m4},
      {"e4m3", kDLFloat8_e4m3},               {"e5m2", kDLFloat8_e5m2},
  };
  size_t i;
  for (i = 0; i < sizeof(kVariants) / sizeof(kVariants[0]); ++i) {
    size_t end = match_variant(p, offset, kVariants[i].name, 0);
    if (end != 0) return parse_float_variant(p, end, kVariants[i].code, 8, 0);
  }
  return raise_unknown(p, "float8 type");
}

static int parse_float6(Parse* p, size_t offset) {
  size_t end = match_variant(p, offset, "e2m3fn", 0);
  if (end != 0) return parse_float_variant(p, end, kDLFloat6_e2m3fn, 6, 0);
  end = match_variant(p, offset, "e3m2fn", 0);
  if (end != 0) return parse_float_variant(p, end, kDLFloat6_e3m2fn, 6, 0);
  return raise_unknown(p, "float6 type");
}

static int parse_float4(Parse* p, size_t offset) {
  size_t end = match_variant(p, offset, "e2m1fn", 1);
  if (end != 0) return parse_float_variant(p, end, kDLFloat4_e2m1fn, 4, 1);
  return raise_unknown(p, "float4 type");
}

static int parse_custom(Parse* p, size_t* pos) {
  size_t name_len = 0;
  char* name_text;
  TVMFFIAny name, result;
  int status;
  *pos = 6;
  if (*pos >= p->n || p->s[*pos] != '[') {
    return raise_quoting("expected opening brace after 'custom' type in", p, "");
  }
  *pos += 1;
  while (*pos + name_len < p->n && p->s[*pos + name_len] != ']') ++name_len;
  if (*pos + name_len >= p->n) {
    return raise_quoting("expected closing brace after 'custom' type in", p, "");
  }
  /* upstream passes the name as a std::string, which a call views as a const char* */
  name_text = fr_strndup(p->s + 7, name_len);
  if (name_text == NULL) return fr_raise_oom();
  *pos += name_len + 1;
  name = fr_any_none();
  name.type_index = kTVMFFIRawStr;
  name.v_c_str = name_text;
  status = call_custom_global("dtype.get_custom_type_code", name, &result);
  free(name_text);
  if (status != 0) return -1;
  if (result.type_index != kTVMFFIInt && result.type_index != kTVMFFIBool) {
    fr_raise("TypeError", "Cannot convert from type `%s` to `int`",
             fr_type_key_of(result.type_index));
    fr_any_release(&result);
    return -1;
  }
  p->dtype.code = (uint8_t)result.v_int64;
  return 0;
}

static int parse(Parse* p) {
  size_t pos;
  uint32_t bits = 0;
  p->dtype.bits = 32;
  p->dtype.lanes = 1;
  if (starts(p, 0, "int")) {
    p->dtype.code = kDLInt;
    pos = 3;
  } else if (starts(p, 0, "uint")) {
    p->dtype.code = kDLUInt;
    pos = 4;
  } else if (starts(p, 0, "bool")) {
    p->dtype.code = kDLBool;
    p->dtype.bits = 8;
    pos = 4;
  } else if (starts(p, 0, "fp8_")) {
    return parse_float8(p, 4);
  } else if (starts(p, 0, "f8_")) {
    return parse_float8(p, 3);
  } else if (starts(p, 0, "fp6_")) {
    return parse_float6(p, 4);
  } else if (starts(p, 0, "f6_")) {
    return parse_float6(p, 3);
  } else if (starts(p, 0, "fp4_")) {
    return parse_float4(p, 4);
  } else if (starts(p, 0, "f4_")) {
    return parse_float4(p, 3);
  } else if (starts(p, 0, "float")) {
    if (starts(p, 5, "8_")) return parse_float8(p, 7);
    if (starts(p, 5, "6_")) return parse_float6(p, 7);
    if (starts(p, 5, "4_")) return parse_float4(p, 7);
    p->dtype.code = kDLFloat;
    pos = 5;
  } else if (starts(p, 0, "handle")) {
    p->dtype.code = kDLOpaqueHandle;
    p->dtype.bits = 64;
    pos = 6;
  } else if (starts(p, 0, "bfloat")) {
    p->dtype.code = kDLBfloat;
    p->dtype.bits = 16;
    pos = 6;
  } else if (starts(p, 0, "custom")) {
    if (parse_custom(p, &pos) != 0) return -1;
  } else {
    return raise_unknown(p, "dtype");
  }
  if (parse_digits(p, &pos, &bits) != 0) return -1;
  if (bits > UINT8_MAX) {
    char before[80];
    snprintf(before, sizeof(before), "Bits value %u is out of range for uint8_t in dtype '", bits);
    return raise_quoting(before, p, "'");
  }
  if (bits != 0) p->dtype.bits = (uint8_t)bits;
  if (parse_lanes(p, &pos, 1, &p->dtype.lanes) != 0) return -1;
  if (pos != p->n) return raise_unknown(p, "dtype");
  return 0;
}

int fr_dtype_from_string(const TVMFFIByteArray* str, DLDataType* out) {
  Parse p;
  char* normalized = NULL;
  const char* s;
  size_t n;
  int status;
  FR_REQUIRE(str, "TVMFFIDataTypeFromString", "str");
  FR_REQUIRE(out, "TVMFFIDataTypeFromString", "out");
  s = str->data != NULL ? str->data : "";
  n = str->data != NULL ? str->size : 0;
  if (n == 0 || (n == 4 && memcmp(s, "void", 4) == 0)) {
    out->code = kDLOpaqueHandle;
    out->bits = 0;
    out->lanes = 0;
    return 0;
  }
  {
    /* short aliases are rewritten to the canonical prefix first */
    const char* canonical = NULL;
    size_t alias = 0;
    if (n >= 2 && s[0] == 'i' && is_digit(s[1])) {
      canonical = "int", alias = 1;
    } else if (n >= 2 && s[0] == 'u' && is_digit(s[1])) {
      canonical = "uint", alias = 1;
    } else if (n >= 3 && s[0] == 'b' && s[1] == 'f' && is_digit(s[2])) {
      canonical = "bfloat", alias = 2;
    } else if (n >= 4 && memcmp(s, "fp8_", 4) == 0) {
      canonical = "float8_", alias = 4;
    } else if (n >= 4 && memcmp(s, "fp6_", 4) == 0) {
      canonical = "float6_", alias = 4;
    } else if (n >= 4 && memcmp(s, "fp4_", 4) == 0) {
      canonical = "float4_", alias = 4;
    } else if (n >= 2 && s[0] == 'f' && is_digit(s[1])) {
      canonical = "float", alias = 1;
    }
    if (canonical != NULL) {
      size_t k = strlen(canonical);
      normalized = (char*)malloc(k + n - alias + 1);
      if (normalized == NULL) return fr_raise_oom();
      memcpy(normalized, canonical, k);
      memcpy(normalized + k, s + alias, n - alias);
      normalized[k + n - alias] = '\0';
      s = normalized;
      n = k + n - alias;
    }
  }
  p.s = s;
  p.n = n;
  memset(&p.dtype, 0, sizeof(p.dtype));
  status = parse(&p);
  free(normalized);
  if (status == 0) *out = p.dtype;
  return status;
}
