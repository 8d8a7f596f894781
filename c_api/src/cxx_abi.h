/*
 * cxx_abi.h -- the C++ classes of libtvm_ffi.so's C++ face, laid out as the
 * Itanium C++ ABI lays out the classes of the same names in upstream's
 * headers, so that the out-of-line symbols defined here (mangled names,
 * vtables, typeinfo) are the ones C++ libraries built against upstream link.
 *
 * Only what the exported symbols need is declared, and every operation goes
 * through the C API (and so through the installed runtime's table): no
 * allocation or layout knowledge of its own beyond these facts:
 *
 *   Any, String, Optional<int>, Optional<String>, Bytes  one TVMFFIAny (16 bytes)
 *   ObjectRef, Function, Module, Array, Map, Optional<ref> one Object* (8 bytes)
 *   Object                                               the TVMFFIObject header
 *   ModuleObj   vtable pointer at 0, the header at 8, imports_ (Array) at 32,
 *               import_lookup_cache_ (Map) at 40; its Object* is this + 8
 *   Error       std::exception (vtable pointer) at 0, then ObjectRef at 8
 *
 * Each of these classes has a non-trivial destructor, so the ABI passes and
 * returns it through memory: a function returning one fills caller storage.
 * Return types are not part of a mangled name, so where upstream returns
 * Optional<Function>, Array<AccessPath> or Optional<AccessPathPair> (one
 * Object* each) the code here returns ObjectRef, and Any where upstream
 * returns Optional<String> (one TVMFFIAny, None for nullopt).
 */
#ifndef TVM_FFI_SRC_CXX_ABI_H_
#define TVM_FFI_SRC_CXX_ABI_H_

#include <tvm/ffi/c_api.h>
#include <tvm/ffi/extra/c_env_api.h>

#include <cstdint>
#include <exception>
#include <mutex>
#include <string>

/* What the library exports; everything else stays hidden (built with
 * -fvisibility=hidden -fvisibility-inlines-hidden, as upstream's is). */
#define TVM_FFI_CXX_EXPORT __attribute__((visibility("default")))
#define TVM_FFI_CXX_HIDDEN __attribute__((visibility("hidden")))

namespace tvm {
namespace ffi {

/* Owns one TVMFFIAny (a strong reference when it holds an object). */
class AnyCell {
 public:
  AnyCell() { data_ = None(); }
  AnyCell(const AnyCell& other) : data_(other.data_) { IncRef(); }
  AnyCell& operator=(const AnyCell& other) {
    AnyCell copy(other);
    TVMFFIAny held = data_;
    data_ = copy.data_;
    copy.data_ = held;
    return *this;
  }
  ~AnyCell() { Reset(); }

  /* Takes over an owned value. */
  static AnyCell Own(TVMFFIAny value) {
    AnyCell cell;
    cell.data_ = value;
    return cell;
  }
  /* A new reference to a borrowed value. */
  static AnyCell Borrow(TVMFFIAny value) {
    AnyCell cell = Own(value);
    cell.IncRef();
    return cell;
  }
  const TVMFFIAny& raw() const { return data_; }
  bool is_none() const { return data_.type_index == kTVMFFINone; }
  bool holds_object() const { return data_.type_index >= kTVMFFIStaticObjectBegin; }
  /* Gives the owned value away, leaving None. */
  TVMFFIAny Release() {
    TVMFFIAny out = data_;
    data_ = None();
    return out;
  }
  void Reset() {
    if (holds_object() && data_.v_obj != nullptr) TVMFFIObjectDecRef(data_.v_obj);
    data_ = None();
  }
  static TVMFFIAny None() {
    TVMFFIAny none;
    none.type_index = kTVMFFINone;
    none.zero_padding = 0;
    none.v_int64 = 0;
    return none;
  }

 protected:
  void IncRef() {
    if (holds_object() && data_.v_obj != nullptr) TVMFFIObjectIncRef(data_.v_obj);
  }
  TVMFFIAny data_;
};

/* tvm::ffi::Any */
class Any : public AnyCell {
 public:
  Any() = default;
  explicit Any(const AnyCell& cell) : AnyCell(cell) {}
};

/* tvm::ffi::String: a small string (at most 7 bytes) or a String object. */
class String : public AnyCell {
 public:
  String() { data_.type_index = kTVMFFISmallStr; }
  /* A String of size bytes at data (through the runtime). */
  String(const char* data, size_t size);
  explicit String(const std::string& text) : String(text.data(), text.size()) {}
  /* The bytes, borrowed from this value. */
  const char* data() const;
  size_t size() const;
  std::string str() const { return std::string(data(), size()); }
};

/* tvm::ffi::Bytes (only as SaveToBytes's result). */
class Bytes : public AnyCell {
 public:
  Bytes() { data_.type_index = kTVMFFISmallBytes; }
};

/* tvm::ffi::Optional<T, void>: Optional<int> and Optional<String> hold an Any
 * (None for nullopt); only the name of Optional<int> is needed here. */
template <typename T, typename = void>
class Optional;

template <>
class Optional<int, void> : public AnyCell {
 public:
  bool has_value() const { return !is_none(); }
  int64_t value() const { return data_.v_int64; }
};

/* tvm::ffi::Object: the header, no virtual functions. */
class Object {
 protected:
  TVMFFIObject header_;

 public:
  Object() {
    header_.combined_ref_count = 0;
    header_.type_index = 0;
    header_.__padding = 0;
    header_.__ensure_align = 0;
  }
  TVMFFIObject* header() { return &header_; }
  const TVMFFIObject* header() const { return &header_; }
};

/* tvm::ffi::ObjectRef: one strong reference (nullptr when empty). */
class ObjectRef {
 public:
  ObjectRef() = default;
  ObjectRef(const ObjectRef& other) : data_(other.data_) {
    if (data_ != nullptr) TVMFFIObjectIncRef(data_);
  }
  ObjectRef& operator=(const ObjectRef& other) {
    ObjectRef copy(other);
    TVMFFIObject* held = data_;
    data_ = copy.data_;
    copy.data_ = held;
    return *this;
  }
  ~ObjectRef() { reset(); }

  /* Takes over an owned reference. */
  static ObjectRef Own(TVMFFIObject* obj) {
    ObjectRef ref;
    ref.data_ = obj;
    return ref;
  }
  /* A new reference to a borrowed object. */
  static ObjectRef Borrow(TVMFFIObject* obj) {
    if (obj != nullptr) TVMFFIObjectIncRef(obj);
    return Own(obj);
  }
  TVMFFIObject* get() const { return data_; }
  bool defined() const { return data_ != nullptr; }
  TVMFFIObject* release() {
    TVMFFIObject* out = data_;
    data_ = nullptr;
    return out;
  }
  void reset() {
    if (data_ != nullptr) TVMFFIObjectDecRef(data_);
    data_ = nullptr;
  }
  /* A borrowed view of this reference (None when empty). */
  TVMFFIAny view() const;

 protected:
  TVMFFIObject* data_ = nullptr;
};

/* tvm::ffi::Function */
class Function : public ObjectRef {};

/* tvm::ffi::TypedFunction<Signature>: a Function (only the name matters here). */
template <typename Signature>
class TypedFunction {
 public:
  const Function& packed() const { return packed_; }

 private:
  Function packed_;
};

/* tvm::ffi::Error: thrown for every failure, as upstream's C++ API does. */
class TVM_FFI_CXX_EXPORT Error : public ObjectRef, public std::exception {
 public:
  /* Takes over an owned Error object. */
  explicit Error(TVMFFIObject* error) { data_ = error; }
  /* A new Error object of this kind and message (no backtrace). */
  TVM_FFI_CXX_HIDDEN Error(const char* kind, const std::string& message);
  /* As upstream's: the message of the Error object (its cell follows the header). */
  const char* what() const noexcept override {
    if (data_ == nullptr) return "";
    return reinterpret_cast<const TVMFFIErrorCell*>(data_ + 1)->message.data;
  }
};

namespace cxx_face {
/* A new empty Array (through the runtime). */
ObjectRef NewEmptyArray();
}  // namespace cxx_face

class Module;

/* tvm::ffi::ModuleObj. Virtual functions in upstream's declaration order:
 * that order is the vtable's. */
class TVM_FFI_CXX_EXPORT ModuleObj : public Object {
 public:
  virtual const char* kind() const = 0;
  virtual int GetPropertyMask() const { return 0; }
  virtual ObjectRef GetFunction(const String& name) = 0;
  virtual bool ImplementsFunction(const String& name) { return GetFunction(name).defined(); }
  virtual Any GetFunctionDoc(const String& /*name*/) { return Any(); }
  virtual Any GetFunctionMetadata(const String& /*name*/) { return Any(); }
  virtual void WriteToFile(const String& /*file_name*/, const String& /*format*/) const {
    throw Error("RuntimeError", std::string("Module[") + kind() + "] does not support WriteToFile");
  }
  virtual ObjectRef GetWriteFormats() const { return cxx_face::NewEmptyArray(); }
  virtual Bytes SaveToBytes() const {
    throw Error("RuntimeError", std::string("Module[") + kind() + "] does not support SaveToBytes");
  }
  virtual String InspectSource(const String& /*format*/) const { return String(); }
  virtual void ImportModule(const Module& other);
  virtual void ClearImports();

  ObjectRef GetFunction(const String& name, bool query_imports);
  bool ImplementsFunction(const String& name, bool query_imports);
  Any GetFunctionDoc(const String& name, bool query_imports);
  Any GetFunctionMetadata(const String& name, bool query_imports);

  /* The Module object behind an object handle (its header sits 8 bytes in). */
  static ModuleObj* FromHandle(TVMFFIObject* handle) {
    return reinterpret_cast<ModuleObj*>(reinterpret_cast<char*>(handle) - sizeof(void*));
  }
  /* The imported modules' handles (borrowed; an Array's items). */
  TVM_FFI_CXX_HIDDEN const TVMFFIAny* import_items(int64_t* count) const;

  struct InternalUnsafe;

  /* As upstream's TVM_FFI_DECLARE_OBJECT_INFO_STATIC: registers ffi.Module
   * once (its static local is shared process-wide, hence exported). */
  TVM_FFI_CXX_EXPORT static int32_t _GetOrAllocRuntimeTypeIndex() {
    TVMFFIByteArray type_key = {"ffi.Module", 10};
    static int32_t tindex = TVMFFITypeGetOrAllocIndex(&type_key, kTVMFFIModule, 1, 0, 1, 0);
    (void)tindex;
    return kTVMFFIModule;
  }

 protected:
  friend struct InternalUnsafe;
  ObjectRef imports_;              /* Array<Any> */

 private:
  ObjectRef import_lookup_cache_;  /* Map<String, Function> */
};

/* ModuleObj::InternalUnsafe: TVMFFIEnvModLookupFromImports on a C++ module
 * (a borrowed Function, kept alive by the library; throws when missing),
 * serialised by one process-wide mutex as upstream's (the exported static). */
struct ModuleObj::InternalUnsafe {
  TVM_FFI_CXX_EXPORT static TVMFFIObject* GetFunctionFromImports(ModuleObj* module,
                                                                 const char* name) {
    static std::mutex mutex_;
    std::lock_guard<std::mutex> lock(mutex_);
    return LookupLocked(module, name);
  }
  TVM_FFI_CXX_HIDDEN static TVMFFIObject* LookupLocked(ModuleObj* module, const char* name);
};

/* tvm::ffi::Module: a reference to a ModuleObj (data_ is its header). */
class Module : public ObjectRef {
 public:
  ModuleObj* operator->() const { return ModuleObj::FromHandle(data_); }
  static Module Own(TVMFFIObject* obj) {
    Module module;
    module.data_ = obj;
    return module;
  }

  TVM_FFI_CXX_EXPORT static Module LoadFromFile(const String& file_name);
  TVM_FFI_CXX_EXPORT static void VisitContextSymbols(
      const TypedFunction<void(String, void*)>& callback);
};

/* tvm::ffi::VisitErrorContext */
class VisitErrorContext : public ObjectRef {
 public:
  TVM_FFI_CXX_EXPORT static ObjectRef FindAccessPaths(const ObjectRef& root,
                                                      const VisitErrorContext& visit_context,
                                                      bool allow_prefix_match);
};

class StructuralEqual {
 public:
  TVM_FFI_CXX_EXPORT static bool Equal(const Any& lhs, const Any& rhs, bool map_free_vars,
                                       bool skip_tensor_content);
  TVM_FFI_CXX_EXPORT static ObjectRef GetFirstMismatch(const Any& lhs, const Any& rhs,
                                                       bool map_free_vars,
                                                       bool skip_tensor_content);
};

class StructuralHash {
 public:
  TVM_FFI_CXX_EXPORT static uint64_t Hash(const Any& value, bool map_free_vars,
                                          bool skip_tensor_content);
};

namespace json {
TVM_FFI_CXX_EXPORT Any Parse(const String& json_str, String* error_msg);
TVM_FFI_CXX_EXPORT String Stringify(const Any& value, const Optional<int>& indent);
}  // namespace json

TVM_FFI_CXX_EXPORT Any ToJSONGraph(const Any& value, const Any& metadata);
TVM_FFI_CXX_EXPORT Any FromJSONGraph(const Any& value);
TVM_FFI_CXX_EXPORT Any DeepCopy(const Any& value);
TVM_FFI_CXX_EXPORT String ReprPrint(const Any& value);
TVM_FFI_CXX_EXPORT int64_t RecursiveHash(const Any& value);
TVM_FFI_CXX_EXPORT bool RecursiveEq(const Any& lhs, const Any& rhs);
TVM_FFI_CXX_EXPORT bool RecursiveLt(const Any& lhs, const Any& rhs);
TVM_FFI_CXX_EXPORT bool RecursiveLe(const Any& lhs, const Any& rhs);
TVM_FFI_CXX_EXPORT bool RecursiveGt(const Any& lhs, const Any& rhs);
TVM_FFI_CXX_EXPORT bool RecursiveGe(const Any& lhs, const Any& rhs);

/* ------------------------------------------------ helpers of this library */
namespace cxx_face {

/* A borrowed view of a value (for passing as an argument). */
inline TVMFFIAny View(const AnyCell& value) { return value.raw(); }
TVMFFIAny ViewBool(bool value);
TVMFFIAny ViewInt(int64_t value);
TVMFFIAny ViewPtr(void* value);

/* Calls the global function name with borrowed args; throws Error when the
 * function is missing or fails. */
Any CallGlobal(const char* name, const TVMFFIAny* args, int32_t num_args);
/* Calls func (a Function object); throws Error when it fails. */
Any CallFunction(TVMFFIObject* func, const TVMFFIAny* args, int32_t num_args);

/* The value as a bool / an int / an object reference / a String, or an Error
 * naming what was expected. */
bool AsBool(const Any& value, const char* what);
int64_t AsInt(const Any& value, const char* what);
ObjectRef AsObject(Any value, const char* what);
String AsString(Any value, const char* what);

/* Runs body, turning a thrown Error into the raised error and -1 (C callers). */
template <typename Body>
int SafeCall(Body body) {
  try {
    body();
    return 0;
  } catch (Error& error) {
    TVMFFIErrorSetRaised(error.release());
  } catch (std::exception& error) {
    TVMFFIErrorSetRaisedFromCStr("InternalError", error.what());
  }
  return -1;
}

}  // namespace cxx_face

/* The helpers, by their short names, in this library's sources. */
using cxx_face::AsBool;
using cxx_face::AsInt;
using cxx_face::AsObject;
using cxx_face::AsString;
using cxx_face::CallFunction;
using cxx_face::CallGlobal;
using cxx_face::View;
using cxx_face::ViewBool;
}  // namespace ffi
}  // namespace tvm

#endif  // TVM_FFI_SRC_CXX_ABI_H_
