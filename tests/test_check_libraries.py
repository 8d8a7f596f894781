"""tvm-ffi-check on libraries as they are built in the wild.

* upstream's own testing library (``libtvm_ffi_testing.so`` of the installed
  apache-tvm-ffi, loaded into our runtime): it exports 2 functions and
  registers 59 globals and the methods of its object types when it loads;
* a library of typed functions built without metadata (``examples/kernels/
  typed_kernels.cc`` with ``tests/kernels/untyped_kernels.cc``, upstream's
  default macros): the checker must read each signature from the errors the
  function raises;
* the checker run from a directory whose packages would shadow its own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from test_check import run_check

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _report(done):
    assert done.stdout.strip(), done.stderr
    return json.loads(done.stdout)


# ---------------------------------------------------- upstream's testing library


@pytest.fixture(scope="module")
def testing_report(upstream_dir):
    path = os.path.join(upstream_dir, "lib", "libtvm_ffi_testing.so")
    assert os.path.isfile(path), path
    done = run_check(path, "--json", "-", "--examples", "3", "--threads", "2")
    return _report(done), done


def test_every_function_of_upstreams_testing_library_is_found(testing_report):
    report, _ = testing_report
    kinds = {}
    for function in report["functions"]:
        kinds.setdefault(function["kind"], []).append(function["name"])
    assert len(kinds["export"]) == 2 and len(kinds["global"]) == 59, kinds
    assert "testing.add_one" in kinds["global"]
    # methods of the object types it registers, constructors among them
    assert {"testing.TestIntPair.sum", "testing.TestIntPair.__ffi_init__",
            "testing.SchemaAllTypes.make_with"} <= set(kinds["method"])


def test_every_function_of_upstreams_testing_library_is_reached(testing_report):
    report, _ = testing_report
    assert report["summary"]["unverified"] == 0
    for function in report["functions"]:
        assert function["accepted"] >= 1, function
        assert function["status"] in ("pass", "fail"), function
    by_name = {f["name"]: f for f in report["functions"]}
    # registered schemas are used, with objects of the library's types made for methods
    assert by_name["testing.TestIntPair.sum"]["schema"] == "registry"
    assert by_name["testing.TestIntPair.sum"]["outcomes"] == {"returned": 3}
    assert by_name["testing.SchemaAllTypes.append_int"]["outcomes"].get("returned", 0) >= 1
    # a function that sleeps while it polls TVMFFIEnvCheckSignals is interrupted, not hung
    signal = by_name["testing.run_check_signal"]
    assert signal["status"] == "pass" and signal["outcomes"].get("interrupted", 0) >= 1
    assert any("TVMFFIEnvCheckSignals" in note for note in signal["notes"])


def test_upstreams_testing_library_breaks_only_argument_bounds(testing_report):
    # echo and apply read args[0] without checking num_args (PackedArgs::operator[]
    # does not check): called with no arguments they read past the argument array.
    report, done = testing_report
    broken = {f["name"]: f for f in report["functions"] if f["findings"]}
    assert set(broken) == {"testing.echo", "testing.apply"}, done.stdout[-3000:]
    for function in broken.values():
        (finding,) = function["findings"]
        assert finding["rule"] == "memory-safety"
        assert "args[0] of a call with 0 argument(s)" in finding["message"]
        assert finding["call"].endswith("()")


# ---------------------------------------------------- typed functions, no metadata


@pytest.fixture(scope="module")
def untyped_library(kernels):
    """examples/kernels/typed_kernels.cc and tests/kernels/untyped_kernels.cc, no metadata."""
    parts = []
    for path in (("examples", "kernels", "typed_kernels.cc"),
                 ("tests", "kernels", "untyped_kernels.cc")):
        with open(os.path.join(ROOT, *path)) as f:
            parts.append(f.read())
    return kernels.build("untyped_kernels", "\n".join(parts))


def test_a_library_without_metadata_exports_no_schema(untyped_library):
    from tvm_ffi_ref.elf_symbols import read_dynamic_symbols

    symbols = read_dynamic_symbols(untyped_library)
    assert "__tvm_ffi_add" in symbols.defined
    assert not any(name.startswith("__tvm_ffi__metadata_") for name in symbols.defined)


def test_every_typed_function_without_metadata_reaches_its_body(untyped_library):
    report = _report(run_check(untyped_library, "--json", "-", "--examples", "10",
                               "--threads", "0"))
    functions = {f["name"]: f for f in report["functions"]}
    assert len(functions) == 25
    for name, function in functions.items():
        assert function["schema"] == "error text", function
        body = function["outcomes"].get("returned", 0) + function["outcomes"].get(
            "raised ValueError", 0)  # always_throws raises from its body
        assert body >= 1 and function["accepted"] >= 1, function
        assert function["status"] == "pass", function
    assert functions["sum5"]["signature"] == "(int, int, int, int, int) -> int"
    assert functions["lookup"]["signature"] == \
        "(ffi.Map[ffi.String, float], ffi.String) -> Optional[float]"
    assert functions["answer"]["signature"] == "() -> int"
    # tensors of the shape and dtype the TVM-style message names
    assert functions["vadd"]["signature"] == \
        "(ffi.Tensor[16; float32], ffi.Tensor[16; float32], ffi.Tensor[16; float32]) -> ?"
    assert functions["saxpy"]["signature"] == \
        "(float, ffi.Tensor[n; float32], ffi.Tensor[n; float32]) -> ?"


# ---------------------------------------------------- from any directory


def test_the_checker_ignores_packages_in_the_current_directory(tmp_path):
    # The project's root holds the source packages; another checkout's would be
    # older still. What the checker imported is what its worker must import.
    for package in ("tvm_ffi_check", "tvm_ffi_common", "tvm_ffi_ref", "tvm_ffi_api"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text(
            f"raise ImportError('the {package} of the current directory was imported')\n")
    script = os.path.join(os.path.dirname(sys.executable), "tvm-ffi-check")
    command = [script] if os.path.exists(script) else [sys.executable, "-c",
                                                       "from tvm_ffi_check import main; main()"]
    done = subprocess.run(command + ["--no-progress", "--examples", "3", "--functions",
                                     "add_int"], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path, env=dict(os.environ, XDG_CACHE_HOME=str(tmp_path)))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "current directory was imported" not in done.stdout + done.stderr
    assert "1 passed" in done.stdout


# ---------------------------------------------------- objects only the library makes


@pytest.fixture(scope="module")
def pooled_library(kernels):
    with open(os.path.join(ROOT, "tests", "kernels", "pooled_types.cc")) as f:
        return kernels.build("pooled_types", f.read())


def test_objects_the_library_returns_reach_its_methods(pooled_library):
    """No constructor makes a pooled.Grammar or a pooled.Compiled: only the library's own
    functions return them, and the pool hands those to the methods and parameters."""
    done = run_check(pooled_library, "--json", "-", "--examples", "10", "--threads", "0")
    report = _report(done)
    functions = {f["name"]: f for f in report["functions"]}
    assert done.returncode == 0, done.stderr
    assert report["summary"]["reached"] == report["summary"]["functions"] == 5
    # self: the JsonGrammar the builtin returned serves a Grammar parameter (a subclass)
    to_string = functions["pooled.Grammar.to_string"]
    assert to_string["status"] == "pass" and to_string["outcomes"].get("returned", 0) >= 1
    # a chain: pooled.compile needs a Grammar, Compiled.states the Compiled it returns
    assert functions["pooled.compile"]["outcomes"].get("returned", 0) >= 1
    assert functions["pooled.Compiled.states"]["outcomes"].get("returned", 0) >= 1
    # an ffi.Object parameter is tried with each pooled type before hypothesis runs
    assert functions["pooled.describe"]["outcomes"].get("returned", 0) >= 1
