"""The package a production image installs: a manylinux wheel, needing no compiler and only cffi.

The module builds once, as a release would: ``python -m build`` (the sdist, then the wheel
from the unpacked sdist, so the sdist is shown to build too), then ``auditwheel repair``. The
repaired wheel is installed into fresh virtual environments whose ``PATH`` holds no C or C++
compiler (and ``CC``/``CXX`` unset), where:

* with the wheel and cffi alone, both front ends import and run the example kernels on Python
  values, the drop-in (``TVM_FFI_IMPL=fast``) serves ``import tvm_ffi``, no NumPy or
  hypothesis module is loaded (neither is installed), and ``tvm-ffi-check`` says in one line
  which extra to install;
* with ``[check]`` (NumPy and hypothesis from PyPI), ``tvm-ffi-check`` passes the example
  library;
* beside upstream's ``apache-tvm-ffi``, installing and uninstalling ours leaves every file
  upstream's RECORD lists byte-identical.

Opt-in (it builds the project and downloads cffi, NumPy, hypothesis and apache-tvm-ffi into
scratch environments): ``TVM_FFI_ABI_WHEEL_TESTS=1``, which ``.ci/run`` sets.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(
    os.environ.get("TVM_FFI_ABI_WHEEL_TESTS") != "1",
    reason="opt-in: builds and repairs the wheel, installs it into fresh venvs from PyPI "
           "(TVM_FFI_ABI_WHEEL_TESTS=1; .ci/run sets it)")

#: Every library the build makes, as the wheel holds it.
BUILT = ("tvm_ffi_common/lib/libtvm_ffi.so", "tvm_ffi_common/lib/libtvm_ffi_example_kernels.so",
         "tvm_ffi_common/lib/libtvm_ffi_broken_kernels.so",
         "tvm_ffi_common/lib/libtvm_ffi_testing.so",
         "tvm_ffi_common/lib/libtvm_ffi_check_fault.so")
EXTENSIONS = ("tvm_ffi_fast/_core.", "tvm_ffi_common/_pycapi.")

#: Upstream, as the tests pin it.
UPSTREAM = "apache-tvm-ffi==0.1.15.post2"

COMPILERS = ("cc", "c++", "gcc", "g++", "clang", "clang++")


def _tools_env() -> dict:
    """The environment for build and auditwheel: this interpreter's bin first (patchelf)."""
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    return env


def _check(cmd, **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    assert done.returncode == 0, f"{cmd}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    # No -Werror here: this is the build a user gets.
    env = {k: v for k, v in _tools_env().items() if k != "TVM_FFI_ABI_WERROR"}
    _check([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)], env=env,
           timeout=900)
    return out


def _under_sanitizer() -> bool:
    """Whether this process runs under tools/sanitize.sh (libasan preloaded): then the job's CC
    builds the wheel with -fsanitize=address,undefined, so its libraries need libasan and
    libubsan."""
    with open("/proc/self/maps") as f:
        return "libasan" in f.read()


#: The sanitizer runtimes an instrumented build's libraries need. No manylinux wheel may carry
#: them and no release needs them: under the job they are left out of the repair (every process
#: the job starts preloads them), and anywhere else a wheel needing them fails.
SANITIZER_RUNTIMES = ("libasan.so.8", "libubsan.so.1")


@pytest.fixture(scope="module")
def repaired(dist) -> Path:
    (wheel,) = dist.glob("*.whl")
    exclude = [arg for name in SANITIZER_RUNTIMES for arg in ("--exclude", name)] \
        if _under_sanitizer() else []
    _check(["auditwheel", "repair", *exclude, "-w", str(dist / "repaired"), str(wheel)],
           env=_tools_env(), timeout=300)
    (fixed,) = (dist / "repaired").glob("*.whl")
    return fixed


class Venv:
    """A fresh virtual environment whose PATH has no compiler in it."""

    def __init__(self, path: Path):
        _check([sys.executable, "-m", "venv", str(path)], timeout=300)
        self.bin = path / "bin"
        self.env = {k: v for k, v in os.environ.items()
                    if k not in ("CC", "CXX", "TVM_FFI_IMPL", "PYTHONPATH")}
        self.env["PATH"] = str(self.bin)
        for compiler in COMPILERS:
            assert shutil.which(compiler, path=self.env["PATH"]) is None, compiler

    def run(self, *cmd, check=True, env=None, timeout=600) -> subprocess.CompletedProcess:
        """Runs ``cmd`` (a script of this venv's bin, or ``python``) outside the source tree."""
        full = [str(self.bin / cmd[0]), *cmd[1:]]
        done = subprocess.run(full, capture_output=True, text=True, cwd="/",
                              env=dict(self.env, **(env or {})), timeout=timeout)
        if check:
            assert done.returncode == 0, f"{cmd}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        return done

    def pip_install(self, *args) -> None:
        # Binary wheels only: nothing may need the compiler this environment lacks.
        self.run("python", "-m", "pip", "install", "-q", "--disable-pip-version-check",
                 "--only-binary", ":all:", *args)


def test_the_repaired_wheel_is_manylinux_and_holds_every_built_library(repaired, tmp_path):
    assert re.fullmatch(r"tvm_ffi_abi-[^-]+-cp\d+-cp\d+-manylinux_2_\d+_x86_64\.whl",
                        repaired.name), repaired.name
    with zipfile.ZipFile(repaired) as archive:
        names = archive.namelist()
        archive.extractall(tmp_path)
    for library in BUILT:
        assert library in names, library
    # Every module of every package (a package missing from the wheel hides behind an
    # editable install).
    for base in ("tvm_ffi_common", "tvm_ffi_api", "tvm_ffi_ref", "tvm_ffi_fast", "tvm_ffi_check",
                 "tvm_ffi_explain"):
        for directory, _, files in os.walk(ROOT / base):
            if "__init__.py" in files and "__pycache__" not in directory:
                package = Path(directory).relative_to(ROOT).as_posix()
                for name in files:
                    if name.endswith(".py"):
                        assert f"{package}/{name}" in names, f"{package}/{name}"
    for prefix in EXTENSIONS:
        assert any(n.startswith(prefix) and n.endswith(".so") for n in names), prefix
    assert "tvm_ffi_common/include/tvm/ffi/c_api.h" in names
    assert "tvm_ffi_common/include/tvm_ffi_abi/export.h" in names  # the C export macro
    # auditwheel grafted nothing: a renamed copy of libtvm_ffi.so would be a second runtime.
    assert not [n for n in names if ".libs/" in n], [n for n in names if ".libs/" in n]
    # The sources stay in the sdist, but for libtvm_ffi.so's, which the wheel carries where
    # `python -m tvm_ffi.config --sourcedir` points (upstream's wheel ships its src/ too).
    assert "tvm_ffi_common/src/dispatch.c" in names
    assert not [n for n in names if n.endswith((".c", ".o", ".cdef"))
                and not n.startswith("tvm_ffi_common/src/")]
    patchelf = shutil.which("patchelf", path=_tools_env()["PATH"])
    for name in [n for n in names if n.endswith(".so")]:
        rpath = _check([patchelf, "--print-rpath", str(tmp_path / name)]).stdout.strip()
        for entry in filter(None, rpath.split(":")):
            assert entry.startswith("$ORIGIN"), (name, rpath)
        needed = _check([patchelf, "--print-needed", str(tmp_path / name)]).stdout.split()
        # Under the sanitizer job the wheel is the instrumented build (what its venvs then run).
        assert set(SANITIZER_RUNTIMES) <= set(needed) if _under_sanitizer() else \
            not set(SANITIZER_RUNTIMES) & set(needed), (name, needed)
        if "libtvm_ffi.so" in needed or name.startswith("tvm_ffi_fast/_core"):
            # Resolved inside the package, under the SONAME kernels link against.
            assert "libtvm_ffi.so" in needed and rpath, (name, needed, rpath)


RUN_KERNELS = textwrap.dedent("""
    import os, sys
    import tvm_ffi_ref, tvm_ffi_fast
    from tvm_ffi_common import libinfo
    path = os.path.join(libinfo.library_dir(), "libtvm_ffi_example_kernels.so")
    for api in (tvm_ffi_fast, tvm_ffi_ref):
        kernels = api.load_module(path)
        print(api.__name__, kernels.add_int(40, 2), kernels.echo("a string longer than seven"),
              list(kernels.echo([1, 2.5, "abc"])))
    print("loaded:", sorted(m for m in sys.modules if m.split(".")[0] in ("numpy", "hypothesis")))
""")

DROP_IN = textwrap.dedent("""
    import os, tvm_ffi
    from tvm_ffi_common import libinfo
    kernels = tvm_ffi.load_module(os.path.join(libinfo.library_dir(),
                                               "libtvm_ffi_example_kernels.so"))
    print(tvm_ffi.__spec__.name, kernels.add_int(1, 2), tvm_ffi.Array([1, "x"]))
""")


def test_with_cffi_alone_no_compiler_both_front_ends_and_the_drop_in_run(repaired, tmp_path):
    venv = Venv(tmp_path / "venv")
    venv.pip_install(str(repaired))
    shown = venv.run("python", "-m", "pip", "show", "tvm-ffi-abi").stdout
    assert "Requires: cffi\n" in shown, shown
    listed = venv.run("python", "-m", "pip", "list", "--format=freeze").stdout
    assert not re.search(r"(?im)^(numpy|hypothesis)==", listed), listed

    out = venv.run("python", "-c", RUN_KERNELS).stdout.splitlines()
    assert out == ["tvm_ffi_fast 42 a string longer than seven [1, 2.5, 'abc']",
                   "tvm_ffi_ref 42 a string longer than seven [1, 2.5, 'abc']",
                   "loaded: []"], out
    out = venv.run("python", "-c", DROP_IN, env={"TVM_FFI_IMPL": "fast"}).stdout
    assert out.split(None, 2)[:2] == ["tvm_ffi_fast", "3"], out

    # A tool without its extra: one line that says what to install.
    for tool in ("tvm-ffi-check", "tvm-ffi-explain"):
        done = venv.run(tool, "[1]" if tool == "tvm-ffi-explain" else "--help", check=False)
        assert done.returncode != 0 and done.stdout == "", (tool, done)
        assert done.stderr.count("\n") == 1, done.stderr
        assert "pip install 'tvm-ffi-abi[check]'" in done.stderr, done.stderr

    # With [check], from PyPI: the checker passes the example library.
    venv.pip_install(f"{repaired}[check]")
    done = venv.run("tvm-ffi-check", "--examples", "20", "--no-progress", timeout=300)
    assert re.search(r"\d+ function\(s\) checked in .*: \d+ passed, 0 failed", done.stdout), \
        done.stdout


def _hashes(site: Path, record: Path) -> dict:
    """sha256 of each file ``record`` (a dist-info RECORD) lists, None for a missing one."""
    hashes = {}
    for line in record.read_text().splitlines():
        relative = line.rsplit(",", 2)[0]
        path = (site / relative).resolve()
        hashes[relative] = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() \
            else None
    return hashes


def test_installing_and_uninstalling_ours_leaves_upstreams_files_untouched(repaired, tmp_path):
    venv = Venv(tmp_path / "venv")
    venv.pip_install(UPSTREAM)
    site = Path(venv.run("python", "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"
                         ).stdout.strip())
    (record,) = site.glob("apache_tvm_ffi-*.dist-info/RECORD")
    before = _hashes(site, record)
    assert "../../../bin/tvm-ffi-stubgen" in before and before["../../../bin/tvm-ffi-stubgen"]

    venv.pip_install(str(repaired))
    assert _hashes(site, record) == before
    (ours,) = site.glob("tvm_ffi_abi-*.dist-info/RECORD")
    shared = set(_hashes(site, ours)) & set(before)
    assert not shared, shared
    venv.run("python", "-m", "pip", "uninstall", "-y", "-q", "tvm-ffi-abi")
    assert _hashes(site, record) == before
