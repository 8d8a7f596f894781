"""Concurrency: reference counts, global lookups and containers used from many
threads at once (and, under the fast runtime, registrations too, which it guards
with a lock where upstream leaves locking to the caller).
"""

from __future__ import annotations

import pytest

from runtime_client import RUNTIMES, run

KERNEL = r"""
#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/string.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace ffi = tvm::ffi;

int64_t stress(ffi::Map<ffi::Any, ffi::Any> shared, int64_t threads, int64_t iters, bool register_globals) {
  std::atomic<int64_t> total{0};
  std::vector<std::thread> pool;
  for (int64_t t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (int64_t i = 0; i < iters; ++i) {
        ffi::Function size = ffi::Function::GetGlobalRequired("ffi.ArraySize");
        ffi::Function make = ffi::Function::GetGlobalRequired("ffi.Map");
        ffi::Array<int64_t> arr{1, 2, t};
        ffi::Map<ffi::Any, ffi::Any> copy = shared;  // reference count traffic on one object
        ffi::Map<ffi::Any, ffi::Any> built = make(t, i, ffi::String("key"), copy).cast<ffi::Map<ffi::Any, ffi::Any>>();
        total += size(arr).cast<int64_t>() + built.size() + (copy.count(ffi::String("a")) ? 1 : 0);
        if (!built[ffi::String("key")].as<ffi::MapObj>()) total -= 1000;
        if (register_globals) {
          std::string name = "test.thread." + std::to_string(t) + "." + std::to_string(i % 7);
          TVMFFIByteArray name_bytes{name.data(), name.size()};
          TVM_FFI_CHECK_SAFE_CALL(TVMFFIFunctionSetGlobal(&name_bytes, static_cast<ffi::Object*>(const_cast<ffi::FunctionObj*>(size.get())), 1));
        }
      }
    });
  }
  for (auto& th : pool) th.join();
  return total.load();
}

TVM_FFI_DLL_EXPORT_TYPED_FUNC(stress, stress);
"""

SNIPPET = r"""
mod = call("ffi.ModuleLoadFromFile", PATH)
stress = call("ffi.ModuleGetFunction", mod, "stress", False)
shared = call("ffi.Map", "a", 1, "b", "a value that is a string object")
before = rc(shared)
threads, iters = 4, 2000
total = callf(stress, shared, threads, iters, REGISTER)
print("total: %r" % ((total, threads * iters * (3 + 2 + 1)),))
print("rc: %r" % (rc(shared) - before,))
functor = call("ffi.FunctionListGlobalNamesFunctor")
names = [show(callf(functor, i)) for i in range(callf(functor, -1))]
print("registered: %r" % (len([n for n in names if n.startswith("test.thread.")]),))
"""


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_concurrent_use(runtime, kernels):
    path = kernels.build("runtime_threads", KERNEL, extra_flags=("-pthread",))
    # upstream does not lock its global table, so only our runtimes are asked to
    # take registrations from several threads at once
    register = runtime != "upstream"
    out = run(runtime, SNIPPET, PATH=path, REGISTER=register).splitlines()
    assert out[0] == "total: (48000, 48000)"
    assert out[1] == "rc: 0"
    assert out[2] == "registered: %d" % (4 * 7 if register else 0)
