// Python-defined object types seen from C++: a @py_class instance is an ordinary
// reflected object. This kernel finds their fields through TVMFFITypeInfo
// (reflection::ForEachFieldInfo, FieldGetter, CallFieldSetter), reads native
// fields at their offsets, and makes new objects through the generated
// __ffi_init__ type attribute. One function (Describe) instead reads through
// the structs tests/kernels/pyclass_abi.h declares -- the header
// dataclasses.gen_abi_cpp(["pyk.*"]) generates, which the test compiles in
// front of this file.
#include <tvm/ffi/any.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/object.h>
#include <tvm/ffi/reflection/accessor.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/ffi/string.h>

#include <cstdint>
#include <string>

namespace pyclass_reflection {

namespace refl = tvm::ffi::reflection;
using tvm::ffi::Any;
using tvm::ffi::AnyView;
using tvm::ffi::Array;
using tvm::ffi::Function;
using tvm::ffi::ObjectRef;
using tvm::ffi::String;

const TVMFFITypeInfo* InfoOf(const ObjectRef& obj) {
  return TVMFFIGetTypeInfo(obj->type_index());
}

const TVMFFIFieldInfo* FindField(const ObjectRef& obj, const std::string& name) {
  const TVMFFIFieldInfo* found = nullptr;
  refl::ForEachFieldInfo(InfoOf(obj), [&](const TVMFFIFieldInfo* info) {
    if (std::string(info->name.data, info->name.size) == name) found = info;
  });
  if (found == nullptr) TVM_FFI_THROW(KeyError) << "no field " << name;
  return found;
}

// "name@offset/size:static_index" for every field, ancestors first, and the type key.
String Layout(ObjectRef obj) {
  const TVMFFITypeInfo* info = InfoOf(obj);
  std::string out(info->type_key.data, info->type_key.size);
  refl::ForEachFieldInfo(info, [&](const TVMFFIFieldInfo* f) {
    out += " " + std::string(f->name.data, f->name.size) + "@" + std::to_string(f->offset) +
           "/" + std::to_string(f->size) + ":" + std::to_string(f->field_static_type_index);
  });
  return String(out);
}

// A field's value through its reflected getter.
Any GetField(ObjectRef obj, String name) {
  const TVMFFIFieldInfo* f = FindField(obj, std::string(name));
  Any result;
  TVMFFIAny* raw = reinterpret_cast<TVMFFIAny*>(&result);
  void* addr = reinterpret_cast<char*>(const_cast<tvm::ffi::Object*>(obj.get())) + f->offset;
  TVM_FFI_CHECK_SAFE_CALL(f->getter(addr, raw));
  return result;
}

// Writes a field through its reflected setter (the setter converts the value).
void SetField(ObjectRef obj, String name, AnyView value) {
  const TVMFFIFieldInfo* f = FindField(obj, std::string(name));
  void* addr = reinterpret_cast<char*>(const_cast<tvm::ffi::Object*>(obj.get())) + f->offset;
  TVM_FFI_CHECK_SAFE_CALL(
      refl::CallFieldSetter(f, addr, reinterpret_cast<const TVMFFIAny*>(&value)));
}

// An int64 field read straight from memory: the layout is what C++ would compile.
int64_t ReadInt64At(ObjectRef obj, String name) {
  const TVMFFIFieldInfo* f = FindField(obj, std::string(name));
  if (f->field_static_type_index != tvm::ffi::TypeIndex::kTVMFFIInt) {
    TVM_FFI_THROW(TypeError) << "field " << name << " is not stored as int64";
  }
  return *reinterpret_cast<const int64_t*>(reinterpret_cast<const char*>(obj.get()) + f->offset);
}

// A double field read straight from memory.
double ReadDoubleAt(ObjectRef obj, String name) {
  const TVMFFIFieldInfo* f = FindField(obj, std::string(name));
  return *reinterpret_cast<const double*>(reinterpret_cast<const char*>(obj.get()) + f->offset);
}

// A new object of the type named type_key, made by its __ffi_init__ from positional args.
ObjectRef Make(String type_key, Array<Any> args) {
  int32_t type_index;
  TVMFFIByteArray key{type_key.data(), type_key.size()};
  TVM_FFI_CHECK_SAFE_CALL(TVMFFITypeKeyToIndex(&key, &type_index));
  refl::TypeAttrColumn column("__ffi_init__");
  AnyView init_view = column[type_index];
  Function init = init_view.cast<Function>();
  std::vector<AnyView> views(args.begin(), args.end());
  Any made;
  init.CallPacked(views.data(), static_cast<int32_t>(views.size()), &made);
  return made.cast<ObjectRef>();
}

// Calls a method a Python class registered with @tvm_ffi.method, found by name.
Any CallMethod(ObjectRef obj, String name, Array<Any> extra) {
  const TVMFFITypeInfo* info = InfoOf(obj);
  for (int32_t i = 0; i < info->num_methods; ++i) {
    const TVMFFIMethodInfo* m = &info->methods[i];
    if (std::string(m->name.data, m->name.size) != std::string(name)) continue;
    Function fn = AnyView::CopyFromTVMFFIAny(m->method).cast<Function>();
    std::vector<AnyView> views{AnyView(obj)};
    for (const Any& e : extra) views.emplace_back(e);
    Any result;
    fn.CallPacked(views.data(), static_cast<int32_t>(views.size()), &result);
    return result;
  }
  TVM_FFI_THROW(KeyError) << "no method " << name;
  TVM_FFI_UNREACHABLE();
}

// A pyk.Point read through the generated struct (pyclass_abi.h), not through reflection.
String Describe(ObjectRef obj) {
  const auto* p = obj.as<::pyk::PointObj>();
  if (p == nullptr) TVM_FFI_THROW(TypeError) << "not a pyk.Point";
  return String(std::string(p->tag) + " flag=" + (p->flag ? "1" : "0") +
                " x=" + std::to_string(p->x) + " y=" + std::to_string(p->y) +
                " items=" + std::to_string(p->items.size()));
}

TVM_FFI_STATIC_INIT_BLOCK() {
  refl::GlobalDef()
      .def("pyclass_reflection.layout", Layout)
      .def("pyclass_reflection.get_field", GetField)
      .def("pyclass_reflection.set_field", SetField)
      .def("pyclass_reflection.read_int64_at", ReadInt64At)
      .def("pyclass_reflection.read_double_at", ReadDoubleAt)
      .def("pyclass_reflection.make", Make)
      .def("pyclass_reflection.call_method", CallMethod)
      .def("pyclass_reflection.describe", Describe);
}

}  // namespace pyclass_reflection
