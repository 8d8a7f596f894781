"""tvm_ffi.cpp under both front ends: builds, the cache, rebuilds, errors, concurrency.

C sources (fast to compile) carry most checks; one C++ extension
(``cpp_demo``, using upstream's header-only C++ API) is built once per session
and then only loaded from the cache.
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
import textwrap

import pytest

from cpp_demo import DEMO_FUNCTIONS, build_snippet, run

FRONTENDS = ["ref", "fast"]

C_ADD = r"""
#include <tvm/ffi/c_api.h>
#include "offset.h"
TVM_FFI_DLL_EXPORT int __tvm_ffi_c_add(void* self, const TVMFFIAny* args, int32_t num_args,
                                       TVMFFIAny* result) {
  result->type_index = kTVMFFIInt;
  result->zero_padding = 0;
  result->v_int64 = args[0].v_int64 + args[1].v_int64 + OFFSET;
  return 0;
}
"""


@pytest.fixture
def c_project(tmp_path):
    """A C source including a header of its own (``OFFSET``), in ``tmp_path/src``."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "add.c").write_text(C_ADD)
    (src / "offset.h").write_text("#define OFFSET 0\n")
    return src


def _steps(stderr: str):
    """The steps a build reported doing (``compile c_0.o``, ``link x.so``...)."""
    return [line.split("] ", 1)[1].rsplit(" (", 1)[0]
            for line in stderr.splitlines() if line.startswith("tvm_ffi.cpp: [")]


@pytest.mark.parametrize("frontend", FRONTENDS)
def test_c_sources_build_link_and_rebuild_only_on_change(frontend, c_project, tmp_path):
    build = f"""
        import sys, tvm_ffi_{frontend} as api
        src, extra = {str(c_project)!r}, sys.argv[1:]
        obj = api.cpp.build("cadd", sources=[src + "/add.c"], output="cadd.o",
                            extra_include_paths=[src], extra_cflags=extra)
        lib = api.cpp.build("cadd_lib", sources=[obj])
        print(obj.endswith("cadd.o"), api.load_module(lib).c_add(10, 20))
    """
    cache = str(tmp_path / "cache")
    out, err = run(build, cache)
    assert out.split() == ["True", "30"]
    assert _steps(err) == ["compile c_0.o", "copy cadd.o", "link cadd_lib.so"]
    assert "tvm_ffi.cpp: building 'cadd' in " in err and "built 'cadd' in" in err
    # Nothing changed: nothing is redone, and nothing is said.
    out, err = run(build, cache)
    assert out.split() == ["True", "30"] and err == ""
    # The header it includes changed: the object, then the library, are redone.
    (c_project / "offset.h").write_text("#define OFFSET 100\n")
    out, err = run(build, cache)
    assert out.split() == ["True", "130"]
    assert _steps(err) == ["compile c_0.o", "copy cadd.o", "link cadd_lib.so"]
    # A flag changed: another cache directory, built from scratch.
    out, err = run(build.replace("extra_cflags=extra", "extra_cflags=['-DUNUSED=1']"), cache)
    assert out.split() == ["True", "130"] and "compile c_0.o" in _steps(err)
    # Two cadd directories (one per flag set), and two cadd_lib ones (one per object path).
    assert sorted(n.rsplit("_", 1)[0] for n in os.listdir(cache)) == ["cadd"] * 2 + ["cadd_lib"] * 2


@pytest.mark.parametrize("frontend", FRONTENDS)
def test_explicit_build_directory_rebuilds_on_flag_change(frontend, c_project, tmp_path):
    code = f"""
        import sys, tvm_ffi_{frontend} as api
        lib = api.cpp.build("cadd", sources=[{str(c_project / 'add.c')!r}],
                            extra_include_paths=[{str(c_project)!r}],
                            extra_cflags=sys.argv[1:], build_directory={str(tmp_path / 'b')!r})
        print(lib)
    """
    out, err = run(code, str(tmp_path / "cache"))
    assert out.strip() == str(tmp_path / "b" / "cadd.so")
    assert not os.path.exists(tmp_path / "cache")  # an explicit directory replaces the cache
    record = json.loads((tmp_path / "b" / ".tvm_ffi_build.json").read_text())
    assert any(dep.endswith("offset.h") for dep in record["c_0.o"]["deps"])
    _, err = run(code.replace("sys.argv[1:]", "['-O0']"), str(tmp_path / "cache"))
    assert _steps(err) == ["compile c_0.o", "link cadd.so"]


@pytest.mark.parametrize("frontend", FRONTENDS)
def test_compile_error_carries_the_compilers_text(frontend, tmp_path):
    bad = tmp_path / "bad.c"
    bad.write_text("int broken(void) { return undefined_name_xyz; }\n")
    out, _ = run(f"""
        import tvm_ffi_{frontend} as api
        try:
            api.cpp.build("bad", sources=[{str(bad)!r}])
        except RuntimeError as e:
            print(str(e))
    """, str(tmp_path / "cache"))
    assert "building 'bad' failed: compile c_0.o exited with status 1" in out
    assert "undefined_name_xyz" in out and "bad.c:1" in out  # the compiler's own words
    assert "command: cc " in out or "command: " + os.environ.get("CC", "cc") in out
    # A failed step leaves no output behind, so the next build tries again.
    assert not [n for n in os.listdir(next((tmp_path / "cache").iterdir()))
                if n.endswith((".o", ".so"))]


@pytest.mark.parametrize("frontend", FRONTENDS)
def test_bad_arguments_name_the_problem(frontend, tmp_path):
    out, _ = run(f"""
        import tvm_ffi_{frontend} as api
        for call in (lambda: api.cpp.build("x", sources=["/no/such/file.c"]),
                     lambda: api.cpp.build("x"),
                     lambda: api.cpp.build("x", sources=[3]),
                     lambda: api.cpp.build_inline("x", functions="f"),
                     lambda: api.cpp.build_inline("a/b", cpp_sources="int f();"),
                     lambda: api.cpp.to_cpp_dtype("float16")):
            try:
                call()
            except (FileNotFoundError, ValueError, TypeError) as e:
                print(type(e).__name__, e)
        print(api.cpp.to_cpp_dtype("float32"), api.cpp.to_cpp_dtype("torch.int64"))
    """, str(tmp_path / "cache"))
    assert out.splitlines() == [
        "FileNotFoundError tvm_ffi.cpp.build('x'): source '/no/such/file.c' does not exist",
        "ValueError sources must be provided.",
        "TypeError sources must be a str or a sequence of str, got [3]",
        "ValueError build_inline needs cpp_sources or cuda_sources",
        "ValueError name must be a non-empty str usable as a file name, got 'a/b'",
        "ValueError Unsupported dtype string: float16 for backend = 'cpu'",
        "float int64_t",
    ]


def test_concurrent_builds_of_the_same_thing_build_once(c_project, tmp_path):
    code = f"""
        import tvm_ffi_fast as api
        lib = api.cpp.build("cadd", sources=[{str(c_project / 'add.c')!r}],
                            extra_include_paths=[{str(c_project)!r}])
        print(api.load_module(lib).c_add(1, 2))
    """
    env = dict(os.environ, TVM_FFI_CACHE_DIR=str(tmp_path / "cache"))
    procs = [subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(3)]
    results = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0]
    assert [out.strip() for out, _ in results] == ["3", "3", "3"]
    compiles = sum(_steps(err).count("compile c_0.o") for _, err in results)
    assert compiles == 1, [err for _, err in results]


def test_cxx_api_headers_missing_is_a_clear_error(c_project, tmp_path):
    cc = tmp_path / "uses_cxx_api.cc"
    cc.write_text("#include <tvm/ffi/function.h>\nint f() { return 1; }\n")
    out, _ = run(f"""
        import tvm_ffi_ref as api
        from tvm_ffi_ref.cpp import headers
        headers.find_upstream_cxx_include = lambda: None  # as if apache-tvm-ffi were absent
        for call in (lambda: api.cpp.load_inline("x", cpp_sources="int f() {{ return 1; }}"),
                     lambda: api.cpp.build("y", sources=[{str(cc)!r}])):
            try:
                call()
            except RuntimeError as e:
                print(str(e).splitlines()[-1])
        # C needs only our headers.
        lib = api.cpp.build("c_only", sources=[{str(c_project / 'add.c')!r}],
                            extra_include_paths=[{str(c_project)!r}])
        print(api.load_module(lib).c_add(2, 3))
    """, str(tmp_path / "cache"))
    lines = out.splitlines()
    assert lines[0].startswith("tvm_ffi.cpp.build_inline('x') needs the TVM FFI C++ API headers")
    assert lines[1].startswith("this source needs the TVM FFI C++ API headers")
    assert all("pip install apache-tvm-ffi==0.1.15.post2" in line for line in lines[:2])
    assert lines[2] == "5"


@pytest.mark.parametrize("frontend", FRONTENDS)
def test_load_inline_cpp_runs_on_our_runtime_and_is_cached(frontend, cpp_cache_dir):
    out, _ = run(f"import time, numpy, tvm_ffi_{frontend} as api\n" + build_snippet("api") + textwrap.dedent(f"""
        mod = api.cpp.load_inline("stubdemo", cpp_sources=_demo_source,
                                  functions={DEMO_FUNCTIONS!r},
                                  extra_cflags=["-DTVM_FFI_DLL_EXPORT_INCLUDE_METADATA=1"])
        print(mod.add(2, 40), mod.greet("ffi"), mod.scale_sum(numpy.arange(4, dtype="float32"), 0.5))
        print(repr(mod.get_function_doc("add")), mod.get_function_doc("greet"))
        print(mod.get_function_metadata("add")["type_schema"])
        counter = api.get_global_func("stubdemo.make_counter")(3, 0.5)
        print(counter.start, counter.step, counter.label, counter.at(4))
        try:
            mod.scale_sum(numpy.zeros((2, 2), dtype="float32"), 1.0)
        except RuntimeError as e:
            print("error:", str(e).splitlines()[-1])
        maps = open("/proc/self/maps").read()
        from tvm_ffi_common import libinfo
        print("ours", libinfo.library_path() in maps, "upstream", "/tvm_ffi/lib/libtvm_ffi.so" in maps)
        times = []
        for _ in range(15):
            start = time.perf_counter()
            api.cpp.load_inline("stubdemo", cpp_sources=_demo_source, functions={DEMO_FUNCTIONS!r},
                                extra_cflags=["-DTVM_FFI_DLL_EXPORT_INCLUDE_METADATA=1"])
            times.append(time.perf_counter() - start)
        print("median_ms", sorted(times)[len(times) // 2] * 1000)
    """), cpp_cache_dir)
    lines = out.splitlines()
    assert lines[0] == "42 hello, ffi 3.0"
    assert lines[1] == "'Adds two integers.\\nReturns a + b.' None"
    assert json.loads(lines[2]) == {"type": "ffi.Function", "named_args": {
        "return": [{"type": "int"}], "params": [{"type": "int"}, {"type": "int"}]}}
    assert lines[3] == "3 0.5 made 5.0"
    assert lines[4] == "error: Check failed: (x.ndim() == 1) is false: x must be a 1D tensor"
    assert lines[5] == "ours True upstream False"
    # A cached load_inline: hashing, a lock, some stats. Under AddressSanitizer (tools/sanitize.sh,
    # every allocation through its allocator) the bound is three times as loose.
    slowdown = 3 if hasattr(ctypes.CDLL(None), "__asan_init") else 1
    assert float(lines[6].split()[1]) < 50 * slowdown


def test_plans_for_gpu_sources_objects_and_embedded_cubins(tmp_path):
    """The steps (not run) for what this machine cannot build: CUDA, merges, CUBIN embedding."""
    out, _ = run(f"""
        import json, sys
        from tvm_ffi_ref.cpp import build_plan
        src = {str(tmp_path)!r}
        from tvm_ffi_ref.cpp import toolchain
        tools = {{toolchain.c_compiler(): "CC", toolchain.cxx_compiler(): "CXX", sys.executable: "python"}}
        def show(plan):
            return [[s.verb, s.output, tools.get(s.command[0], s.command[0].rsplit("/", 1)[-1])] +
                    [a for a in s.command if a.startswith(("-gencode", "--gen", "--dep", "-m", "tvm_ffi", "--name"))]
                    for s in plan.steps] + [plan.target]
        print(json.dumps(show(build_plan.plan_build("k", [src + "/a.cu", src + "/b.cc"]))))
        print(json.dumps(show(build_plan.plan_build("k", [src + "/a.c", src + "/b.c"], output="k.o"))))
        print(json.dumps(show(build_plan.plan_build("k", [src + "/b.cc"], cubin_names=["kern"],
                                                    package="tvm_ffi_ref"))))
    """, str(tmp_path / "cache"), env={"CUDA_HOME": "/opt/no-such-cuda",
                                       "TVM_FFI_CUDA_ARCH_LIST": "8.0 9.0a"})
    gpu, merged, embedded = [json.loads(line) for line in out.splitlines()]
    assert gpu == [["compile", "cuda_0.o", "nvcc", "--generate-dependencies-with-compile",
                    "--dependency-output", "-gencode=arch=compute_80,code=sm_80",
                    "-gencode=arch=compute_90a,code=sm_90a"],
                   ["compile", "cpp_0.o", "CXX"],
                   ["link", "k.so", "CXX"], "k.so"]
    assert merged == [["compile", "c_0.o", "CC"], ["compile", "c_1.o", "CC"],
                      ["merge", "k.o", "ld"], "k.o"]
    assert embedded == [["compile", "cpp_0.o", "CXX"], ["merge", "unified.o", "ld"],
                        ["embed", "unified_with_kern.o", "python", "-m",
                         "tvm_ffi_ref.utils.embed_cubin", "--name"],
                        ["link", "k.so", "CXX"], "k.so"]
