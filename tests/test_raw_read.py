"""The reference's bulk memory reads (``tvm_ffi_ref/runtime/raw_read.py``) at any address.

The reads go through a view of the process's memory from address 0; an address the view
does not reach must still be read, whole, through ``from_address``. No address here can
lie beyond the real view (it spans 2**63 - 1 bytes), so the beyond-the-view path is driven
with a shorter view that ends inside a real buffer: what is past its end, or straddles it,
must read exactly as the buffer holds it.

The module is loaded from its file, alone: it needs only ctypes, and importing
``tvm_ffi_ref`` would install a runtime into the test process.
"""

from __future__ import annotations

import ctypes
import importlib.util
import pathlib
import struct
import sys

import pytest

PATH = pathlib.Path(__file__).resolve().parents[1] / "tvm_ffi_ref" / "runtime" / "raw_read.py"


@pytest.fixture(scope="module")
def raw_read():
    spec = importlib.util.spec_from_file_location("raw_read_alone", PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture()
def buffer():
    """64 known bytes in C memory, and a view of memory that ends 8 bytes into them."""
    data = bytes(range(1, 65))
    block = ctypes.create_string_buffer(data, len(data))
    base = ctypes.addressof(block)
    short = memoryview((ctypes.c_char * (base + 8)).from_address(0)).cast("B").toreadonly()
    yield data, base, short
    del short, block


def test_the_view_spans_every_user_space_address(raw_read):
    if raw_read.MEMORY is None:
        pytest.skip("no view of memory here (PyPy): every read goes through from_address")
    assert len(raw_read.MEMORY) == sys.maxsize
    # x86-64 with 5-level paging (57 bits) and AArch64 with 52-bit addresses are inside it
    assert (1 << 57) + 4096 < len(raw_read.MEMORY)


def test_bytes_inside_straddling_and_beyond_the_view_read_whole(raw_read, buffer):
    data, base, short = buffer
    assert raw_read.bytes_at(base, 8, memory=short) == data[:8]          # inside
    assert raw_read.bytes_at(base + 4, 12, memory=short) == data[4:16]   # across its end
    assert raw_read.bytes_at(base + 8, 16, memory=short) == data[8:24]   # just past it
    assert raw_read.bytes_at(base + 40, 24, memory=short) == data[40:]   # well past it
    assert raw_read.bytes_at(base + 40, 0, memory=short) == b""


def test_fields_inside_straddling_and_beyond_the_view_read_whole(raw_read, buffer):
    data, base, short = buffer
    layout = struct.Struct("<iIQ")  # a slot's fields, as seq_slots reads them
    read = raw_read.reader(layout, memory=short)
    for offset in (-8, 0, 4, 8, 48):  # inside, at, across and past the view's end
        address = base + offset
        want = layout.unpack(ctypes.string_at(address, layout.size))
        assert read(address) == want, offset
    assert read(base + 48) == layout.unpack(data[48:64])


def test_without_a_view_every_read_goes_through_from_address(raw_read, buffer):
    data, base, _ = buffer
    assert raw_read.bytes_at(base + 3, 9, memory=None) == data[3:12]
    assert raw_read.reader(struct.Struct("<Q"), memory=None)(base + 8) == \
        struct.unpack("<Q", data[8:16])
