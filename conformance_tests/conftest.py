"""Fixtures of the conformance suite: kernels, worker pool, profile selection.

``pytest --thorough`` runs 50 times the CI examples (see ``profiles.py``).
The kernels are compiled once per session against upstream's headers with
the project's ``KernelBuilder`` (``tests/conftest.py``, loaded by path so
that its module name cannot collide with this conftest).
"""

from __future__ import annotations

import importlib.util
import os
from concurrent.futures import ThreadPoolExecutor

import pytest

from . import config as suite_config

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
#: Kernel name -> source, relative to ``kernels/``; the structural types are the unit
#: tests' own kernel (one source for both suites).
KERNEL_SOURCES = {"probe": "probe.cc", "calls": "calls.cc", "environment": "environment.cc",
                  "structural": os.path.join("..", "..", "tests", "kernels", "structural.cc")}


def pytest_addoption(parser):
    group = parser.getgroup("conformance")
    group.addoption("--thorough", action="store_true", default=False,
                    help="conformance_tests: run 50 times the CI number of hypothesis examples")


def pytest_configure(config):
    # Read before the test modules are imported, so every @conformance budget sees it.
    suite_config.THOROUGH = bool(config.getoption("--thorough", default=False))


def pytest_report_header(config):
    from . import profiles
    return [f"conformance: front ends {', '.join(suite_config.FRONTENDS)} vs upstream, "
            f"hypothesis profile {profiles.profile_name()}"]


def _tests_conftest():
    """``tests/conftest.py`` as a module of its own name (KernelBuilder, upstream_package_dir)."""
    spec = importlib.util.spec_from_file_location("_tvm_ffi_tests_conftest",
                                                  os.path.join(ROOT, "tests", "conftest.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def conformance_kernels(tmp_path_factory):
    """The conformance kernels, compiled once: name -> library path."""
    shared = _tests_conftest()
    # CONFORMANCE_KERNEL_DIR reuses a directory of already compiled kernels (the
    # mutation test hands its own to the suites it runs); builds are cached by source.
    directory = os.environ.get("CONFORMANCE_KERNEL_DIR") or shared.shared_temp_dir(
        tmp_path_factory, "conformance-kernels")
    builder = shared.KernelBuilder(directory, shared.upstream_package_dir())

    def build(item):
        name, filename = item
        with open(os.path.join(HERE, "kernels", filename)) as f:
            return name, builder.build(f"conformance_{name}", f.read())

    with ThreadPoolExecutor(max_workers=2) as executor:  # CI machines have two cores
        return dict(executor.map(build, KERNEL_SOURCES.items()))


@pytest.fixture(scope="session")
def pool(conformance_kernels):
    """One long-lived worker per front end (upstream first), shared by every test."""
    from .workers import Pool

    workers = Pool([suite_config.ORACLE] + list(suite_config.FRONTENDS), conformance_kernels)
    yield workers
    workers.close()
