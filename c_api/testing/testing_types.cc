// testing_types.cc -- the object types of upstream's testing library: keys, parents,
// storage (offsets as upstream's C++ classes place them), reflected fields with their
// traits, methods and constructors.
#include "testing.h"

namespace tvm_ffi_testing {

namespace {

using Args = std::vector<Value>&;

const char* const kObject = nullptr;  // ffi.Object as a parent

// Every type key, its parent and its reserved child slots, in the order upstream's
// library allocates their indices (138 onwards after the runtime's own types).
const struct {
  const char* key;
  const char* parent;
  int32_t child_slots;
} kTypes[] = {
    {"testing.TestCustomHash", kObject, 0},
    {"testing.TestCustomCompare", kObject, 0},
    {"testing.TestEqWithoutHash", kObject, 0},
    {"testing.TestVisitRegions", kObject, 0},
    {"testing.TestVisitHook", kObject, 0},
    {"testing.TestObjectBase", kObject, 1},
    {"testing.TestObjectDerived", "testing.TestObjectBase", 0},
    {"testing.TestObjectPtrHolder", kObject, 0},
    {"testing.TestCxxClassBase", kObject, 0},
    {"testing.TestCxxClassDerived", "testing.TestCxxClassBase", 0},
    {"testing.TestCxxClassDerivedDerived", "testing.TestCxxClassDerived", 0},
    {"testing.TestCxxClassHiddenField", kObject, 0},
    {"testing.TestCxxClassPolymorphic", kObject, 0},
    {"testing.TestCxxEnumHolder", kObject, 0},
    {"testing.TestCxxInitSubset", kObject, 0},
    {"testing.TestCxxKwOnly", kObject, 0},
    {"testing.TestCxxAutoInit", kObject, 0},
    {"testing.TestCxxAutoInitSimple", kObject, 0},
    {"testing.TestCxxAutoInitAllInitOff", kObject, 0},
    {"testing.TestCxxAutoInitKwOnlyDefaults", kObject, 0},
    {"testing.TestCxxAutoInitParent", kObject, 1},
    {"testing.TestCxxAutoInitChild", "testing.TestCxxAutoInitParent", 0},
    {"testing.TestCxxNoAutoInit", kObject, 0},
    {"testing.TestDeepCopyEdges", kObject, 0},
    {"testing.TestNonCopyable", kObject, 0},
    {"testing.TestUnregisteredBaseObject", kObject, 0},
    {"testing.TestUnregisteredObject", "testing.TestUnregisteredBaseObject", 0},
    {"testing.TestCompare", kObject, 0},
    {"testing.TestHash", kObject, 0},
    {"testing.TestIntPair", kObject, 0},
    {"testing.TestCxxIntEnum", "ffi.IntEnum", 0},
    {"testing.TestCxxStrEnum", "ffi.StrEnum", 0},
    {"testing.TestEnumVariant", "ffi.Enum", 0},
    {"testing.SchemaAllTypes", kObject, 0},
    {"testing.TestFrozenCxx", kObject, 0},
};

// An object of `key` with int64 fields at 24, 32, ... set from the converted arguments;
// a String argument goes into a 16-byte slot.
Body Construct(const char* key, std::vector<Slot> slots) {
  int32_t index = TypeIndexOf(key);
  return [index, slots](Args args) {
    Value object = NewObject(index);
    int64_t offset = sizeof(TVMFFIObject);
    for (size_t i = 0; i < slots.size(); ++i) {
      StoreSlot(object, offset, slots[i], args[i]);
      offset += slots[i] == Slot::kAny ? 16 : 8;
    }
    return object;
  };
}

// TestCustomHash, TestCustomCompare, TestEqWithoutHash: (key: int, label: str).
void DefineKeyLabel(const char* key) {
  TypeDef(key, 48)
      .Init({S::Int(), S::Str()}, Construct(key, {Slot::kI64, Slot::kAny}))
      .Ro("key", 24, Slot::kI64, S::Int())
      .Ro("label", 32, Slot::kAny, S::Str())
      .Final()
      .Register();
}

// TestCompare and TestHash: (key: int, name: str, <third>: int, a flag on the third).
void DefineKeyName(const char* key, const char* third, int64_t flag) {
  TypeDef(key, 56)
      .Init({S::Int(), S::Str(), S::Int()}, Construct(key, {Slot::kI64, Slot::kAny, Slot::kI64}))
      .Ro("key", 24, Slot::kI64, S::Int())
      .Ro("name", 32, Slot::kAny, S::Str())
      .Ro(third, 48, Slot::kI64, S::Int()).Flag(flag)
      .Final()
      .Register();
}

void DefineClassHierarchy() {
  TypeDef("testing.TestCxxClassBase", 40)
      .Rw("v_i64", 24, Slot::kI64, S::Int()).Flag(kReprOff)
      .Rw("v_i32", 32, Slot::kI32, S::Int()).Flag(kReprOff)
      .Register();
  TypeDef("testing.TestCxxClassDerived", 56)
      .Rw("v_f64", 40, Slot::kF64, S::Float())
      .Rw("v_f32", 48, Slot::kF32, S::Float()).Default(Value::Float(8.0))
      .Register();
  TypeDef("testing.TestCxxClassDerivedDerived", 80)
      .Rw("v_str", 56, Slot::kAny, S::Str()).Default(Value::Str("default"))
      .Rw("v_bool", 72, Slot::kBool, S::Bool())
      .Register();
  // Upstream's C++ class has an unreflected member at 32 ...
  TypeDef("testing.TestCxxClassHiddenField", 48)
      .Rw("v_i64", 24, Slot::kI64, S::Int())
      .Rw("v_i32", 40, Slot::kI32, S::Int())
      .Final()
      .Register();
  // ... and this one a vtable pointer, which makes it 8 bytes longer than its fields.
  TypeDef("testing.TestCxxClassPolymorphic", 40)
      .Rw("v_i64", 24, Slot::kI64, S::Int())
      .Final()
      .Register();
  TypeDef("testing.TestCxxEnumHolder", 40)
      .Rw("priority", 24, Slot::kObject, S::Object("testing.TestCxxIntEnum"))
      .Rw("opcode", 32, Slot::kObject, S::Object("testing.TestCxxStrEnum"))
      .Register();
}

void DefineInitVariants() {
  TypeDef("testing.TestCxxInitSubset", 56)
      .Rw("required_field", 24, Slot::kI64, S::Int())
      .Rw("optional_field", 32, Slot::kI64, S::Int()).Flag(kInitOff).Default(Value::Int(-1))
      .Initial(32, Value::Int(-1))
      .Rw("note", 40, Slot::kAny, S::Str()).Flag(kInitOff).Default(Value::Str("default"))
      .Register();
  TypeDef("testing.TestCxxKwOnly", 56)
      .Rw("x", 24, Slot::kI64, S::Int()).Flag(kKwOnly)
      .Rw("y", 32, Slot::kI64, S::Int()).Flag(kKwOnly)
      .Rw("z", 40, Slot::kI64, S::Int()).Flag(kKwOnly)
      .Rw("w", 48, Slot::kI64, S::Int()).Flag(kKwOnly).Default(Value::Int(100))
      .Register();
  TypeDef("testing.TestCxxAutoInit", 56)
      .Rw("a", 24, Slot::kI64, S::Int())
      .Rw("b", 32, Slot::kI64, S::Int()).Flag(kInitOff).Default(Value::Int(42))
      .Rw("c", 40, Slot::kI64, S::Int()).Flag(kKwOnly)
      .Rw("d", 48, Slot::kI64, S::Int()).Default(Value::Int(99))
      .Register();
  TypeDef("testing.TestCxxAutoInitSimple", 40)
      .Rw("x", 24, Slot::kI64, S::Int())
      .Rw("y", 32, Slot::kI64, S::Int())
      .Register();
  TypeDef("testing.TestCxxAutoInitAllInitOff", 48)
      .Rw("x", 24, Slot::kI64, S::Int()).Flag(kInitOff).Default(Value::Int(7))
      .Rw("y", 32, Slot::kI64, S::Int()).Flag(kInitOff).Default(Value::Int(9))
      .Rw("z", 40, Slot::kI64, S::Int()).Flag(kInitOff)
      .Initial(24, Value::Int(7))
      .Initial(40, Value::Int(1234))
      .Register();
  TypeDef("testing.TestCxxAutoInitKwOnlyDefaults", 64)
      .Rw("p_required", 24, Slot::kI64, S::Int())
      .Rw("p_default", 32, Slot::kI64, S::Int()).Default(Value::Int(11))
      .Rw("k_required", 40, Slot::kI64, S::Int()).Flag(kKwOnly)
      .Rw("k_default", 48, Slot::kI64, S::Int()).Flag(kKwOnly).Default(Value::Int(22))
      .Rw("hidden", 56, Slot::kI64, S::Int()).Flag(kInitOff).Default(Value::Int(33))
      .Register();
  TypeDef("testing.TestCxxAutoInitParent", 40)
      .Rw("parent_required", 24, Slot::kI64, S::Int())
      .Rw("parent_default", 32, Slot::kI64, S::Int()).Default(Value::Int(5))
      .Register();
  TypeDef("testing.TestCxxAutoInitChild", 56)
      .Rw("child_required", 40, Slot::kI64, S::Int())
      .Rw("child_kw_only", 48, Slot::kI64, S::Int()).Flag(kKwOnly)
      .Final()
      .Register();
  TypeDef("testing.TestCxxNoAutoInit", 40)
      .Rw("x", 24, Slot::kI64, S::Int())
      .Rw("y", 32, Slot::kI64, S::Int())
      .NoAutoInit()
      .Register();
}

void DefineUnregistered() {
  TypeDef("testing.TestUnregisteredBaseObject", 32)
      .Init({S::Int()}, Construct("testing.TestUnregisteredBaseObject", {Slot::kI64}),
            "Constructor of TestUnregisteredBaseObject")
      .Ro("v1", 24, Slot::kI64, S::Int())
      .Method("get_v1_plus_one", S::Int(), {S::Object("testing.TestUnregisteredBaseObject")},
              [](Args args) { return Value::Int(I64At(args[0], 24) + 1); },
              "Get (v1 + 1) from TestUnregisteredBaseObject")
      .NoCreator()
      .Register();
  TypeDef("testing.TestUnregisteredObject", 40)
      .Init({S::Int(), S::Int()},
            Construct("testing.TestUnregisteredObject", {Slot::kI64, Slot::kI64}),
            "Constructor of TestUnregisteredObject")
      .Ro("v2", 32, Slot::kI64, S::Int())
      .Method("get_v2_plus_two", S::Int(), {S::Object("testing.TestUnregisteredObject")},
              [](Args args) { return Value::Int(I64At(args[0], 32) + 2); },
              "Get (v2 + 2) from TestUnregisteredObject")
      .NoCreator()
      .Register();
}

// A hook of TestCustomHash/TestCustomCompare/TestEqWithoutHash: the `key` (an int at 24)
// of an object of that type (upstream casts without looking; this says what is wrong).
Value KeyOf(const Value& object, int32_t type_index) {
  if (!IsInstanceOf(object.type_index(), type_index)) {
    Throw("TypeError", "expected an object of type `" + TypeKeyOf(type_index) + "`, got `" +
                           TypeKeyOf(object.type_index()) + "`");
  }
  return Value::Int(I64At(object, 24));
}

void DefineHook(const char* key, const char* name, int operands, SchemaRef result) {
  int32_t index = TypeIndexOf(key);
  std::vector<SchemaRef> params(static_cast<size_t>(operands), S::Object("ffi.Object"));
  params.push_back(S::Function());
  DefAttr(index, name,
          TypedFunction(std::string(key) + "." + name, result, params,
                        [index, operands, result](Args args) {
                          std::vector<Value> keys;
                          for (int i = 0; i < operands; ++i) keys.push_back(KeyOf(args[i], index));
                          std::vector<TVMFFIAny> views;
                          for (const Value& k : keys) views.push_back(k.raw());
                          Value out = CallFunction(args[operands].handle(), views.data(), operands);
                          return ConvertOrThrow(*result, out.raw());
                        }));
}

}  // namespace

void DeclareTypes() {
  for (const auto& type : kTypes) DeclareType(type.key, type.parent, type.child_slots);
}

void DefineObjectTypes() {
  TypeDef("testing.TestIntPair", 40)
      .Init({S::Int(), S::Int()}, Construct("testing.TestIntPair", {Slot::kI64, Slot::kI64}))
      .Ro("a", 24, Slot::kI64, S::Int()).Doc("Field `a`")
      .Ro("b", 32, Slot::kI64, S::Int()).Doc("Field `b`")
      .Method("sum", S::Int(), {S::Object("testing.TestIntPair")},
              [](Args args) { return Value::Int(I64At(args[0], 24) + I64At(args[0], 32)); },
              "Method to compute sum of a and b")
      .Final()
      .Register();
  DefineConvert("testing.TestIntPair");
  TypeDef("testing.TestVisitRegions", 48)
      .Ro("simple", 24, Slot::kI64, S::Int()).Flag(kTVMFFIFieldFlagBitMaskSEqHashDefSimple)
      .Ro("pattern", 32, Slot::kI64, S::Int()).Flag(kTVMFFIFieldFlagBitMaskSEqHashDefPattern)
      .Ro("ordinary", 40, Slot::kI64, S::Int())
      .Initial(24, Value::Int(1)).Initial(32, Value::Int(2)).Initial(40, Value::Int(3))
      .Final()
      .Register();
  TypeDef("testing.TestVisitHook", 32)
      .Ro("child", 24, Slot::kObject, S::Object("ffi.Object", true))
      .NoCreator()
      .Final()
      .Register();
  TypeDef("testing.TestObjectBase", 56)
      .Rw("v_i64", 24, Slot::kI64, S::Int()).Default(Value::Int(10)).Doc("i64 field")
      .Ro("v_f64", 32, Slot::kF64, S::Float()).Default(Value::Float(10.0))
      .Rw("v_str", 40, Slot::kAny, S::Str()).Default(Value::Str("hello"))
      .Method("add_i64", S::Int(), {S::Object("testing.TestObjectBase"), S::Int()},
              [](Args args) { return Value::Int(I64At(args[0], 24) + args[1].AsInt()); },
              "add_i64 method")
      .Register();
  TypeDef("testing.TestObjectDerived", 72)
      .Rw("v_map", 56, Slot::kObject, S::Map(S::Any(), S::Any()))
      .Rw("v_array", 64, Slot::kObject, S::Array(S::Any()))
      .Final()
      .Register();
  TypeDef("testing.TestObjectPtrHolder", 40)
      .Rw("value", 24, Slot::kObject, S::Object("testing.TestObjectBase"))
      .Rw("optional_value", 32, Slot::kObject, S::Optional(S::Object("testing.TestObjectBase")))
      .Default(Value())
      .Register();
  DefineClassHierarchy();
  DefineInitVariants();
  TypeDef("testing.TestDeepCopyEdges", 48)
      .Rw("v_any", 24, Slot::kAny, S::Any())
      .Rw("v_obj", 40, Slot::kObject, S::Object("ffi.Object", true))
      .Register();
  TypeDef("testing.TestNonCopyable", 32)
      .Init({S::Int()}, Construct("testing.TestNonCopyable", {Slot::kI64}))
      .Ro("value", 24, Slot::kI64, S::Int())
      .NoCreator()
      .NotCopyable()
      .Register();
  DefineUnregistered();
  DefineKeyName("testing.TestCompare", "ignored_field", kCompareOff);
  DefineKeyName("testing.TestHash", "hash_ignored", kHashOff);
  DefineKeyLabel("testing.TestCustomHash");
  DefineKeyLabel("testing.TestCustomCompare");
  DefineKeyLabel("testing.TestEqWithoutHash");
}

void DefineHashHooks() {
  // TestCustomHash and TestCustomCompare hash their key only; TestCustomCompare also
  // compares by key only; TestEqWithoutHash compares by key and has no hash hook.
  DefineHook("testing.TestCustomHash", "__ffi_hash__", 1, S::Int());
  DefineHook("testing.TestCustomCompare", "__ffi_hash__", 1, S::Int());
  DefineHook("testing.TestCustomCompare", "__ffi_eq__", 2, S::Bool());
  DefineHook("testing.TestCustomCompare", "__ffi_compare__", 2, S::Int());
  DefineHook("testing.TestEqWithoutHash", "__ffi_eq__", 2, S::Bool());
}

}  // namespace tvm_ffi_testing
