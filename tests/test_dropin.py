"""``import tvm_ffi`` served by ours (TVM_FFI_IMPL), and ours beside upstream's.

Every case runs in a fresh interpreter: which runtime serves the process is
process state, and the drop-in is installed at start-up by the .pth file that
``pip install`` puts in site-packages.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest


def _run(code: str, impl=None):
    env = dict(os.environ)
    env.pop("TVM_FFI_IMPL", None)
    if impl is not None:
        env["TVM_FFI_IMPL"] = impl
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, timeout=120, cwd=os.path.dirname(__file__))


@pytest.mark.parametrize("impl,package", [("fast", "tvm_ffi_fast"), ("ref", "tvm_ffi_ref")])
def test_tvm_ffi_and_its_submodules_are_ours_under_the_variable(impl, package):
    done = _run(f"""
    import tvm_ffi, tvm_ffi.container, {package}
    from tvm_ffi.container import Array
    print(tvm_ffi is {package}, tvm_ffi.container is {package}.container, Array is {package}.Array)
    print(tvm_ffi.runtime_name(), list(tvm_ffi.convert([1, 2])))
    try:
        import tvm_ffi.no_such_module
    except ModuleNotFoundError as error:
        print(error.name)
    """, impl)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["True True True", f"{package} [1, 2]",
                                        "tvm_ffi.no_such_module"]


def test_without_the_variable_tvm_ffi_is_upstreams():
    done = _run("import tvm_ffi, sys; print(tvm_ffi.__name__, 'tvm_ffi_fast' in sys.modules)")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["tvm_ffi", "False"]


def test_an_unknown_value_is_reported_and_leaves_tvm_ffi_alone():
    done = _run("import tvm_ffi; print(tvm_ffi.__name__)", "turbo")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "tvm_ffi"
    assert "TVM_FFI_IMPL='turbo' is not one of ['fast', 'ref']" in done.stderr


def _dropin_pth() -> str:
    import site

    for directory in site.getsitepackages():
        path = os.path.join(directory, "tvm_ffi_abi_dropin.pth")
        if os.path.isfile(path):
            return path
    raise AssertionError(f"tvm_ffi_abi_dropin.pth is in none of {site.getsitepackages()}")


def test_site_packages_processed_twice_warns_once():
    # Start-up ran the .pth once; processing its directory again (as a venv whose prefix is
    # also a site directory does) and executing its line by hand run it twice more.
    pth = _dropin_pth()
    done = _run(f"""
    import site
    site.addsitedir({os.path.dirname(pth)!r}, set())
    exec(open({pth!r}).read())
    import tvm_ffi
    print(tvm_ffi.__name__)
    """, "turbo")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "tvm_ffi"
    assert done.stderr.count("TVM_FFI_IMPL='turbo' is not one of") == 1, done.stderr


def test_site_packages_processed_twice_installs_the_drop_in_once():
    pth = _dropin_pth()
    done = _run(f"""
    import site, sys
    site.addsitedir({os.path.dirname(pth)!r}, set())
    from tvm_ffi_common import dropin
    import tvm_ffi
    print(tvm_ffi.__spec__.name, sum(isinstance(f, dropin._DropIn) for f in sys.meta_path))
    """, "fast")
    assert done.returncode == 0, done.stderr
    # (the spec names the package that serves tvm_ffi; __name__ is upstream's, 'tvm_ffi')
    assert done.stdout.split() == ["tvm_ffi_fast", "1"]


@pytest.mark.parametrize("ours", ["tvm_ffi_fast", "tvm_ffi_ref"])
def test_upstream_after_ours_is_refused_but_still_found(ours):
    done = _run(f"""
    import importlib.util, {ours}
    assert importlib.util.find_spec("tvm_ffi").submodule_search_locations
    try:
        import tvm_ffi
    except ImportError as error:
        print(error)
    print({ours}.Array([1])[0])
    """)
    assert done.returncode == 0, done.stderr
    assert "two runtimes cannot share one process" in done.stdout
    assert "TVM_FFI_IMPL=" in done.stdout
    assert done.stdout.splitlines()[-1] == "1"


@pytest.mark.parametrize("ours", ["tvm_ffi_fast", "tvm_ffi_ref"])
def test_ours_after_upstream_is_refused(ours):
    done = _run(f"""
    import tvm_ffi
    try:
        import {ours}
    except ImportError as error:
        print(error)
    print(tvm_ffi.Array([1])[0])
    """)
    assert done.returncode == 0, done.stderr
    assert f"cannot import {ours}: upstream's tvm_ffi" in done.stdout
    assert done.stdout.splitlines()[-1] == "1"


def test_ours_is_refused_when_another_libtvm_ffi_serves_the_symbols(upstream_library):
    # No Python package involved: a library loaded globally first would be what kernels reach.
    done = _run(f"""
    import ctypes
    ctypes.CDLL({upstream_library!r}, mode=ctypes.RTLD_GLOBAL)
    try:
        import tvm_ffi_fast
    except ImportError as error:
        print(error)
    """)
    assert done.returncode == 0, done.stderr
    assert "another libtvm_ffi.so" in done.stdout and upstream_library in done.stdout


@pytest.mark.parametrize("impl,package", [("fast", "tvm_ffi_fast"), ("ref", "tvm_ffi_ref")])
def test_name_and_version_are_upstreams_under_the_variable(impl, package):
    # Code written for upstream reads tvm_ffi.__name__ and checks tvm_ffi.__version__ (a
    # minimum version, a cache key): both are upstream's; the project's own version stays
    # readable as __impl_version__, and the package's spec still says which it really is.
    done = _run(f"""
    import importlib.metadata, tvm_ffi, tvm_ffi_common
    print(tvm_ffi.__name__, tvm_ffi.__spec__.name, tvm_ffi.container.__name__)
    print(tvm_ffi.__version__ == importlib.metadata.version("apache-tvm-ffi"),
          tvm_ffi.__version_tuple__, tvm_ffi.__impl_version__ == tvm_ffi_common.__version__)
    import {package}  # the same module, importable by its own name too
    print({package} is tvm_ffi)
    """, impl)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"tvm_ffi {package} {package}.container",
                                        "True (0, 1, 15, 'post2') True", "True"]


def test_without_the_variable_our_package_keeps_its_name():
    done = _run("import tvm_ffi_fast; print(tvm_ffi_fast.__name__, tvm_ffi_fast.__version__)")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["tvm_ffi_fast", "0.1.15.post2"]
