"""The CUDA version of the first kernel compiles here, and runs where there is a GPU.

* ``examples/kernels/first_kernel.cu`` builds with nvcc against upstream's
  headers (nvcc of the toolkit ``CUDA_HOME`` names, as the build itself takes
  it, else of the ``nvidia-cuda-nvcc`` wheel when installed, else of the
  machine's toolkit), exports both functions, loads under this project's
  runtime and refuses a CPU tensor; given a DLTensor on a CUDA device, its
  device guard is reached and a machine without a driver gets CUDA's error
  back through the ABI, not a crash;
* ``tvm_ffi_fast.cpp.load_inline(cuda_sources=...)`` builds the same file;
* ``examples/kernels/check_first_kernel_cuda.py`` checks the results on a GPU,
  and says it skipped where torch sees none.

nvcc compiles without a GPU; the tests skip, saying so, only where no nvcc is
installed at all (``pip install nvidia-cuda-nvcc`` provides one).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

import upstream_headers

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE = os.path.join(ROOT, "examples", "kernels", "first_kernel.cu")
#: Compiling for one architecture is enough to prove the source builds; no GPU is asked.
ARCH = "8.0"


def _cuda_home():
    from tvm_ffi_fast.cpp import toolchain

    # A named toolkit comes first, as in toolchain.cuda_home() (the sanitizer job names one
    # whose nvcc runs without the preloaded runtime: tools/sanitize.sh).
    named = any(os.environ.get(var) for var in ("CUDA_HOME", "CUDA_PATH"))
    wheel = None if named else toolchain._nvcc_wheel_home()
    if wheel is not None:
        return wheel
    try:
        home = toolchain.cuda_home()
    except RuntimeError:
        return None
    return home if os.access(os.path.join(home, "bin", "nvcc"), os.X_OK) else None


@pytest.fixture(scope="module")
def cuda_home():
    home = _cuda_home()
    if home is None:
        pytest.skip("no nvcc installed (pip install nvidia-cuda-nvcc): the CUDA example "
                    "cannot be compiled here")
    return home


def _run(script: str, env=None):
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True,
                          text=True, timeout=600, cwd=ROOT, env=env)


@pytest.fixture(scope="module")
def nvcc_library(cuda_home, tmp_path_factory):
    include, lib = upstream_headers.include_dir(), upstream_headers.library_dir()
    out = str(tmp_path_factory.mktemp("cuda") / "libfirst_kernel_cuda.so")
    major, minor = ARCH.split(".")
    command = [os.path.join(cuda_home, "bin", "nvcc"), "-shared", "-std=c++17", "-O2",
               "-Xcompiler", "-fPIC,-fvisibility=hidden",
               "-gencode", f"arch=compute_{major}{minor},code=sm_{major}{minor}",
               f"-I{include}", SOURCE, "-o", out, f"-L{lib}", "-ltvm_ffi"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, " ".join(command) + "\n" + done.stderr
    return out


def test_nvcc_builds_the_cuda_kernel_against_upstreams_headers(nvcc_library):
    from tvm_ffi_ref.elf_symbols import read_dynamic_symbols

    assert read_dynamic_symbols(nvcc_library).tvm_ffi_functions() == ["scale", "scale_into"]


CALL_ON_A_CUDA_DLTENSOR = """
    import ctypes, sys
    import numpy as np
    import tvm_ffi_fast as tvm_ffi
    from tvm_ffi_fast import LIB, abi
    kernel = {load}
    try:
        kernel.scale_into(np.ones(2, np.float32), np.ones(2, np.float32), 2.0)
    except ValueError as error:
        print("cpu:", error)
    # A DLTensor that says it is on cuda:0: the guard runs before any launch.
    shape = (ctypes.c_int64 * 1)(4)
    gpu = abi.DLTensor(0x1000, abi.DLDevice(2, 0), 1, abi.DLDataType(2, 32, 1), shape, None, 0)
    args = (abi.TVMFFIAny * 3)()
    for i in (0, 1):
        args[i].type_index = abi.TVMFFITypeIndex.kTVMFFIDLTensorPtr
        args[i].v_ptr = ctypes.addressof(gpu)
    args[2].type_index, args[2].v_float64 = abi.TVMFFITypeIndex.kTVMFFIFloat, 2.0
    function, result = kernel.scale_into, abi.TVMFFIAny()
    status = LIB.TVMFFIFunctionCall(function._handle, args, 3, ctypes.byref(result))
    print("gpu:", status, tvm_ffi.function.take_last_error().kind if status else "")
"""


def _check_calls(done, gpu_present: bool):
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert "cpu: x must be a compact tensor on a CUDA device" in lines
    if not gpu_present:  # no driver here: CUDA's error comes back as a raised error
        assert "gpu: -1 RuntimeError" in lines, lines


def _gpu_present() -> bool:
    return os.path.exists("/dev/nvidia0")


def test_the_nvcc_build_loads_on_ours_and_fails_cleanly_without_a_gpu(nvcc_library):
    if _gpu_present():
        pytest.skip("a GPU is present: check_first_kernel_cuda.py runs the kernel instead")
    done = _run(CALL_ON_A_CUDA_DLTENSOR.format(load=f"tvm_ffi.load_module({nvcc_library!r})"))
    _check_calls(done, gpu_present=False)


def test_load_inline_builds_the_cuda_kernel(cuda_home, cpp_cache_dir):
    if _gpu_present():
        pytest.skip("a GPU is present: check_first_kernel_cuda.py runs the kernel instead")
    env = dict(os.environ, CUDA_HOME=cuda_home, TVM_FFI_CUDA_ARCH_LIST=ARCH,
               TVM_FFI_CACHE_DIR=cpp_cache_dir)
    load = (f"tvm_ffi.cpp.load_inline('first_kernel_cuda', "
            f"cuda_sources=open({SOURCE!r}).read())")
    _check_calls(_run(CALL_ON_A_CUDA_DLTENSOR.format(load=load), env=env), gpu_present=False)


def test_the_gpu_check_runs_or_says_why_not():
    done = subprocess.run([sys.executable, "examples/kernels/check_first_kernel_cuda.py"],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    try:
        import torch
        has_gpu = torch.cuda.is_available()
    except ImportError:
        has_gpu = False
    if has_gpu:
        assert "FAIL" not in done.stdout and done.stdout.count("ok  ") >= 4, done.stdout
    else:
        assert done.stdout.startswith("skipped: "), done.stdout


def test_the_runtime_of_nvidias_wheel_layout_is_linked_by_name(tmp_path):
    # The nvcc wheel's toolkit has lib/libcudart.so.13 and no libcudart.so: -lcudart fails.
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "libcudart.so.13").write_bytes(b"")
    done = _run("from tvm_ffi_fast.cpp import toolchain; print(toolchain.cudart_link_flags())",
                env=dict(os.environ, CUDA_HOME=str(tmp_path)))
    lib = tmp_path / "lib"
    assert done.stdout.strip() == repr([f"-L{lib}", "-l:libcudart.so.13", f"-Wl,-rpath,{lib}"])
    (tmp_path / "lib64").mkdir()
    (tmp_path / "lib64" / "libcudart.so").write_bytes(b"")
    done = _run("from tvm_ffi_fast.cpp import toolchain; print(toolchain.cudart_link_flags())",
                env=dict(os.environ, CUDA_HOME=str(tmp_path)))
    assert done.stdout.strip() == repr([f"-L{tmp_path / 'lib64'}", "-lcudart"])
