"""Builds first_kernel's shared library into the wheel (spec/19-ship-it.md).

* compiled against the C headers of the runtime package installed in the build
  environment (``python -m tvm_ffi.config``): that package's version is the
  floor of the runtime dependency the wheel declares;
* linked to its ``libtvm_ffi.so`` (``-ltvm_ffi``: the library is NEEDED, by its
  SONAME), with an RPATH to where the runtime's wheel puts it next to this
  package (``$ORIGIN/../tvm_ffi/lib``), so that a ``dlopen`` without the runtime
  imported first still finds it;
* with ``-fvisibility=hidden``: only the ``TVM_FFI_DLL_EXPORT`` functions are
  exported.
"""

import os
import subprocess
import sys
from importlib import metadata

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "..", "kernels", "first_kernel.c")
RUNTIME = "apache-tvm-ffi"
OUR_HELPERS = os.path.join(HERE, "..", "..", "c_api", "include")


def runtime_flags():
    """The include and library directories of the runtime package, from its own config."""
    done = subprocess.run([sys.executable, "-m", "tvm_ffi.config", "--includedir", "--libdir"],
                          capture_output=True, text=True, check=True)
    include, libdir = done.stdout.split()
    return include, libdir


class BuildWithKernel(build_py):
    """build_py, plus the kernel library and the versions it was built with."""

    def run(self):
        super().run()
        include, libdir = runtime_flags()
        target = os.path.join(self.build_lib, "first_kernel")
        os.makedirs(target, exist_ok=True)
        subprocess.run([os.environ.get("CC", "cc"), "-std=c99", "-O2", "-shared", "-fPIC",
                        "-fvisibility=hidden", "-Werror=implicit-function-declaration",
                        # the runtime's headers first; then this project's tvm_ffi_abi/ C
                        # helpers, for a kernel that includes them (tvm/ and dlpack/ are
                        # found in the runtime's folder before ours is looked at)
                        f"-I{include}", f"-I{OUR_HELPERS}", SOURCE, "-o", os.path.join(target, "libfirst_kernel.so"),
                        f"-L{libdir}", "-ltvm_ffi", "-Wl,-rpath,$ORIGIN/../tvm_ffi/lib"],
                       check=True)
        with open(os.path.join(include, "tvm", "ffi", "c_api.h"), encoding="utf-8") as f:
            header = f.read()
        version = tuple(int(header.split(f"#define TVM_FFI_VERSION_{part} ")[1].split()[0])
                        for part in ("MAJOR", "MINOR", "PATCH"))
        with open(os.path.join(target, "_built_with.py"), "w", encoding="utf-8") as f:
            f.write(f'"""Written by setup.py: what the kernel was compiled against."""\n'
                    f"HEADER_VERSION = {version!r}\n"
                    f"RUNTIME = {RUNTIME!r}\nRUNTIME_VERSION = {metadata.version(RUNTIME)!r}\n")


built_against = metadata.version(RUNTIME)
major, minor = (int(part) for part in built_against.split(".")[:2])
setup(cmdclass={"build_py": BuildWithKernel},
      install_requires=[f"{RUNTIME}>={built_against},<{major}.{minor + 1}"],
      # The package holds a compiled library: the wheel is platform specific.
      has_ext_modules=lambda: True)
