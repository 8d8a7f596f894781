"""TVM compiles a vector add for the CPU (llvm) and runs it on NumPy arrays."""
import numpy as np
import tvm
from tvm import te

n = 1024
A = te.placeholder((n,), name="A", dtype="float32")
B = te.placeholder((n,), name="B", dtype="float32")
C = te.compute((n,), lambda i: A[i] + B[i], name="C")
func = te.create_prim_func([A, B, C]).with_attr("global_symbol", "vector_add")
lib = tvm.compile(tvm.IRModule({"vector_add": func}), target="llvm")
dev = tvm.cpu()
a_np = np.arange(n, dtype="float32")
b_np = np.arange(n, dtype="float32") * 0.5
a, b = tvm.runtime.tensor(a_np, dev), tvm.runtime.tensor(b_np, dev)
c = tvm.runtime.tensor(np.zeros(n, dtype="float32"), dev)
lib["vector_add"](a, b, c)
out = c.numpy()
assert np.allclose(out, a_np + b_np)
print("vector_add", out[:4].tolist(), float(out.sum()))
