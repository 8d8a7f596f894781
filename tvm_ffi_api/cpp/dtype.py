"""``to_cpp_dtype``: the C++ type that holds one element of a dtype.

Host types come first (``float32`` -> ``float``); the reduced-precision
types exist only in a GPU toolkit's headers, so they are answered only when
torch reports a CUDA or ROCm device (as the kernel being generated will then
include ``cuda_fp16.h`` & co.).
"""

from __future__ import annotations

import functools
from typing import Any

#: dtype name -> C++ type available on every host.
HOST_TYPES = {
    "bool": "bool", "float32": "float", "float64": "double",
    **{f"int{bits}": f"int{bits}_t" for bits in (8, 16, 32, 64)},
    **{f"uint{bits}": f"uint{bits}_t" for bits in (8, 16, 32, 64)},
}

#: dtype name -> type of the CUDA toolkit headers.
CUDA_TYPES = {
    "float16": "__half", "bfloat16": "__nv_bfloat16", "float8_e4m3fn": "__nv_fp8_e4m3",
    "float8_e5m2": "__nv_fp8_e5m2", "float8_e8m0fnu": "__nv_fp8_e8m0",
    "float4_e2m1": "__nv_fp4_e2m1", "float4_e2m1fn_x2": "__nv_fp4x2_e2m1",
}

#: dtype name -> type of the ROCm (HIP) headers.
ROCM_TYPES = {
    "float16": "__half", "bfloat16": "__hip_bfloat16", "float8_e4m3fn": "__hip_fp8_e4m3",
    "float8_e4m3fnuz": "__hip_fp8_e4m3_fnuz", "float8_e5m2": "__hip_fp8_e5m2",
    "float8_e5m2fnuz": "__hip_fp8_e5m2_fnuz", "float4_e2m1": "__hip_fp4_e2m1",
    "float4_e2m1fn_x2": "__hip_fp4x2_e2m1",
}


@functools.lru_cache(maxsize=None)
def _device_backend() -> str:
    """``"cuda"`` or ``"rocm"`` when torch sees such a GPU, else ``"cpu"``."""
    try:
        import torch  # noqa: PLC0415 - optional, asked once

        if torch.cuda.is_available():
            if torch.version.cuda is not None:
                return "cuda"
            if torch.version.hip is not None:
                return "rocm"
    except ImportError:
        pass
    return "cpu"


def to_cpp_dtype(dtype_str: Any) -> str:
    """The C++ element type of ``dtype_str`` (a dtype name, or anything whose ``str`` is one,
    such as ``torch.float32``); ``ValueError`` for a dtype without one here."""
    name = dtype_str if isinstance(dtype_str, str) else str(dtype_str)
    name = name[len("torch."):] if name.startswith("torch.") else name
    if name in HOST_TYPES:
        return HOST_TYPES[name]
    backend = _device_backend()
    table = {"cuda": CUDA_TYPES, "rocm": ROCM_TYPES}.get(backend, {})
    if name in table:
        return table[name]
    raise ValueError(f"Unsupported dtype string: {name} for backend = {backend!r}")
