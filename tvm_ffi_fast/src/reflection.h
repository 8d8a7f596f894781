/*
 * reflection.h -- what the files registering upstream's load-time reflected
 * types share (reflection.c, reflection_access_path.c): field specs, the
 * registration helpers and the records' native creators.
 */
#ifndef TVM_FFI_FAST_REFLECTION_H_
#define TVM_FFI_FAST_REFLECTION_H_

#include "core.h"

/* How a field of a record made here is stored (and so read, written and released). */
enum { FR_FIELD_ANY, FR_FIELD_OBJ, FR_FIELD_I64, FR_FIELD_I32 };

typedef struct {
  const char* name;
  const char* doc;
  const char* schema; /* the type schema JSON (escaped into the metadata) */
  int kind;
  int64_t flags;
  int64_t offset;
  int32_t static_index;
} FrFieldSpec;

/* The type schema JSON of a Function (for a method's metadata). */
#define FR_SCHEMA_FN(ret, params) \
  "{\"type\":\"ffi.Function\",\"named_args\":{\"return\":[" ret "],\"params\":[" params "]}}"

/* Defines the native creator name() of the records of type index_var (set at load). */
#define FR_DEFINE_CREATOR(name, index_var)                 \
  static int name(TVMFFIObjectHandle* result) {            \
    void* obj = fr_reflected_new(index_var);               \
    if (obj == NULL) return -1;                            \
    *result = obj;                                         \
    return 0;                                              \
  }

/* Registration through the table's slots; methods take func's reference (NULL: -1). */
FR_HIDDEN int fr_refl_register_field(int32_t type_index, const FrFieldSpec* spec);
FR_HIDDEN int fr_refl_register_metadata(int32_t type_index, int32_t total_size, int kind,
                                        TVMFFIObjectCreator creator);
FR_HIDDEN int fr_refl_register_method(int32_t type_index, const char* name, const char* doc,
                                      const char* schema, int64_t flags, void* func);
/* A dynamic type index (one that may overflow its parent's child slots). */
FR_HIDDEN int32_t fr_refl_register_dynamic(const char* key, int32_t parent, int32_t depth);

/* reflection_access_path.c: ffi.reflection.AccessStep and AccessPath, their
 * fields, methods and metadata (registered in upstream's order by reflection.c). */
FR_HIDDEN extern int32_t fr_access_step_index;
FR_HIDDEN extern int32_t fr_access_path_index;
FR_HIDDEN int fr_access_path_types_init(void);

#endif /* TVM_FFI_FAST_REFLECTION_H_ */
