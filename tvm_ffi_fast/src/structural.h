/*
 * structural.h -- what the structural operations share (structural_equal*.c,
 * structural_hash.c, structural_key.c, json_text.c, json_graph*.c,
 * deep_copy.c, visit_error_context.c, structural_traversal.c, structural_visit.c,
 * structural_mutate*.c, reflection.c, reflection_access_path.c).
 *
 * tvm_ffi_ref/runtime/structural_rules.py states the rules: the
 * structural_eq_hash_kind of a type, the definition regions fields open, the
 * hook columns and the depth limit.
 */
#ifndef TVM_FFI_FAST_STRUCTURAL_H_
#define TVM_FFI_FAST_STRUCTURAL_H_

#include "core.h"

/* Every structural walk (equal, hash, deep copy, JSON graph save and load, visit, mutate,
 * FindAccessPaths) and JSON text run over an explicit stack: they have no depth limit and look
 * for a cycle instead (fr_s_check_path, from this many frames on; JSON load marks the nodes it
 * is decoding). Only hooks that are not built in nest calls; those stop with a ValueError
 * (fr_s_too_deep) when the thread's C stack runs low. */
#define FR_S_MAX_DEPTH 16384
#define FR_S_IGNORE kTVMFFIFieldFlagBitMaskSEqHashIgnore
#define FR_S_DEF_PATTERN kTVMFFIFieldFlagBitMaskSEqHashDefPattern
#define FR_S_DEF_SIMPLE kTVMFFIFieldFlagBitMaskSEqHashDefSimple

/* Raises "<who>: maximum recursion depth (16384) exceeded; ..." (or, when the C stack ran
 * low first, says so) and returns -1. */
FR_HIDDEN int fr_s_too_deep(const char* who);

/*
 * For a walk over an explicit stack of n frames, each holding at `offset` the object it walks
 * (NULL: none): the frames spell the path from the root, so an object met twice on it means
 * the graph has a cycle and the walk would never end. Only checked when n reaches a power of
 * two from FR_S_MAX_DEPTH on (amortised O(1) a frame; a cycle is found before the stack is
 * twice the depth where it closed). 0: no cycle (or not checked now); -1: raised ValueError
 * "<who>: the value graph has a cycle (a value contains itself)".
 */
/* A walk's explicit stack of n frames of frame_size bytes at frames with room for one more:
 * the (possibly moved: grown by doubling) frames, or NULL with MemoryError raised. */
FR_HIDDEN void* fr_s_stack_room(void* frames, size_t n, size_t* capacity, size_t frame_size);

FR_HIDDEN int fr_s_check_path(const char* who, const void* frames, size_t n, size_t stride,
                              size_t offset);

/*
 * The structural_eq_hash_kind of an object type into *kind; -1 with upstream's
 * TypeError when it has no metadata or the kind is Unsupported.
 */
FR_HIDDEN int fr_s_kind(int32_t type_index, int32_t* kind);
/* The kind when there is one, else kTVMFFISEqHashKindUnsupported (nothing raised). */
FR_HIDDEN int32_t fr_s_kind_or_unsupported(int32_t type_index);

/* The region a field with flags is walked in, from region current (a Pattern region stays). */
FR_HIDDEN int32_t fr_s_field_region(int64_t flags, int32_t current);
/* The region a hook callback's sub-value runs in: requested (None keeps current), Pattern stays. */
FR_HIDDEN int32_t fr_s_hook_region(int32_t requested, int32_t current);

/* The address of a type attribute column by name (created at load). */
FR_HIDDEN const TVMFFITypeAttrColumn* fr_s_column(const char* name);

/* reflection.c, reflection_access_path.c: the records made here. */
FR_HIDDEN void* fr_reflected_new(int32_t type_index);
FR_HIDDEN void* fr_access_path_new(void* parent, void* step);
FR_HIDDEN void* fr_access_step_new(int32_t kind, const TVMFFIAny* key);

/* structural_equal.c / structural_hash.c, for StructuralKey and the others. */
FR_HIDDEN int fr_structural_equal(const TVMFFIAny* lhs, const TVMFFIAny* rhs, int map_free_vars,
                                  int skip_tensor_content, int* out);
FR_HIDDEN int fr_structural_hash(const TVMFFIAny* value, int map_free_vars,
                                 int skip_tensor_content, uint64_t* out);
/* structural_key.c: a StructuralKey of key (a new reference into *out). */
FR_HIDDEN int fr_structural_key_new(const TVMFFIAny* key, void** out);

/* json_text.c: parse text into *out (owned) / write value as JSON (indent 0: compact). */
FR_HIDDEN int fr_json_parse(const char* data, size_t size, TVMFFIAny* out);
FR_HIDDEN int fr_json_stringify(const TVMFFIAny* value, int64_t indent, FrBuf* out);

/* The columns and hooks each file registers at load (fr_structural_init calls them). */
FR_HIDDEN int fr_structural_key_init(void);
FR_HIDDEN int fr_json_graph_init(void);
FR_HIDDEN int fr_structural_visit_init(void);
FR_HIDDEN int fr_structural_mutate_init(void);
/* Each file's ffi.* globals (fr_structural_register_globals calls them, in this order). */
FR_HIDDEN int fr_structural_equal_globals(void);
FR_HIDDEN int fr_structural_hash_globals(void);
FR_HIDDEN int fr_structural_key_globals(void);
FR_HIDDEN int fr_json_text_globals(void);
FR_HIDDEN int fr_json_graph_globals(void);
FR_HIDDEN int fr_deep_copy_globals(void);
FR_HIDDEN int fr_structural_visit_globals(void);
FR_HIDDEN int fr_structural_mutate_globals(void);
FR_HIDDEN int fr_visit_error_context_globals(void);
FR_HIDDEN int fr_structural_register_globals(void);

#endif /* TVM_FFI_FAST_STRUCTURAL_H_ */
