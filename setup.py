"""Build of the whole project: ``pip install .`` (or ``pip install -e .``).

Besides the Python packages this builds, with a C compiler (C++ for one library):

* ``tvm_ffi_common/lib/libtvm_ffi.so`` from ``c_api/src`` (SONAME libtvm_ffi.so),
* ``tvm_ffi_common/lib/libtvm_ffi_example_kernels.so``, the example kernel
  library, and ``libtvm_ffi_broken_kernels.so``, one that breaks each rule
  ``tvm-ffi-check`` checks, from ``examples/kernels`` (C, against
  ``c_api/include``),
* ``tvm_ffi_common/lib/libtvm_ffi_testing.so``, the testing kernel library
  (upstream's ``testing.*`` functions and types) from ``c_api/testing`` (C++17,
  against ``c_api/include``; the one piece that needs a C++ compiler),
* ``tvm_ffi_common/lib/libtvm_ffi_check_fault.so``, tvm-ffi-check's fault
  reporter (``tvm_ffi_check/fault_report.c``),
* ``tvm_ffi_fast._core``, the cffi extension, linked against the former,
* ``tvm_ffi_common._pycapi``, the Python C API calls of ``tvm_ffi_common.pycapi`` (an
  extension module, so that they work on CPython and PyPy alike),

and copies ``c_api/include`` into ``tvm_ffi_common/include`` for kernel authors (and
``c_api/src`` into ``tvm_ffi_common/src``, what ``config --sourcedir`` reports),
and ``tvm_ffi_abi_dropin.pth`` into ``site-packages`` (see ``DROPIN_PTH``).
"""

import glob
import os
import shlex
import shutil
import subprocess

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py
from setuptools.command.editable_wheel import editable_wheel

ROOT = os.path.dirname(os.path.abspath(__file__))
INCLUDE_DIR = os.path.join(ROOT, "c_api", "include")
#: Set to 1 by this project's CI (.ci/run) to make every warning an error. A user's build never
#: gets -Werror: a newer compiler's new warning must not break ``pip install`` of the sdist.
WERROR_ENV = "TVM_FFI_ABI_WERROR"
CFLAGS = ["-O2", "-fPIC", "-Wall", "-Wextra"] + (
    ["-Werror"] if os.environ.get(WERROR_ENV, "") == "1" else [])


def _cc():
    return shlex.split(os.environ.get("CC", "cc"))


def _run(cmd):
    print(" ".join(cmd))
    subprocess.check_call(cmd)


def build_libtvm_ffi(lib_dir, build_temp):
    """Compiles c_api/src into lib_dir/libtvm_ffi.so with SONAME libtvm_ffi.so.

    The C files are the C ABI; the C++ files (cxx_*.cc) are the C++ symbols upstream's
    library defines out of line, so the whole is linked as C++. Objects go to build_temp
    (setuptools' build folder), never into the source tree.
    """
    src = os.path.join(ROOT, "c_api", "src")
    build_dir = os.path.join(build_temp, "libtvm_ffi_objects")
    os.makedirs(build_dir, exist_ok=True)
    objects = []
    for source in sorted(glob.glob(os.path.join(src, "*.c"))):
        objects.append(os.path.join(build_dir, os.path.basename(source) + ".o"))
        _run(_cc() + ["-std=gnu11", *CFLAGS, "-fvisibility=hidden", "-I", INCLUDE_DIR, "-c",
                      source, "-o", objects[-1]])
    for source in sorted(glob.glob(os.path.join(src, "*.cc"))):
        objects.append(os.path.join(build_dir, os.path.basename(source) + ".o"))
        _run(_cxx() + ["-std=c++17", *CFLAGS, "-fvisibility=hidden",
                       "-fvisibility-inlines-hidden", "-I", INCLUDE_DIR, "-c", source, "-o",
                       objects[-1]])
    _run(_cxx() + ["-shared", *objects, "-Wl,-soname,libtvm_ffi.so", "-lpthread", "-o",
                   os.path.join(lib_dir, "libtvm_ffi.so")])


#: The example kernel libraries (examples/kernels/<stem>.c -> lib/libtvm_ffi_<stem>.so).
EXAMPLE_KERNELS = ("example_kernels", "broken_kernels")


def example_kernel_builder(stem):
    """The builder of one example kernel library, compiled as a third party would: C99,
    linked to libtvm_ffi."""

    def build_example_kernels(lib_dir, build_temp):
        source = os.path.join(ROOT, "examples", "kernels", f"{stem}.c")
        output = os.path.join(lib_dir, f"libtvm_ffi_{stem}.so")
        _run(_cc() + ["-std=c99", "-pedantic", *CFLAGS, "-I", INCLUDE_DIR, "-shared", source,
                      "-L", lib_dir, "-ltvm_ffi", "-Wl,-rpath,$ORIGIN", "-o", output])

    return build_example_kernels


def _cxx():
    return shlex.split(os.environ.get("CXX", "c++"))


def build_testing_library(lib_dir, build_temp):
    """Compiles c_api/testing (C++17 against c_api/include) into lib_dir/libtvm_ffi_testing.so.

    The sources are compiled in parallel, then linked against libtvm_ffi.
    """
    from concurrent.futures import ThreadPoolExecutor

    sources = sorted(glob.glob(os.path.join(ROOT, "c_api", "testing", "*.cc")))
    build_dir = os.path.join(build_temp, "testing_objects")
    os.makedirs(build_dir, exist_ok=True)
    objects = [os.path.join(build_dir, os.path.basename(s)[:-3] + ".o") for s in sources]
    flags = ["-std=c++17", *CFLAGS, "-fvisibility=hidden", "-I", INCLUDE_DIR]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        list(pool.map(lambda so: _run(_cxx() + flags + ["-c", so[0], "-o", so[1]]),
                      zip(sources, objects)))
    _run(_cxx() + ["-shared", *objects, "-L", lib_dir, "-ltvm_ffi", "-Wl,-rpath,$ORIGIN",
                   "-o", os.path.join(lib_dir, "libtvm_ffi_testing.so")])


#: tvm-ffi-check's fault reporter (tvm_ffi_check/fault_report.c): a SIGSEGV handler in C that
#: records the faulting address for the checker's guard pages.
FAULT_REPORTER = "libtvm_ffi_check_fault.so"


def build_fault_reporter(lib_dir, build_temp):
    """Compiles tvm_ffi_check/fault_report.c into lib_dir (it needs no TVM FFI header)."""
    source = os.path.join(ROOT, "tvm_ffi_check", "fault_report.c")
    _run(_cc() + ["-std=gnu11", *CFLAGS, "-shared", source, "-o",
                  os.path.join(lib_dir, FAULT_REPORTER)])


#: Each C library -> its builder and what it is built from (the headers of c_api/include count
#: for all), one entry per library so that each is rebuilt when it is missing or stale;
#: libtvm_ffi.so first, since the others link to it.
LIBRARY_INPUTS = {
    "libtvm_ffi.so": (build_libtvm_ffi, ["c_api/src"]),
    **{f"libtvm_ffi_{stem}.so": (example_kernel_builder(stem), [f"examples/kernels/{stem}.c"])
       for stem in EXAMPLE_KERNELS},
    "libtvm_ffi_testing.so": (build_testing_library, ["c_api/testing"]),
    FAULT_REPORTER: (build_fault_reporter, ["tvm_ffi_check/fault_report.c"]),
}


def _newest_input(paths):
    newest = 0.0
    for path in [os.path.join(ROOT, p) for p in paths + ["c_api/include", "setup.py"]]:
        for folder, _, files in os.walk(path) if os.path.isdir(path) else [("", [], [path])]:
            newest = max([newest] + [os.path.getmtime(os.path.join(folder, f)) for f in files])
    return newest


def stale_libraries(lib_dir):
    """The names of the C libraries in lib_dir that are missing or older than an input."""
    return [name for name, (_, inputs) in LIBRARY_INPUTS.items()
            if not os.path.exists(os.path.join(lib_dir, name))
            or os.path.getmtime(os.path.join(lib_dir, name)) < _newest_input(inputs)]


def build_c_libraries(lib_dir, build_temp):
    """Builds each C library that is missing or older than anything it is built from (a second
    interpreter's editable install, PyPy's, then compiles only its own extensions)."""
    for name in stale_libraries(lib_dir):
        LIBRARY_INPUTS[name][0](lib_dir, build_temp)


def _compile_in_parallel(compile_sources):
    """A ``CCompiler.compile`` that compiles the sources one per core (the fast runtime is some
    thirty C files)."""
    from concurrent.futures import ThreadPoolExecutor

    def compile_all(sources, *args, **kwargs):
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            objects = pool.map(lambda source: compile_sources([source], *args, **kwargs), sources)
            return [obj for part in objects for obj in part]

    return compile_all


def _absolute_rpath(flag):
    """Whether a link flag sets an rpath to an absolute directory (``-Wl,-rpath,/x``)."""
    for prefix in ("-Wl,-rpath,", "-Wl,-rpath=", "-Wl,-R,"):
        if flag.startswith(prefix):
            return flag[len(prefix):].startswith("/")
    return False


class BuildExtWithCLibraries(build_ext):
    """build_ext that first builds the plain C libraries the extension links to."""

    def build_extension(self, ext):
        # Python's own link flags may carry an rpath into the build machine's Python (pyenv's
        # do); an installed extension must find its libraries from $ORIGIN alone.
        for attribute in ("linker_so", "linker_so_cxx"):
            if getattr(self.compiler, attribute, None):
                setattr(self.compiler, attribute,
                        [a for a in getattr(self.compiler, attribute) if not _absolute_rpath(a)])
        serial = self.compiler.compile
        self.compiler.compile = _compile_in_parallel(serial)
        try:
            super().build_extension(ext)
        finally:
            self.compiler.compile = serial

    def run(self):
        package_dir = os.path.join(ROOT if self.inplace else self.build_lib, "tvm_ffi_common")
        lib_dir = os.path.join(package_dir, "lib")
        os.makedirs(lib_dir, exist_ok=True)
        build_c_libraries(lib_dir, os.path.abspath(self.build_temp))
        if not self.inplace:
            shutil.copytree(INCLUDE_DIR, os.path.join(package_dir, "include"), dirs_exist_ok=True)
            # libtvm_ffi.so's sources ship too, as upstream's do (`config --sourcedir`)
            shutil.copytree(os.path.join(ROOT, "c_api", "src"), os.path.join(package_dir, "src"),
                            dirs_exist_ok=True)
        for ext in self.extensions:
            ext.library_dirs.append(lib_dir)
        super().run()


#: Put in site-packages; Python runs its line at start-up. It installs the
#: drop-in (``import tvm_ffi`` served by ours) only when TVM_FFI_IMPL is set,
#: and costs one environment lookup otherwise (tvm_ffi_common/dropin.py).
DROPIN_PTH = "tvm_ffi_abi_dropin.pth"
DROPIN_LINE = ("import os; 'TVM_FFI_IMPL' in os.environ and "
               "__import__('tvm_ffi_common.dropin').dropin.install_from_environment()\n")


def write_dropin_pth(directory):
    """Writes the drop-in's .pth file into ``directory`` (the top of an install)."""
    with open(os.path.join(directory, DROPIN_PTH), "w") as f:
        f.write(DROPIN_LINE)
    return os.path.join(directory, DROPIN_PTH)


class BuildPyWithDropIn(build_py):
    """build_py that also puts the drop-in's .pth file at the top of a wheel."""

    def run(self):
        super().run()
        write_dropin_pth(self.build_lib)

    def get_outputs(self, *args, **kwargs):
        return super().get_outputs(*args, **kwargs) + [os.path.join(self.build_lib, DROPIN_PTH)]


class EditableWheelWithDropIn(editable_wheel):
    """editable_wheel (``pip install -e``) that also ships the drop-in's .pth file.

    An editable wheel holds no build_py output; setuptools writes its own .pth
    files into the wheel's top directory in this step, so ours goes there too.
    """

    def _install_namespaces(self, installation_dir, pth_prefix):
        super()._install_namespaces(installation_dir, pth_prefix)
        write_dropin_pth(installation_dir)


#: tvm_ffi_common.pycapi's extension: capsules, references handed to C, the signal check.
PYCAPI_EXTENSION = Extension("tvm_ffi_common._pycapi", sources=["tvm_ffi_common/_pycapi.c"],
                             include_dirs=[INCLUDE_DIR],
                             extra_compile_args=["-Werror=implicit-function-declaration"])

setup(
    cmdclass={"build_ext": BuildExtWithCLibraries, "build_py": BuildPyWithDropIn,
              "editable_wheel": EditableWheelWithDropIn},
    ext_modules=[PYCAPI_EXTENSION],
    cffi_modules=["tvm_ffi_fast/_build.py:ffibuilder"],
)
