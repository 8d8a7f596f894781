"""jax-tvm-ffi registers a TVM FFI function (C++ built with tvm_ffi.cpp.load_inline) as an XLA
FFI target, and JAX calls it, eagerly and under jit."""
import jax
import jax.numpy as jnp
import jax_tvm_ffi
import tvm_ffi.cpp

mod = tvm_ffi.cpp.load_inline("jax_add_one", cpp_sources=r"""
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/function.h>
void add_one(tvm::ffi::TensorView x, tvm::ffi::TensorView y) {
  const float* in = static_cast<const float*>(x.data_ptr());
  float* out = static_cast<float*>(y.data_ptr());
  for (int64_t i = 0; i < x.size(0); ++i) out[i] = in[i] + 1.0f;
}
""", functions=["add_one"])
jax_tvm_ffi.register_ffi_target("add_one", mod.add_one, ["args", "rets"], platform="cpu")
x = jnp.arange(6, dtype=jnp.float32)


def add_one(v):
    return jax.ffi.ffi_call("add_one", jax.ShapeDtypeStruct(v.shape, v.dtype))(v)


print("eager", add_one(x).tolist())
print("jit", jax.jit(lambda v: add_one(v) * 2)(x).tolist(), jax_tvm_ffi.registered_count())
