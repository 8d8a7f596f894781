/*
 * support.h -- the small toolkit libtvm_ffi_testing.so is written with.
 *
 * The testing library speaks to the runtime through the C API of
 * c_api/include alone (no C++ object model of upstream's), so it brings its
 * own: an owning TVMFFIAny (Value), errors thrown inside the library and
 * raised at its C boundary (Guard), calls to global functions by name, and
 * the object/container access a kernel needs (type checks, Array and List
 * cells, Map items, Tensor cells).
 */
#ifndef TVM_FFI_TESTING_SUPPORT_H_
#define TVM_FFI_TESTING_SUPPORT_H_

#include <dlpack/dlpack.h>
#include <tvm/ffi/c_api.h>
#include <tvm/ffi/extra/c_env_api.h>

#include <cstdint>
#include <new>
#include <string>
#include <utility>
#include <vector>

namespace tvm_ffi_testing {

/* An error to raise: thrown inside the library, raised at its C boundary. */
struct Error {
  std::string kind;
  std::string message;
  std::string backtrace;  // empty: the runtime's default
};

/* Raises an error through the C API. */
void RaiseError(const Error& error) noexcept;

/* A callee already raised an error through the C API: pass it on unchanged. */
struct Raised {};

[[noreturn]] void Throw(const char* kind, std::string message);

/* Throws Raised when a C API call failed. */
inline void Check(int status) {
  if (status != 0) throw Raised{};
}

/* Runs body; 0, or -1 with what it threw raised through the C API. */
template <typename Body>
int Guard(Body&& body) noexcept {
  try {
    body();
    return 0;
  } catch (const Raised&) {
  } catch (const Error& error) {
    RaiseError(error);
  } catch (const std::bad_alloc&) {
    TVMFFIErrorSetRaisedFromCStr("MemoryError", "out of memory");
  } catch (...) {
    TVMFFIErrorSetRaisedFromCStr("InternalError", "unexpected C++ exception");
  }
  return -1;
}

/* One owned TVMFFIAny: holds a strong reference when it holds an object. */
class Value {
 public:
  Value() noexcept { raw_ = None(); }
  /* Takes over an owned TVMFFIAny. */
  static Value Adopt(const TVMFFIAny& owned) noexcept { return Value(owned); }
  /* An owned copy of a borrowed view (raw strings and byte arrays become objects). */
  static Value Copy(const TVMFFIAny& view);
  /* A new reference to a borrowed object handle (None for NULL). */
  static Value FromHandle(void* handle);
  static Value Int(int64_t value);
  static Value Float(double value);
  static Value Bool(bool value);
  static Value Str(const std::string& text);
  static Value Bytes(const std::string& data);
  static Value Device(DLDevice device);
  static Value DType(DLDataType dtype);
  /* A borrowed DLTensor* (no ownership: valid while its owner lives). */
  static Value TensorPtr(DLTensor* tensor);

  Value(const Value& other);
  Value(Value&& other) noexcept : raw_(other.raw_) { other.raw_ = None(); }
  Value& operator=(Value other) noexcept {
    std::swap(raw_, other.raw_);
    return *this;
  }
  ~Value();

  const TVMFFIAny& raw() const { return raw_; }
  int32_t type_index() const { return raw_.type_index; }
  bool is_none() const { return raw_.type_index == kTVMFFINone; }
  bool is_object() const { return raw_.type_index >= kTVMFFIStaticObjectBegin; }
  void* handle() const { return is_object() ? static_cast<void*>(raw_.v_obj) : nullptr; }
  int64_t AsInt() const { return raw_.v_int64; }
  double AsFloat() const { return raw_.v_float64; }
  /* The text of a string or bytes value. */
  std::string AsStr() const;
  /* Gives the reference away (this becomes None). */
  TVMFFIAny Release() noexcept {
    TVMFFIAny out = raw_;
    raw_ = None();
    return out;
  }

  static TVMFFIAny None() noexcept {
    TVMFFIAny none;
    none.type_index = kTVMFFINone;
    none.zero_padding = 0;
    none.v_int64 = 0;
    return none;
  }

 private:
  explicit Value(const TVMFFIAny& owned) noexcept : raw_(owned) {}
  TVMFFIAny raw_;
};

/* The bytes of a string or bytes value in any of its encodings; false otherwise. */
bool StrView(const TVMFFIAny& value, bool bytes, TVMFFIByteArray* out);
bool IsStr(const TVMFFIAny& value);

/* A global function's handle, looked up once and kept for the process. */
TVMFFIObjectHandle GlobalFunction(const char* name);
/* Calls a Function with borrowed arguments; the owned result. */
Value CallFunction(TVMFFIObjectHandle function, const TVMFFIAny* args, int32_t num_args);
Value CallGlobal(const char* name, const std::vector<Value>& args);

/* A new Function object calling safe_call with self, deleting self with deleter. */
Value MakeFunction(void* self, TVMFFISafeCallType safe_call, void (*deleter)(void*));

/* Type records. */
std::string TypeKeyOf(int32_t type_index);
int32_t TypeIndexOf(const char* type_key);
/* Whether an object of type_index is an instance of the type target. */
bool IsInstanceOf(int32_t type_index, int32_t target);

/* Objects: the 24-byte header, then the type's own storage. */
inline TVMFFIObject* Header(void* handle) { return static_cast<TVMFFIObject*>(handle); }
inline char* ObjectBytes(void* handle) { return static_cast<char*>(handle); }
int64_t UseCount(void* handle);

/* Containers. */
inline TVMFFISeqCell* SeqCell(void* handle) {
  return reinterpret_cast<TVMFFISeqCell*>(ObjectBytes(handle) + sizeof(TVMFFIObject));
}
inline const TVMFFIAny* SeqItems(void* handle) {
  return static_cast<const TVMFFIAny*>(SeqCell(handle)->data);
}
inline DLTensor* TensorCell(void* handle) {
  return reinterpret_cast<DLTensor*>(ObjectBytes(handle) + sizeof(TVMFFIObject));
}
/* (key, value) pairs of a Map or Dict, in iteration order. */
std::vector<std::pair<Value, Value>> MapItems(const Value& map);
Value MakeSeq(const char* constructor, const std::vector<Value>& items);
Value MakeMap(const char* constructor, const std::vector<std::pair<Value, Value>>& items);

/* JSON text of a string (quoted and escaped). */
std::string JsonString(const std::string& text);

}  // namespace tvm_ffi_testing

#endif  // TVM_FFI_TESTING_SUPPORT_H_
