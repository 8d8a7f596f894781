"""What a build runs: the compile, merge, embed and link steps, with their full commands.

Sources are dispatched by extension: ``.c`` to the C compiler, ``.cu`` to
``nvcc``/``hipcc``, ``.o``/``.obj`` straight to the linker, anything else to
the C++ compiler. Objects are named as upstream names them (``c_0.o``,
``cpp_0.o``, ``cuda_0.o``, in sorted source order). The target is
``<name>.so`` linked against our ``libtvm_ffi.so``, or, when ``output`` ends
in ``.o``, one relocatable object (the single object copied, several merged
with ``ld -r``). CUBINs to embed are written beside and stitched in with the
``utils.embed_cubin`` tool between a merge and the link.

Flags as given are split like a shell splits them (``"-O3 -g"`` is two
flags), as they would be on a command line; include paths stay whole.
"""

from __future__ import annotations

import dataclasses
import os
import shlex
import sys
from typing import Dict, List, Optional, Sequence

from tvm_ffi_common import libinfo

from . import headers, toolchain

#: Extensions taken as ready objects; everything not C, CUDA or an object is C++.
OBJECT_EXTENSIONS = (".o", ".obj")


@dataclasses.dataclass
class Step:
    """One command producing one file of the build directory."""

    #: What it does, for progress and errors: "compile", "merge", "copy", "embed", "link".
    verb: str
    #: The file it makes, relative to the build directory.
    output: str
    #: Files it reads (absolute, or relative to the build directory).
    inputs: List[str]
    #: The argument vector; ``{out}`` stands for the file to write (see builder).
    command: List[str]
    #: The dependency file the command writes (relative), for header tracking.
    depfile: Optional[str] = None


@dataclasses.dataclass
class Plan:
    """The steps of a build, in an order that respects their inputs."""

    steps: List[Step]
    #: The file the build delivers (relative to the build directory).
    target: str


def _split_flags(flags: Sequence[str]) -> List[str]:
    return [part for flag in flags for part in shlex.split(flag.strip())]


def kind_of(source: str) -> str:
    """``"c"``, ``"cuda"``, ``"object"`` or ``"cxx"`` by the file's extension."""
    ext = os.path.splitext(source)[1].lower()
    if ext == ".c":
        return "c"
    if ext == ".cu":
        return "cuda"
    if ext in OBJECT_EXTENSIONS:
        return "object"
    return "cxx"


def target_name(name: str, output: Optional[str]) -> str:
    """The file the build delivers: ``output``'s file name, else ``<name>.so``."""
    return os.path.basename(output) if output is not None else f"{name}.so"


def is_object_output(output: Optional[str]) -> bool:
    """Whether ``output`` asks for a relocatable object instead of a shared library."""
    return output is not None and os.path.splitext(output)[1].lower() in OBJECT_EXTENSIONS


def _gpu_flags(backend: str, extra_cuda_cflags: List[str]) -> Dict[str, List[str]]:
    """Compile flags for ``.cu`` sources and what the link then needs."""
    if backend == "hip":
        home = toolchain.rocm_home()
        return {
            "cflags": ["-std=c++17", "-O2", "-fPIC", "-D__HIP_PLATFORM_AMD__=1", "-fno-gpu-rdc",
                       *toolchain.rocm_arch_flags(), *extra_cuda_cflags],
            "includes": [os.path.join(home, "include")],
            "ldflags": [f"-L{os.path.join(home, 'lib')}", "-lamdhip64"],
        }
    return {
        "cflags": ["-Xcompiler", "-fPIC", "-std=c++17", "-O2", *toolchain.cuda_arch_flags(),
                   *extra_cuda_cflags],
        "includes": [],
        "ldflags": toolchain.cudart_link_flags(),
    }


def plan_build(name: str, sources: Sequence[str], *, extra_cflags: Sequence[str] = (),
               extra_cuda_cflags: Sequence[str] = (), extra_ldflags: Sequence[str] = (),
               extra_include_paths: Sequence[str] = (), cubin_names: Sequence[str] = (),
               backend: Optional[str] = None, output: Optional[str] = None,
               package: str = "tvm_ffi") -> Plan:
    """The steps that build ``sources`` (absolute paths) into ``name``'s target.

    ``package`` is the front end whose ``utils.embed_cubin`` embeds CUBINs.
    """
    toolchain.ensure_supported_platform()
    kinds = {source: kind_of(source) for source in sources}
    has_gpu = "cuda" in kinds.values()
    extras = [os.path.abspath(p) for p in extra_include_paths]
    c_includes = [*headers.include_paths(cxx=False), *extras]
    cxx_includes = [*headers.include_paths(cxx=True), *extras]
    cflags = ["-fPIC", "-O2", *_split_flags(extra_cflags)]
    cxxflags = ["-std=c++17", "-fPIC", "-O2", *_split_flags(extra_cflags)]
    ldflags = ["-shared", f"-L{libinfo.library_dir()}", "-ltvm_ffi"]
    gpu: Dict[str, List[str]] = {}
    if has_gpu:
        gpu = _gpu_flags(toolchain.resolve_gpu_backend(backend), _split_flags(extra_cuda_cflags))
        ldflags += gpu["ldflags"]
    ldflags += _split_flags(extra_ldflags)

    steps: List[Step] = []
    objects: List[str] = []
    counters = {"c": 0, "cxx": 0, "cuda": 0}
    prefixes = {"c": "c", "cxx": "cpp", "cuda": "cuda"}
    for source in sorted(sources):
        kind = kinds[source]
        if kind == "object":
            objects.append(source)
            continue
        obj = f"{prefixes[kind]}_{counters[kind]}.o"
        counters[kind] += 1
        depfile = f"{obj}.d"
        if kind == "c":
            command = [toolchain.c_compiler(), "-MMD", "-MF", depfile, *cflags,
                       *(f"-I{p}" for p in c_includes), "-c", source, "-o", "{out}"]
        elif kind == "cxx":
            command = [toolchain.cxx_compiler(), "-MMD", "-MF", depfile, *cxxflags,
                       *(f"-I{p}" for p in cxx_includes), "-c", source, "-o", "{out}"]
        else:
            includes = [f"-I{p}" for p in [*cxx_includes, *gpu["includes"]]]
            compiler = toolchain.gpu_compiler(toolchain.resolve_gpu_backend(backend))
            if os.path.basename(compiler) == "nvcc":
                deps = ["--generate-dependencies-with-compile", "--dependency-output", depfile]
            else:
                deps, depfile = [], None
            command = [compiler, *deps, *gpu["cflags"], *includes, "-c", source, "-o", "{out}"]
        steps.append(Step("compile", obj, [source], command, depfile))
        objects.append(obj)
    if not objects:
        raise ValueError("sources must be provided.")

    target = target_name(name, output)
    if is_object_output(output):
        if len(objects) == 1:  # one object is copied: `ld -r` of one input only rewrites it
            steps.append(Step("copy", target, objects, []))
        else:
            steps.append(Step("merge", target, objects, ["ld", "-r", "-o", "{out}", *objects]))
        return Plan(steps, target)
    if cubin_names:
        current = "unified.o"
        steps.append(Step("merge", current, objects, ["ld", "-r", "-o", "{out}", *objects]))
        for cubin in sorted(cubin_names):
            embedded = f"unified_with_{cubin}.o"
            steps.append(Step("embed", embedded, [current, f"{cubin}.cubin"], [
                sys.executable, "-m", f"{package}.utils.embed_cubin", "--output-obj", "{out}",
                "--input-obj", current, "--cubin", f"{cubin}.cubin", "--name", cubin]))
            current = embedded
        objects = [current]
    steps.append(Step("link", target, objects,
                      [toolchain.cxx_compiler(), *objects, *ldflags, "-o", "{out}"]))
    return Plan(steps, target)
