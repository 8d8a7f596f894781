"""The container locks, as the reference runtime takes them.

Upstream leaves List and Dict unsynchronized; here each runtime function
working on one holds its lock while it runs (``tvm_ffi_runtime.h``'s
``tvm_ffi_runtime_object_lock``, in ``libtvm_ffi.so``, which every front end and
runtime of the process shares), so that threads sharing a List or Dict see
each operation whole. This runtime is Python run as C callbacks: a thread may
be interrupted between any two bytecodes, so without the lock two threads'
operations on one map interleave and corrupt it. ctypes releases the GIL while
a lock is waited for, so a holder calling back into Python is never stuck.
"""

from __future__ import annotations

from typing import Iterable, List

from tvm_ffi_common.capi import LIB

from .slots import FFIError

#: The parameter spellings of typed functions whose argument is held while they run.
HELD_PARAMS = frozenset({"ffi.List", "ffi.Dict", "List<Any>", "Dict<Any, Any>"})


def hold_all(addresses: Iterable[int]) -> List[int]:
    """Holds each object (distinct, in address order: every holder's order); returns them."""
    held: List[int] = []
    for address in sorted(set(addresses)):
        if LIB.tvm_ffi_runtime_object_lock(address) != 0:
            release_all(held)
            raise FFIError("MemoryError", "out of memory holding a container")
        held.append(address)
    return held


def release_all(held: List[int]) -> None:
    """Releases what :func:`hold_all` took."""
    for address in reversed(held):
        LIB.tvm_ffi_runtime_object_unlock(address)
