// Reflected objects for the value-level operations (ffi.ReprPrint, ffi.RecursiveEq/Lt/...,
// ffi.RecursiveHash): fields excluded from repr, comparison or hashing, a derived type whose
// field shadows its base's, a mutable node for cycles, and types with custom
// __ffi_repr__ / __ffi_hash__ / __ffi_eq__ / __ffi_compare__ hooks.
#include <tvm/ffi/any.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/extra/dataclass.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/memory.h>
#include <tvm/ffi/object.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/ffi/string.h>

#include <cstdint>
#include <string>

namespace dcops {

using tvm::ffi::Any;
using tvm::ffi::AnyView;
using tvm::ffi::Function;
using tvm::ffi::Object;
using tvm::ffi::ObjectRef;
using tvm::ffi::String;

// Every flag: `secret` is left out of repr, `note` out of comparison (and so of hashing),
// `stamp` out of hashing only.
class PointObj : public Object {
 public:
  int64_t x = 0;
  double y = 0.0;
  String label;
  int64_t secret = 0;
  String note;
  int64_t stamp = 0;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("dcops.Point", PointObj, Object);
};

// A base with two fields and a derived type that declares `name` again.
class BaseObj : public Object {
 public:
  String name;
  int64_t tag = 0;
  static constexpr uint32_t _type_child_slots = 1;
  TVM_FFI_DECLARE_OBJECT_INFO("dcops.Base", BaseObj, Object);
};

class DerivedObj : public BaseObj {
 public:
  String name2;
  double extra = 0.0;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("dcops.Derived", DerivedObj, BaseObj);
};

// A node whose `next` can point anywhere, itself included.
class NodeObj : public Object {
 public:
  Any value;
  Any next;
  static constexpr bool _type_mutable = true;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("dcops.Node", NodeObj, Object);
};

// No fields at all, and only hidden fields.
class EmptyObj : public Object {
 public:
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("dcops.Empty", EmptyObj, Object);
};

class HiddenObj : public Object {
 public:
  int64_t a = 0;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("dcops.Hidden", HiddenObj, Object);
};

// Custom hooks: identity is `key` alone; `label` is decoration.
class KeyedObj : public Object {
 public:
  Any key;
  String label;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("dcops.Keyed", KeyedObj, Object);
};

// Equality without a hash: RecursiveHash must refuse it.
class EqOnlyObj : public Object {
 public:
  int64_t v = 0;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("dcops.EqOnly", EqOnlyObj, Object);
};

namespace {

ObjectRef MakePoint(int64_t x, double y, String label, int64_t secret, String note,
                    int64_t stamp) {
  auto p = tvm::ffi::make_object<PointObj>();
  p->x = x;
  p->y = y;
  p->label = std::move(label);
  p->secret = secret;
  p->note = std::move(note);
  p->stamp = stamp;
  return ObjectRef(p);
}

ObjectRef MakeBase(String name, int64_t tag) {
  auto p = tvm::ffi::make_object<BaseObj>();
  p->name = std::move(name);
  p->tag = tag;
  return ObjectRef(p);
}

ObjectRef MakeDerived(String name, int64_t tag, String name2, double extra) {
  auto p = tvm::ffi::make_object<DerivedObj>();
  p->name = std::move(name);
  p->tag = tag;
  p->name2 = std::move(name2);
  p->extra = extra;
  return ObjectRef(p);
}

ObjectRef MakeNode(Any value) {
  auto p = tvm::ffi::make_object<NodeObj>();
  p->value = std::move(value);
  return ObjectRef(p);
}

void SetNext(ObjectRef node, Any next) {
  const_cast<NodeObj*>(node.as<NodeObj>())->next = std::move(next);
}

ObjectRef MakeEmpty() { return ObjectRef(tvm::ffi::make_object<EmptyObj>()); }

ObjectRef MakeHidden(int64_t a) {
  auto p = tvm::ffi::make_object<HiddenObj>();
  p->a = a;
  return ObjectRef(p);
}

ObjectRef MakeKeyed(Any key, String label) {
  auto p = tvm::ffi::make_object<KeyedObj>();
  p->key = std::move(key);
  p->label = std::move(label);
  return ObjectRef(p);
}

ObjectRef MakeEqOnly(int64_t v) {
  auto p = tvm::ffi::make_object<EqOnlyObj>();
  p->v = v;
  return ObjectRef(p);
}

}  // namespace
}  // namespace dcops

TVM_FFI_STATIC_INIT_BLOCK() {
  namespace refl = tvm::ffi::reflection;
  namespace type_attr = tvm::ffi::type_attr;
  using tvm::ffi::AnyView;
  using tvm::ffi::Function;
  using tvm::ffi::Object;
  using tvm::ffi::String;
  using namespace dcops;
  refl::ObjectDef<PointObj>()
      .def_ro("x", &PointObj::x)
      .def_ro("y", &PointObj::y)
      .def_ro("label", &PointObj::label)
      .def_ro("secret", &PointObj::secret, refl::repr(false))
      .def_ro("note", &PointObj::note, refl::compare(false))
      .def_ro("stamp", &PointObj::stamp, refl::hash(false));
  refl::ObjectDef<BaseObj>().def_ro("name", &BaseObj::name).def_ro("tag", &BaseObj::tag);
  refl::ObjectDef<DerivedObj>()
      .def_ro("name", &DerivedObj::name2)
      .def_ro("extra", &DerivedObj::extra);
  refl::ObjectDef<NodeObj>().def_rw("value", &NodeObj::value).def_rw("next", &NodeObj::next);
  refl::ObjectDef<EmptyObj>();
  refl::ObjectDef<HiddenObj>().def_ro("a", &HiddenObj::a, refl::repr(false));
  refl::ObjectDef<KeyedObj>()
      .def_ro("key", &KeyedObj::key)
      .def_ro("label", &KeyedObj::label)
      .def_type_attr(type_attr::kRepr.name,
                     [](const Object* self, const Function& fn_repr) -> String {
                       const auto* obj = static_cast<const KeyedObj*>(self);
                       return String("<Keyed " + std::string(obj->label) + " " +
                                     std::string(fn_repr(obj->key).cast<String>()) + ">");
                     })
      .def_type_attr(type_attr::kHash.name,
                     [](const Object* self, const Function& fn_hash) -> int64_t {
                       return fn_hash(static_cast<const KeyedObj*>(self)->key).cast<int64_t>() + 7;
                     })
      .def_type_attr(type_attr::kEq.name,
                     [](const Object* lhs, const Object* rhs, const Function& fn_eq) -> bool {
                       return fn_eq(static_cast<const KeyedObj*>(lhs)->key,
                                    static_cast<const KeyedObj*>(rhs)->key)
                           .cast<bool>();
                     })
      .def_type_attr(type_attr::kCompare.name,
                     [](const Object* lhs, const Object* rhs, const Function& fn_cmp) -> int32_t {
                       return fn_cmp(static_cast<const KeyedObj*>(lhs)->key,
                                     static_cast<const KeyedObj*>(rhs)->key)
                           .cast<int32_t>();
                     });
  refl::ObjectDef<EqOnlyObj>()
      .def_ro("v", &EqOnlyObj::v)
      .def_type_attr(type_attr::kEq.name,
                     [](const Object* lhs, const Object* rhs, const Function&) -> bool {
                       return static_cast<const EqOnlyObj*>(lhs)->v ==
                              static_cast<const EqOnlyObj*>(rhs)->v;
                     });
}

TVM_FFI_DLL_EXPORT_TYPED_FUNC(make_point, dcops::MakePoint);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(make_base, dcops::MakeBase);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(make_derived, dcops::MakeDerived);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(make_node, dcops::MakeNode);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(set_next, dcops::SetNext);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(make_empty, dcops::MakeEmpty);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(make_hidden, dcops::MakeHidden);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(make_keyed, dcops::MakeKeyed);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(make_eq_only, dcops::MakeEqOnly);
