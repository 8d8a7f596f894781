"""The current stream of each device, as kernels see it (``TVMFFIEnvGetStream``).

A kernel launches on whatever stream the environment says is current for its
device. ``use_raw_stream(device, stream)`` makes ``stream`` current inside a
``with`` block and restores the previous one after.
"""

from __future__ import annotations

import ctypes
from typing import Any, Union

from tvm_ffi_common.capi import LIB
from .device import Device


def _set_stream(device_type: int, device_id: int, stream: int) -> int:
    previous = ctypes.c_void_p()
    if LIB.TVMFFIEnvSetStream(device_type, device_id, stream or None, ctypes.byref(previous)):
        from .function import raise_last_error

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


def use_torch_stream(context: Any = None):
    """Uses PyTorch's current stream (or the stream of ``context``) for its device."""
    try:
        import torch
    except ImportError:
        raise ImportError("Cannot import torch") from None
    stream = context.stream if context is not None and hasattr(context, "stream") else (
        context if context is not None else torch.cuda.current_stream())
    device = Device("cuda", stream.device.index or 0)
    return StreamContext(device, stream.cuda_stream)
