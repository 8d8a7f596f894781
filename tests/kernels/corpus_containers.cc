// Containers crossing the boundary: Array (flat and nested), Map (small and
// large, built on either side), Dict and List mutated in place by C++ while
// Python holds them, Shape, Optional and Variant.
#include <tvm/ffi/any.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/dict.h>
#include <tvm/ffi/container/list.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/variant.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/optional.h>
#include <tvm/ffi/string.h>

#include <cstdint>
#include <string>

namespace {

using tvm::ffi::Any;
using tvm::ffi::Array;
using tvm::ffi::Dict;
using tvm::ffi::List;
using tvm::ffi::Map;
using tvm::ffi::Optional;
using tvm::ffi::Shape;
using tvm::ffi::String;
using tvm::ffi::Variant;

String Key(int64_t i) { return String("k" + std::to_string(i)); }

// ---- Array ---------------------------------------------------------------

int64_t ArraySumInt(Array<int64_t> values) {
  int64_t total = 0;
  for (int64_t v : values) total += v;
  return total;
}
int64_t ArraySize(Array<Any> values) { return static_cast<int64_t>(values.size()); }
// [0, 1, ..., n-1]
Array<int64_t> ArrayIota(int64_t n) {
  Array<int64_t> out;
  for (int64_t i = 0; i < n; ++i) out.push_back(i);
  return out;
}
Array<Any> ArrayReverse(Array<Any> values) {
  Array<Any> out;
  for (int64_t i = static_cast<int64_t>(values.size()) - 1; i >= 0; --i) out.push_back(values[i]);
  return out;
}
// Element access with C++'s own bounds check (IndexError when out of range).
Any ArrayAt(Array<Any> values, int64_t index) { return values[index]; }
// Returns a copy with one element appended; the caller's array is untouched
// because Array is copy-on-write and the caller still holds a reference.
Array<Any> ArrayAppended(Array<Any> values, Any item) {
  values.push_back(item);
  return values;
}
// A nested array of mixed content: [[1, 2], [3, [4, "five"]], [], "six", None].
Array<Any> ArrayNested() {
  Array<Any> inner{Any(int64_t(4)), Any(String("five"))};
  Array<Any> second{Any(int64_t(3)), Any(inner)};
  Array<Any> first{Any(int64_t(1)), Any(int64_t(2))};
  return Array<Any>{Any(first), Any(second), Any(Array<Any>()), Any(String("six")), Any(nullptr)};
}
// Sum of every int found at any depth of nested arrays (other leaves ignored).
int64_t NestedIntSum(Any value) {
  if (auto as_int = value.try_cast<int64_t>()) {
    if (value.type_index() == kTVMFFIInt) return *as_int;
  }
  if (auto as_array = value.as<Array<Any>>()) {
    int64_t total = 0;
    for (Any item : *as_array) total += NestedIntSum(item);
    return total;
  }
  return 0;
}
// Maximum nesting depth of arrays (a scalar is depth 0).
int64_t NestedDepth(Any value) {
  if (auto as_array = value.as<Array<Any>>()) {
    int64_t deepest = 0;
    for (Any item : *as_array) {
      int64_t d = NestedDepth(item);
      if (d > deepest) deepest = d;
    }
    return deepest + 1;
  }
  return 0;
}

// ---- Map -----------------------------------------------------------------

// {"k0": 0, "k1": 1, "k2": 4, ...} with n entries, built in C++.
Map<String, int64_t> MapSquares(int64_t n) {
  Map<String, int64_t> out;
  for (int64_t i = 0; i < n; ++i) out.Set(Key(i), i * i);
  return out;
}
// Counts how many of the keys k0..k{n-1} map to i*i when looked up by C++
// (hashing and probing run inline in this kernel on the caller's map).
int64_t MapCheckSquares(Map<String, int64_t> map, int64_t n) {
  int64_t good = 0;
  for (int64_t i = 0; i < n; ++i) {
    auto found = map.Get(Key(i));
    if (found.has_value() && *found == i * i) ++good;
  }
  return good;
}
int64_t MapSize(Map<Any, Any> map) { return static_cast<int64_t>(map.size()); }
// Sum of all values, visiting the map by iteration rather than lookup.
int64_t MapSumValues(Map<String, int64_t> map) {
  int64_t total = 0;
  for (auto kv : map) total += kv.second;
  return total;
}
// The keys in the map's own iteration order.
Array<Any> MapKeys(Map<Any, Any> map) {
  Array<Any> out;
  for (auto kv : map) out.push_back(kv.first);
  return out;
}
// Lookup of any key type; None when absent.
Any MapGet(Map<Any, Any> map, Any key) {
  auto found = map.Get(key);
  if (!found.has_value()) return Any(nullptr);
  return *found;
}
// {int i: "v<i>"} for i in [0, n): integer keys.
Map<int64_t, String> MapIntKeys(int64_t n) {
  Map<int64_t, String> out;
  for (int64_t i = 0; i < n; ++i) out.Set(i * 7 - 3, String("v" + std::to_string(i)));
  return out;
}
// A copy with one more entry; the caller's map is untouched (copy-on-write).
Map<Any, Any> MapWith(Map<Any, Any> map, Any key, Any value) {
  map.Set(key, value);
  return map;
}
// A map whose keys have mixed types: int, str, bool-free, float, None-free.
Map<Any, Any> MapMixedKeys() {
  Map<Any, Any> out;
  out.Set(Any(int64_t(1)), Any(String("int one")));
  out.Set(Any(String("1")), Any(String("str one")));
  out.Set(Any(2.5), Any(String("float")));
  out.Set(Any(String("a long string key!")), Any(int64_t(99)));
  return out;
}

// ---- Dict (mutable, shared) ------------------------------------------------

void DictSet(Dict<Any, Any> dict, Any key, Any value) { dict.Set(key, value); }
void DictErase(Dict<Any, Any> dict, Any key) { dict.erase(key); }
void DictClear(Dict<Any, Any> dict) { dict.clear(); }
// Adds k0..k{n-1} -> i*i to the caller's dict in place.
void DictFillSquares(Dict<Any, Any> dict, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dict.Set(Any(Key(i)), Any(i * i));
}
Dict<String, int64_t> DictSquares(int64_t n) {
  Dict<String, int64_t> out;
  for (int64_t i = 0; i < n; ++i) out.Set(Key(i), i * i);
  return out;
}
int64_t DictSize(Dict<Any, Any> dict) { return static_cast<int64_t>(dict.size()); }

// ---- List (mutable, shared) ------------------------------------------------

void ListAppend(List<Any> list, Any item) { list.push_back(item); }
void ListSetItem(List<Any> list, int64_t index, Any item) { list.Set(index, item); }
void ListPop(List<Any> list) { list.pop_back(); }
void ListClear(List<Any> list) { list.clear(); }
// Appends n ints so the list must grow its separate buffer several times.
void ListGrow(List<Any> list, int64_t n) {
  for (int64_t i = 0; i < n; ++i) list.push_back(Any(i));
}
List<Any> ListMake(int64_t n) {
  List<Any> out;
  for (int64_t i = 0; i < n; ++i) out.push_back(Any(String(std::string(static_cast<size_t>(i), 'x'))));
  return out;
}
int64_t ListSize(List<Any> list) { return static_cast<int64_t>(list.size()); }

// ---- Shape ---------------------------------------------------------------

Shape ShapeFromArray(Array<int64_t> dims) { return Shape(dims); }
int64_t ShapeProduct(Shape shape) { return shape.Product(); }
int64_t ShapeNDim(Shape shape) { return static_cast<int64_t>(shape.size()); }
Shape ShapeEcho(Shape shape) { return shape; }

// ---- Optional ------------------------------------------------------------

// -1 when None, else the value.
int64_t OptionalIntOr(Optional<int64_t> value) { return value.value_or(-1); }
Optional<String> OptionalStr(bool present) {
  if (present) return String("here");
  return std::nullopt;
}
Optional<Array<int64_t>> OptionalArray(int64_t n) {
  if (n < 0) return std::nullopt;
  return ArrayIota(n);
}

// ---- Variant -------------------------------------------------------------

// Which alternative the caller's value landed in.
String VariantKind(Variant<int64_t, String, Array<Any>> value) {
  if (value.as<int64_t>().has_value()) return String("int");
  if (value.as<String>().has_value()) return String("str");
  return String("array");
}
Variant<int64_t, String> VariantMake(bool want_int) {
  if (want_int) return Variant<int64_t, String>(int64_t(7));
  return Variant<int64_t, String>(String("seven"));
}

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(array_sum_int, ArraySumInt);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(array_size, ArraySize);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(array_iota, ArrayIota);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(array_reverse, ArrayReverse);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(array_at, ArrayAt);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(array_appended, ArrayAppended);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(array_nested, ArrayNested);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(nested_int_sum, NestedIntSum);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(nested_depth, NestedDepth);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(map_squares, MapSquares);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(map_check_squares, MapCheckSquares);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(map_size, MapSize);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(map_sum_values, MapSumValues);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(map_keys, MapKeys);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(map_get, MapGet);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(map_int_keys, MapIntKeys);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(map_with, MapWith);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(map_mixed_keys, MapMixedKeys);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(dict_set, DictSet);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(dict_erase, DictErase);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(dict_clear, DictClear);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(dict_fill_squares, DictFillSquares);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(dict_squares, DictSquares);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(dict_size, DictSize);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(list_append, ListAppend);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(list_set_item, ListSetItem);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(list_pop, ListPop);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(list_clear, ListClear);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(list_grow, ListGrow);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(list_make, ListMake);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(list_size, ListSize);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(shape_from_array, ShapeFromArray);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(shape_product, ShapeProduct);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(shape_ndim, ShapeNDim);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(shape_echo, ShapeEcho);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(optional_int_or, OptionalIntOr);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(optional_str, OptionalStr);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(optional_array, OptionalArray);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(variant_kind, VariantKind);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(variant_make, VariantMake);
