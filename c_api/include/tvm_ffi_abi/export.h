/*
 * tvm_ffi_abi/export.h -- export a C function's type schema and docstring.
 *
 * This header is this project's own (tvm-ffi-abi), not one of upstream's
 * apache-tvm-ffi headers. It gives C kernel libraries what upstream's C++
 * TVM_FFI_DLL_EXPORT_TYPED_FUNC gives C++ ones when built with
 * -DTVM_FFI_DLL_EXPORT_INCLUDE_METADATA=1: a function
 *
 *   __tvm_ffi__metadata_<name>   returning the String
 *                                {"type_schema":"<the function's schema, as a JSON string>"}
 *   __tvm_ffi__doc_<name>        returning the docstring as a String (optional)
 *
 * next to the kernel's own __tvm_ffi_<name>. Tools read them: tvm-ffi-check
 * generates arguments of the declared types (without it, a C function taking
 * a tensor is never reached), Module.get_function_metadata() and stub
 * generators show the signature.
 *
 * It uses only the C ABI (TVMFFIStringFromByteArray, TVMFFIErrorSetRaisedFromCStr
 * of tvm/ffi/c_api.h), so a library compiled against upstream's headers can
 * use it too: put upstream's include directory first and this header's
 * directory after it. C99 (-pedantic clean) and C++.
 *
 * Usage, at file scope, once per exported function:
 *
 *   TVM_FFI_ABI_EXPORT_SCHEMA(scale, "ffi.Tensor", "DLTensor*", "float");
 *   TVM_FFI_ABI_EXPORT_DOC(scale, "scale(x, factor): a new tensor x * factor");
 *
 * The first type is the result's, the others the parameters' in order (none
 * for a function without parameters). Each type is either a type key, for a
 * plain type, or a type schema in JSON (text starting with '{'), for a
 * parameterised one; TVM_FFI_ABI_TYPE_ARGS builds the latter:
 *
 *   TVM_FFI_ABI_EXPORT_SCHEMA(total, "int",
 *                             TVM_FFI_ABI_TYPE_ARGS("ffi.Array", TVM_FFI_ABI_TYPE("int")));
 *
 * Type keys (upstream's names):
 *   "None" "bool" "int" "float" "void*" "DataType" "Device"
 *   "DLTensor*"  a tensor the caller owns, as a bare DLTensor* or a Tensor
 *   "ffi.Tensor" "ffi.String" "ffi.Bytes" "ffi.Shape" "ffi.Function"
 *   "ffi.Object" "ffi.Array" "ffi.List" "ffi.Map" "ffi.Dict" "Any"
 *   "Optional" "Variant" (with TVM_FFI_ABI_TYPE_ARGS), an object type's key.
 */
#ifndef TVM_FFI_ABI_EXPORT_H_
#define TVM_FFI_ABI_EXPORT_H_

#include <stdlib.h>
#include <string.h>
#include <tvm/ffi/c_api.h>

#ifdef __cplusplus
#define TVM_FFI_ABI_EXTERN_C extern "C"
#else
#define TVM_FFI_ABI_EXTERN_C
#endif

/* The JSON type schema of a plain type: {"type":"<key>"}. */
#define TVM_FFI_ABI_TYPE(key) "{\"type\":\"" key "\"}"
/* The JSON type schema of a parameterised type; args: comma-separated schemas. */
#define TVM_FFI_ABI_TYPE_ARGS(key, args) "{\"type\":\"" key "\",\"args\":[" args "]}"

/* Appends text to out at *n, escaped for a JSON string when escape is set
 * (the function's schema travels as a string inside the metadata object). */
static inline void tvm_ffi_abi_append_(char* out, size_t* n, const char* text, int escape) {
  static const char hex[] = "0123456789abcdef";
  for (; *text != '\0'; ++text) {
    unsigned char c = (unsigned char)*text;
    if (escape && (c == '"' || c == '\\')) {
      out[(*n)++] = '\\';
      out[(*n)++] = (char)c;
    } else if (escape && c < 0x20) {
      memcpy(out + *n, "\\u00", 4);
      out[*n + 4] = hex[c >> 4];
      out[*n + 5] = hex[c & 15];
      *n += 6;
    } else {
      out[(*n)++] = (char)c;
    }
  }
}

/* Appends one type (a key, or a schema starting with '{') as a JSON schema. */
static inline void tvm_ffi_abi_append_type_(char* out, size_t* n, const char* type) {
  if (type[0] == '{') {
    tvm_ffi_abi_append_(out, n, type, 1);
  } else {
    tvm_ffi_abi_append_(out, n, "{\"type\":\"", 1);
    tvm_ffi_abi_append_(out, n, type, 1);
    tvm_ffi_abi_append_(out, n, "\"}", 1);
  }
}

/* Writes the metadata of a function whose result and parameter types are
 * types[0] and types[1..count) into *result, as a String the caller owns.
 * Returns 0, or -1 with a raised error. */
static inline int tvm_ffi_abi_write_schema(const char* const* types, size_t count,
                                           TVMFFIAny* result) {
  /* Room: every character may grow to six when escaped, plus the fixed text. */
  size_t room = 256, n = 0, i;
  char* text;
  TVMFFIByteArray bytes;
  int status;
  for (i = 0; i < count; ++i) room += 6 * (strlen(types[i]) + 16);
  text = (char*)malloc(room);
  if (text == NULL) {
    TVMFFIErrorSetRaisedFromCStr("MemoryError", "writing a type schema: out of memory");
    return -1;
  }
  tvm_ffi_abi_append_(text, &n, "{\"type_schema\":\"", 0);
  tvm_ffi_abi_append_(text, &n, "{\"type\":\"ffi.Function\",\"named_args\":{\"return\":[", 1);
  tvm_ffi_abi_append_type_(text, &n, types[0]);
  tvm_ffi_abi_append_(text, &n, "],\"params\":[", 1);
  for (i = 1; i < count; ++i) {
    if (i > 1) tvm_ffi_abi_append_(text, &n, ",", 1);
    tvm_ffi_abi_append_type_(text, &n, types[i]);
  }
  tvm_ffi_abi_append_(text, &n, "]}}\"}", 0);
  bytes.data = text;
  bytes.size = n;
  status = TVMFFIStringFromByteArray(&bytes, result); /* copies the text */
  free(text);
  return status;
}

/* Writes text into *result as a String the caller owns; 0, or -1 with a raised error. */
static inline int tvm_ffi_abi_write_text(const char* text, TVMFFIAny* result) {
  TVMFFIByteArray bytes;
  bytes.data = text;
  bytes.size = strlen(text);
  return TVMFFIStringFromByteArray(&bytes, result);
}

/* The declaration that ends each macro, so that a use ends with ';' like a
 * declaration (a bare ';' at file scope is not ISO C). */
#define TVM_FFI_ABI_DECLARE_(symbol)                                                        \
  TVM_FFI_ABI_EXTERN_C TVM_FFI_DLL_EXPORT int symbol(void* self, const TVMFFIAny* args,     \
                                                     int32_t num_args, TVMFFIAny* result)

/* Exports __tvm_ffi__metadata_<name>: result type first, then each parameter's. */
#define TVM_FFI_ABI_EXPORT_SCHEMA(name, ...)                                                \
  TVM_FFI_ABI_DECLARE_(__tvm_ffi__metadata_##name) {                                        \
    static const char* const types[] = {__VA_ARGS__};                                       \
    (void)self;                                                                             \
    (void)args;                                                                             \
    (void)num_args;                                                                         \
    return tvm_ffi_abi_write_schema(types, sizeof(types) / sizeof(types[0]), result);       \
  }                                                                                         \
  TVM_FFI_ABI_DECLARE_(__tvm_ffi__metadata_##name)

/* Exports __tvm_ffi__doc_<name>, the function's docstring. */
#define TVM_FFI_ABI_EXPORT_DOC(name, text)                                                  \
  TVM_FFI_ABI_DECLARE_(__tvm_ffi__doc_##name) {                                             \
    (void)self;                                                                             \
    (void)args;                                                                             \
    (void)num_args;                                                                         \
    return tvm_ffi_abi_write_text(text, result);                                            \
  }                                                                                         \
  TVM_FFI_ABI_DECLARE_(__tvm_ffi__doc_##name)

#endif /* TVM_FFI_ABI_EXPORT_H_ */
