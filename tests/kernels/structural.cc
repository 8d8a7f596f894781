// Reflected objects for structural equality, hashing, visits, mutation, JSON graphs and deep
// copy: one type per structural kind (free variable, tree, DAG, constant tree, unique instance,
// unsupported), fields that are ignored or open definition regions (pattern and simple), a
// type with every inline field kind (for JSON graphs), custom __s_equal__ / __s_hash__ hooks,
// and a type that cannot be copied. Objects are made with ffi.MakeObjectFromPackedArgs.
#include <tvm/ffi/any.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/dtype.h>
#include <tvm/ffi/device.h>
#include <tvm/ffi/extra/structural_equal.h>
#include <tvm/ffi/extra/structural_hash.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/memory.h>
#include <tvm/ffi/object.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/ffi/string.h>

#include <cstdint>

namespace stk {

using tvm::ffi::Any;
using tvm::ffi::AnyView;
using tvm::ffi::Array;
using tvm::ffi::Map;
using tvm::ffi::Object;
using tvm::ffi::ObjectRef;
using tvm::ffi::String;
using tvm::ffi::TypedFunction;

// A variable: matched by binding, its name never compared.
class VarObj : public Object {
 public:
  String name;
  static constexpr TVMFFISEqHashKind _type_s_eq_hash_kind = kTVMFFISEqHashKindFreeVar;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("stk.Var", VarObj, Object);
};

// A variable with a compared field (its "type"), which is a use even where the variable is
// defined in a simple region.
class TypedVarObj : public Object {
 public:
  String name;
  Any ty;
  static constexpr TVMFFISEqHashKind _type_s_eq_hash_kind = kTVMFFISEqHashKindFreeVar;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("stk.TypedVar", TypedVarObj, Object);
};

// A function: parameters define variables (pattern region), the comment is ignored.
class FuncObj : public Object {
 public:
  Array<Any> params;
  Any body;
  String comment;
  static constexpr TVMFFISEqHashKind _type_s_eq_hash_kind = kTVMFFISEqHashKindTreeNode;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("stk.Func", FuncObj, Object);
};

// A let binding: `var` is defined in a simple region.
class LetObj : public Object {
 public:
  Any var;
  Any value;
  Any body;
  static constexpr TVMFFISEqHashKind _type_s_eq_hash_kind = kTVMFFISEqHashKindTreeNode;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("stk.Let", LetObj, Object);
};

// A generic tree node with two writable children.
class NodeObj : public Object {
 public:
  Any a;
  Any b;
  static constexpr bool _type_mutable = true;
  static constexpr TVMFFISEqHashKind _type_s_eq_hash_kind = kTVMFFISEqHashKindTreeNode;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("stk.Node", NodeObj, Object);
};

// A DAG node: sharing is meaningful.
class DagObj : public Object {
 public:
  Any a;
  Any b;
  static constexpr bool _type_mutable = true;
  static constexpr TVMFFISEqHashKind _type_s_eq_hash_kind = kTVMFFISEqHashKindDAGNode;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("stk.Dag", DagObj, Object);
};

class ConstObj : public Object {
 public:
  String tag;
  Any payload;
  static constexpr TVMFFISEqHashKind _type_s_eq_hash_kind = kTVMFFISEqHashKindConstTreeNode;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("stk.Const", ConstObj, Object);
};

class UniqueObj : public Object {
 public:
  int64_t x = 0;
  static constexpr TVMFFISEqHashKind _type_s_eq_hash_kind = kTVMFFISEqHashKindUniqueInstance;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("stk.Unique", UniqueObj, Object);
};

// No structural kind declared: structural equality and hashing refuse it.
class PlainObj : public Object {
 public:
  int64_t x = 0;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("stk.Plain", PlainObj, Object);
};

// Every inline field kind, and some that are not inline.
class AllObj : public Object {
 public:
  bool v_bool = false;
  int64_t v_int = 0;
  double v_float = 0.0;
  DLDataType v_dtype{kDLFloat, 32, 1};
  DLDevice v_device{kDLCPU, 0};
  String v_str;
  Any v_any;
  Array<Any> v_array;
  Map<Any, Any> v_map;
  static constexpr bool _type_mutable = true;
  static constexpr TVMFFISEqHashKind _type_s_eq_hash_kind = kTVMFFISEqHashKindTreeNode;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("stk.All", AllObj, Object);
};

// Identity is `key` and `defs` (a pattern region), through custom hooks; `label` is decoration.
class CustomObj : public Object {
 public:
  Any key;
  Any defs;
  String label;
  static constexpr TVMFFISEqHashKind _type_s_eq_hash_kind = kTVMFFISEqHashKindTreeNode;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("stk.Custom", CustomObj, Object);
};

// Cannot be copied: no __ffi_shallow_copy__.
class NoCopyObj : public Object {
 public:
  int64_t x = 0;
  NoCopyObj() = default;
  NoCopyObj(const NoCopyObj&) = delete;
  static constexpr TVMFFISEqHashKind _type_s_eq_hash_kind = kTVMFFISEqHashKindTreeNode;
  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("stk.NoCopy", NoCopyObj, Object);
};

}  // namespace stk

TVM_FFI_STATIC_INIT_BLOCK() {
  namespace refl = tvm::ffi::reflection;
  namespace type_attr = tvm::ffi::type_attr;
  using tvm::ffi::AnyView;
  using tvm::ffi::Object;
  using tvm::ffi::TypedFunction;
  using namespace stk;
  using Flag = refl::AttachFieldFlag;
  refl::ObjectDef<VarObj>().def_ro("name", &VarObj::name, Flag::SEqHashIgnore());
  refl::ObjectDef<TypedVarObj>()
      .def_ro("name", &TypedVarObj::name, Flag::SEqHashIgnore())
      .def_ro("ty", &TypedVarObj::ty);
  refl::ObjectDef<FuncObj>()
      .def_ro("params", &FuncObj::params, Flag::SEqHashDefPattern())
      .def_ro("body", &FuncObj::body)
      .def_ro("comment", &FuncObj::comment, Flag::SEqHashIgnore());
  refl::ObjectDef<LetObj>()
      .def_ro("var", &LetObj::var, Flag::SEqHashDefSimple())
      .def_ro("value", &LetObj::value)
      .def_ro("body", &LetObj::body);
  refl::ObjectDef<NodeObj>().def_rw("a", &NodeObj::a).def_rw("b", &NodeObj::b);
  refl::ObjectDef<DagObj>().def_rw("a", &DagObj::a).def_rw("b", &DagObj::b);
  refl::ObjectDef<ConstObj>().def_ro("tag", &ConstObj::tag).def_ro("payload", &ConstObj::payload);
  refl::ObjectDef<UniqueObj>().def_ro("x", &UniqueObj::x);
  refl::ObjectDef<PlainObj>().def_ro("x", &PlainObj::x);
  refl::ObjectDef<AllObj>()
      .def_rw("v_bool", &AllObj::v_bool)
      .def_rw("v_int", &AllObj::v_int)
      .def_rw("v_float", &AllObj::v_float)
      .def_rw("v_dtype", &AllObj::v_dtype)
      .def_rw("v_device", &AllObj::v_device)
      .def_rw("v_str", &AllObj::v_str)
      .def_rw("v_any", &AllObj::v_any)
      .def_rw("v_array", &AllObj::v_array)
      .def_rw("v_map", &AllObj::v_map);
  refl::ObjectDef<CustomObj>()
      .def_ro("key", &CustomObj::key)
      .def_ro("defs", &CustomObj::defs)
      .def_ro("label", &CustomObj::label);
  refl::TypeAttrDef<CustomObj>()
      .def(type_attr::kSEqual.name,
           [](const Object* lhs, const Object* rhs,
              const TypedFunction<bool(AnyView, AnyView, int, AnyView)>& eq) -> bool {
             const auto* a = static_cast<const CustomObj*>(lhs);
             const auto* b = static_cast<const CustomObj*>(rhs);
             return eq(a->defs, b->defs, kTVMFFIDefRegionKindPattern, "defs") &&
                    eq(a->key, b->key, kTVMFFIDefRegionKindNone, "key");
           })
      .def(type_attr::kSHash.name,
           [](const Object* self, int64_t init,
              const TypedFunction<int64_t(AnyView, int64_t, int)>& hash) -> int64_t {
             const auto* obj = static_cast<const CustomObj*>(self);
             int64_t h = hash(obj->defs, init, kTVMFFIDefRegionKindPattern);
             return hash(obj->key, h, kTVMFFIDefRegionKindNone);
           });
  refl::ObjectDef<NoCopyObj>().def_ro("x", &NoCopyObj::x);
}

