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
#include "walk.h"

/* ------------------------------------------------------------ parsing */

typedef struct {
  const char* begin;
  const char* cur;
  const char* end;
  const char* line_begin;
  int64_t line;
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

/*
 * Arrays and objects are parsed over an explicit stack of open containers (one frame each,
 * holding the items read so far), so nesting costs heap, not C stack, and has no limit.
 */
typedef struct {
  int is_object;
  TVMFFIAny* items; /* an array's items */
  FrKV* pairs;      /* an object's members; pairs[n].key is read when has_key */
  size_t n;
  size_t capacity;
  int has_key;
} ParseFrame;

typedef struct {
  ParseFrame* frames;
  size_t n;
  size_t capacity;
} ParseStack;

static void release_frame(ParseFrame* f) {
  size_t i;
  for (i = 0; i < f->n; ++i) {
    if (f->is_object) {
      fr_any_release(&f->pairs[i].key);
      fr_any_release(&f->pairs[i].value);
    } else {
      fr_any_release(&f->items[i]);
    }
  }
  if (f->is_object && f->has_key) fr_any_release(&f->pairs[f->n].key);
  free(f->items);
  free(f->pairs);
}

/* Room in f for one more item or member; -1 with MemoryError raised. */
static int frame_room(ParseFrame* f) {
  size_t capacity;
  if (f->n < f->capacity) return 0;
  capacity = f->capacity == 0 ? 8 : f->capacity * 2;
  if (f->is_object) {
    FrKV* grown = (FrKV*)realloc(f->pairs, capacity * sizeof(FrKV));
    if (grown == NULL) return fr_raise_oom();
    f->pairs = grown;
  } else {
    TVMFFIAny* grown = (TVMFFIAny*)realloc(f->items, capacity * sizeof(TVMFFIAny));
    if (grown == NULL) return fr_raise_oom();
    f->items = grown;
  }
  f->capacity = capacity;
  return 0;
}

/* An object's next member name and its ':' (cur at the opening quote, or not a quote). */
static int parse_key(Parser* p, ParseFrame* f) {
  if (peek(p) != '"') return fail(p, "Expecting property name enclosed in double quotes", NULL);
  if (frame_room(f) != 0 || parse_string(p, &f->pairs[f->n].key) != 0) return -1;
  f->has_key = 1;
  skip_spaces(p);
  if (peek(p) != ':') return fail(p, "Expecting ':' delimiter", NULL);
  p->cur++;
  return 0;
}

/* A value that is not an array or object (cur at its first character). */
static int parse_scalar(Parser* p, TVMFFIAny* out) {
  const char* start = p->cur;
  int c = peek(p);
  if (c == -1) return fail(p, "Expecting value", NULL);
  if (c == '"') return parse_string(p, out);
  if (c == 't' || c == 'f' || c == 'n') {
    const char* literal = c == 't' ? "rue" : c == 'f' ? "alse" : "ull";
    p->cur++;
    if (!match(p, literal)) return fail(p, "Expecting value", start);
    *out = c == 'n' ? fr_any_none() : fr_any_bool(c == 't');
    return 0;
  }
  return parse_number(p, out);
}

/* Opens the array or object at cur: 1 with a new frame on top (its first member's name read),
 * 0 with *out its empty container, -1 on error. */
static int open_container(Parser* p, ParseStack* st, TVMFFIAny* out) {
  int is_object = peek(p) == '{';
  ParseFrame* f;
  p->cur++;
  skip_spaces(p);
  if (peek(p) == -1) {
    return fail(p, is_object ? "Expecting property name enclosed in double quotes"
                             : "Expecting value", NULL);
  }
  if (peek(p) == (is_object ? '}' : ']')) {
    void* empty = is_object ? fr_map_new(kTVMFFIMap) : fr_array_new(4); /* C++'s Array() */
    p->cur++;
    if (empty == NULL) return -1;
    *out = fr_any_object(empty);
    return 0;
  }
  f = (ParseFrame*)fr_s_stack_room(st->frames, st->n, &st->capacity, sizeof(ParseFrame));
  if (f == NULL) return -1;
  st->frames = f;
  f = &st->frames[st->n++];
  memset(f, 0, sizeof(*f));
  f->is_object = is_object;
  return is_object && parse_key(p, f) != 0 ? -1 : 1;
}

/* Adds value to the top frame and reads on: 1 when the next member's value follows, 0 when
 * the frame closed (*value: its container, the frame popped), -1 on error. */
static int add_and_continue(Parser* p, ParseStack* st, TVMFFIAny* value) {
  ParseFrame* f = &st->frames[st->n - 1];
  int closer = f->is_object ? '}' : ']';
  if (f->is_object) {
    f->pairs[f->n].value = *value;
    f->has_key = 0;
  } else {
    if (frame_room(f) != 0) {
      fr_any_release(value);
      return -1;
    }
    f->items[f->n] = *value;
  }
  f->n++;
  skip_spaces(p);
  if (peek(p) == closer) {
    void* container;
    p->cur++;
    container = f->is_object ? fr_map_from_range(kTVMFFIMap, f->pairs, f->n)
                             : fr_array_from_items(f->items, (int64_t)f->n, 0);
    if (container == NULL) return -1;
    release_frame(f);
    st->n--;
    *value = fr_any_object(container);
    return 0;
  }
  if (peek(p) != ',') return fail(p, "Expecting ',' delimiter", NULL);
  p->cur++;
  skip_spaces(p);
  if (peek(p) == -1) return fail(p, "Syntax error near", NULL);
  return f->is_object ? (parse_key(p, f) != 0 ? -1 : 1) : 1;
}

static int parse_value(Parser* p, TVMFFIAny* out) {
  ParseStack st = {NULL, 0, 0};
  TVMFFIAny value;
  int status = 0;
  for (;;) {
    int c;
    skip_spaces(p);
    c = peek(p);
    if (c == '[' || c == '{') {
      status = open_container(p, &st, &value);
      if (status < 0) break;
      if (status > 0) continue; /* the first member's value follows */
    } else if (parse_scalar(p, &value) != 0) {
      status = -1;
      break;
    }
    /* value is complete: hand it to the open containers, closing those that end here */
    status = 0;
    while (st.n > 0 && (status = add_and_continue(p, &st, &value)) == 0) {
    }
    if (status < 0 || st.n == 0) break;
  }
  if (status < 0) {
    while (st.n > 0) release_frame(&st.frames[--st.n]);
  } else {
    *out = value;
  }
  free(st.frames);
  return status < 0 ? -1 : 0;
}

int fr_json_parse(const char* data, size_t size, TVMFFIAny* out) {
  Parser p;
  p.begin = p.cur = p.line_begin = data;
  p.end = data + size;
  p.line = 1;
  if (parse_value(&p, out) != 0) return -1;
  skip_spaces(&p);
  if (peek(&p) != -1) {
    fr_any_release(out);
    return fail(&p, "Extra data", NULL);
  }
  return 0;
}

/* ------------------------------------------------------------ writing */

/*
 * Arrays, Lists and Maps are written over an explicit stack of open containers (one frame
 * each, with the position of its next item), so nesting costs heap, not C stack.
 */
typedef struct {
  void* obj;
  int is_map;
  int is_list;
  int64_t next;  /* sequences: the next index */
  uint64_t it;   /* maps: the next entry */
} WriteFrame;

typedef struct {
  int64_t indent;
  int64_t level;
  FrBuf* out;
  FrPtrMap active; /* Lists being written (a List met again inside itself is a cycle) */
  WriteFrame* frames;
  size_t n;
  size_t capacity;
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

/* Writes a value that is not a container; -1 (raised) for a type JSON has no form for. */
static int write_scalar(Writer* w, const TVMFFIAny* value) {
  switch (value->type_index) {
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
    default:
      return fr_raise("ValueError", "Unsupported type: `%s`", fr_type_key_of(value->type_index));
  }
}

/* Opens a container: its bracket written, a frame for its items on top. */
static int open_write(Writer* w, const TVMFFIAny* value) {
  WriteFrame* f;
  int is_list = value->type_index == kTVMFFIList;
  if (is_list) {
    if (fr_ptrmap_find(&w->active, value->v_obj, NULL) != NULL) {
      return fr_raise("ValueError", "Cycle detected: List contains itself");
    }
    if (fr_ptrmap_put(&w->active, value->v_obj, NULL, 1) != 0) return -1;
  }
  f = (WriteFrame*)fr_s_stack_room(w->frames, w->n, &w->capacity, sizeof(WriteFrame));
  if (f == NULL) return -1;
  w->frames = f;
  f = &w->frames[w->n++];
  f->obj = value->v_obj;
  f->is_map = value->type_index == kTVMFFIMap;
  f->is_list = is_list;
  f->next = 0;
  f->it = f->is_map ? fr_map_begin(value->v_obj) : 0;
  fr_buf_puts(w->out, f->is_map ? "{" : "[");
  w->level += w->indent;
  return 0;
}

/* The top frame's next item into *item (a map's key written before it): 1, 0 when it has
 * none left, -1 on error. */
static int next_item(Writer* w, WriteFrame* f, const TVMFFIAny** item) {
  int first;
  if (f->is_map) {
    const FrKV* kv;
    TVMFFIByteArray key;
    if (f->it == fr_map_end(f->obj)) return 0;
    kv = fr_map_entry(f->obj, f->it);
    first = f->it == fr_map_begin(f->obj);
    f->it = fr_map_next(f->obj, f->it);
    if (!first) fr_buf_puts(w->out, ",");
    if (w->indent != 0) newline(w);
    if (kv->key.type_index != kTVMFFISmallStr && kv->key.type_index != kTVMFFIStr) {
      return fr_raise("ValueError", "Expect key to be string, got `%s`",
                      fr_type_key_of(kv->key.type_index));
    }
    fr_any_str_view(&kv->key, 0, &key);
    write_escaped(w->out, key);
    fr_buf_puts(w->out, w->indent != 0 ? ": " : ":");
    *item = &kv->value;
    return 1;
  }
  if (f->next >= fr_seq_size(f->obj)) return 0;
  if (f->next != 0) fr_buf_puts(w->out, ",");
  if (w->indent != 0) newline(w);
  *item = &fr_seq_items(f->obj)[f->next++];
  return 1;
}

/* Closes the top frame: its bracket written, the List out of the active set. */
static void close_write(Writer* w) {
  WriteFrame* f = &w->frames[--w->n];
  w->level -= w->indent;
  if (w->indent != 0) newline(w);
  fr_buf_puts(w->out, f->is_map ? "}" : "]");
  if (f->is_list) fr_ptrmap_erase(&w->active, f->obj, NULL);
}

static int write_value(Writer* w, const TVMFFIAny* root) {
  const TVMFFIAny* value = root;
  for (;;) {
    int32_t ti = value->type_index;
    int got;
    if (ti == kTVMFFIArray || ti == kTVMFFIList || ti == kTVMFFIMap) {
      if (open_write(w, value) != 0) return -1;
    } else if (write_scalar(w, value) != 0) {
      return -1;
    }
    /* the next item of the innermost open container, closing those that are done */
    got = 0;
    while (w->n > 0 && (got = next_item(w, &w->frames[w->n - 1], &value)) == 0) close_write(w);
    if (got < 0) return -1;
    if (w->n == 0) return 0;
  }
}

int fr_json_stringify(const TVMFFIAny* value, int64_t indent, FrBuf* out) {
  Writer w;
  int status;
  memset(&w, 0, sizeof(w));
  w.indent = indent;
  w.out = out;
  status = write_value(&w, value);
  free(w.frames);
  fr_ptrmap_free(&w.active);
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
