/*
 * dataclass_repr.c -- ffi.ReprPrint: the text of a value, upstream's bit for
 * bit (literals, escapes, devices, dtypes, addresses with
 * TVM_FFI_REPR_WITH_ADDR=1), on an explicit frame stack, remembering where each
 * finished object's text lies (Span). Separate from hash and compare: it builds text and
 * shares only the frame children and hook columns with them (dataclass_ops.c).
 *
 * Its twin in the reference runtime: tvm_ffi_ref/runtime/dataclass_repr.py.
 */
#include "dataclass.h"

#include <inttypes.h>
#include <stdio.h>

#include "containers.h"
#include "functions.h"
#include "registry.h"
#include "runtime.h"
#include "walk.h"

/* The type upstream converts a hook entry to, named in its "Cannot treat" error. */
#define SIG_REPR "(0: ffi.Object, 1: (0: AnyView) -> str) -> str"

static int is_container(int32_t ti) {
  return ti == kTVMFFIArray || ti == kTVMFFIList || ti == kTVMFFIMap || ti == kTVMFFIDict;
}

/* ------------------------------------------------------------- text */

static void append_address(FrBuf* out, const void* obj) {
  fr_buf_printf(out, "@0x%" PRIxPTR, (uintptr_t)obj);
}

static int continuation(unsigned char c) { return (c & 0xC0) == 0x80; }

static int is_ansi_param(unsigned char c) { return (c >= '0' && c <= '9') || c == ';'; }

/* A str as a double-quoted, Python-style escaped literal (upstream's EscapedStringPy). */
static void append_escaped_str(FrBuf* out, const char* data, size_t n) {
  const unsigned char* s = (const unsigned char*)data;
  size_t i = 0;
  fr_buf_puts(out, "\"");
  while (i < n) {
    unsigned char c = s[i];
    unsigned char d = i + 1 < n ? s[i + 1] : 0;
    if (c == 0x1b && d == '[') {
      size_t j = i + 2;
      while (j < n && is_ansi_param(s[j])) ++j;
      if (j < n && (s[j] == 'm' || s[j] == 'K')) {
        fr_buf_puts(out, "\\x1b[");
        fr_buf_append(out, data + i + 2, j + 1 - (i + 2));
        i = j + 1;
        continue;
      }
    }
    switch (c) {
      case '\n': fr_buf_puts(out, "\\n"); ++i; continue;
      case '\t': fr_buf_puts(out, "\\t"); ++i; continue;
      case '\r': fr_buf_puts(out, "\\r"); ++i; continue;
      case '\\': fr_buf_puts(out, "\\\\"); ++i; continue;
      case '"': fr_buf_puts(out, "\\\""); ++i; continue;
      default: break;
    }
    if (c < 0x80) {
      if (c < 0x20 || c == 0x7f) {
        fr_buf_printf(out, "\\x%02x", (unsigned)c);
      } else {
        fr_buf_append(out, data + i, 1);
      }
      ++i;
    } else if ((c & 0xE0) == 0xC0 && i + 1 < n && continuation(d)) {
      fr_buf_printf(out, "\\u%04x", (unsigned)(((c & 0x1F) << 6) | (d & 0x3F)));
      i += 2;
    } else if ((c & 0xF0) == 0xE0 && i + 2 < n && continuation(d) && continuation(s[i + 2])) {
      fr_buf_printf(out, "\\u%04x",
                    (unsigned)(((c & 0x0F) << 12) | ((d & 0x3F) << 6) | (s[i + 2] & 0x3F)));
      i += 3;
    } else if ((c & 0xF8) == 0xF0 && i + 3 < n && continuation(d) && continuation(s[i + 2]) &&
               continuation(s[i + 3])) {
      fr_buf_printf(out, "\\U%08x",
                    (unsigned)(((c & 0x07) << 18) | ((d & 0x3F) << 12) | ((s[i + 2] & 0x3F) << 6) |
                               (s[i + 3] & 0x3F)));
      i += 4;
    } else {
      fr_buf_printf(out, "\\x%02x", (unsigned)c);
      ++i;
    }
  }
  fr_buf_puts(out, "\"");
}

/* Bytes as b"...": printable ASCII as is except '"' and '\\', every other byte \xNN. */
static void append_bytes_literal(FrBuf* out, const char* data, size_t n) {
  size_t i;
  fr_buf_puts(out, "b\"");
  for (i = 0; i < n; ++i) {
    unsigned char c = (unsigned char)data[i];
    if (c >= 32 && c < 127 && c != '"' && c != '\\') {
      fr_buf_append(out, data + i, 1);
    } else {
      fr_buf_printf(out, "\\x%02x", (unsigned)c);
    }
  }
  fr_buf_puts(out, "\"");
}

static const char* device_name(int32_t device_type) {
  switch (device_type) {
    case kDLCPU: return "cpu";
    case kDLCUDA: return "cuda";
    case kDLCUDAHost: return "cuda_host";
    case kDLOpenCL: return "opencl";
    case kDLVulkan: return "vulkan";
    case kDLMetal: return "metal";
    case kDLVPI: return "vpi";
    case kDLROCM: return "rocm";
    case kDLROCMHost: return "rocm_host";
    case kDLExtDev: return "ext_dev";
    case kDLCUDAManaged: return "cuda_managed";
    case kDLOneAPI: return "oneapi";
    case kDLWebGPU: return "webgpu";
    case kDLHexagon: return "hexagon";
    case kDLMAIA: return "maia";
    case kDLTrn: return "trn";
    default: return "unknown";
  }
}

static void append_device(FrBuf* out, DLDevice device) {
  fr_buf_printf(out, "%s:%d", device_name((int32_t)device.device_type), (int)device.device_id);
}

static int append_dtype(FrBuf* out, DLDataType dtype) {
  TVMFFIAny text;
  TVMFFIByteArray bytes;
  if (fr_dtype_to_string(&dtype, &text) != 0) return -1;
  bytes = fr_text_of(&text);
  fr_buf_append(out, bytes.data, bytes.size);
  fr_any_release(&text);
  return 0;
}

/* A double as std::ostream prints it: six significant digits (%g), glibc's nan/-nan/inf. */
static void append_float(FrBuf* out, double value) { fr_buf_printf(out, "%g", value); }

/* Moves a finished text into a str value (small when at most 7 bytes). */
static int buf_to_str(FrBuf* buf, TVMFFIAny* rv) {
  if (buf->failed) return fr_raise_oom();
  return fr_string_from_bytes(fr_buf_cstr(buf), buf->size, rv);
}

/* ============================================================== repr */

/*
 * Where a finished object's text lies: a span of one of the walk's buffers. Frames write
 * straight into the buffer their parent writes to, so a parent's text contains its children's
 * in place: remembering an object's text costs a span, not a copy, and a chain nested n deep
 * is printed in O(n) time and memory (a copy per level made both O(n^2)). The buffers live
 * until the walk ends, so every span stays valid.
 */
typedef struct {
  size_t buf, offset, size;
} Span;

/* One ffi.ReprPrint call: what its frames and hook callbacks share. */
typedef struct {
  int show_addr;
  FrPtrMap state; /* object -> 0 while in progress, k + 1 when done (spans[k]) */
  Span* spans;
  size_t n_spans, cap_spans;
  FrBuf** bufs; /* the top level's, each hook callback's and each hidden field's text */
  size_t n_bufs, cap_bufs;
  FrHookCache hooks;
} ReprWalk;

typedef struct {
  FrDcChildren ch;
  void* obj;
  int32_t type_index;
  size_t idx;
  size_t buf;          /* the walk buffer its text goes to */
  size_t start;        /* where its text begins there */
  unsigned char* dup;  /* objects: the field's name repeats an earlier field's */
} ReprFrame;

typedef struct {
  ReprFrame* frames;
  size_t n;
  size_t capacity;
} ReprStack;

static int repr_run(ReprWalk* walk, const TVMFFIAny* value, size_t buf, int* framed);

static void repr_walk_free(ReprWalk* walk) {
  size_t i;
  for (i = 0; i < walk->n_bufs; ++i) {
    fr_buf_free(walk->bufs[i]);
    free(walk->bufs[i]);
  }
  free(walk->bufs);
  free(walk->spans);
  fr_ptrmap_free(&walk->state);
  fr_hook_cache_free(&walk->hooks);
}

/* A new, empty buffer of the walk: 0 and *index, or -1 (out of memory). */
static int walk_buffer(ReprWalk* walk, size_t* index) {
  FrBuf* buf;
  if (walk->n_bufs == walk->cap_bufs) {
    size_t capacity = walk->cap_bufs == 0 ? 4 : walk->cap_bufs * 2;
    FrBuf** grown = (FrBuf**)realloc(walk->bufs, capacity * sizeof(FrBuf*));
    if (grown == NULL) return fr_raise_oom();
    walk->bufs = grown;
    walk->cap_bufs = capacity;
  }
  buf = (FrBuf*)malloc(sizeof(FrBuf));
  if (buf == NULL) return fr_raise_oom();
  fr_buf_init(buf);
  *index = walk->n_bufs;
  walk->bufs[walk->n_bufs++] = buf;
  return 0;
}

/* Records that obj's text is what buffer buf holds from start on, for the next time it is met. */
static int repr_finish(ReprWalk* walk, const void* obj, size_t buf, size_t start) {
  Span span;
  if (walk->bufs[buf]->failed) return fr_raise_oom();
  if (walk->n_spans == walk->cap_spans) {
    size_t capacity = walk->cap_spans == 0 ? 16 : walk->cap_spans * 2;
    Span* grown = (Span*)realloc(walk->spans, capacity * sizeof(Span));
    if (grown == NULL) return fr_raise_oom();
    walk->spans = grown;
    walk->cap_spans = capacity;
  }
  span.buf = buf;
  span.offset = start;
  span.size = walk->bufs[buf]->size - start;
  walk->spans[walk->n_spans++] = span;
  return fr_ptrmap_put(&walk->state, obj, NULL, walk->n_spans);
}

/* Appends a remembered text to out (which may be the buffer holding it). */
static void append_span(ReprWalk* walk, FrBuf* out, const Span* span) {
  FrBuf* from = walk->bufs[span->buf];
  char* copy;
  if (from != out || out->size + span->size < out->capacity) {
    fr_buf_append(out, from->data + span->offset, span->size);
    return;
  }
  /* growing out would move the bytes being copied: take them aside first */
  copy = fr_strndup(from->data + span->offset, span->size);
  if (copy == NULL) {
    out->failed = 1;
    return;
  }
  fr_buf_append(out, copy, span->size);
  free(copy);
}

static void repr_suffix(const ReprWalk* walk, FrBuf* out, const void* obj) {
  if (walk->show_addr) append_address(out, obj);
}

static int cb_repr(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  ReprWalk* walk = (ReprWalk*)((FrWalkCallback*)ctx)->walk;
  TVMFFIAny value;
  size_t buf;
  int status;
  if (walk == NULL) return fr_dc_raise_expired_callback();
  if (walk_buffer(walk, &buf) != 0) return -1;
  if (fr_any_view_to_owned(&args[0].value, &value) != 0) return -1;
  status = repr_run(walk, &value, buf, NULL);
  fr_any_release(&value);
  return status == 0 ? buf_to_str(walk->bufs[buf], rv) : -1;
}

static const FrBuiltin kReprCallback = {"", cb_repr, NULL, 1, {FR_T_ANYVIEW}, FR_T_STR};

static int repr_hook(ReprWalk* walk, void* hook, void* obj, int32_t ti, size_t buf) {
  FrWalkCallback* cb = NULL;
  TVMFFIAny args[2], result;
  FrBuf* out = walk->bufs[buf];
  size_t start = out->size;
  void* fn;
  int status;
  if (fr_ptrmap_put(&walk->state, obj, NULL, 0) != 0) return -1;
  fn = fr_walk_callback_new(&kReprCallback, walk, &cb);
  if (fn == NULL) return -1;
  args[0] = fr_object_view(obj);
  args[1] = fr_object_view(fn);
  status = fr_call(hook, args, 2, &result);
  fr_walk_callback_done(fn, cb);
  if (status != 0 || fr_buf_append_str_result(out, &result) != 0) return -1;
  if (is_container(ti)) repr_suffix(walk, out, obj);
  return repr_finish(walk, obj, buf, start);
}

static int is_enum_instance(int32_t ti) {
  const TVMFFITypeInfo* info;
  const TVMFFITypeInfo* base;
  if (fr_dc.enum_index < 0) return 0;
  if (ti == fr_dc.enum_index) return 1;
  info = fr_type_info_or_null(ti);
  base = fr_type_info_or_null(fr_dc.enum_index);
  return info != NULL && base != NULL && info->type_depth > base->type_depth &&
         info->type_ancestors[base->type_depth]->type_index == fr_dc.enum_index;
}

/* EnumObj: header, int64 _int_index, then the String _str_index. */
#define ENUM_STR_INDEX_OFFSET (FR_HEADER_SIZE + 8)

/* Appends the text of a value that needs no frame to buffer buf: 1; 0 when it needs one; -1 on
 * error. */
static int repr_immediate(ReprWalk* walk, const TVMFFIAny* value, size_t buf) {
  FrBuf* out = walk->bufs[buf];
  int32_t ti = value->type_index;
  void* obj;
  void* hook = NULL;
  FrPtrSlot* state;
  int found;
  switch (ti) {
    case kTVMFFINone: fr_buf_puts(out, "None"); return 1;
    case kTVMFFIBool: fr_buf_puts(out, value->v_int64 != 0 ? "True" : "False"); return 1;
    case kTVMFFIInt: fr_buf_printf(out, "%" PRId64, value->v_int64); return 1;
    case kTVMFFIFloat: append_float(out, value->v_float64); return 1;
    case kTVMFFIDataType: return append_dtype(out, value->v_dtype) == 0 ? 1 : -1;
    case kTVMFFIDevice: append_device(out, value->v_device); return 1;
    case kTVMFFISmallStr: append_escaped_str(out, value->v_bytes, value->small_str_len); return 1;
    case kTVMFFISmallBytes:
      append_bytes_literal(out, value->v_bytes, value->small_str_len);
      return 1;
    default: break;
  }
  if (ti < kTVMFFIStaticObjectBegin) {
    fr_buf_puts(out, fr_type_key_of(ti));
    return 1;
  }
  obj = value->v_obj;
  if (obj == NULL) {
    fr_buf_puts(out, "None");
    return 1;
  }
  state = fr_ptrmap_find(&walk->state, obj, NULL);
  if (state != NULL) {
    if (state->value == 0) {
      fr_buf_puts(out, "...");
      repr_suffix(walk, out, obj);
    } else {
      append_span(walk, out, &walk->spans[state->value - 1]);
    }
    return 1;
  }
  if (obj == fr_missing_object_peek()) {
    fr_buf_puts(out, "<MISSING>");
    return 1;
  }
  if (obj == fr_kwargs_object_peek()) {
    fr_buf_puts(out, "<KWARGS>");
    return 1;
  }
  if (ti == kTVMFFIBigInt) {
    size_t n;
    const int64_t* words = fr_bigint_words(value, &n);
    return fr_bigint_append_decimal(out, words, n) == 0 ? 1 : -1;
  }
  if (ti == kTVMFFIStr) {
    const TVMFFIByteArray* cell = FR_CELL(obj, TVMFFIByteArray);
    append_escaped_str(out, cell->data, cell->size);
    return 1;
  }
  if (ti == kTVMFFIBytes) {
    const TVMFFIByteArray* cell = FR_CELL(obj, TVMFFIByteArray);
    append_bytes_literal(out, cell->data, cell->size);
    return 1;
  }
  if (ti == kTVMFFITensor) {
    const DLTensor* t = FR_CELL(obj, DLTensor);
    int32_t i;
    if (append_dtype(out, t->dtype) != 0) return -1;
    fr_buf_puts(out, "[");
    for (i = 0; i < t->ndim; ++i) fr_buf_printf(out, "%s%" PRId64, i > 0 ? ", " : "", t->shape[i]);
    fr_buf_puts(out, "]@");
    append_device(out, t->device);
    repr_suffix(walk, out, obj);
    return 1;
  }
  if (ti == kTVMFFIShape) {
    const TVMFFIShapeCell* cell = FR_CELL(obj, TVMFFIShapeCell);
    size_t i;
    fr_buf_puts(out, "Shape(");
    for (i = 0; i < cell->size; ++i) {
      fr_buf_printf(out, "%s%" PRId64, i > 0 ? ", " : "", cell->data[i]);
    }
    fr_buf_puts(out, ")");
    return 1;
  }
  found = fr_cached_hook(&walk->hooks, fr_dc.col_repr, ti, SIG_REPR, &hook);
  if (found < 0) return -1;
  if (found) return repr_hook(walk, hook, obj, ti, buf) == 0 ? 1 : -1;
  if (is_enum_instance(ti)) {
    const TVMFFITypeInfo* info = fr_type_info_checked(ti);
    TVMFFIByteArray name;
    size_t start = out->size;
    if (info == NULL) return -1;
    name.data = "";
    name.size = 0;
    fr_any_str_view((const TVMFFIAny*)((const char*)obj + ENUM_STR_INDEX_OFFSET), 0, &name);
    fr_buf_append(out, info->type_key.data, info->type_key.size);
    fr_buf_puts(out, ".");
    fr_buf_append(out, name.data, name.size);
    repr_suffix(walk, out, obj);
    return repr_finish(walk, obj, buf, start) == 0 ? 1 : -1;
  }
  return 0;
}

static void repr_frame_release(ReprFrame* f) {
  fr_dc_children_release(&f->ch);
  free(f->dup);
  f->dup = NULL;
}

/* Starts the frame of an object whose text goes to buffer buf: writes its opening. */
static int repr_push(ReprWalk* walk, ReprStack* st, const TVMFFIAny* value, size_t buf) {
  ReprFrame* f;
  FrBuf* out = walk->bufs[buf];
  void* obj = value->v_obj;
  int32_t ti = fr_type_index(obj);
  size_t i, j;
  if (st->n >= FR_DC_MAX_DEPTH) {
    return fr_raise("ValueError", "ObjectGraphDFS: " FR_DC_DEPTH_TEXT);
  }
  if (st->n == st->capacity) {
    size_t capacity = st->capacity == 0 ? 16 : st->capacity * 2;
    ReprFrame* grown = (ReprFrame*)realloc(st->frames, capacity * sizeof(ReprFrame));
    if (grown == NULL) return fr_raise_oom();
    st->frames = grown;
    st->capacity = capacity;
  }
  if (fr_ptrmap_put(&walk->state, obj, NULL, 0) != 0) return -1;
  f = &st->frames[st->n];
  memset(f, 0, sizeof(*f));
  f->obj = obj;
  f->type_index = ti;
  f->buf = buf;
  f->start = out->size;
  if (fr_dc_children_of(obj, ti, kTVMFFIFieldFlagBitMaskReprOff, &f->ch) != 0) return -1;
  st->n++;
  switch (ti) {
    case kTVMFFIArray: fr_buf_puts(out, "("); break;
    case kTVMFFIList: fr_buf_puts(out, "["); break;
    case kTVMFFIMap:
    case kTVMFFIDict: fr_buf_puts(out, "{"); break;
    default: {
      const TVMFFITypeInfo* info = fr_type_info_checked(ti);
      if (info == NULL) return -1;
      fr_buf_append(out, info->type_key.data, info->type_key.size);
      repr_suffix(walk, out, obj);
      if (f->ch.n > 0) {
        /* a field declared again (shadowing an ancestor's) prints once, first */
        f->dup = (unsigned char*)calloc(f->ch.n, 1);
        if (f->dup == NULL) return fr_raise_oom();
        for (i = 1; i < f->ch.n; ++i) {
          const TVMFFIByteArray* name = &f->ch.fields[i]->name;
          for (j = 0; j < i; ++j) {
            const TVMFFIByteArray* other = &f->ch.fields[j]->name;
            if (other->size == name->size &&
                (name->size == 0 || memcmp(other->data, name->data, name->size) == 0)) {
              f->dup[i] = 1;
              break;
            }
          }
        }
      }
      break;
    }
  }
  return 0;
}

/*
 * The buffer child i's text goes to, after its separator: the frame's own, or, for a field
 * that repeats an earlier one's name (which prints once), a buffer of its own that no text
 * shows (its text is still remembered, as upstream remembers it). 0, or -1 (out of memory).
 */
static int repr_child_target(ReprWalk* walk, ReprFrame* f, size_t i, size_t* target) {
  FrBuf* out = walk->bufs[f->buf];
  *target = f->buf;
  switch (f->ch.kind) {
    case FR_DC_SEQ:
      if (i > 0) fr_buf_puts(out, ", ");
      return 0;
    case FR_DC_MAP:
      if (i % 2 == 1) {
        fr_buf_puts(out, ": ");
      } else if (i > 0) {
        fr_buf_puts(out, ", ");
      }
      return 0;
    default:
      if (f->dup[i]) return walk_buffer(walk, target);
      fr_buf_puts(out, i == 0 ? "(" : ", ");
      fr_buf_append(out, f->ch.fields[i]->name.data, f->ch.fields[i]->name.size);
      fr_buf_puts(out, "=");
      return 0;
  }
}

static int repr_finalize(ReprWalk* walk, ReprFrame* f) {
  FrBuf* out = walk->bufs[f->buf];
  switch (f->ch.kind) {
    case FR_DC_SEQ:
      if (f->type_index == kTVMFFIArray) {
        fr_buf_puts(out, f->ch.n == 1 ? ",)" : ")");
      } else {
        fr_buf_puts(out, "]");
      }
      break;
    case FR_DC_MAP: fr_buf_puts(out, "}"); break;
    default:
      if (f->ch.n > 0) fr_buf_puts(out, ")");
      break;
  }
  if (is_container(f->type_index)) repr_suffix(walk, out, f->obj);
  return repr_finish(walk, f->obj, f->buf, f->start);
}

/*
 * Appends the text of an owned value to the walk's buffer buf: one run of the walk. *framed
 * (may be NULL) tells whether the value needed a frame.
 */
static int repr_run(ReprWalk* walk, const TVMFFIAny* value, size_t buf, int* framed) {
  ReprStack st = {NULL, 0, 0};
  int status = repr_immediate(walk, value, buf);
  if (framed != NULL) *framed = status == 0;
  if (status != 0) return status < 0 ? -1 : 0;
  if (repr_push(walk, &st, value, buf) != 0) goto fail;
  while (st.n > 0) {
    ReprFrame* f = &st.frames[st.n - 1];
    int pushed = 0;
    while (f->idx < f->ch.n) {
      size_t i = f->idx++, target;
      if (repr_child_target(walk, f, i, &target) != 0) goto fail;
      status = repr_immediate(walk, &f->ch.items[i], target);
      if (status < 0) goto fail;
      if (status == 0) {
        if (repr_push(walk, &st, &f->ch.items[i], target) != 0) goto fail;
        pushed = 1;
        break;
      }
    }
    if (pushed) continue;
    /* the text is in place, in its parent's buffer: finishing it copies nothing */
    if (repr_finalize(walk, f) != 0) goto fail;
    repr_frame_release(f);
    st.n--;
  }
  free(st.frames);
  return 0;
fail:
  while (st.n > 0) repr_frame_release(&st.frames[--st.n]);
  free(st.frames);
  return -1;
}

static int repr_print(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  ReprWalk walk;
  FrBuf* text;
  size_t buf = 0;
  const char* env = getenv("TVM_FFI_REPR_WITH_ADDR");
  int status, framed = 0;
  (void)ctx;
  memset(&walk, 0, sizeof(walk));
  walk.show_addr = env != NULL && strcmp(env, "1") == 0;
  status = walk_buffer(&walk, &buf);
  if (status == 0) status = repr_run(&walk, &args[0].value, buf, &framed);
  text = status == 0 ? walk.bufs[buf] : NULL;
  if (status == 0 && framed) {
    /* upstream moves the frame's std::string into a String: always an object */
    void* obj = text->failed ? NULL : fr_string_object_new(fr_buf_cstr(text), text->size);
    if (obj == NULL) {
      status = text->failed ? fr_raise_oom() : -1;
    } else {
      *rv = fr_any_object(obj);
    }
  } else if (status == 0) {
    status = buf_to_str(text, rv); /* copied from a std::string: small when it fits */
  }
  repr_walk_free(&walk);
  return status;
}

static const FrBuiltin kReprBuiltins[] = {
    {"ffi.ReprPrint", repr_print, NULL, 1, {FR_T_ANY}, FR_T_STR},
};

int fr_dataclass_repr_globals(void) {
  return fr_register_builtins(kReprBuiltins, sizeof(kReprBuiltins) / sizeof(kReprBuiltins[0]));
}
