// Introspection helpers for the front-end comparison harness.
//
// The harness normalizes results into plain data. To learn an object's type
// key, its reflected field names or its reference count it asks this kernel
// instead of relying on private Python attributes of a front end: what the
// kernel reports comes straight from the ABI (the object header and the type
// registry), so it is the same question under every front end.
//
// Every function takes AnyView so that the argument is inspected exactly as
// the caller encoded it: no conversion, no extra reference.
#include <tvm/ffi/c_api.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>

#include <cstdint>
#include <string>

namespace {

using tvm::ffi::AnyView;
using tvm::ffi::Array;
using tvm::ffi::String;

// The type index carried by the argument's TVMFFIAny (kTVMFFISmallStr,
// kTVMFFIStr, kTVMFFIInt, ...): how the front end encoded a Python value.
int64_t ArgTypeIndex(AnyView value) { return value.type_index(); }

// The registered type key for the argument's type index ("int", "ffi.Array", ...).
String ArgTypeKey(AnyView value) {
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(value.type_index());
  if (info == nullptr) return String("<unregistered>");
  return String(std::string(info->type_key.data, info->type_key.size));
}

// Field names reflected for an object's type, own fields after inherited
// ones, in registration order. Empty for non-objects.
Array<String> ArgFieldNames(AnyView value) {
  Array<String> names;
  int32_t index = value.type_index();
  if (index < kTVMFFIStaticObjectBegin) return names;
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(index);
  if (info == nullptr) return names;
  for (int32_t depth = 0; depth <= info->type_depth; ++depth) {
    const TVMFFITypeInfo* level =
        depth < info->type_depth ? info->type_ancestors[depth] : info;
    for (int32_t i = 0; i < level->num_fields; ++i) {
      const TVMFFIByteArray& name = level->fields[i].name;
      names.push_back(String(std::string(name.data, name.size)));
    }
  }
  return names;
}

// The strong reference count of the object the argument points at, read
// from the object header without taking a reference. -1 for non-objects.
int64_t ArgStrongCount(AnyView value) {
  const TVMFFIAny* raw = reinterpret_cast<const TVMFFIAny*>(&value);
  if (raw->type_index < kTVMFFIStaticObjectBegin) return -1;
  return static_cast<int64_t>(raw->v_obj->combined_ref_count & 0xFFFFFFFFu);
}

// The weak reference count, read the same way. -1 for non-objects.
int64_t ArgWeakCount(AnyView value) {
  const TVMFFIAny* raw = reinterpret_cast<const TVMFFIAny*>(&value);
  if (raw->type_index < kTVMFFIStaticObjectBegin) return -1;
  return static_cast<int64_t>(raw->v_obj->combined_ref_count >> 32);
}

// The payload bits of a POD argument (small strings, ints, floats ...), so
// tests can see the exact 8 bytes a front end put into the TVMFFIAny.
int64_t ArgPayloadBits(AnyView value) {
  const TVMFFIAny* raw = reinterpret_cast<const TVMFFIAny*>(&value);
  return raw->v_int64;
}

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(arg_type_index, ArgTypeIndex);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(arg_type_key, ArgTypeKey);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(arg_field_names, ArgFieldNames);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(arg_strong_count, ArgStrongCount);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(arg_weak_count, ArgWeakCount);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(arg_payload_bits, ArgPayloadBits);
