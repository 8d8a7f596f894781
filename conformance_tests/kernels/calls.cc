// Call targets for the conformance suite, compiled at test time against
// upstream's headers: typed functions (so upstream's inline argument
// conversion and its error messages run), calls back into Python, errors of
// any kind, C++-held references, and containers built, read and mutated by
// inline header code.
#include <tvm/ffi/any.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/dict.h>
#include <tvm/ffi/container/list.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/container/variant.h>
#include <tvm/ffi/dtype.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/optional.h>
#include <tvm/ffi/string.h>

#include <cstdint>
#include <string>
#include <vector>

namespace {

using tvm::ffi::Any;
using tvm::ffi::AnyView;
using tvm::ffi::Array;
using tvm::ffi::Bytes;
using tvm::ffi::Dict;
using tvm::ffi::Function;
using tvm::ffi::List;
using tvm::ffi::Map;
using tvm::ffi::Optional;
using tvm::ffi::Shape;
using tvm::ffi::String;
using tvm::ffi::Tensor;
using tvm::ffi::Variant;

// ---- values and typed conversion ------------------------------------------

Any Echo(Any value) { return value; }
int64_t AddInt(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
double MulFloat(double a, double b) { return a * b; }
bool NotBool(bool value) { return !value; }
String Concat(String a, String b) { return String(std::string(a) + std::string(b)); }
int64_t StrLen(String value) { return static_cast<int64_t>(value.size()); }
Bytes BytesTwice(Bytes value) {
  std::string data(value.data(), value.size());
  return Bytes(data + data);
}
String DTypeText(DLDataType dtype) { return tvm::ffi::DLDataTypeToString(dtype); }
Array<int64_t> DeviceParts(DLDevice device) {
  return Array<int64_t>{device.device_type, device.device_id};
}
int64_t OptionalInt(Optional<int64_t> value) { return value.has_value() ? *value : -12345; }
String IntOrStr(Variant<int64_t, String> value) {
  if (auto as_int = value.as<int64_t>()) return String("int:" + std::to_string(*as_int));
  return String("str:" + std::string(value.get<String>()));
}
// Typed ObjectRef parameters accept None as a null reference: say so instead of crashing.
template <typename T>
void RequireDefined(const T& ref, const char* what) {
  if (!ref.defined()) throw tvm::ffi::Error("ValueError", std::string("null ") + what, "");
}

Array<Any> TensorInfo(Tensor t) {
  RequireDefined(t, "tensor");
  const DLTensor* dl = t.GetDLTensorPtr();
  Array<Any> shape, strides;
  for (int i = 0; i < dl->ndim; ++i) {
    shape.push_back(dl->shape[i]);
    strides.push_back(dl->strides ? dl->strides[i] : int64_t(-1));
  }
  Array<Any> out;
  out.push_back(shape);
  out.push_back(strides);
  out.push_back(tvm::ffi::DLDataTypeToString(dl->dtype));
  out.push_back(static_cast<int64_t>(dl->byte_offset));
  out.push_back(t.IsContiguous());
  return out;
}
Shape ShapeOf(Tensor t) {
  RequireDefined(t, "tensor");
  return Shape(t.shape().begin(), t.shape().end());
}
Shape MakeShape(Array<int64_t> dims) { return Shape(dims.begin(), dims.end()); }
int64_t ShapeSum(Shape shape) {
  int64_t total = 0;
  for (int64_t d : shape) total += d;
  return total;
}

// ---- containers through typed signatures ----------------------------------

int64_t ArrayLen(Array<Any> values) { return static_cast<int64_t>(values.size()); }
Any ArrayGet(Array<Any> values, int64_t index) { return values[index]; }
int64_t SumInts(Array<int64_t> values) {
  int64_t total = 0;
  for (int64_t v : values) total = static_cast<int64_t>(static_cast<uint64_t>(total) + v);
  return total;
}
Any MapAt(Map<Any, Any> map, Any key) { return map.at(key); }
int64_t MapLen(Map<Any, Any> map) { return static_cast<int64_t>(map.size()); }
Map<Any, Any> MapWith(Map<Any, Any> map, Any key, Any value) {
  map.Set(key, value);  // copy on write: the caller's map is untouched
  return map;
}
Array<Any> Pair(Any a, Any b) { return Array<Any>{a, b}; }

// Seven parameters of seven types: what each position became after upstream's inline
// conversion (or its error, which names the position and the expected type).
Array<Any> Mixed(int64_t i, String s, double f, bool b, DLDataType dtype, Optional<int64_t> o,
                 Array<Any> a) {
  return Array<Any>{i, s, f, b, dtype, o, a};
}

// ---- callbacks --------------------------------------------------------------

Any Call(Function f, Array<Any> args) {
  RequireDefined(f, "function");
  std::vector<AnyView> views(args.begin(), args.end());
  Any result;
  f.CallPacked(views.data(), static_cast<int32_t>(views.size()), &result);
  return result;
}
Any CallTwice(Function f, Any x) {
  RequireDefined(f, "function");
  return f(f(x));
}
Any CallEach(Array<Function> fs, Any x) {
  Array<Any> out;
  for (Function f : fs) {
    RequireDefined(f, "function");
    out.push_back(f(x));
  }
  return out;
}

// ---- errors -----------------------------------------------------------------

Any RaiseError(String kind, String message) {
  throw tvm::ffi::Error(std::string(kind), std::string(message), "");
}

// ---- references C++ keeps -------------------------------------------------

std::vector<Any>& Held() {
  static std::vector<Any> held;
  return held;
}
int64_t Hold(Any value) {
  Held().push_back(value);
  return static_cast<int64_t>(Held().size());
}
Any Held_(int64_t index) {
  if (Held().empty()) return Any();
  int64_t n = static_cast<int64_t>(Held().size());
  return Held()[((index % n) + n) % n];
}
int64_t Release() {
  int64_t n = static_cast<int64_t>(Held().size());
  Held().clear();
  return n;
}

// ---- containers built, read and mutated by inline header code -------------

Map<Any, Any> MakeMap(Array<Any> flat) {
  Map<Any, Any> out;
  for (size_t i = 0; i + 1 < flat.size(); i += 2) out.Set(flat[i], flat[i + 1]);
  return out;
}
Dict<Any, Any> MakeDict(Array<Any> flat) {
  Dict<Any, Any> out;
  for (size_t i = 0; i + 1 < flat.size(); i += 2) out.Set(flat[i], flat[i + 1]);
  return out;
}
Array<Any> MakeArray(Array<Any> items) {
  Array<Any> out;
  for (Any item : items) out.push_back(item);
  return out;
}
List<Any> MakeList(Array<Any> items) {
  List<Any> out;
  for (Any item : items) out.push_back(item);
  return out;
}

// Lookups run the hashing and probing inline on the caller's map.
Any MapLookup(Map<Any, Any> map, Any key) {
  auto found = map.Get(key);
  return found.has_value() ? Any(*found) : Any(String("<missing>"));
}
Any DictLookup(Dict<Any, Any> dict, Any key) {
  auto found = dict.Get(key);
  return found.has_value() ? Any(*found) : Any(String("<missing>"));
}
int64_t MapCount(Map<Any, Any> map, Any key) { return static_cast<int64_t>(map.count(key)); }
Array<Any> MapItems(Map<Any, Any> map) {
  Array<Any> out;
  for (auto kv : map) out.push_back(Array<Any>{kv.first, kv.second});
  return out;
}
Array<Any> DictItems(Dict<Any, Any> dict) {
  Array<Any> out;
  for (auto kv : dict) out.push_back(Array<Any>{kv.first, kv.second});
  return out;
}
// In-place mutation of a Dict Python holds (Dict is never copied on write).
int64_t DictSet(Dict<Any, Any> dict, Any key, Any value) {
  dict.Set(key, value);
  return static_cast<int64_t>(dict.size());
}
int64_t DictErase(Dict<Any, Any> dict, Any key) {
  dict.erase(key);
  return static_cast<int64_t>(dict.size());
}
int64_t DictClear(Dict<Any, Any> dict) {
  dict.clear();
  return static_cast<int64_t>(dict.size());
}

Array<Any> SeqItems(Array<Any> values) {
  Array<Any> out;
  for (Any item : values) out.push_back(item);
  return out;
}
Array<Any> ListItems(List<Any> values) {
  Array<Any> out;
  for (Any item : values) out.push_back(item);
  return out;
}
int64_t ListPush(List<Any> list, Any value) {
  list.push_back(value);
  return static_cast<int64_t>(list.size());
}
int64_t ListInsert(List<Any> list, int64_t index, Any value) {
  int64_t n = static_cast<int64_t>(list.size());
  index = index < 0 ? 0 : (index > n ? n : index);
  list.insert(list.begin() + index, value);
  return static_cast<int64_t>(list.size());
}
int64_t ListErase(List<Any> list, int64_t index) {
  int64_t n = static_cast<int64_t>(list.size());
  if (n == 0) return 0;
  list.erase(list.begin() + (((index % n) + n) % n));
  return static_cast<int64_t>(list.size());
}
int64_t ListSet(List<Any> list, int64_t index, Any value) {
  int64_t n = static_cast<int64_t>(list.size());
  if (n == 0) return 0;
  list.Set(((index % n) + n) % n, value);
  return n;
}
int64_t ListPopBack(List<Any> list) {
  if (!list.empty()) list.pop_back();
  return static_cast<int64_t>(list.size());
}
int64_t ListReserve(List<Any> list, int64_t n) {
  list.reserve(n);
  return static_cast<int64_t>(list.size());
}

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(echo, Echo);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(add_int, AddInt);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(mul_float, MulFloat);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(not_bool, NotBool);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(concat, Concat);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(str_len, StrLen);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(bytes_twice, BytesTwice);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(dtype_text, DTypeText);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(device_parts, DeviceParts);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(optional_int, OptionalInt);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(int_or_str, IntOrStr);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(tensor_info, TensorInfo);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(shape_of, ShapeOf);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(make_shape, MakeShape);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(shape_sum, ShapeSum);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(array_len, ArrayLen);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(array_get, ArrayGet);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(sum_ints, SumInts);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(map_at, MapAt);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(map_len, MapLen);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(map_with, MapWith);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(pair, Pair);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(mixed, Mixed);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(call, Call);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(call_twice, CallTwice);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(call_each, CallEach);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(raise_error, RaiseError);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(hold, Hold);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(held, Held_);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(release, Release);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(make_map, MakeMap);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(make_dict, MakeDict);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(make_array, MakeArray);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(make_list, MakeList);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(map_lookup, MapLookup);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(dict_lookup, DictLookup);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(map_count, MapCount);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(map_items, MapItems);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(dict_items, DictItems);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(dict_set, DictSet);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(dict_erase, DictErase);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(dict_clear, DictClear);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(seq_items, SeqItems);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(list_items, ListItems);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(list_push, ListPush);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(list_insert, ListInsert);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(list_erase, ListErase);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(list_set, ListSet);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(list_pop_back, ListPopBack);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(list_reserve, ListReserve);
