/*
 * structural_rules.c -- the rules the structural operations share (kinds,
 * regions, the depth limit, hook columns), and setting the operations up:
 * their columns and hooks at load, their ffi.* globals afterwards.
 *
 * Its twin in the reference runtime: tvm_ffi_ref/runtime/structural_rules.py.
 */
#include "structural.h"

#include "registry.h"
#include "runtime.h"
#include "walk.h"

int fr_s_too_deep(const char* who) {
  if (tvm_ffi_runtime_stack_low()) {
    return fr_raise("ValueError",
                    "%s: the value graph nests deeper than this thread's C stack allows "
                    "(fewer than %d levels)",
                    who, FR_S_MAX_DEPTH);
  }
  return fr_raise("ValueError",
                  "%s: maximum recursion depth (%d) exceeded; the value graph is too deep or has "
                  "a cycle",
                  who, FR_S_MAX_DEPTH);
}

void* fr_s_stack_room(void* frames, size_t n, size_t* capacity, size_t frame_size) {
  size_t grown_capacity;
  void* grown;
  if (n < *capacity) return frames;
  grown_capacity = *capacity ? *capacity * 2 : 16;
  grown = realloc(frames, grown_capacity * frame_size);
  if (grown == NULL) {
    fr_raise_oom();
    return NULL;
  }
  *capacity = grown_capacity;
  return grown;
}

int fr_s_check_path(const char* who, const void* frames, size_t n, size_t stride,
                    size_t offset) {
  FrPtrMap seen;
  size_t i;
  int status = 0;
  if (n < FR_S_MAX_DEPTH || (n & (n - 1)) != 0) return 0;
  memset(&seen, 0, sizeof(seen));
  for (i = 0; status == 0 && i < n; ++i) {
    const void* obj = *(void* const*)((const char*)frames + i * stride + offset);
    if (obj == NULL) continue;
    if (fr_ptrmap_find(&seen, obj, NULL) != NULL) {
      status = fr_raise("ValueError", "%s: the value graph has a cycle (a value contains itself)",
                        who);
    } else {
      status = fr_ptrmap_put(&seen, obj, NULL, 0);
    }
  }
  fr_ptrmap_free(&seen);
  return status;
}

int32_t fr_s_kind_or_unsupported(int32_t type_index) {
  const TVMFFITypeInfo* info = fr_type_info_or_null(type_index);
  if (info == NULL || info->metadata == NULL) return kTVMFFISEqHashKindUnsupported;
  return info->metadata->structural_eq_hash_kind;
}

int fr_s_kind(int32_t type_index, int32_t* kind) {
  const TVMFFITypeInfo* info = fr_type_info_or_null(type_index);
  if (info == NULL || info->metadata == NULL) {
    return fr_raise("TypeError",
                    "Type metadata is not set for type `%s`, so StructuralHash is not supported "
                    "for this type",
                    fr_type_key_of(type_index));
  }
  *kind = info->metadata->structural_eq_hash_kind;
  if (*kind == kTVMFFISEqHashKindUnsupported) {
    return fr_raise("TypeError",
                    "_type_s_eq_hash_kind is not set for type `%s`, so StructuralHash is not "
                    "supported for this type",
                    fr_type_key_of(type_index));
  }
  return 0;
}

int32_t fr_s_hook_region(int32_t requested, int32_t current) {
  if (current == kTVMFFIDefRegionKindPattern) return current;
  return requested == kTVMFFIDefRegionKindNone ? current : requested;
}

int32_t fr_s_field_region(int64_t flags, int32_t current) {
  if (!(flags & (FR_S_DEF_PATTERN | FR_S_DEF_SIMPLE))) return current;
  return fr_s_hook_region(
      (flags & FR_S_DEF_SIMPLE) ? kTVMFFIDefRegionKindSimple : kTVMFFIDefRegionKindPattern,
      current);
}

const TVMFFITypeAttrColumn* fr_s_column(const char* name) {
  TVMFFIByteArray key;
  key.data = name;
  key.size = strlen(name);
  return fr_get_type_attr_column(&key);
}

int fr_structural_init(void) {
  if (fr_register_attr_cstr(kTVMFFINone, "__s_equal__", NULL) != 0 ||
      fr_register_attr_cstr(kTVMFFINone, "__s_hash__", NULL) != 0) {
    return -1;
  }
  if (fr_structural_key_init() != 0 || fr_json_graph_init() != 0 ||
      fr_structural_visit_init() != 0 || fr_structural_mutate_init() != 0) {
    return -1;
  }
  return 0;
}

int fr_structural_register_globals(void) {
  if (fr_structural_equal_globals() != 0 || fr_structural_hash_globals() != 0 ||
      fr_structural_key_globals() != 0 || fr_json_text_globals() != 0 ||
      fr_json_graph_globals() != 0 || fr_deep_copy_globals() != 0 ||
fr_structural_visit_globals() != 0 ||
      fr_structural_mutate_globals() != 0 || fr_visit_error_context_globals() != 0) {
    return -1;
  }
  return 0;
}
