// typed_function.cc -- Functions with declared parameter types, and global registration.
#include <cstring>

#include "define.h"

namespace tvm_ffi_testing {

namespace {

struct TypedState {
  std::string signature;
  std::vector<SchemaRef> params;
  Body body;
};

// Converts the arguments last first, as upstream's typed calls do (so of two bad
// arguments the later one is named), then runs the body.
int CallTyped(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  const TypedState* state = static_cast<const TypedState*>(self);
  return Guard([&] {
    size_t expected = state->params.size();
    if (static_cast<size_t>(num_args) != expected) {
      Throw("TypeError", "Mismatched number of arguments when calling: `" + state->signature +
                             "`. Expected " + std::to_string(expected) + " but got " +
                             std::to_string(num_args) + " arguments");
    }
    std::vector<Value> converted(expected);
    for (size_t i = expected; i-- > 0;) {
      std::string mismatch;
      if (!Convert(*state->params[i], args[i], &converted[i], &mismatch)) {
        Throw("TypeError", "Mismatched type on argument #" + std::to_string(i) +
                               " when calling: `" + state->signature + "`. Expected `" +
                               state->params[i]->Str() + "` but got `" + mismatch + "`");
      }
    }
    *result = state->body(converted).Release();
  });
}

int CallPacked(void* self, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  const PackedBody* body = static_cast<const PackedBody*>(self);
  return Guard([&] { *result = (*body)(args, num_args).Release(); });
}

void DeleteTyped(void* self) { delete static_cast<TypedState*>(self); }
void DeletePacked(void* self) { delete static_cast<PackedBody*>(self); }

void SetGlobal(const char* name, const Value& function, const std::string& metadata,
               const char* doc) {
  TVMFFIMethodInfo info;
  info.name = TVMFFIByteArray{name, std::strlen(name)};
  info.doc = TVMFFIByteArray{doc, doc == nullptr ? 0 : std::strlen(doc)};
  info.metadata = TVMFFIByteArray{metadata.data(), metadata.size()};
  info.flags = 0;
  info.method = function.raw();
  Check(TVMFFIFunctionSetGlobalFromMethodInfo(&info, 0));
}

}  // namespace

Value TypedFunction(std::string name, SchemaRef result, std::vector<SchemaRef> params, Body body) {
  TypedState* state = new TypedState{Signature(name, result, params), std::move(params),
                                     std::move(body)};
  return MakeFunction(state, CallTyped, DeleteTyped);
}

Value PackedFunction(PackedBody body) {
  return MakeFunction(new PackedBody(std::move(body)), CallPacked, DeletePacked);
}

std::string MetadataJson(const std::string& type_schema, const Metadata& extra) {
  std::string out = "{\"type_schema\":" + JsonString(type_schema);
  for (const auto& entry : extra) out += "," + JsonString(entry.first) + ":" + entry.second;
  return out + "}";
}

void DefGlobal(const char* name, SchemaRef result, std::vector<SchemaRef> params, Body body,
               const char* doc, const Metadata& extra) {
  std::string metadata = MetadataJson(FunctionSchemaJson(result, params), extra);
  SetGlobal(name, TypedFunction(name, result, std::move(params), std::move(body)), metadata, doc);
}

void DefPacked(const char* name, PackedBody body) {
  SetGlobal(name, PackedFunction(std::move(body)), MetadataJson(S::Function()->Json(), {}),
            nullptr);
}

Value FindGlobal(const char* name) {
  TVMFFIByteArray key{name, std::strlen(name)};
  TVMFFIObjectHandle handle = nullptr;
  Check(TVMFFIFunctionGetGlobal(&key, &handle));
  if (handle == nullptr) return Value();
  TVMFFIAny raw = Value::None();
  raw.type_index = kTVMFFIFunction;
  raw.v_obj = Header(handle);
  return Value::Adopt(raw);
}

}  // namespace tvm_ffi_testing
