"""Rebuilding ``tvm_ffi_fast._core`` in a scratch copy, one changed file at a time.

A C mutant changes one ``.c`` file of the fast runtime (``tvm_ffi_fast/src``)
or of its front end (``tvm_ffi_fast/src/frontend``). Compiling the whole
extension for each would cost minutes; instead every object file is kept in
a cache keyed by what went into it (the source's bytes, every header's
bytes, the compiler command), so a mutant compiles its one file and links.
``libtvm_ffi.so`` is not rebuilt: the copy's own (the project's build) serves.

The compile and link commands follow what setuptools runs for the cffi
module (the interpreter's ``CC``, ``CFLAGS`` and ``CCSHARED``, the include
directories and extra arguments ``tvm_ffi_fast/_build.py`` declares), minus
debug information, which only slows the compiler down.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import io
import os
import runpy
import shlex
import subprocess
import sysconfig
from concurrent.futures import ThreadPoolExecutor
from typing import List

#: What the extension's C sources include (any change there invalidates every object).
HEADER_GLOBS = ["c_api/include/**/*.h", "tvm_ffi_fast/src/*.h", "tvm_ffi_fast/src/frontend/*.h"]


class BuildFailed(RuntimeError):
    """The compiler or the linker refused a scratch copy's sources."""


def _run(command: List[str], cwd: str) -> None:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise BuildFailed(f"{shlex.join(command)}\n{done.stdout[-3000:]}{done.stderr[-3000:]}")


def _builder(root: str):
    """The cffi ``FFI`` of ``root``'s ``tvm_ffi_fast/_build.py`` (its paths are root-relative)."""
    here = os.getcwd()
    os.chdir(root)
    try:
        return runpy.run_path(os.path.join(root, "tvm_ffi_fast", "_build.py"))["ffibuilder"]
    finally:
        os.chdir(here)


def _compile_flags(root: str, builder) -> List[str]:
    kwargs = builder._assigned_source[3]
    flags = shlex.split(sysconfig.get_config_var("CC") or "cc")
    flags += [f for f in shlex.split(sysconfig.get_config_var("CFLAGS") or "") if f != "-g"]
    flags += shlex.split(sysconfig.get_config_var("CCSHARED") or "-fPIC")
    flags += [f"-I{os.path.join(root, d)}" for d in kwargs["include_dirs"]]
    flags += [f"-I{sysconfig.get_paths()['include']}"]
    return flags + list(kwargs["extra_compile_args"])


def _digest(*parts: bytes) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.hexdigest()[:32]


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def build_core(root: str, cache_dir: str, jobs: int = 2) -> str:
    """Compiles (through the object cache) and links ``root``'s ``tvm_ffi_fast._core``.

    Returns the path of the extension it wrote into ``root/tvm_ffi_fast``.
    """
    os.makedirs(cache_dir, exist_ok=True)
    builder = _builder(root)
    module_name, _, _, kwargs = builder._assigned_source
    generated = os.path.join(cache_dir, module_name + ".c")
    with contextlib.redirect_stdout(io.StringIO()):  # cffi announces what it generates
        builder.emit_c_code(generated + ".new")  # the same text every time: cdef is fixed
    os.replace(generated + ".new", generated)
    flags = _compile_flags(root, builder)
    headers = b"".join(_read(p) for pattern in HEADER_GLOBS
                       for p in sorted(glob.glob(os.path.join(root, pattern), recursive=True)))
    flag_bytes = "\0".join(f.replace(root, "<root>") for f in flags).encode()
    sources = [generated] + [os.path.join(root, s) for s in kwargs["sources"]]

    def compile_one(source: str) -> str:
        key = _digest(flag_bytes, headers, _read(source))
        obj = os.path.join(cache_dir, f"{os.path.basename(source)[:-2]}-{key}.o")
        if not os.path.exists(obj):
            _run(flags + ["-c", source, "-o", obj + ".tmp"], cwd=root)
            os.replace(obj + ".tmp", obj)
        return obj

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        objects = list(pool.map(compile_one, sources))
    lib_dir = os.path.join(root, "tvm_ffi_common", "lib")
    output = os.path.join(root, "tvm_ffi_fast", "_core" + sysconfig.get_config_var("EXT_SUFFIX"))
    link = shlex.split(sysconfig.get_config_var("LDSHARED") or "cc -shared")
    link += objects + [f"-L{lib_dir}"] + [f"-l{name}" for name in kwargs["libraries"]]
    link += list(kwargs["extra_link_args"]) + ["-o", output + ".tmp"]
    _run(link, cwd=root)
    os.replace(output + ".tmp", output)
    return output


def remove_stale_objects(cache_dir: str, keep_newest: int = 400) -> None:
    """Keeps the object cache bounded (each mutant adds one object file)."""
    objects = sorted(glob.glob(os.path.join(cache_dir, "*.o")), key=os.path.getmtime)
    for path in objects[:-keep_newest]:
        os.remove(path)

