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
    done = subprocess.run([sys.executable, "-m", "tvm_ffi_explain.demo"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "add_int(40, 2)" in done.stdout
    assert "result   01000000 00000000 2a00000000000000  Int 42" in done.stdout
    assert "raised   ValueError: bad input" in done.stdout


def test_a_wheel_carries_every_package_and_the_built_libraries(tmp_path):
    # Editable installs hide a package missing from the wheel; build one and look.
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                           "-w", str(tmp_path), root], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    import zipfile

    (wheel,) = tmp_path.glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for base in ("tvm_ffi_common", "tvm_ffi_api", "tvm_ffi_ref", "tvm_ffi_fast", "tvm_ffi_check",
                 "tvm_ffi_explain"):
        for directory, _, files in os.walk(os.path.join(root, base)):
            if "__init__.py" in files and "__pycache__" not in directory:
                package = os.path.relpath(directory, root)
                for name in files:
                    if name.endswith(".py"):
                        assert f"{package}/{name}" in names, f"{package}/{name}"
    assert "tvm_ffi_common/lib/libtvm_ffi.so" in names
    assert "tvm_ffi_common/lib/libtvm_ffi_testing.so" in names
    assert "tvm_ffi_common/include/tvm/ffi/c_api.h" in names
    assert "tvm_ffi_common/include/tvm_ffi_abi/export.h" in names  # the C export macro
    assert any(n.startswith("tvm_ffi_fast/_core") for n in names)
