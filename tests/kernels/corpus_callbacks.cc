// Functions in both directions and errors of every kind in both directions:
// Python callables called from C++, closures made in C++ called from Python,
// C++ errors surfacing as Python exceptions, Python exceptions seen by C++
// (kind and message) and propagated back to Python.
#include <tvm/ffi/any.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/device.h>
#include <tvm/ffi/dtype.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using tvm::ffi::Any;
using tvm::ffi::AnyView;
using tvm::ffi::Array;
using tvm::ffi::Error;
using tvm::ffi::Function;
using tvm::ffi::String;

String KeyOf(const Any& value) {
  const TVMFFITypeInfo* info = TVMFFIGetTypeInfo(value.type_index());
  return String(std::string(info->type_key.data, info->type_key.size));
}

// ---- Python callables called from C++ ------------------------------------

Any Call0(Function f) { return f(); }
Any Call1(Function f, Any x) { return f(x); }
// f(*args): the arguments travel as a packed AnyView array.
Any CallPacked(Function f, Array<Any> args) {
  std::vector<AnyView> views(args.begin(), args.end());
  Any result;
  f.CallPacked(views.data(), static_cast<int32_t>(views.size()), &result);
  return result;
}
// sum(f(i) for i in range(n)); each result must convert to int64.
int64_t SumOfCalls(Function f, int64_t n) {
  int64_t total = 0;
  for (int64_t i = 0; i < n; ++i) total += f(i).cast<int64_t>();
  return total;
}
Array<Any> MapWith(Function f, Array<Any> values) {
  Array<Any> out;
  for (Any v : values) out.push_back(f(v));
  return out;
}
// Calls f with one value of each kind C++ can produce, as C++ types.
Any CallWithEachKind(Function f) {
  DLDataType dtype{kDLFloat, 16, 1};
  DLDevice device{kDLCPU, 0};
  return f(int64_t(-7), 2.5, true, nullptr, String("tiny"), String("a longer string"),
           tvm::ffi::Bytes(std::string("b\0b", 3)), Array<Any>{Any(int64_t(1)), Any(String("x"))},
           dtype, device);
}
// The type key of whatever the callable returned (how the result was encoded).
String ResultTypeKey(Function f) { return KeyOf(f()); }

// ---- closures made in C++ ------------------------------------------------

Function MakeAdder(int64_t k) {
  return Function::FromTyped([k](int64_t x) -> int64_t { return x + k; });
}
// Each call returns the next integer: state captured by the closure.
Function MakeCounter(int64_t start) {
  auto state = std::make_shared<int64_t>(start);
  return Function::FromTyped([state]() -> int64_t { return (*state)++; });
}
// x -> f(g(x)) for any callables, from either side.
Function Compose(Function f, Function g) {
  return Function::FromTyped([f, g](Any x) -> Any { return f(g(x)); });
}
// Captures an object (a String) and a Python callable in the closure.
Function MakeGreeter(String greeting, Function decorate) {
  return Function::FromTyped([greeting, decorate](String name) -> Any {
    return decorate(String(std::string(greeting) + ", " + std::string(name)));
  });
}
// A closure whose packed signature accepts any number of arguments.
Function MakeArgCounter() {
  return Function::FromPacked([](tvm::ffi::PackedArgs args, Any* rv) { *rv = int64_t(args.size()); });
}

// ---- errors raised in C++ --------------------------------------------------

[[noreturn]] void ThrowKind(const std::string& kind, const std::string& message) {
  throw Error(kind, message, TVMFFIBacktrace(__FILE__, __LINE__, "ThrowKind", 0));
}
void RaiseKind(String kind, String message) { ThrowKind(kind, message); }
void ThrowValueError(int64_t n) { TVM_FFI_THROW(ValueError) << "value " << n << " is not allowed"; }
void ThrowTypeError() { TVM_FFI_THROW(TypeError) << "wrong type here"; }
void ThrowIndexError() { TVM_FFI_THROW(IndexError) << "index 9 out of range"; }
void ThrowKeyError() { TVM_FFI_THROW(KeyError) << "no such key: k"; }
void ThrowAttributeError() { TVM_FFI_THROW(AttributeError) << "no attribute z"; }
void ThrowRuntimeError() { TVM_FFI_THROW(RuntimeError) << "runtime trouble"; }
void ThrowAssertionError() { TVM_FFI_THROW(AssertionError) << "assertion failed"; }
void ThrowMemoryError() { TVM_FFI_THROW(MemoryError) << "out of memory (pretend)"; }
void ThrowNotImplementedError() { TVM_FFI_THROW(NotImplementedError) << "not implemented yet"; }
void ThrowOverflowError() { TVM_FFI_THROW(OverflowError) << "too big"; }
void ThrowInternalError() { TVM_FFI_THROW(InternalError) << "internal invariant broken"; }
// A kind Python registers itself with register_error.
void ThrowCorpusError() { TVM_FFI_THROW(CorpusError) << "custom kind from C++"; }
void ThrowMultiline() { TVM_FFI_THROW(ValueError) << "first line\nsecond line\nthird"; }
void ThrowNonAscii() { TVM_FFI_THROW(ValueError) << "caf\xC3\xA9 \xE2\x9C\x93"; }
void FailCheck(int64_t x) { TVM_FFI_ICHECK_EQ(x, 1) << "x must be one"; }
void ThrowStdException() { throw std::runtime_error("a std::runtime_error"); }

// ---- errors raised in Python, seen by C++ ------------------------------------

// ["ok", result] or ["caught", kind, message] after calling f(x).
Array<Any> CallCatching(Function f, Any x) {
  try {
    Any result = f(x);
    return Array<Any>{Any(String("ok")), result};
  } catch (const Error& e) {
    return Array<Any>{Any(String("caught")), Any(String(e.kind())), Any(String(e.message()))};
  }
}
// Calls f(x); on failure throws a new error of `kind` whose message wraps the original.
Any CallRethrowingAs(Function f, Any x, String kind) {
  try {
    return f(x);
  } catch (const Error& e) {
    ThrowKind(kind, "wrapped " + e.kind() + ": " + e.message());
  }
}
// Calls f(x) without catching: the callback's error propagates to the caller.
Any CallPropagating(Function f, Any x) { return f(x); }
// Calls f() and then does more work: proves the error unwinds past it.
int64_t CallThenAdd(Function f, int64_t k) { return f().cast<int64_t>() + k; }

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(call0, Call0);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(call1, Call1);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(call_packed, CallPacked);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(sum_of_calls, SumOfCalls);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(map_with, MapWith);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(call_with_each_kind, CallWithEachKind);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(result_type_key, ResultTypeKey);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(make_adder, MakeAdder);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(make_counter, MakeCounter);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(compose, Compose);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(make_greeter, MakeGreeter);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(make_arg_counter, MakeArgCounter);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(raise_kind, RaiseKind);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(throw_value_error, ThrowValueError);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(throw_type_error, ThrowTypeError);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(throw_index_error, ThrowIndexError);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(throw_key_error, ThrowKeyError);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(throw_attribute_error, ThrowAttributeError);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(throw_runtime_error, ThrowRuntimeError);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(throw_assertion_error, ThrowAssertionError);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(throw_memory_error, ThrowMemoryError);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(throw_not_implemented_error, ThrowNotImplementedError);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(throw_overflow_error, ThrowOverflowError);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(throw_internal_error, ThrowInternalError);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(throw_corpus_error, ThrowCorpusError);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(throw_multiline, ThrowMultiline);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(throw_non_ascii, ThrowNonAscii);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(fail_check, FailCheck);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(throw_std_exception, ThrowStdException);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(call_catching, CallCatching);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(call_rethrowing_as, CallRethrowingAs);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(call_propagating, CallPropagating);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(call_then_add, CallThenAdd);
