"""The limits the worker runs a third party's code under.

The checker loads and calls code it knows nothing about. Its worker
(:mod:`tvm_ffi_check._worker`) therefore runs with resource limits: an
address-space cap (a kernel that allocates without end fails its allocation
instead of taking the machine), CPU seconds per child process (each function's
calls run in a fresh child), a largest file it may write, no core dumps, and,
where the machine allows, no network (a network namespace of its own, holding
only a loopback that is down).

The address-space cap must leave room for what legitimately reserves a lot:
guard pages around every tensor, torch (its import alone reserves hundreds of
MB), and above all AddressSanitizer (terabytes of shadow) and CUDA (a unified
address range of tens of GB); the cap is left off, saying why, when either is
present. :meth:`Sandbox.describe` is what the report shows.
"""

from __future__ import annotations

import ctypes
import os
import re
from dataclasses import asdict, dataclass
from typing import Dict, Iterable, List, Optional

_GIB = 1 << 30
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": _GIB, "T": 1 << 40}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:I?B)?\s*$", re.I)
#: Words that turn a limit off on the command line.
UNLIMITED = ("none", "off", "unlimited")

_CLONE_NEWUSER, _CLONE_NEWNET = 0x10000000, 0x40000000
#: A CUDA runtime or driver API function: cudaMalloc, cuLaunchKernel.
_CUDA_SYMBOL = re.compile(r"cuda[A-Z]|cu[A-Z]")


def default_memory() -> int:
    """The default address-space cap: the machine's memory plus 8 GiB, and at least 16 GiB."""
    try:
        physical = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):
        physical = 0
    return max(16 * _GIB, physical + 8 * _GIB)


def parse_size(text: str) -> Optional[int]:
    """``"16G"``, ``"512M"``, ``"1073741824"`` -> bytes; ``"none"`` -> None (no limit)."""
    if text.strip().lower() in UNLIMITED:
        return None
    found = _SIZE.match(text)
    if not found or float(found.group(1)) <= 0:
        raise ValueError(f"expected a size such as 16G, 512M or a byte count, or 'none', "
                         f"got {text!r}")
    return int(float(found.group(1)) * _UNITS[found.group(2).upper()])


def format_size(size: int) -> str:
    """Bytes in the largest unit that keeps them whole-ish: ``16 GiB``, ``512 MiB``."""
    for unit, factor in (("TiB", 1 << 40), ("GiB", _GIB), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= factor:
            value = size / factor
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{size} B"


@dataclass
class Sandbox:
    """What the worker is limited to; None for a limit means no limit.

    ``memory``: bytes of address space; ``cpu``: CPU seconds per child process
    (one function's calls); ``file_size``: bytes of the largest file written;
    ``core_dumps``: allowed or not; ``network``: reachable or not.
    """

    memory: Optional[int] = None
    cpu: Optional[int] = 300
    file_size: Optional[int] = 4 * _GIB
    core_dumps: bool = False
    network: bool = False

    @classmethod
    def default(cls) -> "Sandbox":
        return cls(memory=default_memory())

    @classmethod
    def off(cls) -> "Sandbox":
        """No limit at all (``--no-sandbox``)."""
        return cls(memory=None, cpu=None, file_size=None, core_dumps=True, network=True)

    def to_json(self) -> Dict[str, object]:
        return asdict(self)


def _set_limit(kind: int, value: int) -> None:
    import resource

    _, hard = resource.getrlimit(kind)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(kind, (value, hard))


def _memory_exemption() -> Optional[str]:
    """Why the address-space cap must stay off in this process, or None."""
    preload = os.environ.get("LD_PRELOAD", "")
    try:
        with open("/proc/self/maps") as f:
            maps = f.read()
    except OSError:
        maps = ""
    if "asan" in preload or "libasan" in maps or "libclang_rt.asan" in maps:
        return "not applied: AddressSanitizer reserves terabytes of shadow memory"
    return None


def cuda_exemption(undefined_symbols: Iterable[str]) -> Optional[str]:
    """Why a library's address space cannot be capped (it calls CUDA), or None."""
    if any(_CUDA_SYMBOL.match(name) for name in undefined_symbols):
        return "not applied: the library uses CUDA, which reserves tens of GB of address space"
    return None


def isolate_network() -> Optional[str]:
    """Moves this process into a network namespace of its own; None, or why it could not.

    Must run while the process has one thread (a user namespace, needed when
    not root, refuses a threaded process).
    """
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(_CLONE_NEWNET) == 0:
        return None
    first = os.strerror(ctypes.get_errno())
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNET) != 0:
        return f"unshare(CLONE_NEWNET): {first}; with a user namespace: " \
               f"{os.strerror(ctypes.get_errno())}"
    try:  # keep our own ids inside, so files stay ours
        for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"),
                           ("gid_map", f"{gid} {gid} 1")):
            with open(f"/proc/self/{name}", "w") as f:
                f.write(text)
    except OSError:
        pass
    return None


def apply_process_limits(sandbox: Sandbox, memory_exemption: Optional[str] = None) -> List[str]:
    """Applies every limit but CPU time to this (the worker) process; returns what applied.

    ``memory_exemption``: why the address-space cap must stay off for this
    library (:func:`cuda_exemption`), found by the checker before the start.

    Each entry of the result is one line of the report: ``address space 31 GiB``,
    ``network: not isolated (...)``.
    """
    import resource

    network = None  # first: while the process has one thread
    if not sandbox.network:
        problem = isolate_network()
        network = ("no network (own network namespace)" if problem is None else
                   f"network not isolated ({problem})")
    applied: List[str] = []
    if sandbox.memory is not None:
        exemption = _memory_exemption() or memory_exemption
        if exemption:
            applied.append(f"address space {exemption}")
        else:
            _set_limit(resource.RLIMIT_AS, sandbox.memory)
            applied.append(f"address space {format_size(sandbox.memory)}")
    if sandbox.cpu is not None:
        applied.append(f"CPU {sandbox.cpu} s per function")
    if sandbox.file_size is not None:
        _set_limit(resource.RLIMIT_FSIZE, sandbox.file_size)
        applied.append(f"files up to {format_size(sandbox.file_size)}")
    if not sandbox.core_dumps:
        _set_limit(resource.RLIMIT_CORE, 0)
        applied.append("no core dumps")
    applied.append(network or "network allowed")
    return applied


def apply_cpu_limit(sandbox: Sandbox) -> None:
    """The CPU-time limit, in a child that is about to run kernels (SIGXCPU past it)."""
    import resource

    if sandbox.cpu is not None:
        _set_limit(resource.RLIMIT_CPU, sandbox.cpu)


#: How a child killed by a limit is described (its signal -> the limit and its flag).
LIMIT_SIGNALS = {"SIGXCPU": "the sandbox's CPU-time limit (--limit-cpu)",
                 "SIGXFSZ": "the sandbox's file-size limit (--limit-file-size)"}


def cache_folder() -> str:
    """Where the checker keeps its own files: ``$XDG_CACHE_HOME/tvm-ffi-check``
    (``~/.cache/tvm-ffi-check`` by default), never the current folder."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "tvm-ffi-check")


def keep_hypothesis_out_of_cwd() -> None:
    """Points hypothesis' storage (its database, its caches) at :func:`cache_folder`.

    Hypothesis writes ``.hypothesis/`` into the current folder by default, even
    with no database: a check run from a source tree would leave it there. A
    folder the user chose (``HYPOTHESIS_STORAGE_DIRECTORY``) is kept.
    """
    if os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        return
    from hypothesis.configuration import set_hypothesis_home_dir

    set_hypothesis_home_dir(os.path.join(cache_folder(), "hypothesis"))
