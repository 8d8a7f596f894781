"""Builds the torch DLPack exchange add-on: a library whose ``TorchDLPackExchangeAPIPtr()``
returns a ``DLPackExchangeAPI`` for torch tensors (``_optional_torch_c_dlpack`` loads it
for a torch that publishes none of its own).

    python _build_optional_torch_c_dlpack.py [--output-dir DIR] [--libname NAME]
        [--build-dir DIR] [--build-with-cuda | --build-with-rocm]

The table is made of ATen's own DLPack converters (``at::toDLPackVersioned``,
``at::fromDLPackVersioned``, ``at::toDLPackNonOwning``), ``at::empty`` for the
allocator and, with CUDA, ``c10::cuda::getCurrentCUDAStream`` for the stream.
Several processes may build the same library at once: one builds, under a lock
file next to it, the others find it done.

A script, run in its own interpreter: it imports torch, never our packages.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import List

import torch
import torch.utils.cpp_extension

SOURCE = r"""
#include <ATen/DLConvertor.h>
#include <ATen/Functions.h>
#include <torch/csrc/autograd/python_variable.h>

#include <exception>
#ifdef BUILD_WITH_CUDA
#include <c10/cuda/CUDAStream.h>
#endif
#ifdef BUILD_WITH_ROCM
#include <ATen/hip/impl/HIPStreamMasqueradingAsCUDA.h>
#endif

namespace {

// The table's functions report failures as a Python exception (they run with the GIL held).
int Fail(const std::exception& error) {
  PyErr_SetString(PyExc_RuntimeError, error.what());
  return -1;
}

int CheckTensor(void* py_object) {
  if (THPVariable_Check(static_cast<PyObject*>(py_object))) return 0;
  PyErr_SetString(PyExc_TypeError, "expected a torch.Tensor");
  return -1;
}

int ManagedFromPy(void* py_object, DLManagedTensorVersioned** out) {
  if (CheckTensor(py_object) != 0) return -1;
  try {
    *out = at::toDLPackVersioned(THPVariable_Unpack(static_cast<PyObject*>(py_object)));
    return 0;
  } catch (const std::exception& error) {
    return Fail(error);
  }
}

int ManagedToPy(DLManagedTensorVersioned* tensor, void** out) {
  try {
    *out = THPVariable_Wrap(at::fromDLPackVersioned(tensor));
    return *out == nullptr ? -1 : 0;
  } catch (const std::exception& error) {
    return Fail(error);
  }
}

int DLTensorFromPy(void* py_object, DLTensor* out) {
  if (CheckTensor(py_object) != 0) return -1;
  try {
    at::toDLPackNonOwning(THPVariable_Unpack(static_cast<PyObject*>(py_object)), out);
    return 0;
  } catch (const std::exception& error) {
    return Fail(error);
  }
}

int CurrentWorkStream(DLDeviceType device_type, int32_t device_id, void** out) {
  *out = nullptr;
#if defined(BUILD_WITH_CUDA)
  if (device_type == kDLCUDA) *out = c10::cuda::getCurrentCUDAStream(device_id).stream();
#elif defined(BUILD_WITH_ROCM)
  if (device_type == kDLROCM || device_type == kDLCUDA) {
    *out = c10::hip::getCurrentHIPStreamMasqueradingAsCUDA(device_id).stream();
  }
#endif
  return 0;
}

int Allocate(DLTensor* prototype, DLManagedTensorVersioned** out, void* error_ctx,
             void (*set_error)(void* error_ctx, const char* kind, const char* message)) {
  try {
    at::TensorOptions options =
        at::TensorOptions()
            .dtype(at::toScalarType(prototype->dtype))
            .device(at::dlDeviceToTorchDevice(prototype->device.device_type,
                                              static_cast<c10::DeviceIndex>(prototype->device.device_id)));
    *out = at::toDLPackVersioned(at::empty(at::IntArrayRef(prototype->shape, prototype->ndim), options));
    return 0;
  } catch (const std::exception& error) {
    set_error(error_ctx, "RuntimeError", error.what());
    return -1;
  }
}

DLPackExchangeAPI MakeTable() {
  DLPackExchangeAPI table{};
  table.header.version.major = DLPACK_MAJOR_VERSION;
  table.header.version.minor = DLPACK_MINOR_VERSION;
  table.header.prev_api = nullptr;
  table.managed_tensor_allocator = Allocate;
  table.managed_tensor_from_py_object_no_sync = ManagedFromPy;
  table.managed_tensor_to_py_object_no_sync = ManagedToPy;
  table.dltensor_from_py_object_no_sync = DLTensorFromPy;
  table.current_work_stream = CurrentWorkStream;
  return table;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int64_t TorchDLPackExchangeAPIPtr() {
  static DLPackExchangeAPI table = MakeTable();
  return reinterpret_cast<int64_t>(&table);
}
"""


def _cxx_standard() -> str:
    # torch's own headers need C++20 from 2.13
    return "c++20" if torch.torch_version.TorchVersion(torch.__version__) >= "2.13.0" else "c++17"


def _device(args: argparse.Namespace) -> str:
    return "cuda" if args.build_with_cuda else "rocm" if args.build_with_rocm else "cpu"


def compile_command(source: Path, target: Path, device: str) -> List[str]:
    """The one compiler command building ``target`` from ``source``."""
    flags = [f"-std={_cxx_standard()}", "-O2", "-fPIC", "-shared", "-fvisibility=hidden",
             f"-D_GLIBCXX_USE_CXX11_ABI={int(torch.compiled_with_cxx11_abi())}",
             "-I", sysconfig.get_paths()["include"]]
    if device == "cuda":
        flags.append("-DBUILD_WITH_CUDA")
    elif device == "rocm":
        flags += ["-DBUILD_WITH_ROCM", *torch.utils.cpp_extension.COMMON_HIP_FLAGS]
    for path in torch.utils.cpp_extension.include_paths(
            device_type="cpu" if device == "cpu" else "cuda"):
        flags += ["-I", path]
    libraries = ["-lc10", "-ltorch", "-ltorch_cpu", "-ltorch_python"]
    if device == "cuda":
        libraries += ["-ltorch_cuda", "-lc10_cuda"]
    for path in torch.utils.cpp_extension.library_paths():
        libraries += ["-L", path, f"-Wl,-rpath,{path}"]
    return [os.environ.get("CXX", "c++"), *flags, str(source), "-o", str(target), *libraries]


def build(output_dir: Path, libname: str, device: str, build_dir: Path) -> Path:
    """Builds ``output_dir / libname`` unless it is there; returns its path."""
    output_dir.mkdir(parents=True, exist_ok=True)
    target = output_dir / libname
    with open(output_dir / (libname + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the others wait, then find it built
        if target.exists():
            return target
        build_dir.mkdir(parents=True, exist_ok=True)
        source = build_dir / "torch_dlpack_exchange_addon.cc"
        source.write_text(SOURCE)
        partial = build_dir / (libname + ".tmp")
        done = subprocess.run(compile_command(source, partial, device), capture_output=True,
                              text=True)
        if done.returncode != 0:
            sys.stderr.write(done.stdout + done.stderr)
            raise SystemExit(f"building {libname} failed with status {done.returncode}")
        shutil.move(str(partial), str(target))
    return target


def main(argv=None) -> int:
    """Parses the command line and builds."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output-dir", default=os.path.expanduser(
        os.environ.get("TVM_FFI_CACHE_DIR", "~/.cache/tvm-ffi")),
        help="where the library goes (default: $TVM_FFI_CACHE_DIR or ~/.cache/tvm-ffi)")
    parser.add_argument("--build-dir", help="where to compile (default: a temporary folder)")
    parser.add_argument("--libname", default="auto",
                        help="the library's file name (auto: from the torch version and device)")
    parser.add_argument("--build-with-cuda", action="store_true", help="CUDA streams")
    parser.add_argument("--build-with-rocm", action="store_true", help="ROCm streams")
    args = parser.parse_args(argv)
    if args.build_with_cuda and args.build_with_rocm:
        parser.error("--build-with-cuda and --build-with-rocm exclude each other")
    device = _device(args)
    libname = args.libname
    if libname == "auto":
        major, minor = torch.__version__.split(".")[:2]
        libname = f"libtorch_c_dlpack_addon_torch{major}{minor}-{device}.so"
    build_dir = Path(args.build_dir) if args.build_dir else Path(
        tempfile.mkdtemp(prefix="tvm-ffi-torch-dlpack-"))
    print(build(Path(args.output_dir).expanduser(), libname, device, build_dir.resolve()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
