"""Where this installation's library, headers and build files are, by upstream's names.

Upstream's ``tvm_ffi.libinfo``, answering for this project: the
``libtvm_ffi.so`` kernels resolve their ``TVMFFI*`` symbols against, the C
headers they compile against, and our CMake package. The places themselves
are decided once, in :mod:`tvm_ffi_common.libinfo` (``library_path``,
``include_paths``): that is where headers added later (C++) must be found.

Also here, for other packages: :func:`load_lib_ctypes` and
:func:`load_lib_module` find a package's shared library by its target name
(``"my_kernels"`` -> ``libmy_kernels.so``) in the package's installed files,
in given directories, then in ``LD_LIBRARY_PATH`` and ``PATH``.
"""

from __future__ import annotations

import ctypes
import glob
import importlib.machinery
import importlib.util
import os
import sys
from pathlib import Path
from typing import Any, Callable, List, Optional, Union

from tvm_ffi_common import libinfo as _common

from .cpp import headers
from .cpp.headers import UPSTREAM_DISTRIBUTION, cxx_include_dir, find_upstream_cxx_include
from .module import load_module

#: The CMake target (and library base name) of the TVM FFI library itself.
_TVM_FFI_TARGET = "tvm_ffi"


def find_libtvm_ffi() -> str:
    """The absolute path of the ``libtvm_ffi.so`` this installation loads."""
    return str(Path(_common.library_path()).resolve())


def find_windows_implib() -> str:
    """The import library on Windows; this project builds for Linux only."""
    raise RuntimeError("Cannot find implib tvm_ffi.lib: this TVM FFI implementation has no "
                       "Windows build")


def find_include_path() -> str:
    """The directory to pass as ``-I`` for ``tvm/ffi/c_api.h`` and the other headers.

    With upstream's ``apache-tvm-ffi`` installed, a directory where its header-only C++ API
    (``tvm/ffi/function.h``, ...) resolves too, our C headers taking precedence
    (:func:`tvm_ffi_api.cpp.headers.cxx_include_dir` says how and why). Without it, our
    C headers' directory, after one line on stderr saying what to install for C++.
    """

    merged = headers.cxx_include_dir()
    if merged is None:
        _say_once(_missing_cxx_headers())
        return _c_include_path()
    return merged


def _c_include_path() -> str:
    return str(Path(_common.include_paths()[0]).resolve())


def _missing_cxx_headers() -> str:
    """The one line saying what to install for C++ (why the C++ headers were not found)."""

    try:
        headers.require_upstream_cxx_include("C++ code built against this package")
    except RuntimeError as error:
        return f"tvm_ffi: {error}".replace("\n", " ")
    return ""


_said: set = set()


def _say_once(line: str) -> None:
    if line and line not in _said:
        _said.add(line)
        sys.stderr.write(line + "\n")


def find_dlpack_include_path() -> str:
    """The directory holding ``dlpack/dlpack.h`` (the same one as :func:`find_include_path`:
    the headers ship together)."""

    merged = headers.cxx_include_dir()
    candidates = ([merged] if merged else []) + list(_common.include_paths())
    found = _resolve_and_validate([Path(p) for p in candidates],
                                  cond=lambda p: (p / "dlpack").is_dir())
    if found is None:
        raise RuntimeError("Cannot find dlpack include path.")
    return found


def find_python_helper_include_path() -> str:
    """The directory of ``tvm_ffi_python_helpers.h``, upstream's C++ glue for Python
    extensions over TVM FFI (its Cython core includes it).

    This project's cores are not built from it and do not ship it: as with the rest of
    upstream's C++ headers (:mod:`.cpp.headers`), a build asking for it is pointed at the
    installed ``apache-tvm-ffi``'s copy, read as a file, never imported.
    """

    # The merged C++ directory first: it links upstream's helper beside our C headers, so that
    # include_paths() stays the one directory find_include_path() gives.
    merged = cxx_include_dir()
    places = ([Path(merged)] if merged else []) + [Path(p) for p in _common.include_paths()]
    upstream = find_upstream_cxx_include()
    if upstream is not None:
        places.append(Path(upstream))
    found = _resolve_and_validate(places,
                                  cond=lambda p: (p / "tvm_ffi_python_helpers.h").is_file())
    if found is None:
        raise RuntimeError("Cannot find python helper include path: tvm_ffi_python_helpers.h "
                           "is upstream's header, which this package does not ship; install "
                           f"it with `pip install {UPSTREAM_DISTRIBUTION}` (only its header "
                           "files are read)")
    return found


def include_paths() -> List[str]:
    """Every include directory TVM FFI compilation needs, sorted (C and C++: see
    :func:`find_include_path`)."""
    paths = {find_include_path(), find_dlpack_include_path()}
    try:
        paths.add(find_python_helper_include_path())
    except RuntimeError:
        pass  # nothing to add: no kernel needs it to build against this project
    return sorted(paths)


def find_cmake_path() -> str:
    """The directory of ``tvm_ffi-config.cmake`` (``find_package(tvm_ffi)``)."""
    found = _resolve_and_validate([_rel_top_directory() / "cmake"],
                                  cond=lambda p: (p / "tvm_ffi-config.cmake").is_file())
    if found is None:
        raise RuntimeError("Cannot find cmake path.")
    return found


def find_source_path() -> str:
    """The folder whose ``src/`` holds the C sources of ``libtvm_ffi.so``: the installed
    package's (a wheel ships them, as upstream's does), or ``c_api`` of a source checkout."""
    found = _resolve_and_validate([_rel_top_directory(), _dev_top_directory() / "c_api"],
                                  cond=lambda p: (p / "src").is_dir())
    if found is None:
        raise RuntimeError("Cannot find home path: neither the installed package nor a source "
                           "checkout holds the C sources of libtvm_ffi.so (src/)")
    return found


def find_cython_lib() -> str:
    """The compiled Python core of this installation (``tvm_ffi_fast``'s extension module).

    Upstream answers with its Cython ``core`` extension; ours is the cffi-built
    ``tvm_ffi_fast._core`` (the reference front end is pure Python and has
    none). Found without importing anything.
    """
    spec = importlib.util.find_spec("tvm_ffi_fast")
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in folders:
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            for path in sorted(glob.glob(os.path.join(folder, "_core" + suffix))):
                return str(Path(path).resolve())
    raise RuntimeError("Cannot find tvm cython path: tvm_ffi_fast._core is not built")


# ------------------------------------------------------------ other packages' libraries


def load_lib_ctypes(package: str, target_name: str, mode: str,
                    extra_lib_paths: Optional[List[Path]] = None) -> ctypes.CDLL:
    """Loads ``lib<target_name>.so`` of ``package`` with ctypes (``mode``: ``"RTLD_GLOBAL"``
    or ``"RTLD_LOCAL"``). For the TVM FFI library itself, the one already loaded."""
    if target_name == _TVM_FFI_TARGET:
        return _common.load_library()
    path = _find_library_by_basename(package, target_name, extra_lib_paths)
    return ctypes.CDLL(str(path), getattr(ctypes, mode))


def load_lib_module(package: str, target_name: str, keep_module_alive: bool = True,
                    extra_lib_paths: Optional[List[Path]] = None) -> Any:
    """Loads ``lib<target_name>.so`` of ``package`` as a TVM FFI :class:`Module`."""

    path = _find_library_by_basename(package, target_name, extra_lib_paths)
    return load_module(str(path), keep_module_alive=keep_module_alive)


def _library_file_names(target_name: str) -> tuple:
    if sys.platform.startswith("win32"):
        return (f"{target_name}.dll",)
    if sys.platform.startswith("darwin"):
        return (f"lib{target_name}.dylib", f"lib{target_name}.so")
    return (f"lib{target_name}.so",)


def _find_library_by_basename(package: str, target_name: str,
                              extra_lib_paths: Optional[List[Path]] = None, *,
                              use_fallback_build_path: bool = True,
                              use_env_path: bool = True) -> Path:
    """The resolved path of ``package``'s library ``target_name``.

    Searched in order: the files the installed distribution ``package`` lists
    (its ``RECORD``), ``extra_lib_paths`` (each a :class:`pathlib.Path`), this
    installation's library directory (``use_fallback_build_path``), then
    ``LD_LIBRARY_PATH`` and ``PATH`` (``use_env_path``). The TVM FFI library
    itself (``target_name="tvm_ffi"``) is always this installation's. Raises
    ``RuntimeError`` listing the directories searched.
    """
    if extra_lib_paths is not None:
        for i, path in enumerate(extra_lib_paths):
            if not isinstance(path, Path):
                raise TypeError(f"extra_lib_paths[{i}] must be a pathlib.Path, got "
                                f"{type(path).__name__}: {path!r}")
    if target_name == _TVM_FFI_TARGET:
        return Path(find_libtvm_ffi())
    names = _library_file_names(target_name)
    recorded = _recorded_library(package, names)
    if recorded is not None:
        return recorded
    folders: List[Path] = list(extra_lib_paths or [])
    if use_fallback_build_path:
        folders.append(Path(_common.library_dir()))
    if use_env_path:
        folders += [Path(p) for p in _split_env_var("LD_LIBRARY_PATH", ":")]
        folders += [Path(p) for p in _split_env_var("PATH", os.pathsep)]
    for folder in folders:
        for name in names:
            try:
                candidate = (folder / name).resolve()
                if candidate.is_file():
                    return candidate
            except OSError:
                continue
    raise RuntimeError(f"Cannot find library {', '.join(names)}; searched directories:\n  " +
                       "\n  ".join(str(p) for p in folders))


def _recorded_library(package: str, names: tuple) -> Optional[Path]:
    # The installed distribution's own list of files: the reliable place for a wheel.
    import importlib.metadata  # (slow to import: only when a library is looked for)

    try:
        distribution = importlib.metadata.distribution(package)
        for entry in distribution.files or []:
            if entry.name in names:
                path = Path(distribution.locate_file(entry)).resolve()
                if path.is_file():
                    return path
    except (importlib.metadata.PackageNotFoundError, OSError):
        pass
    return None


def _split_env_var(env_var: str, split: str) -> List[str]:
    """The non-empty entries of the environment variable ``env_var``, split at ``split``."""
    value = os.environ.get(env_var)
    return [p.strip() for p in value.split(split)] if value else []


def _rel_top_directory() -> Path:
    """The folder of this installation's shared pieces (``tvm_ffi_common``)."""
    return Path(_common.__file__).parent


def _dev_top_directory() -> Path:
    """The top of the source checkout this installation runs from (if it is one)."""
    return _rel_top_directory().parent


def _resolve_and_validate(paths: List[Path], cond: Callable[[Path], Union[bool, Path]]
                          ) -> Optional[str]:
    """The first of ``paths``, resolved, that ``cond`` accepts (``True``, or a
    :class:`~pathlib.Path` to answer instead), as a str; None when none is accepted."""
    for path in paths:
        try:
            resolved = path.resolve()
            verdict = cond(resolved)
        except (OSError, AssertionError):
            continue
        if isinstance(verdict, Path):
            return str(verdict)
        if verdict is True:
            return str(resolved)
    return None
