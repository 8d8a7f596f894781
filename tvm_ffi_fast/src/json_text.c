/*
 * json_text.c -- ffi.json.Parse and ffi.json.Stringify: JSON text <-> FFI
 * values (null, bools, int64 or float numbers, String, Array, Map).
 *
 * tvm_ffi_ref/runtime/json_text.py states the rules: the NaN/Infinity
 * extensions, numbers read with strtoimax/strtod, Python's json error texts
 * with byte positions, and the writer's float, string and indentation forms.
 */
#include "structural.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "containers.h"
#include "functions.h"

/* ------------------------------------------------------------ parsing */

typedef struct {
  const char* begin;
  const char* cur;
  const char* end;
  const char* line_begin;
  int64_t line;
  int depth;
} Parser;

/* A syntax error at the current position (or at `at` when given): ValueError, -1. */
static int fail(Parser* p, const char* prefix, const char* at) {
  if (at != NULL) p->cur = at;
  return fr_raise("ValueError", "%s: line %" PRId64 " column %" PRId64 " (char %" PRId64 ")",
                  prefix, p->line, (int64_t)(p->cur - p->line_begin) + 1,
                  (int64_t)(p->cur - p->begin));
}

static int peek(const Parser* p) { return p->cur != p->end ? (unsigned char)*p->cur : -1; }

static void skip_spaces(Parser* p) {
  while (p->cur != p->end &&
         (*p->cur == ' ' || *p->cur == '\t' || *p->cur == '\n' || *p->cur == '\r')) {
    if (*p->cur == '\n') {
      p->line++;
      p->line_begin = p->cur + 1;
    }
    p->cur++;
  }
}

/* Consumes literal if the text continues with it (stops at the first difference). */
static int match(Parser* p, const char* literal) {
  for (; *literal != '\0'; ++literal, ++p->cur) {
    if (p->cur == p->end || *p->cur != *literal) return 0;
  }
  return 1;
}

static int parse_value(Parser* p, TVMFFIAny* out);

static int parse_number(Parser* p, TVMFFIAny* out) {
  const char* start = p->cur;
  const char* q;
  char buffer[64];
  char* heap = NULL;
  char* text = buffer;
  char* end_ptr;
  size_t n;
  int negative = peek(p) == '-', maybe_int = 1, status = -1;
  if (negative) p->cur++;
  if (peek(p) == 'I' || (!negative && peek(p) == 'N')) {
    int infinite = peek(p) == 'I';
    if (!match(p, infinite ? "Infinity" : "NaN")) return fail(p, "Expecting value", start);
    *out = fr_any_none();
    out->type_index = kTVMFFIFloat;
    out->v_float64 = infinite ? (negative ? -INFINITY : INFINITY) : NAN;
    return 0;
  }
  for (q = p->cur; q != p->end && (strchr("0123456789eE+-.", *q) != NULL && *q != '\0'); ++q) {
    if (*q == '.' || *q == 'e' || *q == 'E') maybe_int = 0;
  }
  p->cur = q;
  n = (size_t)(q - start);
  if (n == 0) return fail(p, "Expecting value", NULL);
  if (n >= sizeof(buffer)) {
    heap = (char*)malloc(n + 1);
    if (heap == NULL) return fr_raise_oom();
    text = heap;
  }
  memcpy(text, start, n);
  text[n] = '\0';
  if (maybe_int) {
    intmax_t value;
    errno = 0;
    value = strtoimax(text, &end_ptr, 10);
    if (errno == 0 && end_ptr == text + n) {
      *out = fr_any_int((int64_t)value);
      status = 0;
    }
  }
  if (status != 0) {
    double value;
    errno = 0;
    value = strtod(text, &end_ptr);
    if (errno == 0 && end_ptr == text + n) {
      *out = fr_any_none();
      out->type_index = kTVMFFIFloat;
      out->v_float64 = value;
      status = 0;
    } else {
      status = fail(p, "Expecting value", start);
    }
  }
  free(heap);
  return status;
}

static int hex4(Parser* p, int32_t* out) {
  int32_t value = 0;
  int i;
  for (i = 0; i < 4; ++i, ++p->cur) {
    int c = peek(p), digit;
    if (c >= '0' && c <= '9') digit = c - '0';
    else if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') digit = c - 'A' + 10;
    else return 0;
    value = value * 16 + digit;
  }
  *out = value;
  return 1;
}

static void append_utf8(FrBuf* buf, int32_t cp) {
  char bytes[4];
  size_t n;
  if (cp < 0x80) {
    bytes[0] = (char)cp, n = 1;
  } else if (cp < 0x800) {
    bytes[0] = (char)(0xC0 | (cp >> 6)), bytes[1] = (char)(0x80 | (cp & 0x3F)), n = 2;
  } else if (cp < 0x10000) {
    bytes[0] = (char)(0xE0 | (cp >> 12)), bytes[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    bytes[2] = (char)(0x80 | (cp & 0x3F)), n = 3;
  } else {
    bytes[0] = (char)(0xF0 | (cp >> 18)), bytes[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    bytes[2] = (char)(0x80 | ((cp >> 6) & 0x3F)), bytes[3] = (char)(0x80 | (cp & 0x3F)), n = 4;
  }
  fr_buf_append(buf, bytes, n);
}

/* \uXXXX (the 'u' at cur), with a surrogate pair, appended as UTF-8. */
static int unicode_escape(Parser* p, FrBuf* buf) {
  const char* escape_at = p->cur;
  const char* second_at;
  int32_t first, second;
  p->cur++;
  if (!hex4(p, &first)) return fail(p, "Invalid \\uXXXX escape", escape_at);
  if (first < 0xD800 || first > 0xDFFF) {
    append_utf8(buf, first);
    return 0;
  }
  if (first >= 0xDC00 || !match(p, "\\u")) {
    return fail(p, "Invalid surrogate pair of \\uXXXX escapes", escape_at);
  }
  second_at = p->cur;
  if (!hex4(p, &second)) return fail(p, "Invalid \\uXXXX escape", second_at);
  if (second < 0xDC00 || second > 0xDFFF) {
    return fail(p, "Invalid surrogate pair of \\uXXXX escapes", second_at);
  }
  append_utf8(buf, ((first - 0xD800) << 10) + (second - 0xDC00) + 0x10000);
  return 0;
}

static int parse_string(Parser* p, TVMFFIAny* out) {
  static const char kEscapes[] = "\"\"\\\\//b\bf\fn\nr\rt\t";
  const char* start = p->cur;
  FrBuf buf;
  int status = 1;
  fr_buf_init(&buf);
  p->cur++;
  while (status > 0 && p->cur != p->end) {
    unsigned char c = (unsigned char)*p->cur;
    if (c < 0x20) {
      status = fail(p, "Invalid control character at", NULL);
    } else if (c == '"') {
      p->cur++;
      status = fr_string_from_bytes(buf.data != NULL ? buf.data : "", buf.size, out);
    } else if (c != '\\') {
      fr_buf_append(&buf, p->cur++, 1);
    } else {
      const char* e;
      int escape;
      p->cur++;
      escape = peek(p);
      for (e = kEscapes; *e != '\0' && *e != escape; e += 2) {
      }
      if (escape > 0 && *e != '\0') {
        fr_buf_append(&buf, e + 1, 1);
        p->cur++;
      } else if (escape == 'u') {
        if (unicode_escape(p, &buf) != 0) status = -1;
      } else {
        status = fail(p, "Invalid \\escape", NULL);
      }
    }
  }
  if (status > 0) status = fail(p, "Unterminated string starting at", start);
  if (status == 0 && buf.failed) status = fr_raise_oom();
  fr_buf_free(&buf);
  return status;
}

static int parse_array(Parser* p, TVMFFIAny* out) {
  TVMFFIAny* items = NULL;
  size_t n = 0, capacity = 0, i;
  int status = -1;
  p->cur++;
  skip_spaces(p);
  if (peek(p) == -1) return fail(p, "Expecting value", NULL);
  if (peek(p) == ']') {
    void* array = fr_array_new(4); /* C++'s Array() */
    p->cur++;
    if (array == NULL) return -1;
    *out = fr_any_object(array);
    return 0;
  }
  while (peek(p) != -1) {
    if (n == capacity) {
      TVMFFIAny* grown;
      capacity = capacity == 0 ? 8 : capacity * 2;
      grown = (TVMFFIAny*)realloc(items, capacity * sizeof(TVMFFIAny));
      if (grown == NULL) {
        fr_raise_oom();
        goto done;
      }
      items = grown;
    }
    if (parse_value(p, &items[n]) != 0) goto done;
    n++;
    skip_spaces(p);
    if (peek(p) == ',') {
      p->cur++;
      skip_spaces(p);
    } else if (peek(p) == ']') {
      void* array;
      p->cur++;
      array = fr_array_from_items(items, (int64_t)n, 0);
      if (array != NULL) {
        *out = fr_any_object(array);
        status = 0;
      }
      goto done;
    } else {
      fail(p, "Expecting ',' delimiter", NULL);
      goto done;
    }
  }
  fail(p, "Syntax error near", NULL);
done:
  for (i = 0; i < n; ++i) fr_any_release(&items[i]);
  free(items);
  return status;
}

static int parse_object(Parser* p, TVMFFIAny* out) {
  FrKV* pairs = NULL;
  size_t n = 0, capacity = 0, i;
  int status = -1;
  p->cur++;
  skip_spaces(p);
  if (peek(p) == -1) return fail(p, "Expecting property name enclosed in double quotes", NULL);
  if (peek(p) == '}') {
    void* map = fr_map_new(kTVMFFIMap);
    p->cur++;
    if (map == NULL) return -1;
    *out = fr_any_object(map);
    return 0;
  }
  while (peek(p) != -1) {
    if (peek(p) != '"') {
      fail(p, "Expecting property name enclosed in double quotes", NULL);
      goto done;
    }
    if (n == capacity) {
      FrKV* grown;
      capacity = capacity == 0 ? 8 : capacity * 2;
      grown = (FrKV*)realloc(pairs, capacity * sizeof(FrKV));
      if (grown == NULL) {
        fr_raise_oom();
        goto done;
      }
      pairs = grown;
    }
    if (parse_string(p, &pairs[n].key) != 0) goto done;
    skip_spaces(p);
    if (peek(p) != ':') {
      fr_any_release(&pairs[n].key);
      fail(p, "Expecting ':' delimiter", NULL);
      goto done;
    }
    p->cur++;
    if (parse_value(p, &pairs[n].value) != 0) {
      fr_any_release(&pairs[n].key);
      goto done;
    }
    n++;
    skip_spaces(p);
    if (peek(p) == '}') {
      void* map;
      p->cur++;
      map = fr_map_from_range(kTVMFFIMap, pairs, n);
      if (map != NULL) {
        *out = fr_any_object(map);
        status = 0;
      }
      goto done;
    }
    if (peek(p) != ',') {
      fail(p, "Expecting ',' delimiter", NULL);
      goto done;
    }
    p->cur++;
    skip_spaces(p);
  }
  fail(p, "Syntax error near", NULL);
done:
  for (i = 0; i < n; ++i) {
    fr_any_release(&pairs[i].key);
    fr_any_release(&pairs[i].value);
  }
  free(pairs);
  return status;
}

static int parse_value(Parser* p, TVMFFIAny* out) {
  const char* start;
  int c, status;
  skip_spaces(p);
  start = p->cur;
  c = peek(p);
  if (c == -1) return fail(p, "Expecting value", NULL);
  if (c == '"') return parse_string(p, out);
  if (c == '{' || c == '[') {
    if (p->depth >= FR_S_MAX_DEPTH || tvm_ffi_runtime_stack_low()) return fr_s_too_deep("ffi.json.Parse");
    p->depth++;
    status = c == '{' ? parse_object(p, out) : parse_array(p, out);
    p->depth--;
    return status;
  }
  if (c == 't' || c == 'f' || c == 'n') {
    const char* literal = c == 't' ? "rue" : c == 'f' ? "alse" : "ull";
    p->cur++;
    if (!match(p, literal)) return fail(p, "Expecting value", start);
    *out = c == 'n' ? fr_any_none() : fr_any_bool(c == 't');
    return 0;
  }
  return parse_number(p, out);
}

int fr_json_parse(const char* data, size_t size, TVMFFIAny* out) {
  Parser p;
  p.begin = p.cur = p.line_begin = data;
  p.end = data + size;
  p.line = 1;
  p.depth = 0;
  if (parse_value(&p, out) != 0) return -1;
  skip_spaces(&p);
  if (peek(&p) != -1) {
    fr_any_release(out);
    return fail(&p, "Extra data", NULL);
  }
  return 0;
}

/* ------------------------------------------------------------ writing */

typedef struct {
  int64_t indent;
  int64_t level;
  FrBuf* out;
  void** active_lists; /* Lists being written */
  size_t n_active;
  size_t cap_active;
  int depth;
} Writer;

static void write_escaped(FrBuf* out, TVMFFIByteArray text) {
  size_t i;
  fr_buf_puts(out, "\"");
  for (i = 0; i < text.size; ++i) {
    unsigned char c = (unsigned char)text.data[i];
    const char* escape = c == '"' ? "\\\"" : c == '\\' ? "\\\\" : c == '/' ? "\\/"
                       : c == '\b' ? "\\b" : c == '\f' ? "\\f" : c == '\n' ? "\\n"
                       : c == '\r' ? "\\r" : c == '\t' ? "\\t" : NULL;
    if (escape != NULL) fr_buf_puts(out, escape);
    else if (c < 0x20 || c == 0x7F) fr_buf_printf(out, "\\u%04x", c);
    else fr_buf_append(out, (const char*)&c, 1);
  }
  fr_buf_puts(out, "\"");
}

static void write_float(FrBuf* out, double value) {
  double int_part;
  if (isnan(value)) fr_buf_puts(out, "NaN");
  else if (isinf(value)) fr_buf_puts(out, value < 0 ? "-Infinity" : "Infinity");
  else if (fabs(value) < 9007199254740992.0 && modf(value, &int_part) == 0) {
    fr_buf_printf(out, "%.1f", int_part);
  } else {
    fr_buf_printf(out, "%.17g", value);
  }
}

static void newline(Writer* w) {
  int64_t i;
  fr_buf_puts(w->out, "\n");
  for (i = 0; i < w->level; ++i) fr_buf_puts(w->out, " ");
}

static int write_value(Writer* w, const TVMFFIAny* value);

static int write_member(Writer* w, const FrKV* kv) {
  TVMFFIByteArray key;
  if (kv->key.type_index != kTVMFFISmallStr && kv->key.type_index != kTVMFFIStr) {
    return fr_raise("ValueError", "Expect key to be string, got `%s`",
                    fr_type_key_of(kv->key.type_index));
  }
  fr_any_str_view(&kv->key, 0, &key);
  write_escaped(w->out, key);
  fr_buf_puts(w->out, w->indent != 0 ? ": " : ":");
  return write_value(w, &kv->value);
}

static int write_container(Writer* w, const TVMFFIAny* value) {
  int32_t ti = value->type_index;
  int is_map = ti == kTVMFFIMap, status = 0;
  uint64_t count = 0, it, end = 0;
  int64_t i;
  if (ti == kTVMFFIList) {
    size_t k;
    for (k = 0; k < w->n_active; ++k) {
      if (w->active_lists[k] == value->v_obj) {
        return fr_raise("ValueError", "Cycle detected: List contains itself");
      }
    }
    if (w->n_active == w->cap_active) {
      size_t capacity = w->cap_active == 0 ? 8 : w->cap_active * 2;
      void** grown = (void**)realloc(w->active_lists, capacity * sizeof(void*));
      if (grown == NULL) return fr_raise_oom();
      w->active_lists = grown;
      w->cap_active = capacity;
    }
    w->active_lists[w->n_active++] = value->v_obj;
  }
  fr_buf_puts(w->out, is_map ? "{" : "[");
  w->level += w->indent;
  if (is_map) {
    end = fr_map_end(value->v_obj);
    for (it = fr_map_begin(value->v_obj); status == 0 && it != end;
         it = fr_map_next(value->v_obj, it), ++count) {
      if (count != 0) fr_buf_puts(w->out, ",");
      if (w->indent != 0) newline(w);
      status = write_member(w, fr_map_entry(value->v_obj, it));
    }
  } else {
    for (i = 0; status == 0 && i < fr_seq_size(value->v_obj); ++i) {
      if (i != 0) fr_buf_puts(w->out, ",");
      if (w->indent != 0) newline(w);
      status = write_value(w, &fr_seq_items(value->v_obj)[i]);
    }
  }
  if (status != 0) return -1;
  w->level -= w->indent;
  if (w->indent != 0) newline(w);
  fr_buf_puts(w->out, is_map ? "}" : "]");
  if (ti == kTVMFFIList) w->n_active--;
  return 0;
}

static int write_value(Writer* w, const TVMFFIAny* value) {
  int32_t ti = value->type_index;
  int status;
  switch (ti) {
    case kTVMFFINone:
      fr_buf_puts(w->out, "null");
      return 0;
    case kTVMFFIBool:
      fr_buf_puts(w->out, value->v_int64 ? "true" : "false");
      return 0;
    case kTVMFFIInt:
      fr_buf_printf(w->out, "%" PRId64, value->v_int64);
      return 0;
    case kTVMFFIFloat:
      write_float(w->out, value->v_float64);
      return 0;
    case kTVMFFISmallStr:
    case kTVMFFIStr: {
      TVMFFIByteArray text;
      fr_any_str_view(value, 0, &text);
      write_escaped(w->out, text);
      return 0;
    }
    case kTVMFFIArray:
    case kTVMFFIList:
    case kTVMFFIMap:
      if (w->depth >= FR_S_MAX_DEPTH || tvm_ffi_runtime_stack_low()) return fr_s_too_deep("ffi.json.Stringify");
      w->depth++;
      status = write_container(w, value);
      w->depth--;
      return status;
    default:
      return fr_raise("ValueError", "Unsupported type: `%s`", fr_type_key_of(ti));
  }
}

int fr_json_stringify(const TVMFFIAny* value, int64_t indent, FrBuf* out) {
  Writer w;
  int status;
  memset(&w, 0, sizeof(w));
  w.indent = indent;
  w.out = out;
  status = write_value(&w, value);
  free(w.active_lists);
  if (status == 0 && out->failed) return fr_raise_oom();
  return status;
}

/* ------------------------------------------------------------ globals */

static int json_parse(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  TVMFFIByteArray text;
  (void)ctx;
  fr_any_str_view(&args[0].value, 0, &text);
  return fr_json_parse(text.data, text.size, rv);
}

static int json_stringify(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  FrBuf out;
  int64_t indent = args[1].value.type_index == kTVMFFINone ? 0 : args[1].value.v_int64;
  int status;
  (void)ctx;
  fr_buf_init(&out);
  status = fr_json_stringify(&args[0].value, indent, &out);
  if (status == 0) status = fr_string_from_bytes(fr_buf_cstr(&out), out.size, rv);
  fr_buf_free(&out);
  return status;
}

int fr_json_text_globals(void) {
  static const FrBuiltin kBuiltins[] = {
      {"ffi.json.Parse", json_parse, NULL, 1, {FR_T_STR}, FR_T_ANY},
      {"ffi.json.Stringify", json_stringify, NULL, 2, {FR_T_ANY, FR_T_OPT_INT}, FR_T_STR},
  };
  return fr_register_builtins(kBuiltins, 2);
}
