"""Objects the reference runtime allocates: C memory, the header, and the deleter.

Its twin in C: ``tvm_ffi_fast/src/objects.c``.

A TVM FFI object must live in C memory that outlives any Python wrapper, since
a C++ kernel may hold (and finally drop) the last reference. So the reference
runtime allocates with libc ``malloc``, writes the 24-byte ``TVMFFIObject``
header, and points every header's ``deleter`` at one ctypes callback,
:data:`OBJECT_DELETER`. That callback looks up what the object's type needs to
release (its elements, its strings' owners, ...) and frees the block.

Reference counting itself follows the header's protocol and is done by
``TVMFFIObjectIncRef``/``DecRef`` in ``libtvm_ffi.so`` (atomic, as C++
kernels do it inline); :func:`inc_ref` and :func:`dec_ref` call them.
"""

from __future__ import annotations

import ctypes
import sys
import threading
from typing import Callable, Dict, List, Tuple

from tvm_ffi_common import abi
from tvm_ffi_common.capi import LIB

from . import interrupts

_libc = ctypes.CDLL(None)
_libc.malloc.restype = ctypes.c_void_p
_libc.malloc.argtypes = [ctypes.c_size_t]
_libc.calloc.restype = ctypes.c_void_p
_libc.calloc.argtypes = [ctypes.c_size_t, ctypes.c_size_t]
_libc.free.restype = None
_libc.free.argtypes = [ctypes.c_void_p]

#: sizeof(TVMFFIObject): every cell starts right after it.
HEADER_SIZE = ctypes.sizeof(abi.TVMFFIObject)
#: A fresh object: one strong reference, plus the weak one the strong refs share.
FRESH_REF_COUNT = (1 << 32) | 1

# Plain ints: the deleter runs for every object that dies, and enum flags are slow.
STRONG = int(abi.TVMFFIObjectDeleterFlagBitMask.kTVMFFIObjectDeleterFlagBitMaskStrong)
WEAK = int(abi.TVMFFIObjectDeleterFlagBitMask.kTVMFFIObjectDeleterFlagBitMaskWeak)

#: What to do when an object's strong count reaches zero, by address. The hook
#: receives the address and releases what the object owns (not its memory).
_destructors: Dict[int, Callable[[int], None]] = {}
_destructors_lock = threading.Lock()
#: Objects allocated with bytes in front of the header (``new_object(prefix=...)``):
#: address -> how many, so that the block is freed from its start.
_prefixes: Dict[int, int] = {}


def malloc(size: int) -> int:
    """Zeroed C memory of ``size`` bytes (at least 1); raises MemoryError when exhausted."""
    address = _libc.calloc(1, max(size, 1))
    if not address:
        raise MemoryError(f"could not allocate {size} bytes")
    return address


def free(address: int) -> None:
    """Releases memory from :func:`malloc`."""
    _libc.free(address)


#: Lifetime observers (see :func:`track_lifetimes`): ``(on_new, on_free)`` pairs.
_trackers: List[Tuple[Callable[[int, int], None], Callable[[int], None]]] = []


def _delete_object(address: int, flags: int) -> None:
    if flags & STRONG:
        with _destructors_lock:
            destroy = _destructors.pop(address, None)
        if destroy is not None:
            destroy(address)
    if flags & WEAK:
        for _, on_free in _trackers:
            on_free(address)
        with _destructors_lock:
            prefix = _prefixes.pop(address, 0)
        free(address - prefix)


def track_lifetimes(on_new: Callable[[int, int], None], on_free: Callable[[int], None]) -> None:
    """Reports every object allocated from now on: ``on_new(address, type_index)`` at birth
    and ``on_free(address)`` when its memory is released.

    Tracked objects die through the Python deleter (slower than the C ones,
    which nothing could observe). The checker counts live objects this way.
    """
    _trackers.append((on_new, on_free))


def _release_elements(address: int) -> None:
    # What tvm_ffi_runtime_free_sequence does when the strong count ends.
    LIB.tvm_ffi_runtime_free_sequence(address, STRONG)


@abi.TVMFFIObjectDeleter
@interrupts.callback_entry
def _object_deleter(address, flags):
    # An exception must not cross into C; report it as the interpreter would.
    try:
        _delete_object(address, flags)
    except BaseException:  # pragma: no cover - only on runtime bugs
        import sys
        import traceback

        print("tvm_ffi_ref: error while deleting an object:", file=sys.stderr)
        traceback.print_exc()


#: The Python deleter of objects with a Python ``destroy`` hook.
OBJECT_DELETER = _object_deleter
#: What their headers name: ``libtvm_ffi.so``'s host deleter, which calls
#: :data:`OBJECT_DELETER` until the interpreter exits and drops the releases that come
#: later (``interpreter_exit.py``, ``host_callbacks.c``).
OBJECT_DELETER_ADDRESS = ctypes.cast(LIB.tvm_ffi_runtime_host_deleter, ctypes.c_void_p).value
LIB.tvm_ffi_runtime_set_host_deleter(ctypes.cast(OBJECT_DELETER, ctypes.c_void_p))


#: ``libtvm_ffi.so``'s deleters for objects with nothing of ours to release: they
#: die in C, without a Python callback (see ``tvm_ffi_runtime.h``).
FREE_OBJECT_ADDRESS = ctypes.cast(LIB.tvm_ffi_runtime_free_object, ctypes.c_void_p).value
FREE_SEQUENCE_ADDRESS = ctypes.cast(LIB.tvm_ffi_runtime_free_sequence, ctypes.c_void_p).value


#: ``new_object(..., destroy=RELEASE_ELEMENTS)``: the object's cell is a
#: ``TVMFFISeqCell``; its elements and buffer are released as it dies.
RELEASE_ELEMENTS = "release elements"

_OUR_DELETERS = (OBJECT_DELETER_ADDRESS, FREE_OBJECT_ADDRESS, FREE_SEQUENCE_ADDRESS)


def new_object(type_index: int, size: int, destroy=None, prefix: int = 0) -> int:
    """Allocates an object of ``size`` bytes (header included) and returns its address.

    The header is initialised (fresh count, ``type_index``, a deleter); the
    rest is zeroed for the caller to fill. ``destroy(address)`` runs when the
    last strong reference goes, before the memory is freed; with no
    ``destroy`` (or ``RELEASE_ELEMENTS``) the object dies entirely in C.
    ``prefix`` zeroed bytes come before the header (a C++ vtable pointer, for
    modules); they need a ``destroy`` hook, as the C deleters free from the header.
    """
    if prefix and destroy in (None, RELEASE_ELEMENTS):
        raise ValueError("new_object: an object with a prefix needs a destroy hook")
    address = malloc(prefix + size) + prefix
    if prefix:
        with _destructors_lock:
            _prefixes[address] = prefix
    header = abi.TVMFFIObject.from_address(address)
    header.combined_ref_count = FRESH_REF_COUNT
    header.type_index = type_index
    if _trackers:
        if destroy is RELEASE_ELEMENTS:
            destroy = _release_elements
        for on_new, _ in _trackers:
            on_new(address, type_index)
    if destroy is None:
        deleter = FREE_OBJECT_ADDRESS
    elif destroy is RELEASE_ELEMENTS:
        deleter = FREE_SEQUENCE_ADDRESS
    else:
        deleter = OBJECT_DELETER_ADDRESS
        with _destructors_lock:
            _destructors[address] = destroy
    if _trackers and deleter == FREE_OBJECT_ADDRESS:
        deleter = OBJECT_DELETER_ADDRESS  # no destroy hook, but its death must be seen
    ctypes.c_void_p.from_address(address + 16).value = deleter
    return address


def is_ours(address: int) -> bool:
    """Whether the object at ``address`` was allocated by this runtime."""
    return ctypes.c_void_p.from_address(address + 16).value in _OUR_DELETERS


def type_index_of(address: int) -> int:
    """The type index in an object's header."""
    return ctypes.c_int32.from_address(address + 8).value


def strong_count(address: int) -> int:
    """The strong reference count in an object's header."""
    return ctypes.c_uint64.from_address(address).value & 0xFFFFFFFF


def inc_ref(address: int) -> None:
    """Adds a strong reference to the object at ``address``."""
    LIB.TVMFFIObjectIncRef(address)


def dec_ref(address: int) -> None:
    """Drops a strong reference to the object at ``address`` (may destroy it)."""
    LIB.TVMFFIObjectDecRef(address)


#: References a finalizer gave up, for :func:`drain_released` (see :func:`dec_ref_later`).
released: List[int] = []


def dec_ref_later(address: int) -> None:
    """:func:`dec_ref` for a finalizer: at once on CPython (which finalizes when the last
    reference goes); elsewhere queued, because PyPy finalizes at any allocation, maybe while
    this thread holds one of the runtime's locks. Every slot drains the queue on entry."""
    if sys.implementation.name == "cpython":
        dec_ref(address)
    else:
        released.append(address)


def drain_released() -> None:
    """Drops the references :func:`dec_ref_later` queued (called outside any finalizer)."""
    while released:
        dec_ref(released.pop())


def cell_address(address: int) -> int:
    """Where an object's cell starts: right after the header."""
    return address + HEADER_SIZE
