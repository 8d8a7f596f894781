"""The current stream of each device, as kernels see it (``TVMFFIEnvGetStream``).

A kernel launches on whatever stream the environment says is current for its
device. ``use_raw_stream(device, stream)`` makes ``stream`` current inside a
``with`` block and restores the previous one after.
"""

from __future__ import annotations

import ctypes
from typing import Any, Union

from tvm_ffi_common.capi import LIB

from .c_integers import narrow
from .device import Device
from .function import raise_last_error


def _set_stream(device_type: int, device_id: int, stream: int) -> int:
    # checked as upstream's (int, int, uint64_t) parameters: ctypes would truncate
    device_type, device_id = narrow(device_type, "int"), narrow(device_id, "int")
    stream = narrow(stream, "uint64_t")
    previous = ctypes.c_void_p()
    if LIB.TVMFFIEnvSetStream(device_type, device_id, stream or None, ctypes.byref(previous)):

        raise_last_error()
    return previous.value or 0


class StreamContext:
    """A ``with`` block during which a device's current stream is a given one."""

    def __init__(self, device: Device, stream: Union[int, ctypes.c_void_p]) -> None:
        self.device_type = device.dlpack_device_type()
        self.device_id = device.index
        self.stream = stream.value if isinstance(stream, ctypes.c_void_p) else stream
        self.prev_stream = 0

    def __enter__(self) -> "StreamContext":
        self.prev_stream = _set_stream(self.device_type, self.device_id, self.stream or 0)
        return self

    def __exit__(self, *args: Any) -> None:
        _set_stream(self.device_type, self.device_id, self.prev_stream)


def use_raw_stream(device: Device, stream: Union[int, ctypes.c_void_p]) -> StreamContext:
    """A context making ``stream`` (an int handle or ``c_void_p``) current for ``device``."""
    if not isinstance(stream, (int, ctypes.c_void_p)):
        raise ValueError("use_raw_stream only accepts int or c_void_p as stream input, "
                         "try use_torch_stream when using torch.cuda.Stream or torch.cuda.graph")
    return StreamContext(device, stream)


def get_raw_stream(device: Device) -> int:
    """The current stream of ``device`` as an integer handle (0 when none)."""
    return LIB.TVMFFIEnvGetStream(device.dlpack_device_type(), device.index) or 0


class TorchStreamContext:
    """A ``with`` block entering a torch stream or graph context (if given), then making
    torch's current CUDA stream the environment's current stream for its device."""

    def __init__(self, context: Any) -> None:
        self.torch_context = context

    def __enter__(self) -> "TorchStreamContext":
        import torch

        if self.torch_context:
            self.torch_context.__enter__()
        current = torch.cuda.current_stream()
        self.ffi_context = StreamContext(Device(str(current.device)), current.cuda_stream)
        self.ffi_context.__enter__()
        return self

    def __exit__(self, *args: Any) -> None:
        if self.torch_context:
            self.torch_context.__exit__(*args)
        self.ffi_context.__exit__(*args)


def use_torch_stream(context: Any = None) -> TorchStreamContext:
    """A context using PyTorch's current CUDA stream, inside ``context`` when given
    (``torch.cuda.stream(s)``, ``torch.cuda.graph(g)``); ``ImportError`` without torch."""
    try:
        import torch  # noqa: F401 - only its presence is checked here
    except ImportError:
        raise ImportError("Cannot import torch") from None
    return TorchStreamContext(context)
