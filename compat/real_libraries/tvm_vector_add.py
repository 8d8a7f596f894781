"""TVM compiles a vector add for the CPU (llvm) and runs it on NumPy arrays, names its device,
and builds and runs a Relax function (LegalizeOps lowers its operators) on its virtual machine."""
import numpy as np
import tvm
from tvm import relax, te

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
print("device", str(dev), repr(dev), dev.exist, type(c.device).__name__, str(c.device))

bb = relax.BlockBuilder()
x = relax.Var("x", relax.TensorType((4,), "float32"))
with bb.function("main", [x]):
    with bb.dataflow():
        y = bb.emit(relax.op.multiply(relax.op.add(x, x), x))
        out_var = bb.emit_output(y)
    bb.emit_func_output(out_var)
legalized = relax.transform.LegalizeOps()(bb.get())
print("legalized", sorted(gv.name_hint for gv in legalized.functions))
vm = relax.VirtualMachine(tvm.compile(bb.get(), target="llvm"), dev)
print("relax", vm["main"](tvm.runtime.tensor(np.arange(4, dtype="float32"), dev)).numpy().tolist())
