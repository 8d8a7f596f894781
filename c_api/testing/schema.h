/*
 * schema.h -- the declared type of a field, a parameter or a result.
 *
 * Upstream's C++ library knows each of these as a C++ type (int64_t,
 * Array<int64_t>, Optional<String>, ...) and derives three things from it:
 * the type schema JSON published in reflection metadata, the type's name in
 * error messages, and how a value is converted to it. Here a Schema tree
 * states the type once, and the three are derived from it with upstream's
 * rules (see Convert).
 */
#ifndef TVM_FFI_TESTING_SCHEMA_H_
#define TVM_FFI_TESTING_SCHEMA_H_

#include <memory>
#include <string>
#include <vector>

#include "support.h"

namespace tvm_ffi_testing {

struct Schema;
using SchemaRef = std::shared_ptr<const Schema>;

struct Schema {
  enum Kind {
    kAny, kVoid, kInt, kFloat, kBool, kDevice, kDType, kStr, kBytes,
    kFunction,   // args (when typed): the result first, then the parameters
    kObject,     // key; nullable says whether None converts
    kArray, kList, kMap, kDict,  // args: the element / key and value types, none when untyped
    kOptional, kVariant, kDLTensor, kTensor
  };
  Kind kind;
  std::string key;  // kObject: the type key
  bool nullable = false;
  std::vector<SchemaRef> args;

  /* {"type":"...","args":[...]} as upstream's TypeSchema() writes it. */
  std::string Json() const;
  /* The name in error messages: int, str, Array<int>, Map<str, int>, ... */
  std::string Str() const;
  /* The field_static_type_index of a field of this type. */
  int32_t FieldStaticTypeIndex() const;
};

namespace S {
SchemaRef Any();
SchemaRef Void();
SchemaRef Int();
SchemaRef Float();
SchemaRef Bool();
SchemaRef Device();
SchemaRef DType();
SchemaRef Str();
SchemaRef Bytes();
SchemaRef Function();
SchemaRef TypedFunction(SchemaRef result, std::vector<SchemaRef> params);
/* An object of type_key or a subtype; None only when nullable. */
SchemaRef Object(const std::string& type_key, bool nullable = false);
SchemaRef Array(SchemaRef element = nullptr);
SchemaRef List(SchemaRef element);
SchemaRef Map(SchemaRef key = nullptr, SchemaRef value = nullptr);
SchemaRef Dict(SchemaRef key, SchemaRef value);
SchemaRef Optional(SchemaRef inner);
SchemaRef Variant(std::vector<SchemaRef> alternatives);
SchemaRef DLTensor();
SchemaRef Tensor();
}  // namespace S

/* Upstream's error for a DLTensor* where an owning value is needed. */
extern const char kDLTensorNotOwned[];

/* A function's signature in error messages: `name(0: int, 1: str) -> int`. */
std::string Signature(const std::string& name, const SchemaRef& result,
                      const std::vector<SchemaRef>& params);
/* {"type":"ffi.Function","named_args":{"return":[...],"params":[...]}} */
std::string FunctionSchemaJson(const SchemaRef& result, const std::vector<SchemaRef>& params);

/*
 * Converts a borrowed value to the schema's type, as upstream's
 * TypeTraits<T>::TryCastFromAnyView does: true and an owned result, or false
 * and *mismatch describing what was found (`ffi.SmallStr`,
 * `Array[index 1: float]`, ...). Containers whose items already have the
 * declared types are passed through; others are rebuilt converted.
 */
bool Convert(const Schema& schema, const TVMFFIAny& value, Value* out, std::string* mismatch);
/* Convert, or TypeError "Cannot convert from type `X` to `T`". */
Value ConvertOrThrow(const Schema& schema, const TVMFFIAny& value);

}  // namespace tvm_ffi_testing

#endif  // TVM_FFI_TESTING_SCHEMA_H_
