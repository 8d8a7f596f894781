// Kernels of the reliability cases (tests/stress_cases.py): C++ code that
// mutates and reads the containers a Python caller shares with other threads,
// calls back into Python at depth, and reports what it received, so that a
// wrapped or truncated value shows.
#include <tvm/ffi/any.h>
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/dict.h>
#include <tvm/ffi/container/list.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/device.h>
#include <tvm/ffi/dtype.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>

#include <cstdint>
#include <thread>
#include <vector>

namespace {

using tvm::ffi::Any;
using tvm::ffi::Array;
using tvm::ffi::Dict;
using tvm::ffi::Function;
using tvm::ffi::List;
using tvm::ffi::Shape;
using tvm::ffi::Tensor;

// ---- callbacks --------------------------------------------------------------

Any Call1(Function f, Any x) { return f(x); }

// ---- containers mutated and read in place (header code, inline) -------------

// d[start + i] = start + i for i < n.
void DictInsert(Dict<Any, Any> d, int64_t start, int64_t n) {
  for (int64_t i = 0; i < n; ++i) d.Set(start + i, start + i);
}

// Erases the keys start .. start + n - 1 that are present.
void DictErase(Dict<Any, Any> d, int64_t start, int64_t n) {
  for (int64_t i = 0; i < n; ++i) d.erase(start + i);
}

// The number of entries a full iteration visits, each checked to be a pair of equal ints.
int64_t DictCountEntries(Dict<Any, Any> d) {
  int64_t count = 0;
  for (auto kv : d) {
    if (kv.first.cast<int64_t>() != kv.second.cast<int64_t>()) return -1;
    ++count;
  }
  return count == static_cast<int64_t>(d.size()) ? count : -2;
}

void ListAppend(List<Any> l, int64_t start, int64_t n) {
  for (int64_t i = 0; i < n; ++i) l.push_back(start + i);
}

int64_t ListSum(List<Any> l) {
  int64_t total = 0;
  for (int64_t i = 0; i < static_cast<int64_t>(l.size()); ++i) total += l[i].cast<int64_t>();
  return total;
}

// `threads` C++ threads each set n keys of their own through the runtime's
// ffi.DictSetItem (the global function, not header code): the runtime's own
// operations must be atomic.
void DictSetFromThreads(Dict<Any, Any> d, int64_t threads, int64_t n) {
  Function set_item = Function::GetGlobalRequired("ffi.DictSetItem");
  std::vector<std::thread> pool;
  for (int64_t t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (int64_t i = 0; i < n; ++i) set_item(d, t * n + i, t * n + i);
    });
  }
  for (auto& th : pool) th.join();
}

// ---- what a narrowed field arrives as --------------------------------------

Array<int64_t> DeviceFields(DLDevice device) {
  return Array<int64_t>{device.device_type, device.device_id};
}

Array<int64_t> DTypeFields(DLDataType dtype) {
  return Array<int64_t>{dtype.code, dtype.bits, dtype.lanes};
}

Array<int64_t> ShapeEntries(Shape shape) { return Array<int64_t>(shape.begin(), shape.end()); }

// ---- depth -----------------------------------------------------------------

// How deep a value nests: Arrays whose first element is the next level.
int64_t NestingDepth(Any value) {
  int64_t depth = 0;
  while (auto array = value.as<Array<Any>>()) {
    ++depth;
    if (array.value().empty()) break;
    value = array.value()[0];
  }
  return depth;
}

}  // namespace

TVM_FFI_DLL_EXPORT_TYPED_FUNC(call1, Call1);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(dict_insert, DictInsert);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(dict_erase, DictErase);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(dict_count_entries, DictCountEntries);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(list_append, ListAppend);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(list_sum, ListSum);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(dict_set_from_threads, DictSetFromThreads);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(device_fields, DeviceFields);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(dtype_fields, DTypeFields);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(shape_entries, ShapeEntries);
TVM_FFI_DLL_EXPORT_TYPED_FUNC(nesting_depth, NestingDepth);
