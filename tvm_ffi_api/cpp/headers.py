"""The header directories a build compiles against: ours, and upstream's C++ API.

This project ships the C ABI as C headers (``tvm/ffi/c_api.h``,
``tvm/ffi/extra/c_env_api.h``, ``dlpack/dlpack.h``): a C kernel needs nothing
else. Upstream's header-only C++ API (``tvm/ffi/function.h``, the
``TVM_FFI_DLL_EXPORT_TYPED_FUNC`` macros, ``TensorView``, the containers) is
not ours to ship; a C++ kernel written against it compiles with the headers of
an installed ``apache-tvm-ffi``, found here on disk without importing that
package (importing it would load its runtime next to ours). Our directory
comes first, so the C declarations are ours; the C++ headers only add inline
code over that same C ABI, and the library links against our
``libtvm_ffi.so``.
"""

from __future__ import annotations

import functools
import importlib.machinery
import os
import re
import shutil
import tempfile
from typing import Dict, List, Optional, Tuple

from tvm_ffi_common import libinfo

from .build_cache import cache_root, content_hash

#: The distribution whose headers C++ sources need, pinned to the ABI we implement.
UPSTREAM_DISTRIBUTION = "apache-tvm-ffi==0.1.15.post2"

#: A header only the C++ API has: its presence marks a usable include directory.
_CXX_MARKER = os.path.join("tvm", "ffi", "function.h")

_VERSION_LINE = re.compile(r"#define\s+TVM_FFI_VERSION_(MAJOR|MINOR)\s+(\d+)")


def our_include_paths() -> List[str]:
    """The directories holding this project's C headers (``-I`` for every build)."""
    return list(libinfo.include_paths())


@functools.lru_cache(maxsize=None)
def find_upstream_cxx_include() -> Optional[str]:
    """The ``include`` directory of an installed ``apache-tvm-ffi``, or None.

    Located through the import path (``PathFinder``, which sees the package
    on disk even while ``import tvm_ffi`` is redirected to ours), never
    imported. The directory must hold the C++ API (``tvm/ffi/function.h``).
    """
    spec = importlib.machinery.PathFinder.find_spec("tvm_ffi")
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        candidate = os.path.join(folder, "include")
        if os.path.isfile(os.path.join(candidate, _CXX_MARKER)):
            return os.path.abspath(candidate)
    return None


def _header_version(include_dir: str) -> Optional[Tuple[int, int]]:
    """``(major, minor)`` of the ``c_api.h`` under ``include_dir`` (None if unreadable)."""
    try:
        with open(os.path.join(include_dir, "tvm", "ffi", "c_api.h"), encoding="utf-8") as f:
            found = dict(m.groups() for m in _VERSION_LINE.finditer(f.read()))
        return int(found["MAJOR"]), int(found["MINOR"])
    except (OSError, KeyError, ValueError):
        return None


def missing_cxx_api_message(why: str) -> str:
    """The error text for a C++ build that needs upstream's C++ headers and has none."""
    return (f"{why} needs the TVM FFI C++ API headers (tvm/ffi/function.h, "
            "TVM_FFI_DLL_EXPORT_TYPED_FUNC, TensorView, ...), which this package does not "
            f"ship. Install them with `pip install {UPSTREAM_DISTRIBUTION}`: only its "
            "header files are used, the library still links against and runs on this "
            "package's libtvm_ffi.so.")


def require_upstream_cxx_include(why: str) -> str:
    """:func:`find_upstream_cxx_include`, or ``RuntimeError`` saying what to install.

    Also refuses headers of another ABI major/minor version than ours: their
    inline code would assume layouts this runtime does not have.
    """
    found = find_upstream_cxx_include()
    if found is None:
        raise RuntimeError(missing_cxx_api_message(why))
    theirs, ours = _header_version(found), _header_version(our_include_paths()[0])
    if theirs is not None and ours is not None and theirs != ours:
        raise RuntimeError(
            f"the TVM FFI C++ headers in {found} are for ABI {theirs[0]}.{theirs[1]}, this "
            f"package implements {ours[0]}.{ours[1]}; install `{UPSTREAM_DISTRIBUTION}`")
    return found


def _header_files(root: str) -> Dict[str, str]:
    """Every file under ``root``: its path relative to ``root`` -> its absolute path."""
    found = {}
    for folder, _, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            found[os.path.relpath(path, root)] = os.path.abspath(path)
    return found


def cxx_include_dir() -> Optional[str]:
    """One ``-I`` directory for C++ against this package, or None without upstream's headers.

    Build tools often take a single include directory (``libinfo.find_include_path()``,
    flashinfer's JIT); C++ written against upstream needs ``tvm/ffi/function.h`` and the
    rest of its header-only API there. This directory holds symbolic links: to OUR file
    for every header this package ships (``tvm/ffi/c_api.h``, ``tvm/ffi/extra/c_env_api.h``,
    ``dlpack/dlpack.h``, ...), and to upstream's for every other. Our C headers win
    because they describe the library the build links against and runs on (our
    ``libtvm_ffi.so``): a C unit built with ``--cflags`` and a C++ unit built with
    ``--cxxflags`` then see one and the same ``c_api.h``, and were upstream's headers to
    declare something our library lacks, the build would fail at compile time, naming it,
    not at load time. Upstream's C++ headers only add inline code over that C ABI, and
    :func:`require_upstream_cxx_include` refuses them for another ABI version.

    Made once under ``<cache>/include/<hash of the file lists>`` (``$TVM_FFI_CACHE_DIR``,
    default ``~/.cache/tvm-ffi``), atomically, so a reinstall of either package yields a
    new directory; when the cache cannot be written, upstream's own directory is returned
    (the same ABI, checked, with its copy of the C headers).

    The answer is remembered per process, keyed on the header trees' locations and stamps
    (:func:`_stamp`) and the cache root, so ``libinfo.include_paths()`` (which asks three
    times) walks the trees once; a reinstall, another cache root or a deleted directory
    makes it look again (a header added deep inside a tree in place is seen by the next
    process).
    """
    try:
        upstream = require_upstream_cxx_include("a C++ include path")
    except RuntimeError:
        return None

    key = (cache_root(),) + tuple(_stamp(root) for root in [upstream] + our_include_paths())
    known = _MERGED.get(key)
    if known is not None and os.path.isdir(known):
        return known
    merged = _make_cxx_include_dir(upstream)
    if merged != upstream:  # the fallback is not remembered: a later call retries the cache
        _MERGED[key] = merged
    return merged


#: cxx_include_dir's answers, by where the header trees and the cache are (see _stamp).
_MERGED: Dict[tuple, str] = {}


def _stamp(root: str) -> tuple:
    """What identifies an installed header tree without walking it: its path, and its top
    directory's inode and change time (installing, upgrading or removing the package
    replaces or changes that directory); a tree that vanished stamps as missing."""
    try:
        info = os.stat(root)
    except OSError:
        return (root, None)
    return (root, info.st_ino, info.st_mtime_ns, info.st_ctime_ns)


def _make_cxx_include_dir(upstream: str) -> str:
    """The merged directory for ``upstream``'s C++ headers and ours (walks both trees)."""
    links = _header_files(upstream)
    for ours in reversed(our_include_paths()):  # the first of our directories wins
        links.update(_header_files(ours))

    target = os.path.join(cache_root(), "include", content_hash(sorted(links.items())))
    if os.path.isdir(target):
        return target
    try:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        staging = tempfile.mkdtemp(prefix=".staging-", dir=os.path.dirname(target))
        for relative, source in links.items():
            link = os.path.join(staging, relative)
            os.makedirs(os.path.dirname(link), exist_ok=True)
            os.symlink(source, link)
        try:
            os.rename(staging, target)
        except OSError:  # another process made it first
            shutil.rmtree(staging, ignore_errors=True)
    except OSError:
        return upstream
    return target


def include_paths(cxx: bool) -> List[str]:
    """``-I`` directories for a build: ours, then (for C++/CUDA) upstream's C++ API if installed."""
    paths = our_include_paths()
    if cxx:
        upstream = find_upstream_cxx_include()
        if upstream is not None and upstream not in paths:
            paths.append(upstream)
    return paths


def mentions_missing_tvm_header(compiler_output: str) -> bool:
    """Whether a failed compile's text says a ``tvm/ffi/...`` header was not found."""
    return re.search(r"tvm/ffi/[\w/.]+\.h[^\n]*(No such file|not found)", compiler_output) is not None
