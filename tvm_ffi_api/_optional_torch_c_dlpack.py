"""A DLPack C exchange table for torch builds that publish none (upstream's optional add-on).

torch publishes ``torch.Tensor.__dlpack_c_exchange_api__`` from 2.13 (older
builds may carry it as ``__c_dlpack_exchange_api__``, an int, or get it from
the ``torch_c_dlpack_ext`` package). For a torch with neither,
:func:`load_torch_c_dlpack_extension` builds a small C++ library once
(``utils/_build_optional_torch_c_dlpack.py``, cached under
``$TVM_FFI_CACHE_DIR``, default ``~/.cache/tvm-ffi``, keyed by the torch
build) whose ``TorchDLPackExchangeAPIPtr()`` returns such a table, and
publishes it on ``torch.Tensor``. Without any table, torch tensors still
cross, through ``__dlpack__``.

Unlike upstream, importing the package does not import torch to do this:
the argument dispatch (``arg_setters.argument_kind``) calls
:func:`ensure_torch_exchange_api` the first time it meets a torch tensor.
``TVM_FFI_DISABLE_TORCH_C_DLPACK=1`` turns the add-on off.
"""

from __future__ import annotations

import ctypes
import hashlib
import logging
import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

from tvm_ffi_common import pycapi

logger = logging.getLogger(__name__)

_CAPSULE_NAME = pycapi.static_name(b"dlpack_exchange_api")


def _torch_extension_device(torch_module: Any) -> str:
    """The backend the add-on is built for: ``"cuda"``, ``"rocm"`` or ``"cpu"``."""
    if not torch_module.cuda.is_available():
        return "cpu"
    version = torch_module.version
    if getattr(version, "cuda", None) is None and getattr(version, "hip", None) is not None:
        return "rocm"
    return "cuda"


def _create_dlpack_exchange_api_capsule(ptr_as_int: int) -> Any:
    """A PyCapsule named ``"dlpack_exchange_api"`` holding the table address ``ptr_as_int``."""
    return pycapi.capsule_new(ptr_as_int, _CAPSULE_NAME, None)


def _check_and_update_dlpack_c_exchange_api(tensor_cls: Any) -> bool:
    """Whether ``tensor_cls`` publishes a table, moving a legacy ``__c_dlpack_exchange_api__``
    (an int address or a capsule) to ``__dlpack_c_exchange_api__`` on the way."""
    if hasattr(tensor_cls, "__dlpack_c_exchange_api__"):
        return True
    if not hasattr(tensor_cls, "__c_dlpack_exchange_api__"):
        return False
    legacy = tensor_cls.__c_dlpack_exchange_api__
    if isinstance(legacy, int):
        legacy = _create_dlpack_exchange_api_capsule(legacy)
    setattr(tensor_cls, "__dlpack_c_exchange_api__", legacy)
    return True


def _addon_library_name(torch: Any) -> str:
    # The add-on links libtorch's C++ ABI: the name carries the whole build identity.
    major, minor = torch.__version__.split(".")[:2]
    identity = f"{torch.__version__}|cxx11abi={int(torch.compiled_with_cxx11_abi())}"
    tag = hashlib.sha256(identity.encode()).hexdigest()[:8]
    suffix = ".dll" if sys.platform.startswith("win") else ".so"
    return f"libtorch_c_dlpack_addon_torch{major}{minor}-{_torch_extension_device(torch)}-{tag}{suffix}"


def _build_addon(cache_dir: Path, libname: str, device: str) -> None:
    script = Path(__file__).parent / "utils" / "_build_optional_torch_c_dlpack.py"
    command = [sys.executable, str(script), "--output-dir", str(cache_dir), "--libname", libname]
    if device in ("cuda", "rocm"):
        command.append(f"--build-with-{device}")
    done = subprocess.run(command, check=False, capture_output=True)
    if done.returncode != 0:
        raise RuntimeError(f"Build failed with status {done.returncode}\nstdout:\n"
                           f"{done.stdout.decode(errors='replace')}\nstderr:\n"
                           f"{done.stderr.decode(errors='replace')}")


def load_torch_c_dlpack_extension() -> Any:
    """Makes ``torch.Tensor`` publish a DLPack exchange table if it can; the loaded add-on
    library (kept alive by the caller), or None when none was needed or possible."""
    try:
        import torch
        import torch.version  # noqa: F401 - _torch_extension_device reads it
    except ImportError:
        return None
    if _check_and_update_dlpack_c_exchange_api(torch.Tensor):
        return None
    try:
        import torch_c_dlpack_ext  # noqa: F401 - importing it publishes the table
    except (ImportError, AttributeError):  # AttributeError: built for another torch ABI
        pass
    else:
        if _check_and_update_dlpack_c_exchange_api(torch.Tensor):
            return None
    try:
        cache_dir = Path(os.environ.get("TVM_FFI_CACHE_DIR", "~/.cache/tvm-ffi")).expanduser()
        libname = _addon_library_name(torch)
        path = cache_dir / libname
        if not path.exists():
            logger.debug("building the torch DLPack exchange add-on into %s", cache_dir)
            _build_addon(cache_dir, libname, _torch_extension_device(torch))
            if not path.exists():
                raise RuntimeError("Failed to build torch c dlpack addon.")
        library = ctypes.CDLL(str(path))
        table_address = library.TorchDLPackExchangeAPIPtr
        table_address.restype, table_address.argtypes = ctypes.c_uint64, []
        torch.Tensor.__dlpack_c_exchange_api__ = _create_dlpack_exchange_api_capsule(
            table_address())
        return library
    except ImportError:
        return None
    except Exception:  # noqa: BLE001 - the add-on only speeds things up
        warnings.warn("Failed to JIT torch c dlpack extension, EnvTensorAllocator will not be "
                      "enabled.\nWe recommend installing via `pip install torch-c-dlpack-ext`")
        return None


def patch_torch_cuda_stream_protocol() -> None:
    """Gives ``torch.cuda.Stream`` the ``__cuda_stream__`` protocol where torch lacks it."""
    try:
        import torch
    except ImportError:
        return
    if not torch.cuda.is_available() or hasattr(torch.cuda.Stream, "__cuda_stream__"):
        return

    def __cuda_stream__(self) -> tuple:
        """``(0, the cudaStream_t as an int)``."""
        return (0, self.cuda_stream)

    torch.cuda.Stream.__cuda_stream__ = __cuda_stream__


_LIB = None  # the add-on library, kept loaded
_DONE = False


def ensure_torch_exchange_api() -> None:
    """Runs the add-on's set-up once (unless ``TVM_FFI_DISABLE_TORCH_C_DLPACK=1``)."""
    global _LIB, _DONE
    if _DONE:
        return
    _DONE = True
    if os.environ.get("TVM_FFI_DISABLE_TORCH_C_DLPACK", "0") == "0":
        _LIB = load_torch_c_dlpack_extension()
        patch_torch_cuda_stream_protocol()
