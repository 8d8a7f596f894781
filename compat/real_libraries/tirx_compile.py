"""TIRx parses a TVMScript vector add, compiles it for the CPU (llvm, through its default
pipeline) and runs it on NumPy arrays."""
import numpy as np
import tvm_tirx
from tvm_tirx.script import tirx as T


@T.function
def vadd(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32"),
         C: T.Tensor((64,), "float32")):
    for i in range(64):
        C[i] = A[i] * 2.0 + B[i]


lib = tvm_tirx.tirx.compile(vadd, target="llvm")
dev = tvm_tirx.cpu()
a_np = np.arange(64, dtype="float32")
b_np = np.ones(64, dtype="float32")
a, b = tvm_tirx.runtime.tensor(a_np, dev), tvm_tirx.runtime.tensor(b_np, dev)
c = tvm_tirx.runtime.tensor(np.zeros(64, dtype="float32"), dev)
lib["vadd"](a, b, c)
out = c.numpy()
assert np.allclose(out, a_np * 2 + b_np)
print("vadd", out[:4].tolist(), float(out.sum()), str(dev), repr(dev))
