"""Builds examples/kernels/first_kernel.cu and checks its results on a CUDA GPU.

    python examples/kernels/check_first_kernel_cuda.py     # from the repository's root

It needs nvcc (``pip install nvidia-cuda-nvcc``, or a CUDA toolkit; ``CUDA_HOME``
names one that is not found on its own) and a torch built with CUDA. The kernel
is built through ``tvm_ffi_fast.cpp.load_inline(cuda_sources=...)`` and called
on torch tensors, on a side stream torch makes current, and on the second GPU
when there is one (the device guard). Every result is compared with torch's.

Where torch sees no GPU it prints why it checked nothing, starting with
``skipped:``, and exits 0; a wrong result exits 1.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def _skipped(reason: str) -> int:
    print(f"skipped: {reason}")
    return 0


def main() -> int:
    """Builds the kernel, runs each check, prints one line per check; 1 if any failed."""
    try:
        import torch
    except ImportError:
        return _skipped("torch is not installed")
    if not torch.cuda.is_available():
        return _skipped("no CUDA GPU visible to torch (torch.cuda.is_available() is False; "
                        f"torch {torch.__version__}, built with CUDA {torch.version.cuda})")
    import tvm_ffi_fast as tvm_ffi

    if "TVM_FFI_CUDA_ARCH_LIST" not in os.environ:
        major, minor = torch.cuda.get_device_capability(0)
        os.environ["TVM_FFI_CUDA_ARCH_LIST"] = f"{major}.{minor}"
    with open(os.path.join(HERE, "first_kernel.cu"), encoding="utf-8") as f:
        kernel = tvm_ffi.cpp.load_inline("first_kernel_cuda", cuda_sources=f.read())

    failures = 0

    def check(what: str, ok: bool) -> None:
        nonlocal failures
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {what}")

    x = torch.arange(1 << 20, dtype=torch.float32, device="cuda")
    out = torch.empty_like(x)
    kernel.scale_into(x, out, 2.5)
    torch.cuda.synchronize()
    check("scale_into on the default stream", torch.equal(out, x * 2.5))

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # the front end makes this the environment's stream
        kernel.scale_into(x, out, -1.0)
        y = kernel.scale(x, 0.5)
    side.synchronize()
    check("scale_into on torch's current (side) stream", torch.equal(out, -x))
    check("scale allocates through torch on x's device",
          y.device == x.device and torch.equal(y, x * 0.5))

    if torch.cuda.device_count() > 1:
        x1 = torch.arange(1000, dtype=torch.float32, device="cuda:1")
        out1 = torch.empty_like(x1)
        with torch.cuda.device(0):  # the guard must switch to x's device for the launch
            kernel.scale_into(x1, out1, 3.0)
        torch.cuda.synchronize(1)
        check("the device guard launches on x's device (cuda:1)", torch.equal(out1, x1 * 3.0))
        check("the guard restores the current device", torch.cuda.current_device() == 0)
    else:
        print("(one GPU: the device-guard check needs a second)")

    try:
        kernel.scale_into(x.cpu(), out, 1.0)
        check("a CPU tensor is refused", False)
    except ValueError as error:
        check("a CPU tensor is refused", "CUDA device" in str(error))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
