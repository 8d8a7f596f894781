// testing_enums.cc -- the C++-backed enum types (testing.TestCxxIntEnum, TestCxxStrEnum,
// TestEnumVariant) and TestEnumVariant's entries, registered as upstream's EnumDef does:
// an ffi.EnumState under the type's __ffi_enum__ attribute holds the singletons in order
// (entries), by integer and by name (indexes), and their extra attributes (attrs).
#include "testing.h"

namespace tvm_ffi_testing {

namespace {

// ffi.EnumState: entries (List) at 24, indexes (Dict) at 32, attrs (Dict) at 40.
constexpr int64_t kEntries = 24, kIndexes = 32, kAttrs = 40;
// ffi.Enum: _int_index (int) at 24, _str_index (String) at 32.
constexpr int64_t kIntIndex = 24, kStrIndex = 32;

Value Call(const char* name, std::vector<Value> args) { return CallGlobal(name, args); }

// The state of an enum type, made and attached on first use.
Value EnsureState(int32_t type_index) {
  Value state = LookupAttr(type_index, "__ffi_enum__");
  if (!state.is_none()) return state;
  Value init = LookupAttr(TypeIndexOf("ffi.EnumState"), "__ffi_init__");
  if (init.is_none()) Throw("RuntimeError", "ffi.EnumState has no __ffi_init__");
  state = CallFunction(init.handle(), nullptr, 0);
  DefAttr(type_index, "__ffi_enum__", state);
  return state;
}

// EnumDef(name): the next singleton, numbered by registration order.
Value DefineEntry(int32_t type_index, const char* name) {
  Value state = EnsureState(type_index);
  Value entries = LoadSlot(state, kEntries, Slot::kObject);
  Value indexes = LoadSlot(state, kIndexes, Slot::kObject);
  Value int_key = Value::Int(Call("ffi.ListSize", {entries}).AsInt());
  Value str_key = Value::Str(name);
  if (Call("ffi.DictCount", {indexes, int_key}).AsInt() != 0 ||
      Call("ffi.DictCount", {indexes, str_key}).AsInt() != 0) {
    Throw("ValueError", "Duplicate enum index for type `" + TypeKeyOf(type_index) + "`");
  }
  Value entry = NewObject(type_index);
  StoreSlot(entry, kIntIndex, Slot::kI64, int_key);
  StoreSlot(entry, kStrIndex, Slot::kAny, str_key);
  Call("ffi.ListAppend", {entries, entry});
  Call("ffi.DictSetItem", {indexes, int_key, entry});
  Call("ffi.DictSetItem", {indexes, str_key, entry});
  return entry;
}

// EnumDef::set_attr: attrs[name][entry] = value.
void SetEntryAttr(int32_t type_index, const Value& entry, const char* name, Value value) {
  Value attrs = LoadSlot(EnsureState(type_index), kAttrs, Slot::kObject);
  Value key = Value::Str(name);
  Value column = Call("ffi.DictCount", {attrs, key}).AsInt() != 0
                     ? Call("ffi.DictGetItem", {attrs, key})
                     : Call("ffi.Dict", {});
  Call("ffi.DictSetItem", {attrs, key, column});
  Call("ffi.DictSetItem", {column, entry, std::move(value)});
}

}  // namespace

void DefineConvert(const char* key) {
  int32_t index = TypeIndexOf(key);
  SchemaRef self = S::Object(key);
  DefAttr(index, "__ffi_convert__",
          TypedFunction(std::string(key) + ".__ffi_convert__", self, {S::Any()},
                        [self, key](std::vector<Value>& args) {
                          Value out;
                          std::string ignored;
                          if (!Convert(*self, args[0].raw(), &out, &ignored)) {
                            Throw("TypeError", "Cannot cast from `" +
                                                   TypeKeyOf(args[0].type_index()) + "` to `" +
                                                   key + "`");
                          }
                          return out;
                        }));
}

namespace {

// An enum class of ours: the ffi.Enum storage, no constructor, compared by identity.
void DefineEnumClass(const char* key) {
  TypeDef(key, 48)
      .Storage(kIntIndex, Slot::kI64)
      .Storage(kStrIndex, Slot::kAny, Value::Str(""))
      .NoAutoInit()
      .Final()
      .StructuralKind(kTVMFFISEqHashKindUniqueInstance)
      .Register();
  DefineConvert(key);
}

}  // namespace

void DefineEnumTypes() {
  DefineEnumClass("testing.TestEnumVariant");
  int32_t variant = TypeIndexOf("testing.TestEnumVariant");
  SetEntryAttr(variant, DefineEntry(variant, "Alpha"), "code", Value::Int(10));
  SetEntryAttr(variant, DefineEntry(variant, "Beta"), "code", Value::Int(20));
  // The integer and string enums get their entries from Python (tvm_ffi.testing).
  DefineEnumClass("testing.TestCxxIntEnum");
  DefineEnumClass("testing.TestCxxStrEnum");
}

void DefineEnumGlobals() {
  DefGlobal("testing.enum_variant_get", S::Object("ffi.Enum"), {S::Str()},
            [](std::vector<Value>& args) {
              int32_t variant = TypeIndexOf("testing.TestEnumVariant");
              Value state = LookupAttr(variant, "__ffi_enum__");
              if (!state.is_none()) {
                Value indexes = LoadSlot(state, kIndexes, Slot::kObject);
                if (Call("ffi.DictCount", {indexes, args[0]}).AsInt() != 0) {
                  return Call("ffi.DictGetItem", {indexes, args[0]});
                }
              }
              Throw("ValueError", "Enum `testing.TestEnumVariant` has no instance with index " +
                                      args[0].AsStr());
            });
}

}  // namespace tvm_ffi_testing
