"""Shared fixtures: where upstream's package lives (found, never imported here)."""

from __future__ import annotations

import importlib.util
import os

import pytest

#: The upstream release whose ABI this project targets.
UPSTREAM_VERSION = "0.1.15.post2"


def upstream_package_dir() -> str:
    """The directory of the installed ``tvm_ffi`` package, located without importing it.

    Importing it would load upstream's libtvm_ffi.so into the test process next
    to ours; tests that run upstream code do so in a subprocess.
    """
    spec = importlib.util.find_spec("tvm_ffi")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(
            f"apache-tvm-ffi=={UPSTREAM_VERSION} is a test dependency and is not installed; "
            "run: pip install -e '.[test]'"
        )
    return list(spec.submodule_search_locations)[0]


@pytest.fixture(scope="session")
def upstream_dir() -> str:
    """The installed upstream ``tvm_ffi`` package directory."""
    return upstream_package_dir()


@pytest.fixture(scope="session")
def upstream_include(upstream_dir) -> str:
    """Upstream's header directory (holds tvm/ffi/c_api.h and dlpack/dlpack.h)."""
    path = os.path.join(upstream_dir, "include")
    assert os.path.isfile(os.path.join(path, "tvm", "ffi", "c_api.h")), path
    return path


@pytest.fixture(scope="session")
def upstream_library(upstream_dir) -> str:
    """Upstream's libtvm_ffi.so."""
    path = os.path.join(upstream_dir, "lib", "libtvm_ffi.so")
    assert os.path.isfile(path), path
    return path


class KernelBuilder:
    """Compiles test kernel libraries the way a third party would, caching by source.

    C++ sources compile against upstream's headers (C++17, linked to upstream's
    libtvm_ffi.so, so the result names libtvm_ffi.so as NEEDED); C sources
    compile against ours (C99). Either loads under any runtime, because the
    dynamic loader binds libtvm_ffi.so to whichever library of that name the
    process loaded first.
    """

    def __init__(self, directory: str, upstream: str):
        self.directory = directory
        self.upstream = upstream

    def build(self, name: str, source: str, language: str = "c++", extra_flags=()) -> str:
        """Compiles ``source`` into ``lib<name>.so`` (once per session) and returns its path."""
        import fcntl
        import hashlib

        digest = hashlib.sha1((language + source + repr(extra_flags)).encode()).hexdigest()[:12]
        target = os.path.join(self.directory, f"lib{name}-{digest}.so")
        if os.path.exists(target):
            return target
        os.makedirs(self.directory, exist_ok=True)
        # Another session (an xdist worker, the PyPy job) may build the same kernel into the
        # same directory: one builds it under the lock, the other then finds it.
        with open(target + ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not os.path.exists(target):
                self._compile(name, source, language, extra_flags, target, digest)
        return target

    def _compile(self, name, source, language, extra_flags, target, digest) -> None:
        import subprocess

        from tvm_ffi_common import libinfo

        suffix = ".cc" if language == "c++" else ".c"
        src = os.path.join(self.directory, f"{name}-{digest}{suffix}")
        with open(src, "w") as f:
            f.write(source)
        if language == "c++":
            cmd = [os.environ.get("CXX", "c++"), "-std=c++17", "-O1",
                   f"-I{os.path.join(self.upstream, 'include')}",
                   f"-L{os.path.join(self.upstream, 'lib')}", "-ltvm_ffi"]
        else:
            cmd = [os.environ.get("CC", "cc"), "-std=c99", "-pedantic", "-O1",
                   f"-I{libinfo.include_paths()[0]}", f"-L{libinfo.library_dir()}", "-ltvm_ffi"]
        cmd = [cmd[0], "-shared", "-fPIC", "-Wall", src, "-o", target + ".tmp", *cmd[1:], *extra_flags]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise AssertionError(f"kernel {name} failed to compile:\n{' '.join(cmd)}\n{done.stderr}")
        os.replace(target + ".tmp", target)


#: Test files that take minutes (each already runs two processes at a time): first in the run,
#: so that pytest-xdist's other worker takes the short files meanwhile, instead of one worker
#: finishing a long file alone at the end.
LONG_FILES = ("test_upstream_suite_subset.py", "test_stress.py", "test_wheel.py")


def pytest_collection_modifyitems(items):
    """Moves the tests of ``LONG_FILES`` first, longest first (the order is otherwise kept)."""
    order = {name: rank for rank, name in enumerate(LONG_FILES)}
    items.sort(key=lambda item: order.get(item.path.name, len(LONG_FILES)))


def shared_temp_dir(tmp_path_factory, name: str) -> str:
    """A temporary directory for build caches, one per test run: under pytest-xdist, the
    workers share it (their own temporary roots sit in one run root), so each kernel or C++
    build happens once per run, not once per worker (the builders lock what they build)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        path = tmp_path_factory.getbasetemp().parent / name
        path.mkdir(exist_ok=True)
        return str(path)
    return str(tmp_path_factory.mktemp(name))


@pytest.fixture(scope="session")
def kernels(tmp_path_factory, upstream_dir) -> KernelBuilder:
    """Builds test kernel libraries: ``kernels.build(name, source, language="c++")``.

    ``TVM_FFI_KERNEL_DIR=dir`` keeps them in ``dir`` (cached by source) for a later session:
    .ci/run's PyPy job reuses the ones its CPython run built."""
    directory = os.environ.get("TVM_FFI_KERNEL_DIR")
    if directory:
        os.makedirs(directory, exist_ok=True)
    return KernelBuilder(directory or shared_temp_dir(tmp_path_factory, "kernels"), upstream_dir)


@pytest.fixture(scope="session")
def cpp_cache_dir(tmp_path_factory) -> str:
    """A ``TVM_FFI_CACHE_DIR`` shared by the session's tvm_ffi.cpp builds (each C++ build,
    slow on two cores, then happens once per session; see ``cpp_demo.py``)."""
    return shared_temp_dir(tmp_path_factory, "tvm-ffi-cache")
