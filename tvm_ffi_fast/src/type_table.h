/*
 * type_table.h -- what the type registry's files share: registry.c (the type
 * table, index allocation, lookups), type_reflection.c (fields, methods,
 * metadata) and type_attrs.c (attribute columns).
 */
#ifndef TVM_FFI_FAST_TYPE_TABLE_H_
#define TVM_FFI_FAST_TYPE_TABLE_H_

#include "core.h"

/* A type's record and the storage behind it. */
typedef struct {
  TVMFFITypeInfo info; /* first: the record's address is the entry's */
  char* key_storage;
  TVMFFIFieldInfo* field_storage;
  size_t field_capacity;
  TVMFFIMethodInfo* method_storage;
  size_t method_capacity;
  TVMFFITypeMetadata metadata_storage;
  int32_t num_slots;       /* this type plus its reserved children */
  int32_t allocated_slots; /* used part of the reserved range (1 = the type itself) */
  int child_slots_can_overflow;
} FrTypeEntry;

/* Guards every registration (types, reflection records, attribute columns). */
FR_HIDDEN extern FrMutex fr_registry_mutex;

/* The entry of a registered type index, or NULL with upstream's InternalError. */
FR_HIDDEN FrTypeEntry* fr_type_entry_or_raise(int32_t type_index);
/* A permanent copy of a registration string; empty strings become {NULL, 0} as upstream's. */
FR_HIDDEN int fr_registry_copy_bytes(TVMFFIByteArray in, TVMFFIByteArray* out);

/* type_attrs.c: makes the __any_hash__ / __any_equal__ columns (at the end of load). */
FR_HIDDEN int fr_type_attrs_init(void);

#endif /* TVM_FFI_FAST_TYPE_TABLE_H_ */
