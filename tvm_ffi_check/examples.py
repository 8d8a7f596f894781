"""The kernel libraries the project ships: where they are, built on first use if need be.

``pip install`` builds them next to ``libtvm_ffi.so`` (``setup.py``):

* ``example``: ``libtvm_ffi_example_kernels.so`` from
  ``examples/kernels/example_kernels.c``, a library that obeys every rule
  (what ``tvm-ffi-check`` checks when given no library);
* ``broken``: ``libtvm_ffi_broken_kernels.so`` from
  ``examples/kernels/broken_kernels.c``, one function breaking each rule plus
  well-behaved ones (what a report with findings looks like).

In a source checkout whose library is missing or older than its source, the
library is compiled (C99, against this project's headers) into a cache
directory instead, once per source version.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import subprocess
from typing import Dict

from tvm_ffi_common import libinfo

from .results import CheckError

#: Example name -> file stem (``lib tvm_ffi_<stem>.so`` / ``<stem>.c``).
EXAMPLES: Dict[str, str] = {"example": "example_kernels", "broken": "broken_kernels"}

_SOURCE_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "examples", "kernels")


def source_path(name: str = "example") -> str:
    """Where the example's C source is in a source checkout (it may not exist)."""
    return os.path.join(_SOURCE_DIR, EXAMPLES[name] + ".c")


def cache_dir() -> str:
    """Where libraries built on first use go (``$XDG_CACHE_HOME/tvm-ffi-abi``)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "tvm-ffi-abi")


def library_path(name: str = "example") -> str:
    """The path of a shipped example library, building it first if it is missing or stale."""
    if name not in EXAMPLES:
        raise CheckError(f"no example library {name!r} (there are: {', '.join(EXAMPLES)})")
    stem = EXAMPLES[name]
    try:
        installed = os.path.join(libinfo.library_dir(), f"libtvm_ffi_{stem}.so")
    except OSError as exc:
        raise CheckError(str(exc)) from None
    source = source_path(name)
    have_source = os.path.isfile(source)
    if os.path.isfile(installed) and (not have_source or
                                      os.path.getmtime(installed) >= os.path.getmtime(source)):
        return installed
    if not have_source:
        raise CheckError(f"the example library {installed} is missing and its source is not "
                         "available; reinstall the package (pip install .)")
    return build(source, stem)


def build(source: str, stem: str) -> str:
    """Compiles a C kernel source against this project's headers into the cache."""
    with open(source, "rb") as f:
        digest = hashlib.sha1(f.read() + libinfo.library_path().encode()).hexdigest()[:12]
    directory = cache_dir()
    target = os.path.join(directory, f"libtvm_ffi_{stem}-{digest}.so")
    if os.path.isfile(target):
        return target
    os.makedirs(directory, exist_ok=True)
    library_dir = libinfo.library_dir()
    command = shlex.split(os.environ.get("CC", "cc")) + [
        "-std=c99", "-pedantic", "-O2", "-fPIC", "-Wall", "-Wextra",
        "-I", libinfo.include_paths()[0], "-shared", source, "-L", library_dir, "-ltvm_ffi",
        f"-Wl,-rpath,{library_dir}", "-o", target + f".{os.getpid()}.tmp"]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise CheckError(f"building {source} failed:\n{' '.join(command)}\n{done.stderr}")
    os.replace(target + f".{os.getpid()}.tmp", target)
    return target
