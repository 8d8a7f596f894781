"""C written against this project's headers builds against upstream's, and runs.

* Our C headers offer a C compiler exactly what upstream's offer: the same
  identifiers after preprocessing as C, and the same macros. (Upstream keeps
  its layout helpers, ``TVMFFITensorGetDLTensorPtr`` and friends, C++ only;
  so do we, and ``tvm_ffi_abi/object_cells.h`` is where C finds ours.)
* Every C file of ``examples/`` and the tests' C kernels compile against the
  installed ``apache-tvm-ffi``'s headers (plus, for those that include it, our
  ``tvm_ffi_abi/`` folder and nothing else of ours) with
  ``-Werror=implicit-function-declaration``, link with ``--no-undefined``
  against upstream's ``libtvm_ffi.so``, and run: each kernel library is loaded
  under this project's runtime and called; the C host program runs.
* Every ```` ```c ```` block of ``spec/`` is an excerpt of one of those files
  or a bare prototype, and every C library a page's doctest writes compiles
  against upstream's headers too: the pages teach no C this test does not build.
"""

from __future__ import annotations

import glob
import os
import re
import subprocess
import sys
import textwrap

import pytest

import upstream_headers
from tvm_ffi_common import libinfo

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OURS = os.path.join(ROOT, "c_api", "include")
HEADERS = ["tvm/ffi/c_api.h", "tvm/ffi/extra/c_env_api.h", "dlpack/dlpack.h"]
CC = os.environ.get("CC", "cc")

#: Each C example -> how the test calls it once loaded (Python run under our runtime),
#: printing what EXPECTED says it must print.
KERNEL_CALLS = {
    "examples/kernels/first_kernel.c": (
        "x = np.arange(4, dtype=np.float32); out = np.empty_like(x)\n"
        "lib.scale_into(x, out, 2.5); print(out.tolist(), lib.scale(torch.ones(2), 3.0).tolist())",
        "[0.0, 2.5, 5.0, 7.5] [3.0, 3.0]"),
    "examples/kernels/example_kernels.c": (
        "print(lib.add_int(2, 3), lib.concat('ab', 'cd'),"
        " lib.sum_float32(np.ones(3, dtype=np.float32)))",
        "5 abcd 3.0"),
    "examples/kernels/broken_kernels.c": (
        "print(lib.good_add(2, 3), lib.good_greet('C'), lib.good_echo([1]))", "5 hello, C (1,)"),
    "examples/kernels/dtype_kernels.c": (
        "x = np.arange(6, dtype=np.int32).reshape(2, 3)[:, ::2]; h = np.ones(4, np.float16)[::-2]\n"
        "print(lib.total(x), lib.total(h), lib.total(torch.ones(3, 2).T))", "10 2.0 6.0"),
    "tests/kernels/corpus_c.c": ("print(lib.c_mul(6, 7), lib.c_upper('abc'))", "42 ABC"),
    "tests/kernels/broken_rules.c": ("print(lib.ok_int())", "7"),
}
HOST_PROGRAMS = ["examples/host/call_kernel.c"]


def _upstream():
    include, lib = upstream_headers.include_dir(), upstream_headers.library_dir()
    if include is None or lib is None:
        pytest.fail("apache-tvm-ffi (a test dependency) is not installed: pip install -e '.[test]'")
    return include, lib


def c_examples():
    """Every C source of examples/ and the tests' C kernels that use the ABI's headers."""
    found = sorted(glob.glob(os.path.join(ROOT, "examples", "**", "*.c"), recursive=True))
    found += [os.path.join(ROOT, "tests", "kernels", n) for n in ("corpus_c.c", "broken_rules.c")]
    return [os.path.relpath(p, ROOT) for p in found]


def _identifiers(include_dir: str) -> "tuple[set, set]":
    """(identifiers of the preprocessed headers, macros they define), compiled as C11."""
    source = "".join(f"#include <{h}>\n" for h in HEADERS)
    text = subprocess.run([CC, "-std=c11", "-E", f"-I{include_dir}", "-x", "c", "-"],
                          input=source, capture_output=True, text=True, check=True).stdout
    names = set(re.findall(r"\b(k?TVMFFI\w*|k?DL\w*)\b", text))
    defined = subprocess.run([CC, "-std=c11", "-E", "-dM", f"-I{include_dir}", "-x", "c", "-"],
                             input=source, capture_output=True, text=True, check=True).stdout
    macros = {m for m in re.findall(r"^#define (\w+)", defined, re.M)
              if m.startswith(("TVM", "DL", "kDL"))}
    return names, macros


def test_our_headers_offer_c_exactly_what_upstreams_offer():
    upstream_include, _ = _upstream()
    our_names, our_macros = _identifiers(OURS)
    their_names, their_macros = _identifiers(upstream_include)
    assert our_names - their_names == set(), "C sees these in ours only"
    assert their_names - our_names == set(), "C sees these in upstream's only"
    assert our_macros - their_macros == set(), "macros only ours define"
    assert "TVMFFITensorGetDLTensorPtr" not in our_names  # C++ only, as upstream's


def test_the_layout_helpers_stay_available_to_cpp(tmp_path):
    src = tmp_path / "helpers.cc"
    src.write_text("#include <tvm/ffi/c_api.h>\n"
                   "DLTensor* f(TVMFFIObjectHandle h) { return TVMFFITensorGetDLTensorPtr(h); }\n")
    done = subprocess.run([os.environ.get("CXX", "c++"), "-std=c++17", "-Wall", "-Werror",
                           f"-I{OURS}", "-fsyntax-only", str(src)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def _compile_flags(tmp_path, upstream_include):
    # Our tvm_ffi_abi/ folder alone, never our tvm/ffi/ headers: a symlinked include root.
    ours_only = tmp_path / "ours_only"
    ours_only.mkdir(exist_ok=True)
    link = ours_only / "tvm_ffi_abi"
    if not link.exists():
        link.symlink_to(os.path.join(OURS, "tvm_ffi_abi"))
    return ["-std=c99", "-O1", "-Wall", "-Werror=implicit-function-declaration",
            f"-I{upstream_include}", f"-I{ours_only}"]


def build_against_upstream(source: str, tmp_path, shared: bool = True) -> "tuple[str, list]":
    """Compiles ``source`` against upstream's headers and library: (output, command)."""
    upstream_include, upstream_lib = _upstream()
    name = os.path.splitext(os.path.basename(source))[0]
    out = str(tmp_path / (f"lib{name}.so" if shared else name))
    command = [CC, *_compile_flags(tmp_path, upstream_include), os.path.join(ROOT, source),
               "-o", out, f"-L{upstream_lib}", "-ltvm_ffi", "-Wl,--no-undefined"]
    if shared:
        command[1:1] = ["-shared", "-fPIC"]
    else:
        command += [f"-Wl,-rpath,{upstream_lib}", "-ldl"]
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, f"{' '.join(command)}\n{done.stderr}"
    return out, command


def test_every_c_example_is_called_here():
    assert sorted(KERNEL_CALLS) == sorted(set(c_examples()) - set(HOST_PROGRAMS))


@pytest.mark.parametrize("source", sorted(KERNEL_CALLS))
def test_c_example_builds_against_upstream_headers_and_runs_on_ours(source, tmp_path):
    library, _ = build_against_upstream(source, tmp_path)
    call, expected = KERNEL_CALLS[source]
    imports = "import numpy as np" + (", torch" if "torch" in call else "")  # torch is slow
    script = textwrap.dedent(f"""
        {imports}
        import tvm_ffi_fast as tvm_ffi
        lib = tvm_ffi.load_module({library!r})
    """) + call
    env = {k: v for k, v in os.environ.items() if k != "TVM_FFI_IMPL"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == expected


def test_the_c_host_program_builds_against_upstream_and_calls_a_kernel(tmp_path):
    kernel, _ = build_against_upstream("examples/kernels/first_kernel.c", tmp_path)
    host, _ = build_against_upstream("examples/host/call_kernel.c", tmp_path, shared=False)
    done = subprocess.run([host, kernel], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == [
        "first_kernel.scale_into(x, out, 2.5): status 0, result type index 0",
        "out = 0 2.5 5 7.5",
        "scale_into(x, out) failed: TypeError: scale_into(x, out, factor) takes 3 arguments",
    ]


_C_BLOCK = re.compile(r"(?P<before>[^\n]*)\n```c\n(?P<body>.*?)^```$", re.M | re.S)


def test_every_c_block_of_the_spec_is_built_here():
    built = set(c_examples())
    for page in sorted(glob.glob(os.path.join(ROOT, "spec", "*.md"))):
        with open(page, encoding="utf-8") as f:
            text = f.read()
        for match in _C_BLOCK.finditer(text):
            excerpt = re.match(r"<!-- excerpt: (\S+) -->", match.group("before"))
            if excerpt:
                assert excerpt.group(1) in built, (page, excerpt.group(1))
            else:  # a prototype, nothing to build
                assert "{" not in match.group("body"), (page, match.group("body")[:200])


_INLINE_SOURCE = re.compile(r"^>>> source = r'''\n(?P<body>.*?)^\.\.\. '''", re.M | re.S)


def inline_c_sources():
    """``(page, C source)`` of every C library a page's doctest writes and compiles."""
    found = []
    for page in sorted(glob.glob(os.path.join(ROOT, "spec", "*.md"))):
        with open(page, encoding="utf-8") as f:
            text = f.read()
        for match in _INLINE_SOURCE.finditer(text):
            lines = [line[4:] if line.startswith("... ") else line[3:]
                     for line in match.group("body").splitlines()]
            source = "\n".join(lines) + "\n"
            if "#include <tvm/ffi/" in source:
                found.append((os.path.basename(page), source.replace("BLOB", "0")))
    return found


def test_the_c_the_pages_compile_builds_against_upstreams_headers(tmp_path):
    upstream_include, _ = _upstream()
    sources = inline_c_sources()
    assert {page for page, _ in sources} >= {"11-modules.md", "18-stability.md", "19-ship-it.md"}
    for i, (page, source) in enumerate(sources):
        path = tmp_path / f"inline_{i}.c"
        path.write_text(source)
        done = subprocess.run([CC, *_compile_flags(tmp_path, upstream_include), "-fsyntax-only",
                               str(path)], capture_output=True, text=True)
        assert done.returncode == 0, f"{page}:\n{source}\n{done.stderr}"


def test_the_old_first_kernel_is_what_this_test_catches(tmp_path):
    # The bug this file exists for: TVMFFITensorGetDLTensorPtr called from C.
    src = tmp_path / "uses_cxx_helper.c"
    src.write_text("#include <tvm/ffi/c_api.h>\n"
                   "void* f(void* h) { return TVMFFITensorGetDLTensorPtr(h); }\n")
    upstream_include, _ = _upstream()
    for include in (upstream_include, OURS):
        done = subprocess.run([CC, *_compile_flags(tmp_path, upstream_include)[:-2],
                               f"-I{include}", "-fsyntax-only", str(src)],
                              capture_output=True, text=True)
        assert done.returncode != 0 and "implicit" in done.stderr, include
    assert libinfo.include_paths()  # our installed copy is what kernel builds get
