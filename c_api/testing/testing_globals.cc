// testing_globals.cc -- the testing.* global functions other than the schema fixtures:
// errors and callbacks, reference counts, C symbols, tensors inside containers.
#include <chrono>
#include <cstdio>
#include <thread>

#include "testing.h"

// The raw C symbols upstream's library hands out (as integers) and exports.
extern "C" {

// __add_one_c_symbol: a TVMFFISafeCallType adding one to an int.
int tvm_ffi_testing_add_one_c(void* self, const TVMFFIAny* args, int32_t num_args,
                              TVMFFIAny* result) {
  (void)self;
  using namespace tvm_ffi_testing;
  return Guard([&] {
    if (num_args < 1) Throw("TypeError", "add_one expects one argument, got 0");
    int32_t x = static_cast<int32_t>(ConvertOrThrow(*S::Int(), args[0]).AsInt());
    *result = Value::Int(static_cast<int32_t>(static_cast<uint32_t>(x) + 1u)).Release();
  });
}

// _mlir_add_one_c_symbol: the same through MLIR's packed convention, where every
// argument (handle, args, num_args, result, status) comes by address.
void tvm_ffi_testing_mlir_add_one_c(void** packed_args) {
  void* handle = *static_cast<void**>(packed_args[0]);
  const TVMFFIAny* args = *static_cast<const TVMFFIAny**>(packed_args[1]);
  int32_t num_args = *static_cast<int32_t*>(packed_args[2]);
  TVMFFIAny* result = *static_cast<TVMFFIAny**>(packed_args[3]);
  *static_cast<int*>(packed_args[4]) = tvm_ffi_testing_add_one_c(handle, args, num_args, result);
}

}  // extern "C"

namespace tvm_ffi_testing {

namespace {

using Args = std::vector<Value>&;

// An int argument of a C++ `int` parameter: truncated to 32 bits, as upstream's cast is.
int32_t AsCInt(const Value& value) { return static_cast<int32_t>(value.AsInt()); }

Value Seq(const char* constructor, std::vector<Value> items) {
  return MakeSeq(constructor, items);
}

Value Map(const char* constructor, std::vector<std::pair<Value, Value>> items) {
  return MakeMap(constructor, items);
}

Value Key(const char* text) { return Value::Str(text); }

// testing.apply: calls its first argument with the rest. A named function with a frame of its
// own, as upstream's TestApply: an error raised by the function it calls names this frame in
// its backtrace (the function's Function object is released after the call returns, so the
// call is never a tail call that would drop the frame).
__attribute__((noinline)) Value TestApply(const TVMFFIAny* args, int32_t num_args) {
  if (num_args < 1) Throw("TypeError", "testing.apply expects a function to call, got none");
  Value function = ConvertOrThrow(*S::Function(), args[0]);
  return CallFunction(function.handle(), args + 1, num_args - 1);
}

void DefineCallbacks() {
  DefGlobal("testing.test_raise_error", S::Void(), {S::Str(), S::Str()}, [](Args args) -> Value {
    // The backtrace names the raising function, as upstream's does.
    const TVMFFIByteArray* backtrace = TVMFFIBacktrace(__FILE__, __LINE__, "TestRaiseError", 0);
    throw Error{args[0].AsStr(), args[1].AsStr(), std::string(backtrace->data, backtrace->size)};
  });
  DefGlobal("testing.add_one", S::Int(), {S::Int()}, [](Args args) {
    return Value::Int(static_cast<int32_t>(static_cast<uint32_t>(AsCInt(args[0])) + 1u));
  });
  DefPacked("testing.nop", [](const TVMFFIAny*, int32_t) { return Value(); });
  DefPacked("testing.echo", [](const TVMFFIAny* args, int32_t num_args) {
    if (num_args < 1) Throw("TypeError", "testing.echo expects an argument to return, got none");
    return Value::Copy(args[0]);
  });
  DefPacked("testing.apply", TestApply);
  DefGlobal("testing.run_check_signal", S::Void(), {S::Int()}, [](Args args) {
    for (int32_t i = 0; i < AsCInt(args[0]); ++i) {
      Check(TVMFFIEnvCheckSignals());
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    std::printf("Function finished without catching signal\n");
    std::fflush(stdout);
    return Value();
  });
}

void DefineObjectGlobals() {
  DefGlobal("testing.object_use_count", S::Int(), {S::Object("ffi.Object")},
            [](Args args) { return Value::Int(UseCount(args[0].handle()) - 1); });
  DefGlobal("testing.make_unregistered_object", S::Object("ffi.Object"), {}, [](Args) {
    Value object = NewObject(TypeIndexOf("testing.TestUnregisteredObject"));
    StoreSlot(object, 24, Slot::kI64, Value::Int(41));
    StoreSlot(object, 32, Slot::kI64, Value::Int(42));
    return object;
  });
  DefGlobal("testing.get_add_one_c_symbol", S::Int(), {}, [](Args) {
    return Value::Int(reinterpret_cast<int64_t>(&tvm_ffi_testing_add_one_c));
  });
  DefGlobal("testing.get_mlir_add_one_c_symbol", S::Int(), {}, [](Args) {
    return Value::Int(reinterpret_cast<int64_t>(&tvm_ffi_testing_mlir_add_one_c));
  });
  DefGlobal("testing.optional_tensor_view_has_value", S::Bool(), {S::Optional(S::DLTensor())},
            [](Args args) { return Value::Bool(!args[0].is_none()); });
  DefGlobal("testing.TestIntPairSum", S::Int(), {S::Object("testing.TestIntPair")},
            [](Args args) { return Value::Int(I64At(args[0], 24) + I64At(args[0], 32)); },
            "Get sum of the pair");
  DefGlobal("testing.make_visit_region_graph", S::Any(), {S::Bool()}, [](Args args) {
    Value fields = NewObject(TypeIndexOf("testing.TestVisitRegions"));
    if (args[0].AsInt() == 0) return fields;
    Value hook = NewObject(TypeIndexOf("testing.TestVisitHook"));
    StoreSlot(hook, 24, Slot::kObject, fields);
    return hook;
  });
}

// Containers holding tensors, for the DLPack conversion of nested results.
void DefineTensorContainers() {
  SchemaRef tensor = S::Tensor();
  SchemaRef array = S::Array(S::Any());
  SchemaRef str_map = S::Map(S::Str(), S::Any());
  DefGlobal("testing.make_array_with_tensor", array, {tensor},
            [](Args args) { return Seq("ffi.Array", {args[0]}); });
  DefGlobal("testing.make_array_with_mixed", array, {tensor, S::Int()},
            [](Args args) { return Seq("ffi.Array", {args[0], args[1], Value::Str("hello")}); });
  DefGlobal("testing.make_nested_array_with_tensor", array, {tensor}, [](Args args) {
    return Seq("ffi.Array", {Seq("ffi.Array", {args[0], Value::Int(42)}), args[0]});
  });
  DefGlobal("testing.make_list_with_tensor", S::List(S::Any()), {tensor, S::Int()},
            [](Args args) { return Seq("ffi.List", {args[0], args[1]}); });
  DefGlobal("testing.make_map_with_tensor", str_map, {tensor}, [](Args args) {
    return Map("ffi.Map", {{Key("tensor"), args[0]},
                           {Key("value"), Value::Int(42)},
                           {Key("name"), Value::Str("test")}});
  });
  DefGlobal("testing.make_dict_with_tensor", S::Dict(S::Str(), S::Any()), {tensor}, [](Args args) {
    return Map("ffi.Dict", {{Key("tensor"), args[0]}, {Key("value"), Value::Int(42)}});
  });
  DefGlobal("testing.make_empty_array_with_tensor_input", array, {tensor},
            [](Args) { return Seq("ffi.Array", {}); });
  DefGlobal("testing.make_nested_map_with_tensor", str_map, {tensor, tensor}, [](Args args) {
    return Map("ffi.Map", {{Key("array"), Seq("ffi.Array", {args[0], args[1]})},
                           {Key("map"), Map("ffi.Map", {{Key("t"), args[0]}})},
                           {Key("scalar"), Value::Int(99)}});
  });
}

}  // namespace

void DefineGlobals() {
  DefineCallbacks();
  DefineObjectGlobals();
  DefineTensorContainers();
  DefineEnumGlobals();
}

}  // namespace tvm_ffi_testing
