"""Guard pages around tensor data, and the report of an access that hit one.

Every tensor the checker hands a kernel has its data in a private mapping of
its own, flush against an inaccessible (``PROT_NONE``) stretch of pages after
its last byte, with another before the page its first byte is on. A kernel
that reads or writes one element past the end (or before the start) faults at
that very access instead of reading a neighbour's bytes, which would show only
as a result that changes from call to call.

A fault kills the worker's child. Python cannot run in a SIGSEGV handler, so a
small handler in C (``fault_report.c``, built next to ``libtvm_ffi.so``) writes
the faulting address, and on x86-64 whether it was a read or a write, into a
page the supervisor shares with the child (:class:`SharedFaultRecord`). Before
each kernel call the child tells the supervisor where that call's tensors lie
(:func:`recording`); the supervisor matches the address against them
(:func:`describe_fault`) and names the argument and the offset.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import signal
import struct
import threading
from contextlib import contextmanager
from typing import Any, Dict, Iterator, List, Optional, Sequence

PAGE = mmap.PAGESIZE
#: Inaccessible bytes on each side of the data: a stride or two past the end still lands here.
GUARD_BYTES = 16 * PAGE
#: The shared record's layout: written, signal, si_code, address, access (fault_report.c).
FAULT_RECORD = struct.Struct("<5Q")
FAULT_REPORTER = "libtvm_ffi_check_fault.so"
_ACCESS = {0: "access", 1: "read", 2: "write"}
_PROT_NONE = 0

Region = Dict[str, Any]


# ------------------------------------------------------------ the record


class SharedFaultRecord:
    """A page shared with forked children, where the fault reporter writes a fault."""

    def __init__(self) -> None:
        self.page = mmap.mmap(-1, PAGE, flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS)
        self._anchor = ctypes.c_char.from_buffer(self.page)
        self.address = ctypes.addressof(self._anchor)

    def clear(self) -> None:
        """Forgets an earlier fault (before a new child starts)."""
        self.page[:FAULT_RECORD.size] = bytes(FAULT_RECORD.size)

    def read(self) -> Optional[Dict[str, Any]]:
        """The fault the reporter wrote, or None."""
        written, signo, code, address, access = FAULT_RECORD.unpack_from(self.page, 0)
        if not written:
            return None
        return {"signal": signo, "code": code, "address": address,
                "access": _ACCESS.get(access, "access")}


def reporter_path() -> Optional[str]:
    """The built fault reporter, or None (``pip install .`` builds it)."""
    from tvm_ffi_common import libinfo

    try:
        path = os.path.join(libinfo.library_dir(), FAULT_REPORTER)
    except OSError:
        return None
    return path if os.path.isfile(path) else None


def install_reporter(record: SharedFaultRecord) -> bool:
    """Installs the SIGSEGV/SIGBUS reporter in this process (children inherit it)."""
    path = reporter_path()
    if path is None:
        return False
    library = ctypes.CDLL(path)
    install = library.tvm_ffi_check_install_fault_reporter
    install.argtypes, install.restype = [ctypes.c_void_p], ctypes.c_int
    _KEEP.append(library)
    return install(record.address) == 0


_KEEP: List[Any] = []


# ------------------------------------------------------------ guarded data

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
_libc.mprotect.restype = ctypes.c_int
_local = threading.local()


@contextmanager
def recording() -> Iterator[List[Region]]:
    """Collects the regions of the guarded buffers this thread makes inside the block."""
    saved = getattr(_local, "regions", None), getattr(_local, "label", "")
    _local.regions, _local.label = [], "an argument"
    try:
        yield _local.regions
    finally:
        _local.regions, _local.label = saved


def label(text: str) -> None:
    """Names what the buffers made from now on (in this thread) are passed as: ``args[1]``."""
    _local.label = text


def guarded_bytes(nbytes: int, what: str):
    """A NumPy uint8 array of ``nbytes`` whose last byte touches a guard page.

    ``what`` describes the tensor for a report. The mapping lives as long as
    the array (and every view of it) does.
    """
    import numpy as np

    data_pages = -(-nbytes // PAGE)
    total = GUARD_BYTES + data_pages * PAGE + GUARD_BYTES
    block = mmap.mmap(-1, total, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    anchor = ctypes.c_char.from_buffer(block)
    base = ctypes.addressof(anchor)
    del anchor  # a live ctypes view would keep the mapping from ever closing
    data_end = base + GUARD_BYTES + data_pages * PAGE
    for start in (base, data_end):
        if _libc.mprotect(start, GUARD_BYTES, _PROT_NONE) != 0:
            raise OSError(ctypes.get_errno(), "mprotect of a guard page failed")
    start = data_end - nbytes
    array = np.frombuffer(block, dtype=np.uint8, count=nbytes, offset=start - base)
    region = {"label": getattr(_local, "label", ""), "what": what, "start": start,
              "end": data_end, "low": base, "high": data_end + GUARD_BYTES}
    _local.last = region
    regions = getattr(_local, "regions", None)
    if regions is not None:
        regions.append(region)
    return array


def last_region() -> Region:
    """The region of the buffer :func:`guarded_bytes` made last in this thread."""
    return _local.last


# ------------------------------------------------------------ the verdict


def signal_name(number: int) -> str:
    """``SIGSEGV`` for 11."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def describe_fault(fault: Dict[str, Any], regions: Sequence[Region]) -> Optional[str]:
    """What an access that faulted in a guard page did, naming the argument and offset.

    ``regions`` are the guarded buffers the child reported, oldest first (an
    address reused by a later mapping belongs to the later one). None when the
    address is in no guard.
    """
    address = fault["address"]
    for region in reversed(regions):
        if not region["low"] <= address < region["high"]:
            continue
        if region["start"] <= address < region["end"]:
            return None  # inside the data: not a guard fault
        size = region["end"] - region["start"]
        offset = address - region["start"]
        if address >= region["end"]:
            where = f"{address - region['end']} byte(s) past its end"
        else:
            where = f"{region['start'] - address} byte(s) before its start"
        stopped = (f"the guard page there stopped it (the worker was killed by "
                   f"{signal_name(fault['signal'])})")
        if region.get("item"):  # the argument array: name the slot
            return (f"out-of-bounds {fault['access']} of the argument array: the kernel touched "
                    f"args[{offset // region['item']}] of a call with {size // region['item']} "
                    f"argument(s) (byte offset {offset}, {where}); {stopped}")
        return (f"out-of-bounds {fault['access']} of {region['what']} passed as "
                f"{region['label']} ({size} bytes of data): the kernel touched byte offset "
                f"{offset}, {where}; {stopped}")
    return None
