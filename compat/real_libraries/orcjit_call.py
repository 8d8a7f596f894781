"""tvm-ffi-orcjit JIT-loads a C object file and calls the function it exports."""
import os
import subprocess
import tempfile

import tvm_ffi
import tvm_ffi_orcjit as oj

here = os.path.dirname(os.path.abspath(__file__))
obj = os.path.join(tempfile.mkdtemp(), "orcjit_add.o")
subprocess.check_call(["cc", "-c", "-fPIC", "-O2", f"-I{tvm_ffi.libinfo.find_include_path()}",
                       os.path.join(here, "orcjit_add.c"), "-o", obj])
mod = oj.default_session().load_module(obj)
print("add", mod.add(40, 2), mod["add"](-5, 3))
try:
    mod.add("x", 1)
except TypeError as e:
    print("TypeError", e)
