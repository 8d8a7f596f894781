/*
 * registry.h -- the type registry: type indices and keys, TVMFFITypeInfo
 * records, reflection (fields, methods, metadata) and type attribute columns
 * (registry.c, type_reflection.c, type_attrs.c).
 */
#ifndef TVM_FFI_FAST_REGISTRY_H_
#define TVM_FFI_FAST_REGISTRY_H_

#include "core.h"

/* Slot implementations (TVMFFIRuntimeTable). */
FR_HIDDEN int fr_type_key_to_index(const TVMFFIByteArray* type_key, int32_t* out_tindex);
FR_HIDDEN int32_t fr_type_get_or_alloc_index(const TVMFFIByteArray* type_key,
                                             int32_t static_type_index, int32_t type_depth,
                                             int32_t num_child_slots,
                                             int32_t child_slots_can_overflow,
                                             int32_t parent_type_index);
FR_HIDDEN const TVMFFITypeInfo* fr_get_type_info(int32_t type_index);
FR_HIDDEN int fr_type_register_field(int32_t type_index, const TVMFFIFieldInfo* info);
FR_HIDDEN int fr_type_register_method(int32_t type_index, const TVMFFIMethodInfo* info);
FR_HIDDEN int fr_type_register_metadata(int32_t type_index, const TVMFFITypeMetadata* metadata);
FR_HIDDEN int fr_type_register_attr(int32_t type_index, const TVMFFIByteArray* attr_name,
                                    const TVMFFIAny* attr_value);
FR_HIDDEN const TVMFFITypeAttrColumn* fr_get_type_attr_column(const TVMFFIByteArray* attr_name);

/* The TVMFFITypeInfo of a registered index, or NULL (nothing raised). */
FR_HIDDEN const TVMFFITypeInfo* fr_type_info_or_null(int32_t type_index);
/* Whether type index ti is base or derives from it (by its ancestors). */
FR_HIDDEN int fr_type_is_instance(int32_t ti, int32_t base);

/* Registers a type by C string key (the built-in types); returns its index or -1. */
FR_HIDDEN int32_t fr_register_type(const char* key, int32_t static_index, int32_t depth,
                                   int32_t child_slots, int can_overflow, int32_t parent);

/* Columns the map hashing consults on every object key (stable addresses). */
FR_HIDDEN const TVMFFITypeAttrColumn* fr_any_hash_column(void);
FR_HIDDEN const TVMFFITypeAttrColumn* fr_any_equal_column(void);

/*
 * The entry of a column for type_index (None when absent), read under the
 * registry lock. Borrowed: entries are never replaced or removed, so the
 * column keeps its value alive for the process.
 */
FR_HIDDEN TVMFFIAny fr_type_attr_entry(const TVMFFITypeAttrColumn* column, int32_t type_index);

/* Registers an attribute value by C string name (built-ins). */
FR_HIDDEN int fr_register_attr_cstr(int32_t type_index, const char* name, const TVMFFIAny* value);

/* Creates the static types and the columns present at load. */
FR_HIDDEN int fr_registry_init(void);

/* ffi.GetRegisteredTypeKeys: an Array of the keys in index order. NULL + raised on error. */
FR_HIDDEN void* fr_registered_type_keys(void);

#endif /* TVM_FFI_FAST_REGISTRY_H_ */
