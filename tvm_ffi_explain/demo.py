"""Calls the example kernel library and shows every byte that crosses the ABI.

``python -m tvm_ffi_explain.demo`` (or ``tvm-ffi-demo``) loads
``libtvm_ffi_example_kernels.so``, a C library built against ``c_api/include``,
and calls each of its functions through the packed calling convention with
hand-built ``TVMFFIAny`` arguments, printing the 16 bytes of every argument
and result and the error a failing call raised.
"""

from __future__ import annotations

import ctypes
import os
import sys
from typing import List, Optional, Sequence, Tuple

from tvm_ffi_common import libinfo
from tvm_ffi_common.cli_args import OneLineParser
from tvm_ffi_ref import LIB, abi, abi_version

TI = abi.TVMFFITypeIndex
EXAMPLE_LIBRARY = "libtvm_ffi_example_kernels.so"


def example_library_path() -> str:
    """The example kernel library built next to ``libtvm_ffi.so`` at install time."""
    return os.path.join(libinfo.library_dir(), EXAMPLE_LIBRARY)


def kernels():
    """The example kernel library, loaded (once) by the reference front end."""
    global _kernels
    if _kernels is None:
        import tvm_ffi_ref

        _kernels = tvm_ffi_ref.load_module(example_library_path())
    return _kernels


_kernels = None


def any_bytes(value: abi.TVMFFIAny) -> str:
    """The 16 bytes of a TVMFFIAny as hex: type index, padding/length, payload."""
    raw = bytes(value)
    return f"{raw[0:4].hex()} {raw[4:8].hex()} {raw[8:16].hex()}"


def describe(value: abi.TVMFFIAny) -> str:
    """A short reading of a TVMFFIAny, decoded the way a kernel would decode it."""
    index = value.type_index
    name = TI(index).name[len("kTVMFFI"):] if index in TI._value2member_map_ else f"type {index}"
    if index in (TI.kTVMFFIInt, TI.kTVMFFIBool):
        return f"{name} {value.v_int64}"
    if index == TI.kTVMFFIFloat:
        return f"{name} {value.v_float64!r}"
    if index in (TI.kTVMFFISmallStr, TI.kTVMFFISmallBytes):
        return f"{name} {bytes(value.v_bytes)[: value.small_str_len]!r} (inline, length in padding)"
    if index == TI.kTVMFFIRawStr:
        return f"{name} {value.v_c_str!r} (borrowed char*)"
    if index == TI.kTVMFFIDLTensorPtr:
        return f"{name} DLTensor* 0x{value.v_ptr:x} (borrowed)"
    if index == TI.kTVMFFINone:
        return name
    return f"{name} object at 0x{(value.v_ptr or 0):x}"


# ---------------------------------------------------------------- arguments


def pod(type_index: int, **payload) -> abi.TVMFFIAny:
    """A TVMFFIAny holding a POD value, padding zeroed as the ABI requires."""
    value = abi.TVMFFIAny()
    value.type_index = type_index
    for name, field_value in payload.items():
        setattr(value, name, field_value)
    return value


def small_str(text: str) -> abi.TVMFFIAny:
    """A str of at most 7 UTF-8 bytes, stored inline with its length in the padding."""
    data = text.encode()
    assert len(data) <= 7, "small strings hold at most 7 bytes"
    value = pod(TI.kTVMFFISmallStr)
    value.small_str_len = len(data)
    ctypes.memmove(ctypes.addressof(value) + 8, data, len(data))
    return value


class Keep:
    """Keeps the buffers behind borrowed arguments alive for the duration of a call."""

    def __init__(self) -> None:
        self.objects: List[object] = []

    def raw_str(self, text: str) -> abi.TVMFFIAny:
        """A longer str passed as a borrowed ``const char*``."""
        buffer = ctypes.create_string_buffer(text.encode())
        self.objects.append(buffer)
        return pod(TI.kTVMFFIRawStr, v_ptr=ctypes.addressof(buffer))

    def tensor(self, rows: Sequence[Sequence[float]], transpose: bool) -> abi.TVMFFIAny:
        """A float32 matrix as a borrowed ``DLTensor*``, optionally a strided transpose."""
        n, m = len(rows), len(rows[0])
        data = (ctypes.c_float * (n * m))(*[x for row in rows for x in row])
        shape = (ctypes.c_int64 * 2)(*((m, n) if transpose else (n, m)))
        strides = (ctypes.c_int64 * 2)(*((1, m) if transpose else (m, 1)))
        tensor = abi.DLTensor(
            data=ctypes.addressof(data),
            device=abi.DLDevice(abi.DLDeviceType.kDLCPU, 0),
            ndim=2,
            dtype=abi.DLDataType(abi.DLDataTypeCode.kDLFloat, 32, 1),
            shape=shape,
            strides=strides,
            byte_offset=0,
        )
        self.objects += [data, shape, strides, tensor]
        return pod(TI.kTVMFFIDLTensorPtr, v_ptr=ctypes.addressof(tensor))


# ---------------------------------------------------------------- calling


def raised_error() -> Optional[Tuple[str, str]]:
    """Moves the raised error out of the thread-local slot: (kind, message)."""
    handle = ctypes.c_void_p()
    LIB.TVMFFIErrorMoveFromRaised(ctypes.byref(handle))
    if not handle.value:
        return None
    cell = abi.TVMFFIErrorCell.from_address(handle.value + ctypes.sizeof(abi.TVMFFIObject))
    kind = ctypes.string_at(cell.kind.data, cell.kind.size).decode()
    message = ctypes.string_at(cell.message.data, cell.message.size).decode()
    LIB.TVMFFIObjectDecRef(handle)
    return kind, message


def release(value: abi.TVMFFIAny) -> None:
    """Drops the reference an owned result holds, if it holds an object."""
    if value.type_index >= TI.kTVMFFIStaticObjectBegin:
        LIB.TVMFFIObjectDecRef(value.v_ptr)


def call(kernels: ctypes.CDLL, name: str, label: str, args: List[abi.TVMFFIAny], out) -> int:
    """Calls ``__tvm_ffi_<name>`` and prints arguments, status, result or error."""
    safe_call = abi.TVMFFISafeCallType(("__tvm_ffi_" + name, kernels))
    packed = (abi.TVMFFIAny * max(len(args), 1))(*args)
    result = pod(TI.kTVMFFINone)
    print(f"{name}({label})", file=out)
    for i, arg in enumerate(args):
        print(f"  args[{i}]  {any_bytes(arg)}  {describe(arg)}", file=out)
    status = safe_call(None, packed, len(args), ctypes.byref(result))
    print(f"  status   {status}", file=out)
    if status == 0:
        print(f"  result   {any_bytes(result)}  {describe(result)}", file=out)
        release(result)
    else:
        error = raised_error()
        print(f"  raised   {error[0]}: {error[1]}" if error else "  raised   nothing", file=out)
    print(file=out)
    return status


def run(out=sys.stdout) -> int:
    """Runs the demonstration; returns how many calls did not do what they should."""
    path = example_library_path()
    kernels = ctypes.CDLL(path)
    runtime = LIB.tvm_ffi_runtime_name()
    print(f"libtvm_ffi.so  {libinfo.library_path()}", file=out)
    print(f"ABI version    {'.'.join(map(str, abi_version()))}", file=out)
    print(f"runtime        {runtime.decode() if runtime else 'none installed (built-ins only)'}",
          file=out)
    print(f"kernels        {path}\n", file=out)
    print("Each TVMFFIAny: type_index | padding or small-str length | 8-byte payload\n", file=out)

    keep = Keep()
    mistakes = 0
    expect_ok = [
        ("add_int", "40, 2", [pod(TI.kTVMFFIInt, v_int64=40), pod(TI.kTVMFFIInt, v_int64=2)]),
        ("scale", "1.5, 4", [pod(TI.kTVMFFIFloat, v_float64=1.5), pod(TI.kTVMFFIInt, v_int64=4)]),
        ("string_length", '"héllo"', [small_str("héllo")]),
        ("string_length", '"a string longer than seven bytes"',
         [keep.raw_str("a string longer than seven bytes")]),
        ("sum_float32", "[[1, 2, 3], [4, 5, 6]] transposed",
         [keep.tensor([[1, 2, 3], [4, 5, 6]], transpose=True)]),
    ]
    expect_error = [
        ("add_int", '1, "x"', [pod(TI.kTVMFFIInt, v_int64=1), small_str("x")]),
        ("raise_value_error", '"bad input"', [keep.raw_str("bad input")]),
    ]
    for name, label, args in expect_ok:
        mistakes += call(kernels, name, label, args, out) != 0
    for name, label, args in expect_error:
        mistakes += call(kernels, name, label, args, out) != -1
    # echo needs TVMFFIAnyViewToOwnedAny, which only a runtime provides.
    status = call(kernels, "echo", '"abc"', [small_str("abc")], out)
    mistakes += status != (0 if runtime else -1)
    return mistakes


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of ``tvm-ffi-demo``; exit status 0 when every call behaved."""
    parser = OneLineParser(prog="tvm-ffi-demo", description=__doc__.splitlines()[0])
    parser.parse_args(argv)
    mistakes = run()
    if mistakes:
        print(f"{mistakes} call(s) did not behave as expected", file=sys.stderr)
    return 1 if mistakes else 0


if __name__ == "__main__":
    sys.exit(main())
