/*
 * define.h -- registering functions and object types through the C API.
 *
 * What upstream's reflection::GlobalDef and reflection::ObjectDef do for a
 * C++ class, done here from a description: a typed Function checks and
 * converts its arguments (typed_function.cc); a TypeDef allocates the type
 * index, describes the object's storage, and registers its metadata (with a
 * creator), fields (getter, setter, default, flags, type schema), methods,
 * constructor and the type attributes ObjectDef adds (type_def.cc).
 */
#ifndef TVM_FFI_TESTING_DEFINE_H_
#define TVM_FFI_TESTING_DEFINE_H_

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "schema.h"

namespace tvm_ffi_testing {

/* Extra metadata entries of a field, method or global: (key, JSON literal). */
using Metadata = std::vector<std::pair<std::string, std::string>>;

/* The converted arguments of a typed function in, its result out. */
using Body = std::function<Value(std::vector<Value>& args)>;
/* A packed function: the borrowed arguments as given. */
using PackedBody = std::function<Value(const TVMFFIAny* args, int32_t num_args)>;

/*
 * A Function named `name` (in its error messages) whose arguments must
 * convert to params, in upstream's messages for a wrong count or type.
 */
Value TypedFunction(std::string name, SchemaRef result, std::vector<SchemaRef> params, Body body);
Value PackedFunction(PackedBody body);

/* {"type_schema":"<schema>",<extra>} */
std::string MetadataJson(const std::string& type_schema, const Metadata& extra);

/* Registers a global function as GlobalDef().def(...) does. */
void DefGlobal(const char* name, SchemaRef result, std::vector<SchemaRef> params, Body body,
               const char* doc = nullptr, const Metadata& extra = {});
/* Registers a global function as GlobalDef().def_packed(...) does. */
void DefPacked(const char* name, PackedBody body);

/* A global function if registered, else None. */
Value FindGlobal(const char* name);

/* How a field's bytes hold its value. */
enum class Slot {
  kI64, kI32, kF64, kF32, kBool, kDevice, kDType,
  kAny,    // 16 bytes: an owned TVMFFIAny (String, Bytes, Any, Optional<POD>, Variant)
  kObject  // 8 bytes: an owned object pointer, NULL for None
};

/* Allocates a type index as the declaration of a C++ object class does. */
int32_t DeclareType(const char* key, const char* parent_key, int32_t child_slots);

/* A blank object of a type this library defines (a new reference). */
Value NewObject(int32_t type_index);
/* The address of a field of an object. */
template <typename T>
T* FieldAt(const Value& object, int64_t offset) {
  return reinterpret_cast<T*>(ObjectBytes(object.handle()) + offset);
}
/* Stores an owned value into a kAny or kObject slot, releasing the old one. */
void StoreSlot(const Value& object, int64_t offset, Slot slot, Value value);
/* A new reference to what a kAny or kObject slot holds. */
Value LoadSlot(const Value& object, int64_t offset, Slot slot);

class TypeDef {
 public:
  /* Describes the declared type `key`; its storage starts as its parent's, if ours. */
  TypeDef(const char* key, int32_t total_size);

  /* A field: read-only (def_ro) or writable (def_rw). */
  TypeDef& Ro(const char* name, int64_t offset, Slot slot, SchemaRef schema);
  TypeDef& Rw(const char* name, int64_t offset, Slot slot, SchemaRef schema);
  /* Traits of the field declared last. */
  TypeDef& Default(Value value);
  TypeDef& Flag(int64_t flag);
  TypeDef& Doc(const char* doc);
  TypeDef& Meta(Metadata metadata);
  TypeDef& StaticIndex(int32_t field_static_type_index);

  /* Storage no field of this type reflects, with its blank value. */
  TypeDef& Storage(int64_t offset, Slot slot, Value initial = Value());
  /* The value a blank object holds in a field's storage (C++ member initializers). */
  TypeDef& Initial(int64_t offset, Value value);

  /* A method taking self first, or a static one. */
  TypeDef& Method(const char* name, SchemaRef result, std::vector<SchemaRef> params, Body body,
                  const char* doc = nullptr, const Metadata& extra = {});
  TypeDef& StaticMethod(const char* name, SchemaRef result, std::vector<SchemaRef> params,
                        Body body, const char* doc = nullptr);
  /* An explicit constructor (refl::init<Args...>): the __ffi_init__ method and attribute. */
  TypeDef& Init(std::vector<SchemaRef> params, Body body, const char* doc = nullptr);

  /* The class cannot be made blank (no default constructor): no creator, no __ffi_new__. */
  TypeDef& NoCreator();
  /* Copying is deleted: no __ffi_shallow_copy__. */
  TypeDef& NotCopyable();
  /* refl::init(false) on the class: no auto-generated __ffi_init__. */
  TypeDef& NoAutoInit();
  TypeDef& Final();
  TypeDef& StructuralKind(TVMFFISEqHashKind kind);

  /* Registers everything, in the order ObjectDef's constructor, calls and destructor do. */
  void Register();

  int32_t type_index() const { return type_index_; }

 private:
  struct FieldRecord {
    TVMFFIFieldInfo info;  // name, doc and metadata point into the strings below
    std::string name, doc, metadata_json;
    Metadata metadata;
    SchemaRef schema;
    Slot slot;
    Value default_value;
  };
  struct MethodRecord {
    std::string name, doc;
    Metadata metadata;
    bool is_static;
    SchemaRef result;
    std::vector<SchemaRef> params;
    Body body;
  };
  TypeDef& AddField(const char* name, int64_t offset, Slot slot, SchemaRef schema, bool writable);
  void RegisterField(FieldRecord* field);
  void RegisterMethod(const MethodRecord& method);

  std::string key_;
  int32_t type_index_;
  int layout_;  // this type's entry in the storage table (type_def.cc)
  std::vector<FieldRecord> fields_;
  std::vector<MethodRecord> methods_;
  std::vector<std::pair<bool, size_t>> order_;  // (is_field, index) in declaration order
  bool creator_ = true, copyable_ = true, auto_init_ = true, explicit_init_ = false;
  bool final_ = false;
  TVMFFISEqHashKind structural_kind_ = kTVMFFISEqHashKindUnsupported;
};

/* Registers a type attribute value (TVMFFITypeRegisterAttr). */
void DefAttr(int32_t type_index, const char* name, const Value& value);
/* A type attribute's value for type_index, None when absent. */
Value LookupAttr(int32_t type_index, const char* name);

}  // namespace tvm_ffi_testing

#endif  // TVM_FFI_TESTING_DEFINE_H_
