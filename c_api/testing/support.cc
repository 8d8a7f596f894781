// support.cc -- values, errors, global calls and container access for the testing library.
#include "support.h"

#include <cstring>
#include <mutex>
#include <unordered_map>

namespace tvm_ffi_testing {

void Throw(const char* kind, std::string message) { throw Error{kind, std::move(message), ""}; }

void RaiseError(const Error& error) noexcept {
  if (error.backtrace.empty()) {
    TVMFFIErrorSetRaisedFromCStr(error.kind.c_str(), error.message.c_str());
    return;
  }
  TVMFFIByteArray kind{error.kind.data(), error.kind.size()};
  TVMFFIByteArray message{error.message.data(), error.message.size()};
  TVMFFIByteArray backtrace{error.backtrace.data(), error.backtrace.size()};
  TVMFFIObjectHandle handle = nullptr;
  if (TVMFFIErrorCreate(&kind, &message, &backtrace, &handle) != 0) {
    TVMFFIErrorSetRaisedFromCStr(error.kind.c_str(), error.message.c_str());
    return;
  }
  TVMFFIErrorSetRaised(handle);
  TVMFFIObjectDecRef(handle);
}

// ---------------------------------------------------------------- Value

Value Value::Copy(const TVMFFIAny& view) {
  TVMFFIAny owned;
  Check(TVMFFIAnyViewToOwnedAny(&view, &owned));
  return Value(owned);
}

Value Value::FromHandle(void* handle) {
  if (handle == nullptr) return Value();
  TVMFFIAny raw;
  raw.type_index = Header(handle)->type_index;
  raw.zero_padding = 0;
  raw.v_obj = Header(handle);
  TVMFFIObjectIncRef(handle);
  return Value(raw);
}

namespace {

// A value of an inline (non-object) type: its index and one member of the payload.
template <typename T>
TVMFFIAny Inline(int32_t type_index, T TVMFFIAny::*member, T value) {
  TVMFFIAny raw = Value::None();
  raw.type_index = type_index;
  raw.*member = value;
  return raw;
}

}  // namespace

Value Value::Int(int64_t value) { return Value(Inline(kTVMFFIInt, &TVMFFIAny::v_int64, value)); }

Value Value::Float(double value) {
  return Value(Inline(kTVMFFIFloat, &TVMFFIAny::v_float64, value));
}

Value Value::Bool(bool value) {
  return Value(Inline<int64_t>(kTVMFFIBool, &TVMFFIAny::v_int64, value ? 1 : 0));
}

Value Value::Str(const std::string& text) {
  TVMFFIByteArray bytes{text.data(), text.size()};
  TVMFFIAny raw;
  Check(TVMFFIStringFromByteArray(&bytes, &raw));
  return Value(raw);
}

Value Value::Bytes(const std::string& data) {
  TVMFFIByteArray bytes{data.data(), data.size()};
  TVMFFIAny raw;
  Check(TVMFFIBytesFromByteArray(&bytes, &raw));
  return Value(raw);
}

Value Value::Device(DLDevice device) {
  return Value(Inline(kTVMFFIDevice, &TVMFFIAny::v_device, device));
}

Value Value::DType(DLDataType dtype) {
  return Value(Inline(kTVMFFIDataType, &TVMFFIAny::v_dtype, dtype));
}

Value Value::TensorPtr(DLTensor* tensor) {
  return Value(Inline<void*>(kTVMFFIDLTensorPtr, &TVMFFIAny::v_ptr, tensor));
}

Value::Value(const Value& other) : raw_(other.raw_) {
  if (is_object()) TVMFFIObjectIncRef(raw_.v_obj);
}

Value::~Value() {
  if (is_object()) TVMFFIObjectDecRef(raw_.v_obj);
}

std::string Value::AsStr() const {
  TVMFFIByteArray view;
  if (!StrView(raw_, false, &view) && !StrView(raw_, true, &view)) return std::string();
  return std::string(view.data, view.size);
}

bool StrView(const TVMFFIAny& value, bool bytes, TVMFFIByteArray* out) {
  int32_t small = bytes ? kTVMFFISmallBytes : kTVMFFISmallStr;
  int32_t object = bytes ? kTVMFFIBytes : kTVMFFIStr;
  if (value.type_index == small) {
    out->data = value.v_bytes;
    out->size = value.small_str_len;
  } else if (value.type_index == object) {
    *out = *reinterpret_cast<const TVMFFIByteArray*>(ObjectBytes(value.v_obj) + sizeof(TVMFFIObject));
  } else if (!bytes && value.type_index == kTVMFFIRawStr) {
    out->data = value.v_c_str;
    out->size = std::strlen(value.v_c_str);
  } else {
    return false;
  }
  return true;
}

bool IsStr(const TVMFFIAny& value) {
  return value.type_index == kTVMFFISmallStr || value.type_index == kTVMFFIStr;
}

// ---------------------------------------------------------------- functions

TVMFFIObjectHandle GlobalFunction(const char* name) {
  static std::mutex mutex;
  static std::unordered_map<std::string, TVMFFIObjectHandle> cache;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(name);
    if (it != cache.end()) return it->second;
  }
  // Looked up without the lock held: the runtime may need the GIL, which a caller
  // waiting for the lock could hold.
  TVMFFIByteArray key{name, std::strlen(name)};
  TVMFFIObjectHandle handle = nullptr;
  Check(TVMFFIFunctionGetGlobal(&key, &handle));
  if (handle == nullptr) {
    Throw("RuntimeError", std::string("the global function `") + name +
                              "` is not registered by the installed TVM FFI runtime");
  }
  std::lock_guard<std::mutex> lock(mutex);
  auto inserted = cache.emplace(name, handle);  // one reference kept for the process
  if (!inserted.second) TVMFFIObjectDecRef(handle);
  return inserted.first->second;
}

Value CallFunction(TVMFFIObjectHandle function, const TVMFFIAny* args, int32_t num_args) {
  TVMFFIAny result = Value::None();
  Check(TVMFFIFunctionCall(function, const_cast<TVMFFIAny*>(args), num_args, &result));
  return Value::Adopt(result);
}

Value CallGlobal(const char* name, const std::vector<Value>& args) {
  std::vector<TVMFFIAny> views;
  views.reserve(args.size());
  for (const Value& arg : args) views.push_back(arg.raw());
  return CallFunction(GlobalFunction(name), views.data(), static_cast<int32_t>(views.size()));
}

Value MakeFunction(void* self, TVMFFISafeCallType safe_call, void (*deleter)(void*)) {
  TVMFFIObjectHandle handle = nullptr;
  if (TVMFFIFunctionCreate(self, safe_call, deleter, &handle) != 0) {
    deleter(self);
    throw Raised{};
  }
  TVMFFIAny raw = Value::None();
  raw.type_index = kTVMFFIFunction;
  raw.v_obj = Header(handle);
  return Value::Adopt(raw);
}

// ---------------------------------------------------------------- types

std::string TypeKeyOf(int32_t type_index) {
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(type_index);
  if (info == nullptr) throw Raised{};
  return std::string(info->type_key.data, info->type_key.size);
}

int32_t TypeIndexOf(const char* type_key) {
  TVMFFIByteArray key{type_key, std::strlen(type_key)};
  int32_t index = 0;
  Check(TVMFFITypeKeyToIndex(&key, &index));
  return index;
}

bool IsInstanceOf(int32_t type_index, int32_t target) {
  if (type_index == target || target == kTVMFFIObject) return type_index >= kTVMFFIStaticObjectBegin;
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(type_index);
  const TVMFFITypeInfo* goal = TVMFFIGetTypeInfo(target);
  if (info == nullptr || goal == nullptr) throw Raised{};
  return goal->type_depth < info->type_depth &&
         info->type_ancestors[goal->type_depth]->type_index == target;
}

int64_t UseCount(void* handle) {
  uint64_t combined = __atomic_load_n(&Header(handle)->combined_ref_count, __ATOMIC_RELAXED);
  return static_cast<int64_t>(combined & 0xFFFFFFFFu);
}

// ---------------------------------------------------------------- containers

std::vector<std::pair<Value, Value>> MapItems(const Value& map) {
  bool is_dict = map.type_index() == kTVMFFIDict;
  std::vector<std::pair<Value, Value>> items;
  std::vector<Value> self{map};
  if (CallGlobal(is_dict ? "ffi.DictSize" : "ffi.MapSize", self).AsInt() == 0) return items;
  Value iter = CallGlobal(is_dict ? "ffi.DictForwardIterFunctor" : "ffi.MapForwardIterFunctor",
                          self);
  TVMFFIAny command = Value::None();
  command.type_index = kTVMFFIInt;
  do {
    command.v_int64 = 0;
    Value key = CallFunction(iter.handle(), &command, 1);
    command.v_int64 = 1;
    Value value = CallFunction(iter.handle(), &command, 1);
    items.emplace_back(std::move(key), std::move(value));
    command.v_int64 = 2;
  } while (CallFunction(iter.handle(), &command, 1).AsInt() != 0);
  return items;
}

Value MakeSeq(const char* constructor, const std::vector<Value>& items) {
  return CallGlobal(constructor, items);
}

Value MakeMap(const char* constructor, const std::vector<std::pair<Value, Value>>& items) {
  std::vector<Value> flat;
  flat.reserve(items.size() * 2);
  for (const auto& item : items) {
    flat.push_back(item.first);
    flat.push_back(item.second);
  }
  return CallGlobal(constructor, flat);
}

std::string JsonString(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default: out += c;
    }
  }
  return out + "\"";
}

}  // namespace tvm_ffi_testing
