/*
 * dataclass_ops.c -- the value-level operations behind repr(), == and hash():
 * ffi.ReprPrint, ffi.RecursiveEq/Lt/Le/Gt/Ge and ffi.RecursiveHash, and the
 * type attribute hooks that customize them.
 *
 * All three walk a value's object graph depth first. A leaf (a scalar, a
 * string, bytes, a BigInt, a Shape, a Tensor for repr, a value whose type has a
 * hook) is answered on the spot; anything else gets a frame whose children are
 * visited in order: the elements of an Array or List, key, value, key, value
 * ... of a Map or Dict in iteration order, and the reflected fields of any
 * other object (ancestors' first, read through each field's getter, skipping
 * fields whose flags carry the operation's "off" bit). The frames live on an
 * explicit stack, so deep graphs never exhaust the C stack; more than 2**20
 * frames at once are a ValueError, as upstream's kMaxTraversalStackDepth.
 *
 * Hooks are type attribute columns holding Functions:
 *   __ffi_repr__(obj, fn_repr) -> str        any object type
 *   __ffi_hash__(obj, fn_hash) -> int        any object type
 *   __ffi_eq__(lhs, rhs, fn_eq) -> bool      types from kTVMFFIStaticObjectEnd, equality
 *   __ffi_compare__(lhs, rhs, fn_cmp) -> int types from kTVMFFIStaticObjectEnd
 * fn_* runs the same operation on a nested value with the walk's state (the
 * repr cache, the hash memo, the pairs being compared), on a stack of its own.
 * BigInt registers hash, eq and compare hooks at load, as upstream's library.
 *
 * Cycles and sharing: repr caches each finished object's text and prints an
 * object met again while in progress as "..."; hash memoizes finished objects
 * and stands in the type key hash for one met again on the way down; compare
 * tracks the (lhs, rhs) pairs being compared, equal when met again in
 * equality mode and a ValueError in ordering mode.
 *
 * tvm_ffi_ref/runtime/dataclass_ops.py states every rule in prose; the text,
 * truth values, errors and hash numbers here are upstream's bit for bit
 * (src/ffi/extra/dataclass.cc is where the facts come from).
 */
#include "core.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "containers.h"
#include "functions.h"
#include "registry.h"
#include "runtime.h"
#include "walk.h"

#define MAX_STACK_DEPTH ((size_t)1 << 20)
#define STACK_LIMIT_TEXT "maximum stack depth (1048576) exceeded"

/* The hook columns, made at load (their addresses never change), and the enum base type. */
static const TVMFFITypeAttrColumn* g_col_repr = NULL;
static const TVMFFITypeAttrColumn* g_col_hash = NULL;
static const TVMFFITypeAttrColumn* g_col_eq = NULL;
static const TVMFFITypeAttrColumn* g_col_cmp = NULL;
static int32_t g_enum_index = -1;
static void* g_bigint_hash_hook = NULL; /* answered natively by the hash walk */

/* The types upstream converts a hook entry to, named in its "Cannot treat" error. */
#define SIG_REPR "(0: ffi.Object, 1: (0: AnyView) -> str) -> str"
#define SIG_HASH "(0: ffi.Object, 1: (0: AnyView) -> int) -> int"
#define SIG_EQ "(0: ffi.Object, 1: ffi.Object, 2: (0: AnyView, 1: AnyView) -> bool) -> bool"
#define SIG_CMP "(0: ffi.Object, 1: ffi.Object, 2: (0: AnyView, 1: AnyView) -> int) -> int"

/* ------------------------------------------------------------ helpers */

static int is_str(int32_t ti) { return ti == kTVMFFIStr || ti == kTVMFFISmallStr; }
static int is_bytes(int32_t ti) { return ti == kTVMFFIBytes || ti == kTVMFFISmallBytes; }
static int is_container(int32_t ti) {
  return ti == kTVMFFIArray || ti == kTVMFFIList || ti == kTVMFFIMap || ti == kTVMFFIDict;
}

/* ------------------------------------------------------------ children */

enum { K_SEQ, K_MAP, K_OBJ };

static int raise_expired_callback(void) {
  return fr_raise("RuntimeError",
                  "a dataclass hook callback was called after the hook it was given to returned");
}

/* Calls hook(args...) ; the result is owned by the caller. */
static int call_hook(void* hook, TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  return fr_call(hook, args, num_args, result);
}

/* What a single-value frame visits: owned children, and the field records of an object. */
typedef struct {
  int kind;
  TVMFFIAny* items;
  const TVMFFIFieldInfo** fields;
  size_t n;    /* children */
  size_t size; /* elements, entries or fields */
} Children;

static void children_release(Children* ch) {
  size_t i;
  for (i = 0; i < ch->n; ++i) fr_any_release(&ch->items[i]);
  free(ch->items);
  free(ch->fields);
  ch->items = NULL;
  ch->fields = NULL;
  ch->n = 0;
}

static int children_of(void* obj, int32_t ti, int64_t skip, Children* ch) {
  size_t i;
  memset(ch, 0, sizeof(*ch));
  if (ti == kTVMFFIArray || ti == kTVMFFIList) {
    int64_t n = fr_seq_size(obj);
    ch->kind = K_SEQ;
    ch->size = (size_t)n;
    if (n > 0) {
      ch->items = (TVMFFIAny*)malloc((size_t)n * sizeof(TVMFFIAny));
      if (ch->items == NULL) return fr_raise_oom();
      for (i = 0; i < (size_t)n; ++i) ch->items[i] = fr_any_copy(&fr_seq_items(obj)[i]);
      ch->n = (size_t)n;
    }
    return 0;
  }
  if (ti == kTVMFFIMap || ti == kTVMFFIDict) {
    uint64_t it, end = fr_map_end(obj), size = fr_map_size(obj);
    ch->kind = K_MAP;
    ch->size = (size_t)size;
    if (size > 0) {
      ch->items = (TVMFFIAny*)malloc((size_t)size * 2 * sizeof(TVMFFIAny));
      if (ch->items == NULL) return fr_raise_oom();
      for (it = fr_map_begin(obj); it != end; it = fr_map_next(obj, it)) {
        FrKV* kv = fr_map_entry(obj, it);
        ch->items[ch->n++] = fr_any_copy(&kv->key);
        ch->items[ch->n++] = fr_any_copy(&kv->value);
      }
    }
    return 0;
  }
  ch->kind = K_OBJ;
  if (fr_collect_fields(ti, skip, &ch->fields, &ch->size) != 0) return -1;
  if (ch->size > 0) {
    ch->items = (TVMFFIAny*)malloc(ch->size * sizeof(TVMFFIAny));
    if (ch->items == NULL) {
      children_release(ch);
      return fr_raise_oom();
    }
    for (i = 0; i < ch->size; ++i) {
      if (fr_read_field(obj, ch->fields[i], &ch->items[i]) != 0) {
        children_release(ch);
        return -1;
      }
      ch->n = i + 1;
    }
  }
  return 0;
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

typedef struct {
  char* data;
  size_t size;
} Text;

/* One ffi.ReprPrint call: what its frames and hook callbacks share. */
typedef struct {
  int show_addr;
  FrPtrMap state; /* object -> 0 while in progress, k + 1 when done (cache[k]) */
  Text* cache;
  size_t cache_size;
  size_t cache_capacity;
} ReprWalk;

typedef struct {
  Children ch;
  void* obj;
  int32_t type_index;
  size_t idx;
  FrBuf out;           /* the text so far */
  unsigned char* dup;  /* objects: the field's name repeats an earlier field's */
} ReprFrame;

typedef struct {
  ReprFrame* frames;
  size_t n;
  size_t capacity;
} ReprStack;

static int repr_run(ReprWalk* walk, const TVMFFIAny* value, FrBuf* out, int* framed);

static void repr_walk_free(ReprWalk* walk) {
  size_t i;
  for (i = 0; i < walk->cache_size; ++i) free(walk->cache[i].data);
  free(walk->cache);
  fr_ptrmap_free(&walk->state);
}

/* Records the finished text of obj (a copy) for the next time it is met. */
static int repr_finish(ReprWalk* walk, const void* obj, const char* text, size_t size) {
  Text copy;
  if (walk->cache_size == walk->cache_capacity) {
    size_t capacity = walk->cache_capacity == 0 ? 16 : walk->cache_capacity * 2;
    Text* grown = (Text*)realloc(walk->cache, capacity * sizeof(Text));
    if (grown == NULL) return fr_raise_oom();
    walk->cache = grown;
    walk->cache_capacity = capacity;
  }
  copy.data = fr_strndup(text, size);
  copy.size = size;
  if (copy.data == NULL) return fr_raise_oom();
  walk->cache[walk->cache_size++] = copy;
  return fr_ptrmap_put(&walk->state, obj, NULL, walk->cache_size);
}

static void repr_suffix(const ReprWalk* walk, FrBuf* out, const void* obj) {
  if (walk->show_addr) append_address(out, obj);
}

static int cb_repr(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  ReprWalk* walk = (ReprWalk*)((FrWalkCallback*)ctx)->walk;
  TVMFFIAny value;
  FrBuf text;
  int status;
  if (walk == NULL) return raise_expired_callback();
  if (fr_any_view_to_owned(&args[0].value, &value) != 0) return -1;
  fr_buf_init(&text);
  status = repr_run(walk, &value, &text, NULL);
  fr_any_release(&value);
  if (status == 0) status = buf_to_str(&text, rv);
  fr_buf_free(&text);
  return status;
}

static const FrBuiltin kReprCallback = {"", cb_repr, NULL, 1, {FR_T_ANYVIEW}, FR_T_STR};

static int repr_hook(ReprWalk* walk, void* hook, void* obj, int32_t ti, FrBuf* out) {
  FrWalkCallback* cb = NULL;
  TVMFFIAny args[2], result;
  TVMFFIByteArray text;
  size_t start = out->size;
  void* fn;
  int status;
  if (fr_ptrmap_put(&walk->state, obj, NULL, 0) != 0) return -1;
  fn = fr_walk_callback_new(&kReprCallback, walk, &cb);
  if (fn == NULL) return -1;
  args[0] = fr_object_view(obj);
  args[1] = fr_object_view(fn);
  status = call_hook(hook, args, 2, &result);
  fr_walk_callback_done(fn, cb);
  if (status != 0) return -1;
  if (fr_any_str_view(&result, 0, &text) != 0) {
    fr_raise("TypeError", "Cannot convert from type `%s` to `str`",
             fr_type_key_of(result.type_index));
    fr_any_release(&result);
    return -1;
  }
  fr_buf_append(out, text.data, text.size);
  fr_any_release(&result);
  if (is_container(ti)) repr_suffix(walk, out, obj);
  return repr_finish(walk, obj, out->data + start, out->size - start);
}

static int is_enum_instance(int32_t ti) {
  const TVMFFITypeInfo* info;
  const TVMFFITypeInfo* base;
  if (g_enum_index < 0) return 0;
  if (ti == g_enum_index) return 1;
  info = fr_type_info_or_null(ti);
  base = fr_type_info_or_null(g_enum_index);
  return info != NULL && base != NULL && info->type_depth > base->type_depth &&
         info->type_ancestors[base->type_depth]->type_index == g_enum_index;
}

/* EnumObj: header, int64 _int_index, then the String _str_index. */
#define ENUM_STR_INDEX_OFFSET (FR_HEADER_SIZE + 8)

/* Appends the text of a value that needs no frame: 1; 0 when it needs one; -1 on error. */
static int repr_immediate(ReprWalk* walk, const TVMFFIAny* value, FrBuf* out) {
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
      const Text* text = &walk->cache[state->value - 1];
      fr_buf_append(out, text->data, text->size);
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
  found = fr_hook_of(g_col_repr, ti, SIG_REPR, &hook);
  if (found < 0) return -1;
  if (found) return repr_hook(walk, hook, obj, ti, out) == 0 ? 1 : -1;
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
    return repr_finish(walk, obj, out->data + start, out->size - start) == 0 ? 1 : -1;
  }
  return 0;
}

static void repr_frame_release(ReprFrame* f) {
  children_release(&f->ch);
  fr_buf_free(&f->out);
  free(f->dup);
  f->dup = NULL;
}

static int repr_push(ReprWalk* walk, ReprStack* st, const TVMFFIAny* value) {
  ReprFrame* f;
  void* obj = value->v_obj;
  int32_t ti = fr_type_index(obj);
  size_t i, j;
  if (st->n >= MAX_STACK_DEPTH) {
    return fr_raise("ValueError", "ObjectGraphDFS: " STACK_LIMIT_TEXT);
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
  fr_buf_init(&f->out);
  if (children_of(obj, ti, kTVMFFIFieldFlagBitMaskReprOff, &f->ch) != 0) return -1;
  st->n++;
  switch (ti) {
    case kTVMFFIArray: fr_buf_puts(&f->out, "("); break;
    case kTVMFFIList: fr_buf_puts(&f->out, "["); break;
    case kTVMFFIMap:
    case kTVMFFIDict: fr_buf_puts(&f->out, "{"); break;
    default: {
      const TVMFFITypeInfo* info = fr_type_info_checked(ti);
      if (info == NULL) return -1;
      fr_buf_append(&f->out, info->type_key.data, info->type_key.size);
      repr_suffix(walk, &f->out, obj);
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

/* Where child i's text goes (after its separator): the frame's text, or scratch if hidden. */
static FrBuf* repr_child_target(ReprFrame* f, size_t i, FrBuf* scratch) {
  switch (f->ch.kind) {
    case K_SEQ:
      if (i > 0) fr_buf_puts(&f->out, ", ");
      return &f->out;
    case K_MAP:
      if (i % 2 == 1) {
        fr_buf_puts(&f->out, ": ");
      } else if (i > 0) {
        fr_buf_puts(&f->out, ", ");
      }
      return &f->out;
    default:
      if (f->dup[i]) {
        scratch->size = 0;
        return scratch;
      }
      fr_buf_puts(&f->out, i == 0 ? "(" : ", ");
      fr_buf_append(&f->out, f->ch.fields[i]->name.data, f->ch.fields[i]->name.size);
      fr_buf_puts(&f->out, "=");
      return &f->out;
  }
}

static int repr_finalize(ReprWalk* walk, ReprFrame* f) {
  switch (f->ch.kind) {
    case K_SEQ:
      if (f->type_index == kTVMFFIArray) {
        fr_buf_puts(&f->out, f->ch.n == 1 ? ",)" : ")");
      } else {
        fr_buf_puts(&f->out, "]");
      }
      break;
    case K_MAP: fr_buf_puts(&f->out, "}"); break;
    default:
      if (f->ch.n > 0) fr_buf_puts(&f->out, ")");
      break;
  }
  if (is_container(f->type_index)) repr_suffix(walk, &f->out, f->obj);
  if (f->out.failed) return fr_raise_oom();
  return repr_finish(walk, f->obj, fr_buf_cstr(&f->out), f->out.size);
}

/*
 * Appends the text of an owned value to out: one run of the walk. *framed
 * (may be NULL) tells whether the value needed a frame.
 */
static int repr_run(ReprWalk* walk, const TVMFFIAny* value, FrBuf* out, int* framed) {
  ReprStack st = {NULL, 0, 0};
  FrBuf scratch;
  int status = repr_immediate(walk, value, out);
  if (framed != NULL) *framed = status == 0;
  if (status != 0) return status < 0 ? -1 : 0;
  fr_buf_init(&scratch);
  if (repr_push(walk, &st, value) != 0) goto fail;
  while (st.n > 0) {
    ReprFrame* f = &st.frames[st.n - 1];
    ReprFrame* parent;
    int pushed = 0;
    while (f->idx < f->ch.n) {
      size_t i = f->idx++;
      FrBuf* target = repr_child_target(f, i, &scratch);
      status = repr_immediate(walk, &f->ch.items[i], target);
      if (status < 0) goto fail;
      if (status == 0) {
        if (repr_push(walk, &st, &f->ch.items[i]) != 0) goto fail;
        pushed = 1;
        break;
      }
    }
    if (pushed) continue;
    if (repr_finalize(walk, f) != 0) goto fail;
    if (st.n == 1) {
      fr_buf_append(out, fr_buf_cstr(&f->out), f->out.size);
      repr_frame_release(f);
      st.n = 0;
      break;
    }
    parent = &st.frames[st.n - 2];
    if (parent->ch.kind != K_OBJ || !parent->dup[parent->idx - 1]) {
      fr_buf_append(&parent->out, fr_buf_cstr(&f->out), f->out.size);
    }
    repr_frame_release(f);
    st.n--;
  }
  free(st.frames);
  fr_buf_free(&scratch);
  return 0;
fail:
  while (st.n > 0) repr_frame_release(&st.frames[--st.n]);
  free(st.frames);
  fr_buf_free(&scratch);
  return -1;
}

static int repr_print(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  ReprWalk walk;
  FrBuf text;
  const char* env = getenv("TVM_FFI_REPR_WITH_ADDR");
  int status, framed = 0;
  (void)ctx;
  memset(&walk, 0, sizeof(walk));
  walk.show_addr = env != NULL && strcmp(env, "1") == 0;
  fr_buf_init(&text);
  status = repr_run(&walk, &args[0].value, &text, &framed);
  if (status == 0 && framed) {
    /* upstream moves the frame's std::string into a String: always an object */
    void* obj = text.failed ? NULL : fr_string_object_new(fr_buf_cstr(&text), text.size);
    if (obj == NULL) {
      status = text.failed ? fr_raise_oom() : -1;
    } else {
      *rv = fr_any_object(obj);
    }
  } else if (status == 0) {
    status = buf_to_str(&text, rv); /* copied from a std::string: small when it fits */
  }
  fr_buf_free(&text);
  repr_walk_free(&walk);
  return status;
}

/* ============================================================== hash */

/* One ffi.RecursiveHash call: the memo and the objects on the way down. */
typedef struct {
  FrPtrMap memo;     /* object -> its hash */
  FrPtrMap on_stack; /* objects being hashed */
} HashWalk;

typedef struct {
  Children ch;
  void* obj;
  size_t idx;
  uint64_t hash;
  uint64_t key_hash;
  uint64_t* entries; /* maps: fr_hash_combine(key hash, value hash) per entry */
  size_t num_entries;
} HashFrame;

typedef struct {
  HashFrame* frames;
  size_t n;
  size_t capacity;
} HashStack;

static int hash_run(HashWalk* walk, const TVMFFIAny* value, uint64_t* out);

static uint64_t hash_bytes_value(int32_t kind, const TVMFFIAny* value) {
  TVMFFIByteArray bytes = fr_text_of(value);
  return fr_hash_combine((uint64_t)kind, fr_stable_hash_bytes(bytes.data, bytes.size));
}

static uint64_t hash_pod(const TVMFFIAny* value) {
  int32_t ti = value->type_index;
  switch (ti) {
    case kTVMFFIBool: return fr_hash_combine((uint64_t)ti, value->v_int64 != 0 ? 1 : 0);
    case kTVMFFIInt: return fr_hash_combine((uint64_t)ti, (uint64_t)value->v_int64);
    case kTVMFFIFloat: {
      double v = value->v_float64;
      uint64_t bits;
      if (isnan(v)) {
        bits = 0x7FF8000000000000ULL; /* the canonical quiet NaN */
      } else if (v == 0.0) {
        bits = 0; /* -0.0 hashes as 0.0 */
      } else {
        memcpy(&bits, &v, sizeof(bits));
      }
      return fr_hash_combine((uint64_t)ti, bits);
    }
    case kTVMFFIDataType: {
      uint64_t h = fr_hash_combine((uint64_t)ti, (uint64_t)value->v_dtype.code);
      h = fr_hash_combine(h, (uint64_t)value->v_dtype.bits);
      return fr_hash_combine(h, (uint64_t)value->v_dtype.lanes);
    }
    case kTVMFFIDevice: {
      uint64_t h = fr_hash_combine((uint64_t)ti, (uint64_t)(int64_t)(int32_t)value->v_device.device_type);
      return fr_hash_combine(h, (uint64_t)(int64_t)value->v_device.device_id);
    }
    default: return fr_hash_combine((uint64_t)ti, value->v_uint64);
  }
}

static int cb_hash(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  HashWalk* walk = (HashWalk*)((FrWalkCallback*)ctx)->walk;
  TVMFFIAny value;
  uint64_t h;
  int status;
  if (walk == NULL) return raise_expired_callback();
  if (fr_any_view_to_owned(&args[0].value, &value) != 0) return -1;
  status = hash_run(walk, &value, &h);
  fr_any_release(&value);
  if (status == 0) *rv = fr_any_int((int64_t)h);
  return status;
}

static const FrBuiltin kHashCallback = {"", cb_hash, NULL, 1, {FR_T_ANYVIEW}, FR_T_INT};

static int hash_hook(HashWalk* walk, void* hook, void* obj, uint64_t* out) {
  FrWalkCallback* cb = NULL;
  TVMFFIAny args[2], result;
  int64_t value;
  void* fn;
  int status;
  if (fr_ptrmap_put(&walk->on_stack, obj, NULL, 1) != 0) return -1;
  fn = fr_walk_callback_new(&kHashCallback, walk, &cb);
  if (fn == NULL) return -1;
  args[0] = fr_object_view(obj);
  args[1] = fr_object_view(fn);
  status = call_hook(hook, args, 2, &result);
  fr_walk_callback_done(fn, cb);
  if (status != 0 || fr_result_as_int(&result, "int", &value) != 0) return -1;
  *out = (uint64_t)value;
  if (fr_ptrmap_put(&walk->memo, obj, NULL, *out) != 0) return -1;
  fr_ptrmap_erase(&walk->on_stack, obj, NULL);
  return 0;
}

/* The hash of a value that needs no frame: 1 and *out; 0 when it needs one; -1 on error. */
static int hash_immediate(HashWalk* walk, const TVMFFIAny* value, uint64_t* out) {
  int32_t ti = value->type_index;
  const TVMFFITypeInfo* info;
  FrPtrSlot* slot;
  void* obj;
  void* hook = NULL;
  int found;
  if (ti == kTVMFFINone) {
    *out = fr_hash_combine(0, 0);
    return 1;
  }
  if (is_str(ti)) {
    *out = hash_bytes_value(kTVMFFIStr, value);
    return 1;
  }
  if (is_bytes(ti)) {
    *out = hash_bytes_value(kTVMFFIBytes, value);
    return 1;
  }
  if (ti < kTVMFFIStaticObjectBegin) {
    *out = hash_pod(value);
    return 1;
  }
  obj = value->v_obj;
  if (obj == NULL) {
    *out = fr_hash_combine(0, 0);
    return 1;
  }
  slot = fr_ptrmap_find(&walk->memo, obj, NULL);
  if (slot != NULL) {
    *out = slot->value;
    return 1;
  }
  if (fr_ptrmap_find(&walk->on_stack, obj, NULL) != NULL) {
    /* a cycle: the type key hash stands in for the object being hashed */
    info = fr_type_info_checked(ti);
    if (info == NULL) return -1;
    *out = info->type_key_hash;
    return 1;
  }
  if (ti == kTVMFFIShape) {
    const TVMFFIShapeCell* cell = FR_CELL(obj, TVMFFIShapeCell);
    uint64_t h;
    size_t i;
    info = fr_type_info_checked(ti);
    if (info == NULL) return -1;
    h = fr_hash_combine(info->type_key_hash, (uint64_t)cell->size);
    for (i = 0; i < cell->size; ++i) h = fr_hash_combine(h, (uint64_t)cell->data[i]);
    *out = h;
    return fr_ptrmap_put(&walk->memo, obj, NULL, h) == 0 ? 1 : -1;
  }
  found = fr_hook_of(g_col_hash, ti, SIG_HASH, &hook);
  if (found < 0) return -1;
  if (found) {
    if (hook == g_bigint_hash_hook && ti == kTVMFFIBigInt) {
      /* BigInt's own hook, answered here: StableHashBytes of its words */
      size_t n;
      const int64_t* words = fr_bigint_words(value, &n);
      *out = fr_stable_hash_bytes(words, n * sizeof(int64_t));
      return fr_ptrmap_put(&walk->memo, obj, NULL, *out) == 0 ? 1 : -1;
    }
    return hash_hook(walk, hook, obj, out) == 0 ? 1 : -1;
  }
  if (ti >= kTVMFFIStaticObjectEnd &&
      (fr_type_attr_entry(g_col_eq, ti).type_index != kTVMFFINone ||
       fr_type_attr_entry(g_col_cmp, ti).type_index != kTVMFFINone)) {
    info = fr_type_info_checked(ti);
    if (info == NULL) return -1;
    return fr_raise("ValueError",
                    "RecursiveHash: type '%.*s' defines __ffi_eq__ or __ffi_compare__ but not "
                    "__ffi_hash__. Add a __ffi_hash__ hook to maintain the invariant "
                    "RecursiveEq(a,b) => RecursiveHash(a)==RecursiveHash(b).",
                    (int)info->type_key.size, info->type_key.data);
  }
  return 0;
}

static void hash_frame_release(HashFrame* f) {
  children_release(&f->ch);
  free(f->entries);
  f->entries = NULL;
}

static int hash_push(HashWalk* walk, HashStack* st, const TVMFFIAny* value) {
  HashFrame* f;
  void* obj = value->v_obj;
  int32_t ti = fr_type_index(obj);
  const TVMFFITypeInfo* info;
  if (st->n >= MAX_STACK_DEPTH) {
    return fr_raise("ValueError", "ObjectGraphDFS: " STACK_LIMIT_TEXT);
  }
  if (st->n == st->capacity) {
    size_t capacity = st->capacity == 0 ? 16 : st->capacity * 2;
    HashFrame* grown = (HashFrame*)realloc(st->frames, capacity * sizeof(HashFrame));
    if (grown == NULL) return fr_raise_oom();
    st->frames = grown;
    st->capacity = capacity;
  }
  if (fr_ptrmap_put(&walk->on_stack, obj, NULL, 1) != 0) return -1;
  f = &st->frames[st->n];
  memset(f, 0, sizeof(*f));
  f->obj = obj;
  if (children_of(obj, ti,
                  kTVMFFIFieldFlagBitMaskHashOff | kTVMFFIFieldFlagBitMaskCompareOff,
                  &f->ch) != 0) {
    return -1;
  }
  st->n++;
  info = fr_type_info_checked(ti);
  if (info == NULL) return -1;
  f->hash = f->ch.kind == K_OBJ ? info->type_key_hash
                                : fr_hash_combine(info->type_key_hash, (uint64_t)f->ch.size);
  if (f->ch.kind == K_MAP && f->ch.size > 0) {
    f->entries = (uint64_t*)malloc(f->ch.size * sizeof(uint64_t));
    if (f->entries == NULL) return fr_raise_oom();
  }
  return 0;
}

static void hash_feed(HashFrame* f, size_t i, uint64_t h) {
  switch (f->ch.kind) {
    case K_SEQ: f->hash = fr_hash_combine(f->hash, fr_hash_combine(h, (uint64_t)i)); break;
    case K_MAP:
      if (i % 2 == 0) {
        f->key_hash = h;
      } else {
        f->entries[f->num_entries++] = fr_hash_combine(f->key_hash, h);
      }
      break;
    default: f->hash = fr_hash_combine(f->hash, h); break;
  }
}

static int compare_u64(const void* a, const void* b) {
  uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
  return (x > y) - (x < y);
}

/* Finishes the top frame: its hash (a map's entries sorted first), memoized. */
static int hash_complete(HashWalk* walk, HashFrame* f, uint64_t* out) {
  size_t i;
  if (f->ch.kind == K_MAP) {
    qsort(f->entries, f->num_entries, sizeof(uint64_t), compare_u64);
    for (i = 0; i < f->num_entries; ++i) f->hash = fr_hash_combine(f->hash, f->entries[i]);
  }
  *out = f->hash;
  if (fr_ptrmap_put(&walk->memo, f->obj, NULL, f->hash) != 0) return -1;
  fr_ptrmap_erase(&walk->on_stack, f->obj, NULL);
  return 0;
}

/* The hash of an owned value: one run of the walk. */
static int hash_run(HashWalk* walk, const TVMFFIAny* value, uint64_t* out) {
  HashStack st = {NULL, 0, 0};
  uint64_t h;
  int status = hash_immediate(walk, value, out);
  if (status != 0) return status < 0 ? -1 : 0;
  if (hash_push(walk, &st, value) != 0) goto fail;
  while (st.n > 0) {
    HashFrame* f = &st.frames[st.n - 1];
    int pushed = 0;
    while (f->idx < f->ch.n) {
      size_t i = f->idx++;
      status = hash_immediate(walk, &f->ch.items[i], &h);
      if (status < 0) goto fail;
      if (status == 0) {
        if (hash_push(walk, &st, &f->ch.items[i]) != 0) goto fail;
        pushed = 1;
        break;
      }
      hash_feed(f, i, h);
    }
    if (pushed) continue;
    if (hash_complete(walk, f, &h) != 0) goto fail;
    hash_frame_release(f);
    st.n--;
    if (st.n == 0) {
      *out = h;
      break;
    }
    f = &st.frames[st.n - 1];
    hash_feed(f, f->idx - 1, h);
  }
  free(st.frames);
  return 0;
fail:
  while (st.n > 0) hash_frame_release(&st.frames[--st.n]);
  free(st.frames);
  return -1;
}

static int recursive_hash(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  HashWalk walk;
  uint64_t h;
  int status;
  (void)ctx;
  memset(&walk, 0, sizeof(walk));
  status = hash_run(&walk, &args[0].value, &h);
  fr_ptrmap_free(&walk.memo);
  fr_ptrmap_free(&walk.on_stack);
  if (status == 0) *rv = fr_any_int((int64_t)h);
  return status;
}

/* =========================================================== compare */

/* One comparison call: the mode and the (lhs, rhs) object pairs being compared. */
typedef struct {
  int eq_only;
  FrPtrMap on_stack;
} CmpWalk;

typedef struct {
  int kind;
  TVMFFIAny* items; /* owned: lhs of pair i at 2i, rhs at 2i + 1 */
  size_t n;         /* pairs */
  size_t idx;
  uint64_t lhs_size;
  uint64_t rhs_size;
  void* lhs_obj;
  void* rhs_obj;
} CmpFrame;

typedef struct {
  CmpFrame* frames;
  size_t n;
  size_t capacity;
} CmpStack;

static int cmp_run(CmpWalk* walk, const TVMFFIAny* lhs, const TVMFFIAny* rhs, int32_t* out);

/* Upstream's Bytes::memncmp: bytes as (signed, on x86-64) char, then the shorter first. */
static int32_t compare_chars(TVMFFIByteArray a, TVMFFIByteArray b) {
  size_t i, n = a.size < b.size ? a.size : b.size;
  if (a.data == b.data && a.size == b.size) return 0;
  for (i = 0; i < n; ++i) {
    signed char x = (signed char)a.data[i], y = (signed char)b.data[i];
    if (x < y) return -1;
    if (x > y) return 1;
  }
  return a.size < b.size ? -1 : (a.size > b.size ? 1 : 0);
}

/* Signed order of two's-complement words (upstream's int_ops::CompareFallback). */
static int32_t compare_words(const int64_t* a, size_t na, const int64_t* b, size_t nb) {
  int neg_a = a[na - 1] < 0, neg_b = b[nb - 1] < 0;
  uint64_t sign_a = neg_a ? ~(uint64_t)0 : 0, sign_b = neg_b ? ~(uint64_t)0 : 0;
  size_t i;
  if (neg_a != neg_b) return neg_a ? -1 : 1;
  for (i = na > nb ? na : nb; i != 0; --i) {
    uint64_t x = i <= na ? (uint64_t)a[i - 1] : sign_a;
    uint64_t y = i <= nb ? (uint64_t)b[i - 1] : sign_b;
    if (x != y) return x > y ? 1 : -1;
  }
  return 0;
}

static int words_equal(const int64_t* a, size_t na, const int64_t* b, size_t nb) {
  return na == nb && memcmp(a, b, na * sizeof(int64_t)) == 0;
}

/* In equality mode "unequal" (1); in ordering mode a TypeError. 1 and *out, or -1. */
static int cmp_cannot_order(const CmpWalk* walk, int32_t* out, const char* message) {
  if (walk->eq_only) {
    *out = 1;
    return 1;
  }
  return fr_raise("TypeError", "%s", message);
}

static int cmp_pod(const CmpWalk* walk, const TVMFFIAny* lhs, const TVMFFIAny* rhs, int32_t* out) {
  switch (lhs->type_index) {
    case kTVMFFIBool: *out = (int32_t)(lhs->v_int64 != 0) - (int32_t)(rhs->v_int64 != 0); return 1;
    case kTVMFFIInt:
      *out = lhs->v_int64 < rhs->v_int64 ? -1 : (lhs->v_int64 > rhs->v_int64 ? 1 : 0);
      return 1;
    case kTVMFFIFloat: {
      double a = lhs->v_float64, b = rhs->v_float64;
      if (isnan(a) || isnan(b)) {
        if (!walk->eq_only) return fr_raise("TypeError", "Cannot order NaN values");
        *out = isnan(a) && isnan(b) ? 0 : 1;
        return 1;
      }
      *out = a < b ? -1 : (a > b ? 1 : 0);
      return 1;
    }
    case kTVMFFIDataType: {
      DLDataType a = lhs->v_dtype, b = rhs->v_dtype;
      if (a.code != b.code) *out = a.code < b.code ? -1 : 1;
      else if (a.bits != b.bits) *out = a.bits < b.bits ? -1 : 1;
      else if (a.lanes != b.lanes) *out = a.lanes < b.lanes ? -1 : 1;
      else *out = 0;
      return 1;
    }
    case kTVMFFIDevice: {
      int32_t ta = (int32_t)lhs->v_device.device_type, tb = (int32_t)rhs->v_device.device_type;
      int32_t ia = lhs->v_device.device_id, ib = rhs->v_device.device_id;
      if (ta != tb) *out = ta < tb ? -1 : 1;
      else if (ia != ib) *out = ia < ib ? -1 : 1;
      else *out = 0;
      return 1;
    }
    default: {
      char message[128];
      if (lhs->zero_padding == rhs->zero_padding && lhs->v_int64 == rhs->v_int64) {
        *out = 0;
        return 1;
      }
      snprintf(message, sizeof(message), "Cannot order values of type %s",
               fr_type_key_of(lhs->type_index));
      return cmp_cannot_order(walk, out, message);
    }
  }
}

static int cb_eq(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  CmpWalk* walk = (CmpWalk*)((FrWalkCallback*)ctx)->walk;
  TVMFFIAny lhs, rhs;
  int32_t result;
  int status;
  if (walk == NULL) return raise_expired_callback();
  if (fr_any_view_to_owned(&args[0].value, &lhs) != 0) return -1;
  if (fr_any_view_to_owned(&args[1].value, &rhs) != 0) {
    fr_any_release(&lhs);
    return -1;
  }
  status = cmp_run(walk, &lhs, &rhs, &result);
  fr_any_release(&lhs);
  fr_any_release(&rhs);
  if (status == 0) *rv = fr_any_bool(result == 0);
  return status;
}

static int cb_cmp(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  CmpWalk* walk = (CmpWalk*)((FrWalkCallback*)ctx)->walk;
  TVMFFIAny lhs, rhs;
  int32_t result;
  int status;
  if (walk == NULL) return raise_expired_callback();
  if (fr_any_view_to_owned(&args[0].value, &lhs) != 0) return -1;
  if (fr_any_view_to_owned(&args[1].value, &rhs) != 0) {
    fr_any_release(&lhs);
    return -1;
  }
  status = cmp_run(walk, &lhs, &rhs, &result);
  fr_any_release(&lhs);
  fr_any_release(&rhs);
  if (status == 0) *rv = fr_any_int(result);
  return status;
}

static const FrBuiltin kEqCallback = {"", cb_eq, NULL, 2, {FR_T_ANYVIEW, FR_T_ANYVIEW},
                                      FR_T_BOOL};
static const FrBuiltin kCmpCallback = {"", cb_cmp, NULL, 2, {FR_T_ANYVIEW, FR_T_ANYVIEW},
                                       FR_T_INT};

/* Calls an __ffi_eq__ (is_eq) or __ffi_compare__ hook on two objects of one type. */
static int cmp_call_hook(CmpWalk* walk, void* hook, int is_eq, void* lhs, void* rhs,
                         int32_t* out) {
  FrWalkCallback* cb = NULL;
  TVMFFIAny args[3], result;
  int64_t value;
  void* fn;
  int status;
  if (fr_ptrmap_put(&walk->on_stack, lhs, rhs, 1) != 0) return -1;
  fn = fr_walk_callback_new(is_eq ? &kEqCallback : &kCmpCallback, walk, &cb);
  if (fn == NULL) return -1;
  args[0] = fr_object_view(lhs);
  args[1] = fr_object_view(rhs);
  args[2] = fr_object_view(fn);
  status = call_hook(hook, args, 3, &result);
  fr_walk_callback_done(fn, cb);
  if (status != 0 || fr_result_as_int(&result, is_eq ? "bool" : "int", &value) != 0) return -1;
  fr_ptrmap_erase(&walk->on_stack, lhs, rhs);
  *out = is_eq ? (value != 0 ? 0 : 1) : (int32_t)value;
  return 0;
}

/* The hook comparison of two objects of a type from kTVMFFIStaticObjectEnd: 1, 0 (none), -1. */
static int cmp_custom(CmpWalk* walk, void* lhs, void* rhs, int32_t ti, int32_t* out) {
  void* hook = NULL;
  int found;
  if (walk->eq_only) {
    found = fr_hook_of(g_col_eq, ti, SIG_EQ, &hook);
    if (found < 0) return -1;
    if (found) return cmp_call_hook(walk, hook, 1, lhs, rhs, out) == 0 ? 1 : -1;
  }
  found = fr_hook_of(g_col_cmp, ti, SIG_CMP, &hook);
  if (found < 0) return -1;
  if (found) return cmp_call_hook(walk, hook, 0, lhs, rhs, out) == 0 ? 1 : -1;
  return 0;
}

/* The comparison of two values that needs no frame: 1 and *out; 0 when it needs one; -1. */
static int cmp_immediate(CmpWalk* walk, const TVMFFIAny* lhs, const TVMFFIAny* rhs,
                         int32_t* out) {
  int32_t lti = lhs->type_index, rti = rhs->type_index;
  void* lobj;
  void* robj;
  if (lti == kTVMFFINone || rti == kTVMFFINone) { /* None sorts before everything */
    *out = (int32_t)(lti != kTVMFFINone) - (int32_t)(rti != kTVMFFINone);
    return 1;
  }
  if ((is_str(lti) && is_str(rti)) || (is_bytes(lti) && is_bytes(rti))) {
    *out = compare_chars(fr_text_of(lhs), fr_text_of(rhs));
    return 1;
  }
  if (lti != rti) {
    if (walk->eq_only) {
      *out = 1;
      return 1;
    }
    if ((lti == kTVMFFIInt && rti == kTVMFFIBigInt) ||
        (lti == kTVMFFIBigInt && rti == kTVMFFIInt)) {
      size_t na, nb;
      const int64_t* a = fr_bigint_words(lhs, &na);
      const int64_t* b = fr_bigint_words(rhs, &nb);
      *out = compare_words(a, na, b, nb);
      return 1;
    }
    return fr_raise("TypeError", "Cannot compare values of different types: %s vs %s",
                    fr_type_key_of(lti), fr_type_key_of(rti));
  }
  if (lti < kTVMFFIStaticObjectBegin) return cmp_pod(walk, lhs, rhs, out);
  if (lti == kTVMFFIBigInt) {
    size_t na, nb;
    const int64_t* a = fr_bigint_words(lhs, &na);
    const int64_t* b = fr_bigint_words(rhs, &nb);
    *out = walk->eq_only ? !words_equal(a, na, b, nb) : compare_words(a, na, b, nb);
    return 1;
  }
  lobj = lhs->v_obj;
  robj = rhs->v_obj;
  if (lobj == robj) { /* one object equals itself, unopened */
    *out = 0;
    return 1;
  }
  if (lobj == NULL || robj == NULL) {
    *out = lobj == NULL ? -1 : 1;
    return 1;
  }
  if (lti == kTVMFFIShape) {
    const TVMFFIShapeCell* a = FR_CELL(lobj, TVMFFIShapeCell);
    const TVMFFIShapeCell* b = FR_CELL(robj, TVMFFIShapeCell);
    size_t i, n = a->size < b->size ? a->size : b->size;
    for (i = 0; i < n; ++i) {
      if (a->data[i] != b->data[i]) {
        *out = a->data[i] < b->data[i] ? -1 : 1;
        return 1;
      }
    }
    *out = a->size < b->size ? -1 : (a->size > b->size ? 1 : 0);
    return 1;
  }
  if (fr_ptrmap_find(&walk->on_stack, lobj, robj) != NULL) {
    if (walk->eq_only) {
      *out = 0;
      return 1;
    }
    return fr_raise("ValueError", "RecursiveCompare: cyclic reference detected in ordering");
  }
  if (lti >= kTVMFFIStaticObjectEnd) return cmp_custom(walk, lobj, robj, lti, out);
  return 0;
}

static void cmp_frame_release(CmpFrame* f) {
  size_t i;
  for (i = 0; i < 2 * f->n; ++i) fr_any_release(&f->items[i]);
  free(f->items);
  f->items = NULL;
  f->n = 0;
}

/* Maps that cannot match: "unequal" in equality mode, else the ordering TypeError. */
static int cmp_map_mismatch(CmpWalk* walk, void* lhs, void* rhs, int32_t* eager) {
  fr_ptrmap_erase(&walk->on_stack, lhs, rhs);
  if (!walk->eq_only) return fr_raise("TypeError", "Cannot order Map/Dict values");
  *eager = 1;
  return 1;
}

/*
 * Pushes the frame of two containers or objects of one type: 0 when pushed, 1
 * and *eager when the pair is decided before any child is compared (maps of
 * different sizes or keys), -1 on error.
 */
static int cmp_push(CmpWalk* walk, CmpStack* st, const TVMFFIAny* lhs, const TVMFFIAny* rhs,
                    int32_t* eager) {
  CmpFrame frame;
  void* lobj = lhs->v_obj;
  void* robj = rhs->v_obj;
  int32_t ti = lhs->type_index;
  size_t i;
  if (st->n >= MAX_STACK_DEPTH) {
    return fr_raise("ValueError", "RecursiveCompare: " STACK_LIMIT_TEXT);
  }
  if (st->n == st->capacity) {
    size_t capacity = st->capacity == 0 ? 16 : st->capacity * 2;
    CmpFrame* grown = (CmpFrame*)realloc(st->frames, capacity * sizeof(CmpFrame));
    if (grown == NULL) return fr_raise_oom();
    st->frames = grown;
    st->capacity = capacity;
  }
  if (fr_ptrmap_put(&walk->on_stack, lobj, robj, 1) != 0) return -1;
  memset(&frame, 0, sizeof(frame));
  frame.lhs_obj = lobj;
  frame.rhs_obj = robj;
  if (ti == kTVMFFIArray || ti == kTVMFFIList) {
    int64_t nl = fr_seq_size(lobj), nr = fr_seq_size(robj);
    size_t n = (size_t)(nl < nr ? nl : nr);
    frame.kind = K_SEQ;
    frame.lhs_size = (uint64_t)nl;
    frame.rhs_size = (uint64_t)nr;
    if (n > 0) {
      frame.items = (TVMFFIAny*)malloc(2 * n * sizeof(TVMFFIAny));
      if (frame.items == NULL) return fr_raise_oom();
      for (i = 0; i < n; ++i) {
        frame.items[2 * i] = fr_any_copy(&fr_seq_items(lobj)[i]);
        frame.items[2 * i + 1] = fr_any_copy(&fr_seq_items(robj)[i]);
      }
      frame.n = n;
    }
  } else if (ti == kTVMFFIMap || ti == kTVMFFIDict) {
    uint64_t it, end = fr_map_end(lobj), size = fr_map_size(lobj);
    frame.kind = K_MAP;
    frame.lhs_size = size;
    frame.rhs_size = fr_map_size(robj);
    if (size != frame.rhs_size) return cmp_map_mismatch(walk, lobj, robj, eager);
    if (size > 0) {
      frame.items = (TVMFFIAny*)malloc(2 * (size_t)size * sizeof(TVMFFIAny));
      if (frame.items == NULL) return fr_raise_oom();
    }
    for (it = fr_map_begin(lobj); it != end; it = fr_map_next(lobj, it)) {
      FrKV* kv = fr_map_entry(lobj, it);
      TVMFFIAny* other = NULL;
      int found = fr_map_find(robj, &kv->key, &other);
      if (found <= 0) {
        cmp_frame_release(&frame);
        if (found < 0) return -1;
        return cmp_map_mismatch(walk, lobj, robj, eager);
      }
      frame.items[2 * frame.n] = fr_any_copy(&kv->value);
      frame.items[2 * frame.n + 1] = fr_any_copy(other);
      frame.n++;
    }
  } else {
    const TVMFFIFieldInfo** fields = NULL;
    size_t count = 0;
    frame.kind = K_OBJ;
    if (fr_collect_fields(ti, kTVMFFIFieldFlagBitMaskCompareOff, &fields, &count) != 0) return -1;
    if (count > 0) {
      frame.items = (TVMFFIAny*)malloc(2 * count * sizeof(TVMFFIAny));
      if (frame.items == NULL) {
        free(fields);
        return fr_raise_oom();
      }
    }
    for (i = 0; i < count; ++i) {
      /* upstream reads the pair as the arguments of one C++ call: right to left */
      if (fr_read_field(robj, fields[i], &frame.items[2 * i + 1]) != 0) break;
      if (fr_read_field(lobj, fields[i], &frame.items[2 * i]) != 0) {
        fr_any_release(&frame.items[2 * i + 1]);
        break;
      }
      frame.n = i + 1;
    }
    free(fields);
    if (frame.n != count) {
      cmp_frame_release(&frame);
      return -1;
    }
  }
  st->frames[st->n++] = frame;
  return 0;
}

/*
 * A nonzero result ends the walk. In ordering mode a difference found under a
 * map, at any depth, is a TypeError: maps have no order. Releases every frame.
 */
static int cmp_terminate(CmpWalk* walk, CmpStack* st, int32_t result, int32_t* out) {
  int under_map = 0;
  while (st->n > 0) {
    CmpFrame* f = &st->frames[--st->n];
    if (f->kind == K_MAP) under_map = 1;
    fr_ptrmap_erase(&walk->on_stack, f->lhs_obj, f->rhs_obj);
    cmp_frame_release(f);
  }
  free(st->frames);
  st->frames = NULL;
  if (under_map && !walk->eq_only) return fr_raise("TypeError", "Cannot order Map/Dict values");
  *out = result;
  return 0;
}

/* -1, 0 or 1 (or a hook's raw int) for two owned values: one run of the walk. */
static int cmp_run(CmpWalk* walk, const TVMFFIAny* lhs, const TVMFFIAny* rhs, int32_t* out) {
  CmpStack st = {NULL, 0, 0};
  int32_t result;
  int status = cmp_immediate(walk, lhs, rhs, out);
  if (status != 0) return status < 0 ? -1 : 0;
  status = cmp_push(walk, &st, lhs, rhs, &result);
  if (status < 0) goto fail;
  if (status == 1) {
    *out = result;
    free(st.frames);
    return 0;
  }
  while (st.n > 0) {
    CmpFrame* f = &st.frames[st.n - 1];
    int pushed = 0;
    while (f->idx < f->n) {
      size_t i = f->idx++;
      const TVMFFIAny* a = &f->items[2 * i];
      const TVMFFIAny* b = &f->items[2 * i + 1];
      status = cmp_immediate(walk, a, b, &result);
      if (status < 0) goto fail;
      if (status == 0) {
        status = cmp_push(walk, &st, a, b, &result);
        if (status < 0) goto fail;
        if (status == 0) {
          pushed = 1;
          break;
        }
      }
      if (result != 0) return cmp_terminate(walk, &st, result, out);
    }
    if (pushed) continue;
    result = 0;
    if (f->kind == K_SEQ && f->lhs_size != f->rhs_size) result = f->lhs_size < f->rhs_size ? -1 : 1;
    fr_ptrmap_erase(&walk->on_stack, f->lhs_obj, f->rhs_obj);
    cmp_frame_release(f);
    st.n--;
    if (st.n == 0) {
      *out = result;
      break;
    }
    if (result != 0) return cmp_terminate(walk, &st, result, out);
  }
  free(st.frames);
  return 0;
fail:
  while (st.n > 0) cmp_frame_release(&st.frames[--st.n]);
  free(st.frames);
  return -1;
}

/* The five comparison globals: the mode and the test applied to the three-way result. */
enum { OP_EQ, OP_LT, OP_LE, OP_GT, OP_GE };

static int compare_op(int op, const FrArg* args, TVMFFIAny* rv) {
  CmpWalk walk;
  int32_t c;
  int status, holds = 0;
  memset(&walk, 0, sizeof(walk));
  walk.eq_only = op == OP_EQ;
  status = cmp_run(&walk, &args[0].value, &args[1].value, &c);
  fr_ptrmap_free(&walk.on_stack);
  if (status != 0) return -1;
  switch (op) {
    case OP_EQ: holds = c == 0; break;
    case OP_LT: holds = c < 0; break;
    case OP_LE: holds = c <= 0; break;
    case OP_GT: holds = c > 0; break;
    default: holds = c >= 0; break;
  }
  *rv = fr_any_bool(holds);
  return 0;
}

static int recursive_eq(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  (void)ctx;
  return compare_op(OP_EQ, args, rv);
}
static int recursive_lt(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  (void)ctx;
  return compare_op(OP_LT, args, rv);
}
static int recursive_le(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  (void)ctx;
  return compare_op(OP_LE, args, rv);
}
static int recursive_gt(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  (void)ctx;
  return compare_op(OP_GT, args, rv);
}
static int recursive_ge(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  (void)ctx;
  return compare_op(OP_GE, args, rv);
}

/* ======================================================= BigInt's hooks */

/* AnyView(obj).as_or_throw<BigInt>(): the words of a BigInt object, or upstream's TypeError. */
static const int64_t* bigint_arg(const TVMFFIAny* value, size_t* n) {
  if (value->type_index != kTVMFFIBigInt) {
    fr_raise("TypeError", "Cannot treat type `%s` as type `BigInt`",
             fr_type_key_of(value->type_index));
    return NULL;
  }
  return fr_bigint_words(value, n);
}

static int bigint_hash_hook(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  size_t n;
  const int64_t* words = bigint_arg(&args[0].value, &n);
  (void)ctx;
  if (words == NULL) return -1;
  *rv = fr_any_int((int64_t)fr_stable_hash_bytes(words, n * sizeof(int64_t)));
  return 0;
}

/* eq and compare read rhs first: the two are the arguments of one C++ call. */
static int bigint_eq_hook(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  size_t na, nb;
  const int64_t* b = bigint_arg(&args[1].value, &nb);
  const int64_t* a = b == NULL ? NULL : bigint_arg(&args[0].value, &na);
  (void)ctx;
  if (a == NULL) return -1;
  *rv = fr_any_bool(words_equal(a, na, b, nb));
  return 0;
}

static int bigint_compare_hook(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  size_t na, nb;
  const int64_t* b = bigint_arg(&args[1].value, &nb);
  const int64_t* a = b == NULL ? NULL : bigint_arg(&args[0].value, &na);
  (void)ctx;
  if (a == NULL) return -1;
  *rv = fr_any_int(compare_words(a, na, b, nb));
  return 0;
}

static const FrBuiltin kBigIntHooks[] = {
    {"ffi.BigInt.__ffi_eq__", bigint_eq_hook, NULL, 3, {FR_T_OBJECT, FR_T_OBJECT, FR_T_FUNCTION},
     FR_T_BOOL},
    {"ffi.BigInt.__ffi_compare__", bigint_compare_hook, NULL, 3,
     {FR_T_OBJECT, FR_T_OBJECT, FR_T_FUNCTION}, FR_T_INT},
    {"ffi.BigInt.__ffi_hash__", bigint_hash_hook, NULL, 2, {FR_T_OBJECT, FR_T_FUNCTION},
     FR_T_INT},
};
static const char* const kBigIntHookColumns[] = {"__ffi_eq__", "__ffi_compare__", "__ffi_hash__"};

/* ================================================ AccessStep / AccessPath */

/*
 * The __ffi_repr__ hooks upstream registers for its access paths (typed, so
 * a direct call with bad arguments names them): a step prints as ".name",
 * "[3]", "[<repr of key>]" or "[<missing:...>]"; a path as "<root>" followed by
 * its steps from the root down, each printed through fn_repr.
 */
static int32_t g_access_step_index = -1;
static int32_t g_access_path_index = -1;

/* AccessStepObj: header, int32 kind, then the Any key; AccessPathObj: parent, step, depth. */
#define STEP_KIND_OFFSET FR_HEADER_SIZE
#define STEP_KEY_OFFSET (FR_HEADER_SIZE + 8)
#define PATH_PARENT_OFFSET FR_HEADER_SIZE
#define PATH_STEP_OFFSET (FR_HEADER_SIZE + 8)
#define PATH_DEPTH_OFFSET (FR_HEADER_SIZE + 16)

static int expect_object_of(const TVMFFIAny* value, int32_t type_index, const char* type_key) {
  if (value->type_index == type_index) return 0;
  return fr_raise("TypeError", "Cannot treat type `%s` as type `%s`",
                  fr_type_key_of(value->type_index), type_key);
}

/* Appends fn_repr(value), which must give a str. */
static int append_fn_repr(FrBuf* out, void* fn_repr, const TVMFFIAny* value) {
  TVMFFIAny result;
  TVMFFIByteArray text;
  if (fr_call(fn_repr, value, 1, &result) != 0) return -1;
  if (fr_any_str_view(&result, 0, &text) != 0) {
    fr_raise("TypeError", "Cannot convert from type `%s` to `str`",
             fr_type_key_of(result.type_index));
    fr_any_release(&result);
    return -1;
  }
  fr_buf_append(out, text.data, text.size);
  fr_any_release(&result);
  return 0;
}

/* A hook's text as upstream returns a std::string it built: always a String object. */
static int buf_to_string_object(FrBuf* buf, TVMFFIAny* rv) {
  void* obj;
  if (buf->failed) return fr_raise_oom();
  obj = fr_string_object_new(fr_buf_cstr(buf), buf->size);
  if (obj == NULL) return -1;
  *rv = fr_any_object(obj);
  return 0;
}

static int access_step_repr(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  const char* step;
  const TVMFFIAny* key;
  void* fn_repr = args[1].value.v_obj;
  TVMFFIByteArray name;
  FrBuf out;
  int status = 0;
  (void)ctx;
  if (expect_object_of(&args[0].value, g_access_step_index, "ffi.reflection.AccessStep") != 0) {
    return -1;
  }
  step = (const char*)args[0].value.v_obj;
  key = (const TVMFFIAny*)(step + STEP_KEY_OFFSET);
  fr_buf_init(&out);
  switch (*(const int32_t*)(step + STEP_KIND_OFFSET)) {
    case 0: /* kAttr */
      if (fr_any_str_view(key, 0, &name) != 0) {
        status = fr_raise("TypeError", "Cannot convert from type `%s` to `str`",
                          fr_type_key_of(key->type_index));
        break;
      }
      fr_buf_puts(&out, ".");
      fr_buf_append(&out, name.data, name.size);
      break;
    case 1: /* kArrayItem */
    case 4: /* kArrayItemMissing */
      if (key->type_index != kTVMFFIInt && key->type_index != kTVMFFIBool) {
        status = fr_raise("TypeError", "Cannot convert from type `%s` to `int`",
                          fr_type_key_of(key->type_index));
        break;
      }
      fr_buf_printf(&out, *(const int32_t*)(step + STEP_KIND_OFFSET) == 1 ? "[%" PRId64 "]"
                                                                         : "[<missing:%" PRId64 ">]",
                    key->v_int64);
      break;
    case 2: /* kMapItem */
      fr_buf_puts(&out, "[");
      status = append_fn_repr(&out, fn_repr, key);
      fr_buf_puts(&out, "]");
      break;
    case 3: /* kAttrMissing */
    case 5: /* kMapItemMissing */
      fr_buf_puts(&out, "[<missing:");
      status = append_fn_repr(&out, fn_repr, key);
      fr_buf_puts(&out, ">]");
      break;
    default:
      status = fr_raise("InternalError", "unknown access step kind %d",
                        (int)*(const int32_t*)(step + STEP_KIND_OFFSET));
      break;
  }
  if (status == 0) status = buf_to_string_object(&out, rv);
  fr_buf_free(&out);
  return status;
}

static int access_path_repr(void* ctx, const FrArg* args, TVMFFIAny* rv) {
  void* fn_repr = args[1].value.v_obj;
  const char* path;
  void** steps = NULL;
  size_t n = 0, capacity = 0, i;
  FrBuf out;
  int status = 0;
  (void)ctx;
  if (expect_object_of(&args[0].value, g_access_path_index, "ffi.reflection.AccessPath") != 0) {
    return -1;
  }
  /* the steps from the path up to (not including) the root, then printed root first */
  for (path = (const char*)args[0].value.v_obj;
       path != NULL && *(const int32_t*)(path + PATH_DEPTH_OFFSET) > 0;
       path = *(const char* const*)(path + PATH_PARENT_OFFSET)) {
    if (n == capacity) {
      size_t grown_capacity = capacity == 0 ? 8 : capacity * 2;
      void** grown = (void**)realloc(steps, grown_capacity * sizeof(void*));
      if (grown == NULL) {
        free(steps);
        return fr_raise_oom();
      }
      steps = grown;
      capacity = grown_capacity;
    }
    steps[n++] = *(void* const*)(path + PATH_STEP_OFFSET);
  }
  fr_buf_init(&out);
  fr_buf_puts(&out, "<root>");
  for (i = n; i-- > 0 && status == 0;) {
    TVMFFIAny step = steps[i] != NULL ? fr_object_view(steps[i]) : fr_any_none();
    status = append_fn_repr(&out, fn_repr, &step);
  }
  free(steps);
  if (status == 0) status = buf_to_string_object(&out, rv);
  fr_buf_free(&out);
  return status;
}

static const FrBuiltin kAccessStepRepr = {"ffi.reflection.AccessStep.__ffi_repr__",
                                          access_step_repr, NULL, 2,
                                          {FR_T_OBJECT, FR_T_FUNCTION}, FR_T_STR};
static const FrBuiltin kAccessPathRepr = {"ffi.reflection.AccessPath.__ffi_repr__",
                                          access_path_repr, NULL, 2,
                                          {FR_T_OBJECT, FR_T_FUNCTION}, FR_T_STR};

static int register_hook(int32_t type_index, const char* column, const FrBuiltin* spec) {
  void* fn = fr_typed_function_new(spec, NULL, NULL);
  TVMFFIAny value;
  int status;
  if (fn == NULL) return -1;
  value = fr_any_object(fn);
  status = fr_register_attr_cstr(type_index, column, &value);
  fr_decref(fn); /* the column keeps its own reference */
  return status;
}

static int index_of(const char* type_key, int32_t* out) {
  TVMFFIByteArray key;
  key.data = type_key;
  key.size = strlen(type_key);
  return fr_type_key_to_index(&key, out);
}

/* ============================================================== load */

static const TVMFFITypeAttrColumn* column_named(const char* name) {
  TVMFFIByteArray bytes;
  bytes.data = name;
  bytes.size = strlen(name);
  return fr_get_type_attr_column(&bytes);
}

int fr_dataclass_init(void) {
  /* the columns upstream's dataclass support makes at load, in its order */
  static const char* const kColumns[] = {"__ffi_shallow_copy__", "__ffi_repr__", "__ffi_hash__",
                                         "__ffi_eq__", "__ffi_compare__", "__ffi_new__",
                                         "__ffi_init__"};
  size_t i;
  for (i = 0; i < sizeof(kColumns) / sizeof(kColumns[0]); ++i) {
    if (fr_register_attr_cstr(kTVMFFINone, kColumns[i], NULL) != 0) return -1;
  }
  g_col_repr = column_named("__ffi_repr__");
  g_col_hash = column_named("__ffi_hash__");
  g_col_eq = column_named("__ffi_eq__");
  g_col_cmp = column_named("__ffi_compare__");
  for (i = 0; i < sizeof(kBigIntHooks) / sizeof(kBigIntHooks[0]); ++i) {
    if (register_hook(kTVMFFIBigInt, kBigIntHookColumns[i], &kBigIntHooks[i]) != 0) return -1;
  }
  /* the column keeps BigInt's hash hook alive: the walk recognizes it by address */
  g_bigint_hash_hook = fr_type_attr_entry(g_col_hash, kTVMFFIBigInt).v_obj;
  if (index_of("ffi.Enum", &g_enum_index) != 0) return -1;
  if (index_of("ffi.reflection.AccessStep", &g_access_step_index) != 0) return -1;
  if (index_of("ffi.reflection.AccessPath", &g_access_path_index) != 0) return -1;
  if (register_hook(g_access_step_index, "__ffi_repr__", &kAccessStepRepr) != 0) return -1;
  if (register_hook(g_access_path_index, "__ffi_repr__", &kAccessPathRepr) != 0) return -1;
  return 0;
}

static const FrBuiltin kBuiltins[] = {
    {"ffi.ReprPrint", repr_print, NULL, 1, {FR_T_ANY}, FR_T_STR},
    {"ffi.RecursiveHash", recursive_hash, NULL, 1, {FR_T_ANY}, FR_T_INT},
    {"ffi.RecursiveEq", recursive_eq, NULL, 2, {FR_T_ANY, FR_T_ANY}, FR_T_BOOL},
    {"ffi.RecursiveLt", recursive_lt, NULL, 2, {FR_T_ANY, FR_T_ANY}, FR_T_BOOL},
    {"ffi.RecursiveLe", recursive_le, NULL, 2, {FR_T_ANY, FR_T_ANY}, FR_T_BOOL},
    {"ffi.RecursiveGt", recursive_gt, NULL, 2, {FR_T_ANY, FR_T_ANY}, FR_T_BOOL},
    {"ffi.RecursiveGe", recursive_ge, NULL, 2, {FR_T_ANY, FR_T_ANY}, FR_T_BOOL},
};

int fr_dataclass_register_globals(void) {
  return fr_register_builtins(kBuiltins, sizeof(kBuiltins) / sizeof(kBuiltins[0]));
}
