"""flashinfer's JIT builds one of its own C++ modules (``spdlog``: csrc/logging.cc, which includes
tvm/ffi/function.h through the include path tvm_ffi.libinfo reports) and loads and calls it.

No GPU and no CUDA toolkit here, so only flashinfer's C++ path runs: the target architecture
is given as for an ahead-of-time build (FLASHINFER_CUDA_ARCH_LIST), flashinfer is told a CUDA
version instead of asking nvcc (nothing of CUDA is compiled), its own build.ninja compiles the
module's object (the compile step, through tvm_ffi's flags), and the object is linked as
flashinfer links it less its CUDA libraries, which the module does not use.
"""
import os
import subprocess
import sys
import tempfile

os.environ.setdefault("FLASHINFER_CUDA_ARCH_LIST", "8.0")
os.environ.setdefault("CUDA_HOME", "/usr")
os.environ["FLASHINFER_WORKSPACE_BASE"] = tempfile.mkdtemp()

from packaging.version import Version  # noqa: E402

import flashinfer.jit.cpp_ext as cpp_ext  # noqa: E402

cpp_ext.get_cuda_version = lambda: Version("12.8")  # what nvcc would answer; nvcc is not run

from flashinfer.jit.spdlog import gen_spdlog_module  # noqa: E402

spec = gen_spdlog_module()
spec.write_ninja()
with open(spec.ninja_path) as f:
    ninja = f.read()
objects = [line.split(":")[0][len("build "):] for line in ninja.splitlines()
           if line.startswith("build ") and ": compile " in line]
done = subprocess.run(["ninja", "-C", os.path.dirname(spec.ninja_path), "-f", str(spec.ninja_path),
                       *objects], capture_output=True, text=True)
if done.returncode:
    sys.exit(done.stdout[-4000:])
print("compiled", [os.path.basename(o) for o in objects])
library = os.path.join(os.path.dirname(objects[0]), "spdlog.so")
subprocess.check_call([os.environ.get("CXX", "c++"), *objects, "-shared", "-o", library])
module = spec.load(library)
module.set_log_level(6)  # spdlog's "off": try_log_info then prints nothing (timestamps)
print("loaded", type(module).__name__, module.try_log_info("hello"), module.set_log_level(2))
