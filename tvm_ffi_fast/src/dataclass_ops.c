/*
 * dataclass_ops.c -- the value-level operations behind repr(), == and hash():
 * ffi.ReprPrint, ffi.RecursiveEq/Lt/Le/Gt/Ge and ffi.RecursiveHash, and the
 * type attribute hooks that customize them.
 *
 * Its twin in the reference runtime: tvm_ffi_ref/runtime/dataclass_ops.py.
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
 *
 * One walk per file: dataclass_repr.c, dataclass_hash.c, dataclass_compare.c;
 * the hooks registered at load in dataclass_hooks.c. This file holds what
 * they share (the hook columns, the children a frame visits), load and the
 * ffi.* globals.
 */
#include "dataclass.h"

#include "containers.h"
#include "registry.h"
#include "runtime.h"
#include "walk.h"

FrDcLoaded fr_dc = {NULL, NULL, NULL, NULL, -1, -1, -1, NULL};

/* ------------------------------------------------------------ children */

int fr_dc_raise_expired_callback(void) {
  return fr_raise("RuntimeError",
                  "a dataclass hook callback was called after the hook it was given to returned");
}

void fr_dc_children_release(FrDcChildren* ch) {
  size_t i;
  for (i = 0; i < ch->n; ++i) fr_any_release(&ch->items[i]);
  free(ch->items);
  free(ch->fields);
  ch->items = NULL;
  ch->fields = NULL;
  ch->n = 0;
}

int fr_dc_children_of(void* obj, int32_t ti, int64_t skip, FrDcChildren* ch) {
  size_t i;
  memset(ch, 0, sizeof(*ch));
  if (ti == kTVMFFIArray || ti == kTVMFFIList) {
    int64_t n = fr_seq_size(obj);
    ch->kind = FR_DC_SEQ;
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
    ch->kind = FR_DC_MAP;
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
  ch->kind = FR_DC_OBJ;
  if (fr_collect_fields(ti, skip, &ch->fields, &ch->size) != 0) return -1;
  if (ch->size > 0) {
    ch->items = (TVMFFIAny*)malloc(ch->size * sizeof(TVMFFIAny));
    if (ch->items == NULL) {
      fr_dc_children_release(ch);
      return fr_raise_oom();
    }
    for (i = 0; i < ch->size; ++i) {
      if (fr_read_field(obj, ch->fields[i], &ch->items[i]) != 0) {
        fr_dc_children_release(ch);
        return -1;
      }
      ch->n = i + 1;
    }
  }
  return 0;
}

/* ============================================================== load */

static int index_of(const char* type_key, int32_t* out) {
  TVMFFIByteArray key;
  key.data = type_key;
  key.size = strlen(type_key);
  return fr_type_key_to_index(&key, out);
}

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
  fr_dc.col_repr = column_named("__ffi_repr__");
  fr_dc.col_hash = column_named("__ffi_hash__");
  fr_dc.col_eq = column_named("__ffi_eq__");
  fr_dc.col_cmp = column_named("__ffi_compare__");
  if (index_of("ffi.Enum", &fr_dc.enum_index) != 0) return -1;
  if (index_of("ffi.reflection.AccessStep", &fr_dc.access_step_index) != 0) return -1;
  if (index_of("ffi.reflection.AccessPath", &fr_dc.access_path_index) != 0) return -1;
  return fr_dataclass_hooks_init();
}

int fr_dataclass_register_globals(void) {
  /* in upstream's order: ffi.ReprPrint, ffi.RecursiveHash, ffi.RecursiveEq ... Ge */
  if (fr_dataclass_repr_globals() != 0) return -1;
  if (fr_dataclass_hash_globals() != 0) return -1;
  return fr_dataclass_compare_globals();
}
