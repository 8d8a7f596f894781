"""``Device``: where memory lives, as the 8-byte ``DLDevice`` (type, index).

Written as ``"cuda:1"`` or ``device("cuda", 1)``; crosses the ABI inline as
``kTVMFFIDevice``.
"""

from __future__ import annotations

from numbers import Integral
from typing import Any, Optional, Union

from tvm_ffi_common.abi import DLDeviceType  # the same enum users import from the package

from . import upcalls
from .c_integers import narrow


class Device:
    """A device: its DLPack type and its index among devices of that type."""

    __slots__ = ("_type", "_index")

    # Upstream's class carries its maps as class attributes, and libraries read and
    # override them there (TVM's Device reads ``Device._DEVICE_TYPE_TO_NAME``); every
    # lookup below goes through ``self`` so that a subclass's own maps are used.
    #: DLPack device type -> canonical name (what ``str``, ``repr`` and ``type`` show).
    _DEVICE_TYPE_TO_NAME = {
        DLDeviceType.kDLCPU: "cpu", DLDeviceType.kDLCUDA: "cuda",
        DLDeviceType.kDLCUDAHost: "cuda_host", DLDeviceType.kDLCUDAManaged: "cuda_managed",
        DLDeviceType.kDLOpenCL: "opencl", DLDeviceType.kDLVulkan: "vulkan",
        DLDeviceType.kDLMetal: "metal", DLDeviceType.kDLVPI: "vpi",
        DLDeviceType.kDLROCM: "rocm", DLDeviceType.kDLROCMHost: "rocm_host",
        DLDeviceType.kDLExtDev: "ext_dev", DLDeviceType.kDLOneAPI: "oneapi",
        DLDeviceType.kDLWebGPU: "webgpu", DLDeviceType.kDLHexagon: "hexagon",
        DLDeviceType.kDLMAIA: "maia", DLDeviceType.kDLTrn: "trn",
    }
    #: Name accepted by the constructor -> DLPack device type (aliases included).
    _DEVICE_NAME_TO_TYPE = {
        "cpu": DLDeviceType.kDLCPU, "cuda": DLDeviceType.kDLCUDA,
        "opencl": DLDeviceType.kDLOpenCL, "vulkan": DLDeviceType.kDLVulkan,
        "metal": DLDeviceType.kDLMetal, "mps": DLDeviceType.kDLMetal,
        "vpi": DLDeviceType.kDLVPI, "rocm": DLDeviceType.kDLROCM,
        "ext_dev": DLDeviceType.kDLExtDev, "hexagon": DLDeviceType.kDLHexagon,
        "wgpu": DLDeviceType.kDLWebGPU, "webgpu": DLDeviceType.kDLWebGPU,
        "maia": DLDeviceType.kDLMAIA, "trn": DLDeviceType.kDLTrn,
    }

    def __init__(self, device_type: Union[str, int], index: Optional[Integral] = None) -> None:
        index = 0 if index is None else index
        if isinstance(device_type, str):
            name = device_type.split(" ")[0]
            parts = name.split(":")
            if len(parts) > 2:
                raise ValueError(f"Invalid device: {name}")
            if parts[0] not in self._DEVICE_NAME_TO_TYPE:
                raise ValueError(f"Unknown device: {parts[0]}")
            device_type = self._DEVICE_NAME_TO_TYPE[parts[0]]
            if len(parts) == 2:
                try:
                    index = int(parts[1])
                except ValueError:
                    raise ValueError(f"Invalid device index: {parts[1]}") from None
        if not isinstance(index, Integral) and callable(getattr(index, "item", None)):
            index = index.item()
        if not isinstance(index, Integral):
            raise TypeError(f"Invalid device index: {index}")
        # checked as upstream stores them, in a DLDevice's two int32 fields
        self._type = narrow(device_type, "int32_t")
        self._index = narrow(index, "int32_t")

    @classmethod
    def _from_pair(cls, device_type: int, index: int) -> "Device":
        device = cls.__new__(cls)
        device._type, device._index = int(device_type), int(index)
        return device

    def __reduce__(self) -> Any:
        return (Device._from_pair, (self._type, self._index))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Device) and (self._type, self._index) == (other._type,
                                                                             other._index)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash((self._type, self._index))

    def __device_type_name__(self) -> str:
        """The canonical name of the device type, e.g. ``"cuda"``.

        A type with no name (0, 5, 6, 19, ..., as a kernel may return) raises
        ``KeyError(<type>)``, as upstream's does; so do ``str``, ``repr`` and
        ``type``, which all name the type.
        """
        return self._DEVICE_TYPE_TO_NAME[self._type]

    def __str__(self) -> str:
        return f"{self.__device_type_name__()}:{self._index}"

    def __repr__(self) -> str:
        return f"device(type='{self.__device_type_name__()}', index={self._index})"

    @property
    def type(self) -> str:
        """The device type's name, e.g. ``"cpu"``."""
        return self.__device_type_name__()

    @property
    def index(self) -> int:
        """The device index."""
        return self._index

    def dlpack_device_type(self) -> int:
        """The DLPack device type code."""
        return self._type


#: The class ``device()`` makes and calls return devices as: ``Device`` unless
#: :func:`set_device_class` (upstream's ``core._set_class_device``) replaced it.
DEVICE_CLASS: type = Device


def set_device_class(cls: type) -> None:
    """Makes ``cls`` (``Device`` or a subclass) the class of every device made from now on."""
    global DEVICE_CLASS
    if not (isinstance(cls, type) and issubclass(cls, Device)):
        raise TypeError(f"the device class must be Device or a subclass of it, got {cls!r}")

    upcalls.set_device_class(cls)
    DEVICE_CLASS = cls


def device(device_type: Union[str, int], index: Optional[int] = None) -> Device:
    """A device from a name (``"cuda"``, ``"cuda:1"``) or a DLPack type code, and an index."""
    return DEVICE_CLASS(device_type, index)
