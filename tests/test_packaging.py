"""What `pip install .` promises: both packages import, report the ABI, and the demo runs."""

import os
import subprocess
import sys

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
    done = subprocess.run([sys.executable, "-m", "tvm_ffi_ref.demo"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "add_int(40, 2)" in done.stdout
    assert "result   01000000 00000000 2a00000000000000  Int 42" in done.stdout
    assert "raised   ValueError: bad input" in done.stdout
