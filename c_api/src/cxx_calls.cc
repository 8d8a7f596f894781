/*
 * cxx_calls.cc -- what the C++ face shares: strings, calls into the installed
 * runtime through the C API, conversions of results, and tvm::ffi::Error
 * (its vtable and typeinfo are the ones C++ libraries catch by).
 */
#include <cstring>

#include "cxx_abi.h"

namespace tvm {
namespace ffi {

/* ------------------------------------------------------------------ String */

String::String(const char* data, size_t size) {
  TVMFFIByteArray bytes = {data, size};
  TVMFFIAny out = None();
  if (TVMFFIStringFromByteArray(&bytes, &out) != 0) {
    TVMFFIObjectHandle error = nullptr;
    TVMFFIErrorMoveFromRaised(&error);
    throw Error(static_cast<TVMFFIObject*>(error));
  }
  data_ = out;
}

const char* String::data() const {
  if (data_.type_index == kTVMFFISmallStr) return data_.v_bytes;
  if (data_.type_index == kTVMFFIStr) {
    const TVMFFIByteArray* cell = reinterpret_cast<const TVMFFIByteArray*>(data_.v_obj + 1);
    return cell->data;
  }
  return "";
}

size_t String::size() const {
  if (data_.type_index == kTVMFFISmallStr) return data_.small_str_len;
  if (data_.type_index == kTVMFFIStr) {
    return reinterpret_cast<const TVMFFIByteArray*>(data_.v_obj + 1)->size;
  }
  return 0;
}

TVMFFIAny ObjectRef::view() const {
  TVMFFIAny out = AnyCell::None();
  if (data_ != nullptr) {
    out.type_index = data_->type_index;
    out.v_obj = data_;
  }
  return out;
}

/* ------------------------------------------------------------------- Error */

static TVMFFIObject* NewErrorObject(const char* kind, const std::string& message) {
  TVMFFIByteArray kind_bytes = {kind, std::strlen(kind)};
  TVMFFIByteArray message_bytes = {message.data(), message.size()};
  TVMFFIByteArray backtrace = {"", 0};
  TVMFFIObjectHandle out = nullptr;
  if (TVMFFIErrorCreate(&kind_bytes, &message_bytes, &backtrace, &out) != 0) {
    TVMFFIErrorMoveFromRaised(&out);
  }
  return static_cast<TVMFFIObject*>(out);
}

Error::Error(const char* kind, const std::string& message) {
  data_ = NewErrorObject(kind, message);
}

namespace cxx_face {

ObjectRef NewEmptyArray() { return AsObject(CallGlobal("ffi.Array", nullptr, 0), "ffi.Array"); }

TVMFFIAny ViewBool(bool value) {
  TVMFFIAny out = AnyCell::None();
  out.type_index = kTVMFFIBool;
  out.v_int64 = value ? 1 : 0;
  return out;
}

TVMFFIAny ViewInt(int64_t value) {
  TVMFFIAny out = AnyCell::None();
  out.type_index = kTVMFFIInt;
  out.v_int64 = value;
  return out;
}

TVMFFIAny ViewPtr(void* value) {
  TVMFFIAny out = AnyCell::None();
  if (value != nullptr) {
    out.type_index = kTVMFFIOpaquePtr;
    out.v_ptr = value;
  }
  return out;
}

/* Throws the raised error (status -1) or the frontend's pending one (-2). */
[[noreturn]] static void ThrowRaised(int status) {
  TVMFFIObjectHandle error = nullptr;
  if (status == -2) throw Error("EnvErrorAlreadySet", "");
  TVMFFIErrorMoveFromRaised(&error);
  if (error == nullptr) throw Error("RuntimeError", "a call failed without raising an error");
  throw Error(static_cast<TVMFFIObject*>(error));
}

Any CallFunction(TVMFFIObject* func, const TVMFFIAny* args, int32_t num_args) {
  TVMFFIAny result = AnyCell::None();
  int status = TVMFFIFunctionCall(func, const_cast<TVMFFIAny*>(args), num_args, &result);
  if (status != 0) ThrowRaised(status);
  return Any(AnyCell::Own(result));
}

Any CallGlobal(const char* name, const TVMFFIAny* args, int32_t num_args) {
  TVMFFIByteArray name_bytes = {name, std::strlen(name)};
  TVMFFIObjectHandle func = nullptr;
  int status = TVMFFIFunctionGetGlobal(&name_bytes, &func);
  if (status != 0) ThrowRaised(status);
  if (func == nullptr) {
    throw Error("RuntimeError", std::string("Function ") + name +
                                    " is not registered in the global registry");
  }
  ObjectRef holder = ObjectRef::Own(static_cast<TVMFFIObject*>(func));
  return CallFunction(holder.get(), args, num_args);
}

[[noreturn]] static void ThrowExpected(const char* what, const char* expected) {
  throw Error("TypeError", std::string(what) + ": expected " + expected);
}

bool AsBool(const Any& value, const char* what) {
  int32_t type = value.raw().type_index;
  if (type != kTVMFFIBool && type != kTVMFFIInt) ThrowExpected(what, "a bool");
  return value.raw().v_int64 != 0;
}

int64_t AsInt(const Any& value, const char* what) {
  int32_t type = value.raw().type_index;
  if (type != kTVMFFIInt && type != kTVMFFIBool) ThrowExpected(what, "an int");
  return value.raw().v_int64;
}

ObjectRef AsObject(Any value, const char* what) {
  if (value.is_none()) return ObjectRef();
  if (!value.holds_object()) ThrowExpected(what, "an object");
  return ObjectRef::Own(value.Release().v_obj);
}

String AsString(Any value, const char* what) {
  int32_t type = value.raw().type_index;
  if (type != kTVMFFISmallStr && type != kTVMFFIStr) ThrowExpected(what, "a str");
  String out;
  static_cast<AnyCell&>(out) = value;
  return out;
}

}  // namespace cxx_face
}  // namespace ffi
}  // namespace tvm
