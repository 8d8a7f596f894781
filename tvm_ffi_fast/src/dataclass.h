/*
 * dataclass.h -- what the dataclass operations share: dataclass_ops.c (the
 * hook columns, the children of a frame, load and globals), dataclass_repr.c,
 * dataclass_hash.c, dataclass_compare.c and dataclass_hooks.c (the hooks
 * registered at load). dataclass_ops.c states the rules the walks follow.
 */
#ifndef TVM_FFI_FAST_DATACLASS_H_
#define TVM_FFI_FAST_DATACLASS_H_

#include "core.h"

/* Frames one walk holds at once before it gives up (upstream's kMaxTraversalStackDepth). */
#define FR_DC_MAX_DEPTH ((size_t)1 << 20)
#define FR_DC_DEPTH_TEXT "maximum stack depth (1048576) exceeded"

/*
 * What fr_dataclass_init resolves at load: the hook columns (their addresses
 * never change), the type indices the walks and hooks test for, and BigInt's
 * __ffi_hash__ entry, which the hash walk answers natively.
 */
typedef struct {
  const TVMFFITypeAttrColumn* col_repr;
  const TVMFFITypeAttrColumn* col_hash;
  const TVMFFITypeAttrColumn* col_eq;
  const TVMFFITypeAttrColumn* col_cmp;
  int32_t enum_index;
  int32_t access_step_index;
  int32_t access_path_index;
  void* bigint_hash_hook;
} FrDcLoaded;
FR_HIDDEN extern FrDcLoaded fr_dc;

static inline int fr_dc_is_str(int32_t ti) { return ti == kTVMFFIStr || ti == kTVMFFISmallStr; }
static inline int fr_dc_is_bytes(int32_t ti) {
  return ti == kTVMFFIBytes || ti == kTVMFFISmallBytes;
}

/* What a frame's children are: elements, key/value pairs, or reflected fields. */
enum { FR_DC_SEQ, FR_DC_MAP, FR_DC_OBJ };

/* What a single-value frame visits: owned children, and the field records of an object. */
typedef struct {
  int kind;
  TVMFFIAny* items;
  const TVMFFIFieldInfo** fields;
  size_t n;    /* children */
  size_t size; /* elements, entries or fields */
} FrDcChildren;
/* The children of obj (type index ti) into *ch, leaving out fields whose flags meet skip. */
FR_HIDDEN int fr_dc_children_of(void* obj, int32_t ti, int64_t skip, FrDcChildren* ch);
FR_HIDDEN void fr_dc_children_release(FrDcChildren* ch);

/* The RuntimeError of a hook callback called after its hook returned; -1. */
FR_HIDDEN int fr_dc_raise_expired_callback(void);

/* Signed order of two BigInts' two's-complement words (dataclass_compare.c). */
FR_HIDDEN int32_t fr_dc_compare_words(const int64_t* a, size_t na, const int64_t* b, size_t nb);
FR_HIDDEN int fr_dc_words_equal(const int64_t* a, size_t na, const int64_t* b, size_t nb);

/* Each file's part of load and of the ffi.* globals (dataclass_ops.c calls them in order). */
FR_HIDDEN int fr_dataclass_hooks_init(void);
FR_HIDDEN int fr_dataclass_repr_globals(void);
FR_HIDDEN int fr_dataclass_hash_globals(void);
FR_HIDDEN int fr_dataclass_compare_globals(void);

#endif /* TVM_FFI_FAST_DATACLASS_H_ */
