// testing_schema.cc -- the type-schema fixtures: testing.SchemaAllTypes (a field and a
// method of many declared types, with user metadata), the testing.schema_* globals (one
// per parameter type), the system-library symbol and the DLL-exported functions.
#include <cstring>

#include "testing.h"

extern "C" int tvm_ffi_testing_add_one_c(void*, const TVMFFIAny*, int32_t, TVMFFIAny*);

namespace tvm_ffi_testing {

namespace {

using Args = std::vector<Value>&;

const char kAllTypes[] = "testing.SchemaAllTypes";

Metadata UserMetadata() {
  return {{"bool_attr", "true"}, {"int_attr", "1"}, {"str_attr", "\"hello\""}};
}

SchemaRef MapStrArrInt() { return S::Map(S::Str(), S::Array(S::Int())); }

// The items of a converted Array as values.
std::vector<Value> Items(const Value& array) {
  const TVMFFISeqCell* cell = SeqCell(array.handle());
  const TVMFFIAny* items = SeqItems(array.handle());
  std::vector<Value> out;
  for (int64_t i = 0; i < cell->size; ++i) out.push_back(Value::Copy(items[i]));
  return out;
}

// Map::Set on a copy: an existing key keeps its place, a new one goes last.
void SetItem(std::vector<std::pair<Value, Value>>* items, const Value& key, Value value) {
  for (auto& item : *items) {
    if (item.first.AsStr() == key.AsStr()) {
      item.second = std::move(value);
      return;
    }
  }
  items->emplace_back(key, std::move(value));
}

Value MakeWith(Args args) {
  Value object = NewObject(TypeIndexOf(kAllTypes));
  StoreSlot(object, 32, Slot::kI64, args[0]);
  StoreSlot(object, 40, Slot::kF64, args[1]);
  StoreSlot(object, 48, Slot::kDevice, Value::Device(DLDevice{kDLCPU, 0}));
  StoreSlot(object, 56, Slot::kDType, Value::DType(DLDataType{kDLFloat, 32, 1}));
  StoreSlot(object, 64, Slot::kAny, args[2]);
  StoreSlot(object, 160, Slot::kAny, Value::Str("v"));
  return object;
}

Value MergeMap(Args args) {
  std::vector<std::pair<Value, Value>> merged = MapItems(args[1]);
  for (const auto& item : MapItems(args[2])) {
    Value joined = item.second;
    for (const auto& existing : merged) {
      if (existing.first.AsStr() == item.first.AsStr()) {
        std::vector<Value> values = Items(existing.second);
        for (Value& extra : Items(item.second)) values.push_back(std::move(extra));
        joined = MakeSeq("ffi.Array", values);
      }
    }
    SetItem(&merged, item.first, std::move(joined));
  }
  return MakeMap("ffi.Map", merged);
}

Value MaybeConcat(Args args) {
  if (!args[1].is_none() && !args[2].is_none()) return Value::Str(args[1].AsStr() + args[2].AsStr());
  return args[1].is_none() ? args[2] : args[1];
}

void DefineAllTypes() {
  SchemaRef self = S::Object(kAllTypes);
  SchemaRef opt_str = S::Optional(S::Str());
  TypeDef(kAllTypes, 184)
      .Rw("v_bool", 24, Slot::kBool, S::Bool()).Doc("bool field").Meta(UserMetadata())
      .Initial(24, Value::Bool(true))
      .Rw("v_int", 32, Slot::kI64, S::Int()).Default(Value::Int(0)).Doc("int field")
      .Rw("v_float", 40, Slot::kF64, S::Float()).Default(Value::Float(0.0)).Doc("float field")
      .Rw("v_device", 48, Slot::kDevice, S::Device()).Doc("device field")
      .Rw("v_dtype", 56, Slot::kDType, S::DType()).Doc("dtype field")
      .Rw("v_string", 64, Slot::kAny, S::Str()).Default(Value::Str("s")).Doc("string field")
      .Rw("v_bytes", 80, Slot::kAny, S::Bytes()).Doc("bytes field")
      .Rw("v_opt_int", 96, Slot::kAny, S::Optional(S::Int())).Doc("optional int")
      .Rw("v_opt_str", 112, Slot::kAny, opt_str).Doc("optional str")
      .Rw("v_arr_int", 128, Slot::kObject, S::Array(S::Int())).Doc("array<int>")
      .Rw("v_arr_str", 136, Slot::kObject, S::Array(S::Str())).Doc("array<str>")
      .Rw("v_map_str_int", 144, Slot::kObject, S::Map(S::Str(), S::Int())).Doc("map<str,int>")
      .Rw("v_map_str_arr_int", 152, Slot::kObject, MapStrArrInt()).Doc("map<str,array<int>>")
      .Rw("v_variant", 160, Slot::kAny,
          S::Variant({S::Str(), S::Array(S::Int()), S::Map(S::Str(), S::Int())}))
      .Doc("variant<str,array<int>,map<str,int>>")
      .Rw("v_opt_arr_variant", 176, Slot::kObject,
          S::Optional(S::Array(S::Variant({S::Int(), S::Str()}))))
      .Doc("optional<array<variant<int,str>>>")
      .Method("add_int", S::Int(), {self, S::Int()},
              [](Args args) { return Value::Int(I64At(args[0], 32) + args[1].AsInt()); },
              "add int method", UserMetadata())
      .Method("append_int", S::Array(S::Int()), {self, S::Array(S::Int()), S::Int()},
              [](Args args) {
                std::vector<Value> values = Items(args[1]);
                values.push_back(args[2]);
                return MakeSeq("ffi.Array", values);
              },
              "append int to array")
      .Method("maybe_concat", opt_str, {self, opt_str, opt_str}, MaybeConcat, "optional concat")
      .Method("merge_map", MapStrArrInt(), {self, MapStrArrInt(), MapStrArrInt()}, MergeMap,
              "merge maps")
      .StaticMethod("make_with", self, {S::Int(), S::Float(), S::Str()}, MakeWith,
                    "Constructor with subset of fields")
      .NoCreator()
      .Register();
}

Body Identity() {
  return [](Args args) { return args[0]; };
}

void DefineIdentities() {
  const struct {
    const char* name;
    SchemaRef type;
  } kIdentities[] = {
      {"testing.schema_id_float", S::Float()},
      {"testing.schema_id_bool", S::Bool()},
      {"testing.schema_id_device", S::Device()},
      {"testing.schema_id_dtype", S::DType()},
      {"testing.schema_id_string", S::Str()},
      {"testing.schema_id_bytes", S::Bytes()},
      {"testing.schema_id_func", S::Function()},
      {"testing.schema_id_func_typed",
       S::TypedFunction(S::Void(), {S::Int(), S::Float(), S::Function()})},
      {"testing.schema_id_any", S::Any()},
      {"testing.schema_id_object", S::Object("ffi.Object", true)},
      {"testing.schema_id_tensor", S::Tensor()},
      {"testing.schema_id_opt_int", S::Optional(S::Int())},
      {"testing.schema_id_opt_str", S::Optional(S::Str())},
      {"testing.schema_id_opt_obj", S::Optional(S::Object("ffi.Object", true))},
      {"testing.schema_id_arr_int", S::Array(S::Int())},
      {"testing.schema_id_arr_str", S::Array(S::Str())},
      {"testing.schema_id_arr_obj", S::Array(S::Object("ffi.Object", true))},
      {"testing.schema_id_arr", S::Array()},
      {"testing.schema_id_list_int", S::List(S::Int())},
      {"testing.schema_id_list_str", S::List(S::Str())},
      {"testing.schema_id_list_obj", S::List(S::Object("ffi.Object", true))},
      {"testing.schema_id_map_str_int", S::Map(S::Str(), S::Int())},
      {"testing.schema_id_map_str_str", S::Map(S::Str(), S::Str())},
      {"testing.schema_id_map_str_obj", S::Map(S::Str(), S::Object("ffi.Object", true))},
      {"testing.schema_id_map", S::Map()},
      {"testing.schema_id_dict_str_int", S::Dict(S::Str(), S::Int())},
      {"testing.schema_id_dict_str_str", S::Dict(S::Str(), S::Str())},
      {"testing.schema_id_variant_int_str", S::Variant({S::Int(), S::Str()})},
  };
  DefGlobal("testing.schema_id_int", S::Int(), {S::Int()}, Identity(), nullptr, UserMetadata());
  for (const auto& identity : kIdentities) {
    DefGlobal(identity.name, identity.type, {identity.type}, Identity());
  }
  // A DLTensor* result cannot be returned: it would not own the tensor.
  DefGlobal("testing.schema_id_dltensor", S::DLTensor(), {S::DLTensor()}, [](Args) -> Value {
    Throw("RuntimeError", kDLTensorNotOwned);
  });
}

void DefineShapes() {
  DefGlobal("testing.schema_tensor_view_input", S::Void(), {S::DLTensor()},
            [](Args) { return Value(); });
  DefPacked("testing.schema_packed", [](const TVMFFIAny*, int32_t) { return Value(); });
  DefGlobal("testing.schema_arr_map_opt", MapStrArrInt(),
            {S::Array(S::Optional(S::Int())), MapStrArrInt(), S::Optional(S::Str())},
            [](Args args) {
              if (args[2].is_none()) return args[1];
              std::vector<Value> present;
              for (Value& item : Items(args[0])) {
                if (!item.is_none()) present.push_back(std::move(item));
              }
              std::vector<std::pair<Value, Value>> items = MapItems(args[1]);
              SetItem(&items, args[2], MakeSeq("ffi.Array", present));
              return MakeMap("ffi.Map", items);
            });
  DefGlobal("testing.schema_variant_mix", S::Variant({S::Int(), S::Str(), S::Array(S::Int())}),
            {S::Variant({S::Int(), S::Str(), S::Array(S::Int())})}, Identity(),
            "variant passthrough");
  DefGlobal("testing.schema_no_args", S::Int(), {}, [](Args) { return Value::Int(1); });
  DefGlobal("testing.schema_no_return", S::Void(), {S::Int()}, [](Args) { return Value(); });
  DefGlobal("testing.schema_no_args_no_return", S::Void(), {}, [](Args) { return Value(); });
}

}  // namespace

void DefineSchemaTypes() { DefineAllTypes(); }

void DefineSchemaGlobals() {
  DefineIdentities();
  DefineShapes();
  Check(TVMFFIEnvModRegisterSystemLibSymbol("__tvm_ffi_testing.add_one",
                                            reinterpret_cast<void*>(&tvm_ffi_testing_add_one_c)));
}

}  // namespace tvm_ffi_testing

// ---------------------------------------------------------------- DLL exports
// Exported as TVM_FFI_DLL_EXPORT_TYPED_FUNC(_DOC) exports them when built with metadata.

namespace {

using tvm_ffi_testing::S::Int;

const char kAddDoc[] = R"(Add two integers and return the sum.

Parameters
----------
a : int
    First integer
b : int
    Second integer

Returns
-------
result : int
    Sum of a and b)";

// Calls the Function make() gives, made on first use and kept for the process (each
// export passes its own lambda, so each has its own).
template <typename Make>
int CallExport(Make make, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  tvm_ffi_testing::Value* function = nullptr;
  int status = tvm_ffi_testing::Guard([&] {
    static tvm_ffi_testing::Value* made = new tvm_ffi_testing::Value(make());
    function = made;
  });
  if (status != 0) return status;
  return TVMFFIFunctionCall(function->handle(), const_cast<TVMFFIAny*>(args), num_args, result);
}

int ReturnText(const std::string& text, TVMFFIAny* result) {
  TVMFFIByteArray bytes{text.data(), text.size()};
  return TVMFFIStringFromByteArray(&bytes, result);
}

}  // namespace

extern "C" {

TVM_FFI_DLL_EXPORT int __tvm_ffi_testing_dll_schema_id_int(void*, const TVMFFIAny* args,
                                                           int32_t num_args, TVMFFIAny* result) {
  using namespace tvm_ffi_testing;
  auto make = [] { return TypedFunction("testing_dll_schema_id_int", Int(), {Int()}, Identity()); };
  return CallExport(make, args, num_args, result);
}

TVM_FFI_DLL_EXPORT int __tvm_ffi__metadata_testing_dll_schema_id_int(void*, const TVMFFIAny*,
                                                                     int32_t, TVMFFIAny* result) {
  using namespace tvm_ffi_testing;
  return ReturnText(MetadataJson(FunctionSchemaJson(Int(), {Int()}), {}), result);
}

TVM_FFI_DLL_EXPORT int __tvm_ffi_testing_dll_test_add_with_docstring(void*, const TVMFFIAny* args,
                                                                     int32_t num_args,
                                                                     TVMFFIAny* result) {
  using namespace tvm_ffi_testing;
  auto make = [] {
    return TypedFunction("testing_dll_test_add_with_docstring", Int(), {Int(), Int()},
                         [](std::vector<Value>& a) { return Value::Int(a[0].AsInt() + a[1].AsInt()); });
  };
  return CallExport(make, args, num_args, result);
}

TVM_FFI_DLL_EXPORT int __tvm_ffi__metadata_testing_dll_test_add_with_docstring(
    void*, const TVMFFIAny*, int32_t, TVMFFIAny* result) {
  using namespace tvm_ffi_testing;
  return ReturnText(MetadataJson(FunctionSchemaJson(Int(), {Int(), Int()}), {}), result);
}

TVM_FFI_DLL_EXPORT int __tvm_ffi__doc_testing_dll_test_add_with_docstring(void*, const TVMFFIAny*,
                                                                          int32_t,
                                                                          TVMFFIAny* result) {
  return ReturnText(kAddDoc, result);
}

TVM_FFI_DLL_EXPORT int TVMFFITestingDummyTarget() { return 0; }

}  // extern "C"
