// Reflected objects and global functions. The kernel registers object types
// with fields and methods (reflection::ObjectDef) and global functions
// (reflection::GlobalDef) at load time, and can look up and call global
// functions that Python registered.
#include <tvm/ffi/any.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/memory.h>
#include <tvm/ffi/object.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/ffi/string.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace corpus {

using tvm::ffi::Any;
using tvm::ffi::AnyView;
using tvm::ffi::Array;
using tvm::ffi::Function;
using tvm::ffi::Object;
using tvm::ffi::ObjectRef;
using tvm::ffi::String;

// A point with an integer x, a mutable double y, a label and free-form tags.
class PointObj : public Object {
 public:
  int64_t x = 0;
  double y = 0.0;
  String label;
  Array<Any> tags;

  PointObj() = default;
  PointObj(int64_t x, double y, String label, Array<Any> tags)
      : x(x), y(y), label(std::move(label)), tags(std::move(tags)) {}

  static constexpr bool _type_mutable = true;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("corpus.Point", PointObj, Object);
};

class Point : public ObjectRef {
 public:
  Point(int64_t x, double y, String label, Array<Any> tags) {
    data_ = tvm::ffi::make_object<PointObj>(x, y, std::move(label), std::move(tags));
  }
  double Norm1() const { return std::fabs(static_cast<double>(get()->x)) + std::fabs(get()->y); }
  Point Scaled(double k) const {
    return Point(static_cast<int64_t>(static_cast<double>(get()->x) * k), get()->y * k,
                 get()->label, get()->tags);
  }
  static Point Origin() { return Point(0, 0.0, String("origin"), Array<Any>()); }
  TVM_FFI_DEFINE_OBJECT_REF_METHODS_NOTNULLABLE(Point, ObjectRef, PointObj);
};

// A small hierarchy: fields of the base come before fields of the derived type.
class ShapeBaseObj : public Object {
 public:
  String name;
  static constexpr uint32_t _type_child_slots = 1;
  TVM_FFI_DECLARE_OBJECT_INFO("corpus.ShapeBase", ShapeBaseObj, Object);
};

class CircleObj : public ShapeBaseObj {
 public:
  double radius = 0.0;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("corpus.Circle", CircleObj, ShapeBaseObj);
};

namespace {

Point MakePoint(int64_t x, double y, String label, Array<Any> tags) {
  return Point(x, y, std::move(label), std::move(tags));
}
// C++ reads the fields back (after Python may have written y).
String DescribePoint(Point p) {
  return String(p->label + "(" + std::to_string(p->x) + ", " + std::to_string(p->y) + ") tags=" +
                std::to_string(p->tags.size()));
}
// C++ writes a field of an object Python holds; Python must see the change.
void SetPointY(Point p, double y) { const_cast<PointObj*>(p.get())->y = y; }
ObjectRef MakeCircle(String name, double radius) {
  auto obj = tvm::ffi::make_object<CircleObj>();
  obj->name = std::move(name);
  obj->radius = radius;
  return ObjectRef(obj);
}
// True when the argument is a corpus.ShapeBase (or subclass), by C++ type check.
bool IsShapeBase(ObjectRef obj) { return obj.as<ShapeBaseObj>() != nullptr; }

// ---- globals ---------------------------------------------------------------

Any CallGlobal(String name, Array<Any> args) {
  std::optional<Function> f = Function::GetGlobal(name);
  if (!f.has_value()) TVM_FFI_THROW(ValueError) << "global function " << name << " is not registered";
  std::vector<AnyView> views(args.begin(), args.end());
  Any result;
  f->CallPacked(views.data(), static_cast<int32_t>(views.size()), &result);
  return result;
}
bool HasGlobal(String name) { return Function::GetGlobal(name).has_value(); }
// Registers, at call time, a global adder under `name` (override allowed).
void RegisterAdder(String name, int64_t k) {
  Function::SetGlobal(std::string(name), Function::FromTyped([k](int64_t x) -> int64_t { return x + k; }),
                      true);
}
String JoinStrings(Array<String> parts, String sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += std::string(sep);
    out += std::string(parts[i]);
  }
  return String(out);
}

}  // namespace
}  // namespace corpus

TVM_FFI_STATIC_INIT_BLOCK() {
  namespace refl = tvm::ffi::reflection;
  using corpus::CircleObj;
  using corpus::Point;
  using corpus::PointObj;
  using corpus::ShapeBaseObj;
  using tvm::ffi::Any;
  using tvm::ffi::Array;
  using tvm::ffi::String;
  refl::ObjectDef<PointObj>()
      .def(refl::init<int64_t, double, String, Array<Any>>())
      .def_ro("x", &PointObj::x, "integer coordinate")
      .def_rw("y", &PointObj::y, "real coordinate, writable")
      .def_ro("label", &PointObj::label)
      .def_ro("tags", &PointObj::tags)
      .def("norm1", &Point::Norm1, "|x| + |y|")
      .def("scaled", &Point::Scaled)
      .def_static("origin", &Point::Origin);
  refl::ObjectDef<ShapeBaseObj>().def_ro("name", &ShapeBaseObj::name);
  refl::ObjectDef<CircleObj>().def_ro("radius", &CircleObj::radius);
  refl::GlobalDef()
      .def("corpus.cpp_add", [](int64_t a, int64_t b) { return a + b; })
      .def("corpus.cpp_join", corpus::JoinStrings)
      .def("corpus.cpp_make_point", corpus::MakePoint);
}

TVM_FFI_DLL_EXPORT_TYPED_FUNC(make_point, corpus::MakePoint);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(describe_point, corpus::DescribePoint);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(set_point_y, corpus::SetPointY);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(make_circle, corpus::MakeCircle);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(is_shape_base, corpus::IsShapeBase);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(call_global, corpus::CallGlobal);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(has_global, corpus::HasGlobal);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(register_adder, corpus::RegisterAdder);
