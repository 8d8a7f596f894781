"""What `pip install .` promises: both packages import, report the ABI, and the demo runs."""

import os
import shutil
import subprocess
import sys

import pytest

from subprocess_utils import run_python


def test_both_packages_import_together_and_report_the_abi_version():
    out = run_python("""
    import tvm_ffi_ref, tvm_ffi_fast
    print(tvm_ffi_ref.abi_version(), tvm_ffi_fast.abi_version())
    print(tvm_ffi_ref.__version__ == tvm_ffi_fast.__version__)
    """)
    assert out.splitlines() == ["(0, 1, 16) (0, 1, 16)", "True"]


def test_headers_and_library_are_found():
    from tvm_ffi_common import libinfo

    assert os.path.isfile(libinfo.library_path())
    (include,) = libinfo.include_paths()
    for header in ("tvm/ffi/c_api.h", "tvm/ffi/extra/c_env_api.h", "dlpack/dlpack.h",
                   "tvm_ffi_runtime.h"):
        assert os.path.isfile(os.path.join(include, header)), header


def test_the_demo_runs_the_example_kernels():
    done = subprocess.run([sys.executable, "-m", "tvm_ffi_explain.demo"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "add_int(40, 2)" in done.stdout
    assert "result   01000000 00000000 2a00000000000000  Int 42" in done.stdout
    assert "raised   ValueError: bad input" in done.stdout


#: What a clone holds that the tree-shadowing check looks at (built pieces left out).
_CLONE_IGNORED = shutil.ignore_patterns("*.so", "lib", "include", "__pycache__", "*.egg-info",
                                        "build")


def _unbuilt_clone(tmp_path) -> str:
    """The source packages of this checkout, copied without anything built."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    clone = tmp_path / "clone"
    clone.mkdir()
    shutil.copy(os.path.join(root, "setup.py"), clone)
    shutil.copytree(os.path.join(root, "c_api", "include"), clone / "c_api" / "include")
    for package in ("tvm_ffi_common", "tvm_ffi_api", "tvm_ffi_ref", "tvm_ffi_fast"):
        shutil.copytree(os.path.join(root, package), clone / package, ignore=_CLONE_IGNORED)
    return str(clone)


def _from(cwd, *args, **env):
    base = {k: v for k, v in os.environ.items()
            if k not in ("PYTHONPATH", "TVM_FFI_IMPL", "PYTHONSAFEPATH")}
    if os.environ.get("SANITIZE_SRC"):
        # Under tools/sanitize.sh the package being tested is the job's instrumented copy, which
        # it puts on PYTHONPATH; the editable install beside it is the normal build.
        base["PYTHONPATH"] = os.environ["SANITIZE_SRC"]
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=cwd,
                          env=dict(base, **env), timeout=120)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="PYTHONSAFEPATH is Python 3.11's")
def test_from_an_unbuilt_clones_root_python_m_runs_the_installed_package(tmp_path):
    # From a clone's root, `python -m` finds the clone's unbuilt packages before the installed
    # ones; ours are run again without the clone on the path.
    clone = _unbuilt_clone(tmp_path)
    # What the installed package reports (the merged C/C++ include directory when upstream's
    # headers are installed), asked from outside the clone.
    include = _from(tmp_path, "-c", "from tvm_ffi_fast import libinfo; "
                    "print(libinfo.find_include_path())").stdout.strip()
    assert include, "the installed package reports no include directory"
    for module in ("tvm_ffi_ref.config", "tvm_ffi_fast.config"):
        done = _from(clone, "-m", module, "--cflags")
        assert done.returncode == 0, done.stderr
        assert f"-I{include}" in done.stdout.split(), (done.stdout, include)
    # Under the drop-in the installed tvm_ffi_common is imported at start-up, and the clone's
    # tvm_ffi_fast found next: the same.
    done = _from(clone, "-m", "tvm_ffi.config", "--cflags", TVM_FFI_IMPL="fast")
    assert done.returncode == 0 and f"-I{include}" in done.stdout.split(), done


def test_from_an_unbuilt_clones_root_anything_else_stops_in_one_line(tmp_path):
    clone = _unbuilt_clone(tmp_path)
    for args in (["-c", "import tvm_ffi_ref"], ["-m", "tvm_ffi_fast.config", "--cflags"]):
        # PYTHONSAFEPATH=1 with the clone on PYTHONPATH: no way past it.
        extra = {"PYTHONSAFEPATH": "1", "PYTHONPATH": clone} if args[0] == "-m" else {}
        done = _from(clone, *args, **extra)
        assert done.returncode == 1 and done.stdout == "", done
        assert done.stderr.count("\n") == 1, done.stderr
        assert "unbuilt source tree" in done.stderr and "pip install -e ." in done.stderr
