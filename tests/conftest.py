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
