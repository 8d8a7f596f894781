"""The tools a build runs: host compilers, and the CUDA or ROCm toolkit for ``.cu`` sources.

Host compilers come from ``$CC`` / ``$CXX`` (default ``cc`` / ``c++``). A GPU
source goes to ``nvcc`` (CUDA) or ``hipcc`` (ROCm): which one is decided by
``backend=``, else ``TVM_FFI_GPU_BACKEND``, else how torch was built (if
torch is importable), else whichever compiler is installed, CUDA first. The
target architectures come from ``TVM_FFI_CUDA_ARCH_LIST`` ("8.9 9.0a") /
``TVM_FFI_ROCM_ARCH_LIST`` ("gfx90a gfx942"), else from the GPUs present.
"""

from __future__ import annotations

import functools
import glob
import os
import shutil
import subprocess
import sys
from typing import List, Optional

GPU_BACKENDS = ("cuda", "hip")


def ensure_supported_platform() -> None:
    """Builds are driven here for Linux and other POSIX systems only."""
    if sys.platform == "win32":
        raise NotImplementedError("tvm_ffi.cpp builds on Linux and other POSIX systems; "
                                  "this TVM FFI implementation has no Windows build")


def c_compiler() -> str:
    """The C compiler: ``$CC``, else ``cc``."""
    return os.environ.get("CC") or "cc"


def cxx_compiler() -> str:
    """The C++ compiler (also the linker driver): ``$CXX``, else ``c++``."""
    return os.environ.get("CXX") or "c++"


def _which(tool: str, *home_vars: str) -> Optional[str]:
    """``tool`` on ``PATH``, else under ``$<home_var>/bin`` for the first home set."""
    found = shutil.which(tool)
    if found is not None:
        return found
    for var in home_vars:
        home = os.environ.get(var)
        if home:
            found = shutil.which(tool, path=os.path.join(home, "bin"))
            if found is not None:
                return found
    return None


@functools.lru_cache(maxsize=None)
def _detected_backend() -> str:
    override = os.environ.get("TVM_FFI_GPU_BACKEND", "").lower()
    if override in GPU_BACKENDS:
        return override
    try:
        import torch  # noqa: PLC0415 - only to learn how torch was built

        version = getattr(torch, "version", None)
        if getattr(version, "hip", None):
            return "hip"
        if getattr(version, "cuda", None):
            return "cuda"
    except Exception:  # noqa: BLE001 - torch absent or broken: decide without it
        pass
    no_nvcc = _which("nvcc", "CUDA_HOME", "CUDA_PATH") is None
    if no_nvcc and _which("hipcc", "ROCM_HOME", "ROCM_PATH") is not None:
        return "hip"
    return "cuda"


def resolve_gpu_backend(backend: Optional[str]) -> str:
    """``backend`` checked (``"cuda"`` or ``"hip"``), or the detected one when None."""
    if backend is None:
        return _detected_backend()
    if backend not in GPU_BACKENDS:
        raise ValueError(f"Invalid backend: {backend}. Supported backends are 'cuda' and 'hip'.")
    return backend


def _home(env_vars, tool: str, default: str, what: str, marker: str) -> str:
    """The toolkit named by ``env_vars``, else the one ``tool`` on ``PATH`` belongs to,
    else ``default``. A ``tool`` that is a wrapper outside its toolkit (say
    ``/usr/local/bin/nvcc``) is passed over for ``default`` when only that has ``marker``."""
    for var in env_vars:
        if os.environ.get(var):
            return os.environ[var]
    found = shutil.which(tool)
    if found is not None:
        home = os.path.dirname(os.path.dirname(os.path.realpath(found)))
        # hipcc may live in <rocm>/hip/bin
        home = os.path.dirname(home) if os.path.basename(home) == "hip" else home
        if os.path.exists(os.path.join(home, marker)) or not os.path.isdir(default):
            return home
    if os.path.isdir(default):
        return default
    raise RuntimeError(f"Could not find {what} installation. Please set "
                       f"{env_vars[0]} environment variable.")


@functools.lru_cache(maxsize=None)
def cuda_home() -> str:
    """The CUDA toolkit: ``$CUDA_HOME``/``$CUDA_PATH``, else where ``nvcc`` is, else
    /usr/local/cuda; when neither of the last two holds a ``bin/nvcc``, NVIDIA's nvcc
    wheel (``pip install nvidia-cuda-nvcc``) if it is installed."""
    explicit = any(os.environ.get(var) for var in ("CUDA_HOME", "CUDA_PATH"))
    try:
        home: Optional[str] = _home(("CUDA_HOME", "CUDA_PATH"), "nvcc", "/usr/local/cuda", "CUDA",
                                    os.path.join("include", "cuda_runtime.h"))
    except RuntimeError:
        home = None
    if not explicit and (home is None or not os.access(os.path.join(home, "bin", "nvcc"),
                                                        os.X_OK)):
        wheel = _nvcc_wheel_home()
        if wheel is not None:
            return wheel
    if home is None:
        raise RuntimeError("Could not find CUDA installation. Please set CUDA_HOME environment "
                           "variable.")
    return home


@functools.lru_cache(maxsize=None)
def _nvcc_wheel_home() -> Optional[str]:
    """The toolkit folder of an installed ``nvidia-cuda-nvcc`` wheel (``<it>/bin/nvcc``), if any."""
    from importlib import metadata

    try:
        files = metadata.distribution("nvidia-cuda-nvcc").files or ()
    except metadata.PackageNotFoundError:
        return None
    for entry in files:
        if str(entry).replace("\\", "/").endswith("/bin/nvcc"):
            nvcc = str(entry.locate())
            if os.access(nvcc, os.X_OK):
                return os.path.dirname(os.path.dirname(os.path.abspath(nvcc)))
    return None


def cudart_link_flags() -> List[str]:
    """How to link the CUDA runtime of :func:`cuda_home`.

    A toolkit install has ``lib64/libcudart.so``: ``-L<home>/lib64 -lcudart``.
    NVIDIA's PyPI wheels (``pip install nvidia-cuda-nvcc``, home ``.../nvidia/cu13``)
    put ``lib/libcudart.so.13`` without the unversioned link, and nowhere the
    loader looks: that file is linked by name, with an RPATH to its folder.
    """
    home = cuda_home()
    for folder in (os.path.join(home, "lib64"), os.path.join(home, "lib")):
        if os.path.exists(os.path.join(folder, "libcudart.so")):
            return [f"-L{folder}", "-lcudart"]
        versioned = sorted(glob.glob(os.path.join(folder, "libcudart.so.*")), key=len)
        if versioned:
            return [f"-L{folder}", f"-l:{os.path.basename(versioned[0])}",
                    f"-Wl,-rpath,{folder}"]
    return [f"-L{os.path.join(home, 'lib64')}", "-lcudart"]


@functools.lru_cache(maxsize=None)
def rocm_home() -> str:
    """The ROCm install: ``$ROCM_HOME``/``$ROCM_PATH``, else where ``hipcc`` is, else /opt/rocm."""
    return _home(("ROCM_HOME", "ROCM_PATH"), "hipcc", "/opt/rocm", "ROCm",
                 os.path.join("include", "hip", "hip_runtime.h"))


def _query(command: List[str]) -> List[str]:
    """The non-empty output lines of ``command``; empty when it cannot run or fails."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return []
    return [line.strip() for line in done.stdout.splitlines() if line.strip()]


def _gencode(major: str, minor: str) -> str:
    return f"-gencode=arch=compute_{major}{minor},code=sm_{major}{minor}"


def cuda_arch_flags() -> List[str]:
    """``-gencode`` flags for ``TVM_FFI_CUDA_ARCH_LIST``, else for the first GPU ``nvidia-smi`` sees."""
    listed = os.environ.get("TVM_FFI_CUDA_ARCH_LIST")
    if listed is not None:
        flags = []
        for arch in listed.split():
            parts = arch.split(".")
            if len(parts) != 2:
                raise ValueError(f"Invalid CUDA architecture: {arch}")
            flags.append(_gencode(*parts))
        return flags
    caps = _query(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"])
    if caps and caps[0].count(".") == 1:
        return [_gencode(*caps[0].split("."))]
    # Old drivers report no compute capability; the Ampere names they do report are known.
    names = _query(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"])
    for marker, (major, minor) in (("A100", ("8", "0")), ("A10", ("8", "6"))):
        if names and marker in names[0]:
            return [_gencode(major, minor)]
    raise RuntimeError("Could not detect CUDA compute_cap automatically. "
                       "Please set TVM_FFI_CUDA_ARCH_LIST environment variable.")


def rocm_arch_flags() -> List[str]:
    """``--offload-arch`` flags for ``TVM_FFI_ROCM_ARCH_LIST``, else for the GPUs ROCm reports."""
    listed = os.environ.get("TVM_FFI_ROCM_ARCH_LIST")
    if listed is not None:
        return [f"--offload-arch={arch}" for arch in listed.split()]
    enumerator = os.path.join(rocm_home(), "bin", "rocm_agent_enumerator")
    archs = _query([enumerator if os.path.exists(enumerator) else "rocm_agent_enumerator"])
    if not archs:
        archs = [line.split(":")[-1].strip() for line in _query(["rocminfo"])
                 if "Name:" in line and "gfx" in line.lower()]
    archs = [a for a in dict.fromkeys(archs) if a != "gfx000"]  # gfx000: the CPU agent
    if not archs:
        raise RuntimeError("Could not detect ROCm GPU architecture automatically. Please set "
                           "TVM_FFI_ROCM_ARCH_LIST environment variable (e.g. 'gfx90a gfx942').")
    return [f"--offload-arch={arch}" for arch in archs]


def gpu_compiler(backend: str) -> str:
    """``nvcc`` of the CUDA toolkit or ``hipcc`` of ROCm."""
    if backend == "hip":
        return os.path.join(rocm_home(), "bin", "hipcc")
    return os.path.join(cuda_home(), "bin", "nvcc")
