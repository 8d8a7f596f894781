/*
 * runtime.h -- the slot implementations the fast runtime installs, and the
 * cross-file helpers that do not belong to one concept's header.
 */
#ifndef TVM_FFI_FAST_SLOTS_H_
#define TVM_FFI_FAST_SLOTS_H_

#include "core.h"

/* objects.c */
FR_HIDDEN int fr_object_create_opaque(void* handle, int32_t type_index,
                                      void (*deleter)(void* handle), TVMFFIObjectHandle* out);

/* strings.c */
FR_HIDDEN int fr_string_from_byte_array(const TVMFFIByteArray* input, TVMFFIAny* out);
FR_HIDDEN int fr_bytes_from_byte_array(const TVMFFIByteArray* input, TVMFFIAny* out);
FR_HIDDEN int fr_bigint_from_byte_array(const TVMFFIByteArray* input, TVMFFIAny* out);
FR_HIDDEN void fr_bigint_get_content(const TVMFFIAny* value, TVMFFIByteArray* out);
FR_HIDDEN int fr_bigint_from_words(const int64_t* words, size_t n, TVMFFIAny* out);
/* Appends the decimal text of two's-complement words (least significant first). */
FR_HIDDEN int fr_bigint_append_decimal(FrBuf* out, const int64_t* words, size_t n);
/* An int (or BigInt when it needs more than 64 bits) from [+-]digits, nothing else. */
FR_HIDDEN int fr_bigint_from_decimal(const char* text, size_t size, TVMFFIAny* out);
/* The two's-complement words of an int (one word) or BigInt value, least significant first. */
FR_HIDDEN const int64_t* fr_bigint_words(const TVMFFIAny* value, size_t* n);
FR_HIDDEN int fr_any_view_to_owned_any(const TVMFFIAny* any_view, TVMFFIAny* out);
FR_HIDDEN TVMFFIAny fr_bigint_any_hash(const TVMFFIAny* value);
FR_HIDDEN TVMFFIAny fr_bigint_any_equal(const TVMFFIAny* lhs, const TVMFFIAny* rhs);

/* any_hash.c */
FR_HIDDEN uint64_t fr_stable_hash_bytes(const void* data, size_t size);

/* dtype.c */
FR_HIDDEN int fr_dtype_from_string(const TVMFFIByteArray* str, DLDataType* out);
FR_HIDDEN int fr_dtype_to_string(const DLDataType* dtype, TVMFFIAny* out);

/* tensor.c */
FR_HIDDEN int fr_tensor_from_dlpack(DLManagedTensor* from, int32_t require_alignment,
                                    int32_t require_contiguous, TVMFFIObjectHandle* out);
FR_HIDDEN int fr_tensor_to_dlpack(TVMFFIObjectHandle from, DLManagedTensor** out);
FR_HIDDEN int fr_tensor_from_dlpack_versioned(DLManagedTensorVersioned* from,
                                              int32_t require_alignment,
                                              int32_t require_contiguous,
                                              TVMFFIObjectHandle* out);
FR_HIDDEN int fr_tensor_to_dlpack_versioned(TVMFFIObjectHandle from,
                                            DLManagedTensorVersioned** out);
FR_HIDDEN int fr_tensor_create_unsafe_view(TVMFFIObjectHandle source, const DLTensor* prototype,
                                           TVMFFIObjectHandle* out);
FR_HIDDEN int fr_env_tensor_alloc(DLTensor* prototype, TVMFFIObjectHandle* out);
/* Row-major compact (dimensions of extent 1 may have any stride; empty tensors always are). */
FR_HIDDEN int fr_tensor_is_contiguous(const DLTensor* t);

/* env.c */
FR_HIDDEN int fr_env_set_stream(int32_t device_type, int32_t device_id, TVMFFIStreamHandle stream,
                                TVMFFIStreamHandle* opt_out_original_stream);
FR_HIDDEN TVMFFIStreamHandle fr_env_get_stream(int32_t device_type, int32_t device_id);
FR_HIDDEN int fr_env_set_dlpack_allocator(DLPackManagedTensorAllocator allocator,
                                          int write_to_global_context,
                                          DLPackManagedTensorAllocator* opt_out_original);
FR_HIDDEN DLPackManagedTensorAllocator fr_env_get_dlpack_allocator(void);
FR_HIDDEN int fr_env_check_signals(void);
FR_HIDDEN int fr_env_register_capi(const char* name, void* symbol);

/* module.c, module_load.c (context symbols), module_globals.c (the globals) */
FR_HIDDEN int fr_env_mod_lookup_from_imports(TVMFFIObjectHandle library_ctx, const char* func_name,
                                             TVMFFIObjectHandle* out);
FR_HIDDEN int fr_env_mod_register_context_symbol(const char* name, void* symbol);
FR_HIDDEN int fr_env_mod_register_system_lib_symbol(const char* name, void* symbol);
FR_HIDDEN int fr_module_register_globals(void);

/* reflection.c: the types upstream registers at load, and their attributes */
FR_HIDDEN int fr_reflection_init(void);
/* reflection_make_object.c: ffi.MakeObjectFromPackedArgs */
FR_HIDDEN int fr_reflection_register_globals(void);
/* reflection::CallFieldSetter: a C setter, or a setter Function given the field address */
FR_HIDDEN int fr_call_field_setter(const TVMFFIFieldInfo* f, void* addr, const TVMFFIAny* value);
/* reflection::CallFieldSetterToDefault: the default value, or the factory's result */
FR_HIDDEN int fr_call_field_setter_to_default(const TVMFFIFieldInfo* f, void* addr);
/* An empty object of a type (owned): its native creator, else its __ffi_new__ attribute */
FR_HIDDEN int fr_create_empty_object(const TVMFFITypeInfo* info, void** out);

/* convert_attrs.c: __ffi_convert__ of the built-in types (at load, after reflection) */
FR_HIDDEN int fr_convert_attrs_init(void);

/* pyclass.c: ffi.MakeFieldGetter/Setter, ffi._RegisterFFIInit and
   ffi._PyClassRegisterTypeAttrColumns (types whose layout a front end defines) */
FR_HIDDEN int fr_pyclass_register_globals(void);

/* pyclass_schema.c: the values a py_class field's converter passes on unchanged, judged by
   type (an instance of instance_of, if >= 0; None when none), read from the field's
   type_schema metadata; such values are stored without calling the converter. */
typedef struct {
  int32_t instance_of;
  int none;
} FrSchemaRule;
FR_HIDDEN void fr_pyclass_schema_rule(const TVMFFIByteArray* metadata, FrSchemaRule* rule);
FR_HIDDEN int fr_pyclass_schema_passes(const FrSchemaRule* rule, const TVMFFIAny* value);

/* dataclass_ops.c (with dataclass_*.c): the hook columns and BigInt's hooks (at load), and the
   ffi.ReprPrint / ffi.RecursiveEq... / ffi.RecursiveHash globals */
FR_HIDDEN int fr_dataclass_init(void);
FR_HIDDEN int fr_dataclass_register_globals(void);

/* structural_rules.c: the structural operations' columns, hooks (at load) and globals */
FR_HIDDEN int fr_structural_init(void);

#endif /* TVM_FFI_FAST_SLOTS_H_ */
